#!/bin/sh
# job_stages.sh RECKNN FILE LOGDIR REPEAT [RECKNN OPTIONS...] -- run the nightly job
# REPEAT times and print one row per run: the stages of timings_s and
# load_detail_s, the engine's upload, the wall time and peak host memory
# (getrusage), the ranking lists' similarity stage (r-sim), and the GPU's peak memory (nvidia-smi's sampling, when
# present: an upper bound of the process's, 50 ms apart).  The label of the rows is
# LABEL (default: the file's name).  Outputs go to LOGDIR/out; each run's
# metrics.json is kept as LOGDIR/LABEL.N.json.
set -u
recknn=${1:?usage: job_stages.sh RECKNN FILE LOGDIR REPEAT [OPTIONS...]}
file=${2:?}
log=${3:?}
repeat=${4:?}
shift 4
label=${LABEL:-$(basename "$file" .csv)}
mkdir -p "$log"
i=1
while [ "$i" -le "$repeat" ]; do
    gpumem=-
    smi=
    if command -v nvidia-smi >/dev/null 2>&1; then
        nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 50 >"$log/smi.$$" 2>/dev/null &
        smi=$!
    fi
    # wall seconds and peak resident kB of the run (GNU time may be missing)
    python3 -c 'import resource, subprocess, sys, time
t = time.time()
rc = subprocess.call(sys.argv[2:], stdout=open(sys.argv[1], "w"), stderr=subprocess.STDOUT)
open(sys.argv[1] + ".time", "w").write("%.3f %d\n" % (time.time() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(rc)' "$log/$label.$i.log" "$recknn" "$file" --out "$log/out" -q "$@"
    rc=$?
    mv "$log/$label.$i.log.time" "$log/time.$$"
    if [ -n "$smi" ]; then
        kill "$smi" 2>/dev/null
        wait "$smi" 2>/dev/null
        gpumem=$(sort -n "$log/smi.$$" | tail -1)
        base=$(head -1 "$log/smi.$$")
        [ -n "$gpumem" ] && [ -n "$base" ] && gpumem=$((gpumem - base))
        rm -f "$log/smi.$$"
    fi
    cp "$log/out/metrics.json" "$log/$label.$i.json" 2>/dev/null
    python3 - "$label.$i" "$log/$label.$i.json" "$rc" "$(cat "$log/time.$$")" "$gpumem" "$i" <<'PY'
import json, sys
name, path, rc, tm, gpumem, i = sys.argv[1:]
wall, rss = tm.split()[-2:] if len(tm.split()) >= 2 else ("0", "0")
def g(d, *k):
    for x in k:
        if not isinstance(d, dict) or d.get(x) is None:
            return None
        d = d[x]
    return d
def f(v, w=6, p=3):
    return f"{v:{w}.{p}f}" if isinstance(v, (int, float)) else f"{'-':>{w}}"
if i == "1":
    print(f"{'run':<22} {'total':>6} {'wall':>6} {'load':>6} {'parse':>6} {'ids':>6} {'dup':>6} {'model':>6} "
          f"{'engine':>6} {'upload':>6} {'sim':>6} {'select':>6} {'rank':>6} {'r-sim':>6} {'topN':>6} {'write':>6} {'other':>6} "
          f"{'hostGB':>6} {'gpuGB':>6} {'rows':>5} {'rwait':>6}")
try:
    m = json.load(open(path))
except Exception:
    print(f"{name:<22} FAILED (exit {rc})"); sys.exit()
t, ld, e = m.get("timings_s", {}), m.get("load_detail_s", {}), m.get("engine", {})
gm = float(gpumem) / 1024 if gpumem not in ("-", "") else None
print(f"{name:<22} {f(t.get('total'))} {f(float(wall), 6, 2)} {f(t.get('load'))} {f(ld.get('read_parse'))} "
      f"{f(ld.get('ids'))} {f(ld.get('duplicates'))} {f(ld.get('model'))} {f(t.get('engine'))} {f(e.get('upload_s'))} "
      f"{f(t.get('similarity'))} {f(t.get('select'))} {f(t.get('rank'))} {f(g(m, 'topn', 'rank', 'sim_s'))} {f(t.get('recommend'))} {f(t.get('write'))} "
      f"{f(t.get('other'))} {f(int(rss) / 1048576, 6, 2)} {f(gm, 6, 2)} "
      f"{('up' if (m.get('rows_beside_parse') or {}).get('taken') else '-'):>5} {f(ld.get('rows_wait'))}"
      + ("" if rc == "0" else f"  EXIT {rc}")
      + ("" if (m.get('rows_beside_parse') or {}).get('taken') or not m.get('rows_beside_parse')
         else f"  rows: {m['rows_beside_parse'].get('why')}"))
PY
    rm -f "$log/time.$$"
    i=$((i + 1))
done
