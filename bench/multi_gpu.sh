#!/bin/sh
# multi_gpu.sh DATA OUT -- issue 22: the GPU stages on one, two and four GPUs of one host,
# in one call, every file compared byte for byte with the one-GPU run of its set.
#   sets (SETS): netflix-random (480,189 users, 17,770 items, 100.5M ratings, 2% held out)
#                and wide-random (2M users, 200,000 items, 300M ratings); bench/gen.sh makes
#                them when missing.
#   runs: --gpus 1, 2 and 4 (GPUS: the counts, default "1 2", and 4 where the host has
#         four), each shared-out count in several ways (VARIANTS, default "fused nopeer old"):
#         fused (the default: the ratings copied from the first device peer to peer, the lists
#         and top-N of each stage in one engine call a GPU, the ranking stage shared too, one
#         symmetric tile shared by the GPUs where it holds every item), nopeer (fused, but every
#         device uploads the ratings and sums its rows in full: RECKNN_GPU_PEER=0
#         RECKNN_GPU_SYMSHARE=0), nosym (fused, rows in full: RECKNN_GPU_SYMSHARE=0) and old (the
#         earlier path: every device uploads, top-N uploads the ratings again, the ranking
#         model's lists and top-N on the first GPU alone: RECKNN_GPU_PEER=0 RECKNN_GPU_FUSED=0
#         RECKNN_GPU_RANK_SPREAD=0 RECKNN_GPU_SYMSHARE=0) and chunksN (fused, with N top-N chunks a
#         GPU instead of 4: RECKNN_TOPN_CHUNKS=N; chunks1: each GPU's users one range, written after
#         the range before);
#         ROUNDS rounds (default 2), alternating.  EXTRA: more options for every run (e.g.
#         --rank lists: top-N from the lists of --metric instead of the ranking model).
# Pearson, k 20, top-10 for every user (from the default ranking model, rp3beta).  One table
# line a run: wall time, load, the lists' engine calls (engine.wall_s), part 0's upload,
# similarity kernels, selection, the ranking lists (rank.lists_s), top-N, the whole engine
# stage (timings_s.engine: lists, predictions, ranking lists and top-N), the parts' balance
# (slowest over the mean) in the lists' engine calls and in the ranking stage's calls, and
# whether every file is the one-GPU run's.  The parts' lines go to OUT/SET-RUN-ROUND.parts.
set -u
data=${1:?usage: multi_gpu.sh DATA OUT}
out=${2:?usage: multi_gpu.sh DATA OUT}
R=${RECKNN:-./recknn}
mkdir -p "$out"
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
gpus=${GPUS:-"1 2"}
[ -z "${GPUS:-}" ] && [ "$ngpu" -ge 4 ] && gpus="1 2 4"
rounds=${ROUNDS:-2}
EXTRA=${EXTRA:-}
printf '%-8s %-9s %6s %5s %6s %6s %6s %6s %6s %6s %7s %7s %7s %s\n' set run wall load lists upload sim select \
    rlists topn stage bal_lst bal_rnk same
for set in ${SETS:-netflix-random wide-random}; do
    f=$data/$set.csv
    [ -f "$f" ] || THREADS=$(nproc) sh bench/gen.sh "$data" "$set" >"$out/gen-$set.log" 2>&1
    case $set in
    netflix*) job="$f --metric pearson -k 20 --top-n 10 --holdout 0.02 --seed 1 --device gpu --quiet" ;;
    *) job="$f --metric pearson -k 20 --top-n 10 --seed 1 --device gpu --quiet" ;;
    esac
    # one untimed run first: the page cache holds the file for every timed one
    # shellcheck disable=SC2086
    $R $job --top-n 0 --no-neighbors --out "$out/warm" >"$out/warm.log" 2>&1
    rm -rf "$out/warm"
    ref=
    r=1
    while [ "$r" -le "$rounds" ]; do
        for g in $gpus; do
            for p in ${VARIANTS:-fused nopeer old}; do
                [ "$g" = 1 ] && [ "$p" != fused ] && continue
                run=g$g-$p
                o=$out/$set-$run-$r
                t0=$(date +%s.%N)
                new=$([ "$p" = old ] && echo 0 || echo 1)
                case $p in chunks*) f=fused ;; *) f=$p ;; esac
                peer=$([ "$f" = fused ] || [ "$f" = nosym ] && echo 1 || echo 0)
                sym=$([ "$f" = fused ] && echo 1 || echo 0)
                # shellcheck disable=SC2086
                chunks=$(case $p in chunks*) echo "${p#chunks}" ;; esac)
                RECKNN_TOPN_CHUNKS=$chunks \
                RECKNN_GPU_FUSED=$new RECKNN_GPU_RANK_SPREAD=$new RECKNN_GPU_PEER=$peer RECKNN_GPU_SYMSHARE=$sym \
                    timeout "${TIMEOUT:-300}" $R $job --gpus "$g" $EXTRA --out "$o" >"$o.log" 2>&1
                st=$?
                t1=$(date +%s.%N)
                same=-
                if [ -z "$ref" ]; then ref=$o
                else
                    same=yes
                    for x in neighbors predictions recommendations; do
                        [ -f "$ref/$x.csv" ] || continue
                        cmp -s "$ref/$x.csv" "$o/$x.csv" || same="no($x)"
                    done
                fi
                python3 - "$o/metrics.json" "$set" "$run" "$st" "$t0" "$t1" "$same" >>"$out/table.txt" 2>&1 <<'PY'
import json, sys
p, s, r, st, t0, t1, same = sys.argv[1:]
try:
    m = json.load(open(p))
except Exception as e:
    print(f"{s:<8} {r:<9} exit {st}: {e}")
    sys.exit(0)
t = m["timings_s"]
sc = m.get("scale", {})
b = sc.get("balance", {})
e = m["engine"]
br = sc.get("balance_ranking") or {}
rk = (m.get("topn") or {}).get("rank") or {}
print(f"{s[:8]:<8} {r:<9} {float(t1)-float(t0):6.2f} {t['load']:5.2f} {e['wall_s']:6.3f} "
      f"{e.get('upload_s') or 0:6.3f} {t['similarity']:6.3f} {t['select']:6.3f} {rk.get('lists_s') or 0:6.3f} "
      f"{t['recommend']:6.3f} {t['engine']:7.3f} {b.get('engine_s') or 0:7.3f} {br.get('engine_s') or 0:7.3f} {same}")
with open(p.replace('/metrics.json', '.parts'), 'w') as fp:
    print(e.get('path'), '|', e.get('detail'), file=fp)
    print(m.get('topn'), file=fp)
    for x in sc.get("parts", []):
        print(f"{x.get('stage')} worker {x['worker']} device {x['device']}: rows {x['rows']} "
              f"work {x['work']:.3e} engine {x['engine_s']:.3f} s, top-N users {x['topn_users']} "
              f"{x['topn_s']:.3f} s\n    {x.get('engine_detail')}\n    {x.get('topn_detail')}", file=fp)
PY
                tail -1 "$out/table.txt"
                [ "$o" = "$ref" ] || rm -rf "$o"
            done
        done
        r=$((r + 1))
    done
    cp "$ref/metrics.json" "$out/$set-ref-metrics.json" 2>/dev/null
    rm -rf "$ref"
done
