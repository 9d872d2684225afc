#!/usr/bin/env python3
"""floors.py -- each stage's floor (bytes or operations over the machine's measured rates),
recknn's measured time against it, the top-N peers beside recknn, and the issue's table.

  floors.py --data DATADIR --runs LOGDIR [LOGDIR...] [--peers JSONL] [--measure] [--json OUT]

LOGDIR: bench_recknn.sh's log folders (NAME.json = a run's metrics.json, out-NAME/ its output
folder). The runs read: job-SET-kernel, job-SET-spgemm, job-SET-auto (the nightly job),
cpujob-SET and parse1-SET (one core's parse rate); repeats (NAME.2, ...) count, the best of
each stage is taken. --peers: the JSON rows of peer_topn_torch.py (run_peers.sh PEERS=topn).

Rates (PERF-NOTES.md, the H100 machine; --measure measures the ones marked * here, in about
two seconds, and uses the measurement instead):
  device memory        3.0e12 B/s (read + write)                               *
  shared-memory atomics, 32-bit, random addresses in a 48 KB tile: 1.4e12/s    *
  shared-memory atomics, 64-bit (the fixed-point top-N sums): not in PERF-NOTES; the 32-bit
                       rate is used unless measured                            *
  shared-memory reads  not in PERF-NOTES; measured or left out                 *
  PCIe host to device  50e9 B/s                                                *
  host memory          not in PERF-NOTES; measured (torch copy on all cores and one core) *
  one core's parse     recknn's own read_parse with --threads 1 (parse1-SET runs); else the
                       2-core development machine's 130 MB/s (libcsv + strtod), marked so
Floors (a stage cannot go faster than this on this machine, in this design):
  load        max(file bytes / (cores x one core's parse rate),
                  (file bytes read + both CSR orientations written, 2 x ratings x 8 B) / host memory)
  upload      both orientations, 2 x ratings x 8 B, over PCIe
  similarity  engine.pair_updates x atomics a pair (pearson 6, pearson-baseline 4, cosine 4,
              msd 2, euclidean 2) / 32-bit shared atomics
  select      items^2 x 4 B of similarities read once at device-memory speed
  top-N       list entries summed (topn.updates, else the peer's count: sum over users of the
              list lengths of their items) / 64-bit shared atomics, plus users x items x 16 B
              (a dense accumulator cleared and scanned per user) / shared-memory reads when
              measured; the same floor for both routes (the same sums)
  top-N sink  recommendations.csv bytes / host memory (all cores)
  write       neighbors.csv bytes / host memory (all cores)
  whole job   the sum of the above (no overlap assumed between stages)
"""
import argparse
import glob
import json
import os
import re
import sys
import time

RATES = {
    'dev_bw': (3.0e12, 'PERF-NOTES: device-to-device copy, read + write'),
    'smem32': (1.4e12, 'PERF-NOTES: 32-bit shared atomics, 48 KB tile'),
    'smem64': (1.4e12, 'not measured: the 32-bit rate of PERF-NOTES'),
    'smem_read': (None, 'not measured'),
    'pcie': (50e9, 'PERF-NOTES: PCIe 5.0 x16 in practice'),
    'host_bw': (None, 'not measured'),
    'host_bw1': (None, 'not measured'),
    'parse_core': (130e6, 'PERF-NOTES: libcsv + strtod on one core of the 2-core development machine'),
}
ATOMICS = {'pearson': 6, 'pearson-baseline': 4, 'cosine': 4, 'msd': 2, 'euclidean': 2}
TARGETS = {  # the demands: (ML-20M size, Netflix size)
    'load': (0.3, 1.3), 'topn': (0.03, 0.1), 'job': (0.6, 2.5)}

SMEM_SRC = r'''
extern "C" __global__ void atom32(unsigned long long *out, int iters, int words) {
    extern __shared__ unsigned int s32[];
    for (int i = threadIdx.x; i < words; i += blockDim.x) s32[i] = 0;
    __syncthreads();
    unsigned int x = (blockIdx.x * blockDim.x + threadIdx.x) * 2654435761u + 12345u;
    for (int it = 0; it < iters; ++it) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        atomicAdd(&s32[__umulhi(x, (unsigned int)words)], 1u);
    }
    __syncthreads();
    unsigned long long acc = 0;
    for (int i = threadIdx.x; i < words; i += blockDim.x) acc += s32[i];
    atomicAdd(out, acc);
}
extern "C" __global__ void atom64(unsigned long long *out, int iters, int words) {
    extern __shared__ unsigned long long s64[];
    for (int i = threadIdx.x; i < words; i += blockDim.x) s64[i] = 0;
    __syncthreads();
    unsigned int x = (blockIdx.x * blockDim.x + threadIdx.x) * 2654435761u + 12345u;
    for (int it = 0; it < iters; ++it) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        atomicAdd(&s64[__umulhi(x, (unsigned int)words)], 1ull);
    }
    __syncthreads();
    unsigned long long acc = 0;
    for (int i = threadIdx.x; i < words; i += blockDim.x) acc += s64[i];
    atomicAdd(out, acc);
}
extern "C" __global__ void read64(unsigned long long *out, int reps, int words) {
    extern __shared__ unsigned long long r64[];
    for (int i = threadIdx.x; i < words; i += blockDim.x) r64[i] = i;
    __syncthreads();
    const volatile unsigned long long *v = r64;  /* every load really made */
    unsigned long long acc = 0;
    for (int r = 0; r < reps; ++r)
        for (int i = threadIdx.x; i < words; i += blockDim.x) acc += v[i] ^ (unsigned long long)r;
    atomicAdd(out, acc);
}
'''


def measure(log):
    """Measured rates {key: (value, how)}; each measurement on its own, skipped on failure."""
    got = {}
    try:
        import torch
    except ImportError:
        log('measure: no torch; host and device rates not measured')
        return got

    def best(fn, n=3):
        fn()
        ts = []
        for _ in range(n):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        return min(ts)

    try:  # host memory: a 1 GB copy, all cores and one core
        cores = os.cpu_count() or 1
        a = torch.ones(1 << 28, dtype=torch.float32)
        b = torch.empty_like(a)
        nb = a.numel() * 4
        old = torch.get_num_threads()
        torch.set_num_threads(cores)
        t = best(lambda: b.copy_(a))
        got['host_bw'] = (2 * nb / t, f'measured: torch copy of 1 GB on {cores} threads, read + write')
        torch.set_num_threads(1)
        t = best(lambda: b.copy_(a), 2)
        got['host_bw1'] = (2 * nb / t, 'measured: torch copy of 1 GB on one thread, read + write')
        torch.set_num_threads(old)
    except Exception as e:
        log(f'measure: host memory: {type(e).__name__}: {e}')
    if not torch.cuda.is_available():
        log('measure: no CUDA device; device rates from PERF-NOTES')
        return got
    try:  # PCIe from pinned memory, and device memory
        h = torch.ones(1 << 28, dtype=torch.float32).pin_memory()
        d = torch.empty(1 << 28, dtype=torch.float32, device='cuda')
        nb = h.numel() * 4

        def up():
            d.copy_(h, non_blocking=True)
            torch.cuda.synchronize()
        got['pcie'] = (nb / best(up), 'measured: 1 GB pinned host to device (torch)')
        d2 = torch.empty_like(d)

        def dd():
            d2.copy_(d)
            torch.cuda.synchronize()
        got['dev_bw'] = (2 * nb / best(dd), 'measured: 1 GB device-to-device copy (torch), read + write')
    except Exception as e:
        log(f'measure: PCIe/device copy: {type(e).__name__}: {e}')
    try:  # shared memory, with CuPy's runtime compiler
        import cupy as cp
        import numpy as np
        mod = cp.RawModule(code=SMEM_SRC)
        sms = cp.cuda.Device().attributes['MultiProcessorCount']
        out = cp.zeros(1, dtype=cp.uint64)

        def run(name, blocks, threads, smem, iters, words):
            k = mod.get_function(name)
            if smem > 48 * 1024:
                k.max_dynamic_shared_size_bytes = smem
            args = (out, np.int32(iters), np.int32(words))
            k((blocks,), (threads,), args, shared_mem=smem)
            cp.cuda.Device().synchronize()
            ts = []
            for _ in range(3):
                out.fill(0)
                e0, e1 = cp.cuda.Event(), cp.cuda.Event()
                e0.record()
                k((blocks,), (threads,), args, shared_mem=smem)
                e1.record()
                e1.synchronize()
                ts.append(cp.cuda.get_elapsed_time(e0, e1) / 1000.0)
            return min(ts), int(out.get()[0])

    except Exception as e:
        log(f'measure: CuPy: {type(e).__name__}: {str(e)[:200]}')
        return got
    n = sms * 4 * 256 * 65536
    big = 208 * 1024
    n2 = sms * 1024 * 32768
    for key, name, blocks, threads, smem, iters, words, count, how in (
            ('smem32', 'atom32', sms * 4, 256, 48 * 1024, 65536, 12288, n,
             '32-bit atomicAdd, random addresses, 48 KB tile, 4 blocks an SM'),
            ('smem64', 'atom64', sms * 4, 256, 48 * 1024, 65536, 6144, n,
             '64-bit atomicAdd, random addresses, 48 KB tile, 4 blocks an SM'),
            ('smem64_big', 'atom64', sms, 1024, big, 32768, big // 8, n2,
             '64-bit atomicAdd, random addresses, 208 KB tile, 1 block an SM'),
            ('smem_read', 'read64', sms, 1024, big, 4096, big // 8, None,
             '64-bit shared loads, 208 KB tile, 1 block an SM')):
        try:
            t, s = run(name, blocks, threads, smem, iters, words)
            if count is None:
                got[key] = (sms * iters * smem / t, 'measured: ' + how)
            elif s == count:
                got[key] = (count / t, 'measured: ' + how)
            else:
                log(f'measure: {name} counted {s}, expected {count}: not used')
        except Exception as e:
            log(f'measure: {key} (CuPy): {type(e).__name__}: {str(e)[:200]}')
    return got


def load_runs(dirs):
    """{run base name: [metrics dicts]} and {run base name: output folder}."""
    runs, outs = {}, {}
    for d in dirs:
        for p in sorted(glob.glob(os.path.join(d, '*.json'))):
            name = os.path.basename(p)[:-5]
            try:
                m = json.load(open(p))
            except (OSError, ValueError):
                continue
            if not isinstance(m, dict) or 'timings_s' not in m:
                continue
            base = re.sub(r'\.\d+$', '', name)
            runs.setdefault(base, []).append(m)
            if os.path.isdir(os.path.join(d, 'out-' + base)):
                outs[base] = os.path.join(d, 'out-' + base)
    return runs, outs


def g(d, *keys):
    for k in keys:
        if not isinstance(d, dict) or d.get(k) is None:
            return None
        d = d[k]
    return d if isinstance(d, (int, float)) and not isinstance(d, bool) else d


def best(ms, *keys):
    vals = [g(m, *keys) for m in ms]
    vals = [v for v in vals if isinstance(v, (int, float))]
    return min(vals) if vals else None


def fsize(path):
    try:
        return os.path.getsize(path)
    except (OSError, TypeError):
        return None


def size_class(s):
    return 0 if s.startswith('ml20m') else 1 if s.startswith('netflix') else None


def fmt(v, p=3):
    if v is None:
        return '-'
    if isinstance(v, float) and (abs(v) >= 1e5 or (v and abs(v) < 1e-3)):
        return f'{v:.3g}'
    return f'{v:.{p}f}' if isinstance(v, float) else str(v)


def ratio(a, b):
    return f'{a / b:.1f}x' if a is not None and b else '-'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    ap.add_argument('--data', help='the data folder (DATADIR/SET.csv)')
    ap.add_argument('--runs', nargs='+', default=[], help="bench_recknn.sh log folders")
    ap.add_argument('--peers', help="peer_topn_torch.py's JSON rows")
    ap.add_argument('--measure', action='store_true', help='measure the machine rates here')
    ap.add_argument('--cores', type=int, default=os.cpu_count(), help='cores for the load floor')
    ap.add_argument('--json', help='write everything as JSON here')
    args = ap.parse_args()

    def log(msg):
        print(msg, file=sys.stderr)

    rates = dict(RATES)
    if args.measure:
        rates.update(measure(log))
    runs, outs = load_runs(args.runs)
    peers = []
    if args.peers and os.path.exists(args.peers):
        for line in open(args.peers):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get('peer') in ('torch-topn', 'topn'):
                peers.append(r)

    # one core's parse rate: the parse1 runs (bytes / read_parse), the best one
    pr = []
    for name, ms in runs.items():
        if name.startswith('parse1-'):
            s = name[len('parse1-'):]
            size = fsize(os.path.join(args.data, s + '.csv')) if args.data else None
            rp = best(ms, 'load_detail_s', 'read_parse')
            if size and rp:
                pr.append((size / rp, name))
    if pr:
        v, name = max(pr)
        rates['parse_core'] = (v, f'measured: recknn --threads 1, read_parse of {name}')

    print('== rates')
    for k, (v, how) in rates.items():
        unit = 'B/s' if k in ('dev_bw', 'pcie', 'host_bw', 'host_bw1', 'smem_read', 'parse_core') else '/s'
        print(f'  {k:<11} {fmt(v) if v else "-":>10} {unit:<4} {how}')
    R = {k: v for k, (v, _) in rates.items()}
    smem64 = R.get('smem64_big') or R['smem64']

    sets = sorted({re.sub(r'^(job-|cpujob-)', '', re.sub(r'-(kernel|spgemm|auto)$', '', n))
                   for n in runs if n.startswith(('job-', 'cpujob-'))})
    report = {'rates': {k: {'value': v, 'how': h} for k, (v, h) in rates.items()}, 'sets': {}}
    summary = {}
    for s in sets:
        kern = runs.get(f'job-{s}-kernel') or runs.get(f'job-{s}-auto') or []
        spg = runs.get(f'job-{s}-spgemm') or []
        cpu = runs.get(f'cpujob-{s}') or []
        anyj = kern or spg or runs.get(f'job-{s}-auto') or cpu
        if not anyj:
            continue
        m0 = anyj[0]
        path = os.path.join(args.data, s + '.csv') if args.data else (g(m0, 'inputs') or [None])[0]
        size = fsize(path)
        ratings = g(m0, 'counts', 'ratings')
        users, items = g(m0, 'counts', 'users'), g(m0, 'counts', 'items')
        metric = g(m0, 'options', 'metric') or 'pearson'
        ms = kern + spg  # every GPU job of the set: load, similarity, select, write are the same work
        out_dir = outs.get(f'job-{s}-kernel') or outs.get(f'job-{s}-auto') or outs.get(f'job-{s}-spgemm')
        rec_b = fsize(os.path.join(out_dir, 'recommendations.csv')) if out_dir else None
        nb_b = fsize(os.path.join(out_dir, 'neighbors.csv')) if out_dir else None
        updates = best(ms, 'topn', 'updates')
        upd_src = 'topn.updates'
        if updates is None:
            for p in peers:
                if p.get('file') == f'{s}.csv' and p.get('updates'):
                    updates, upd_src = p['updates'], "the peer's count"
                    break
        pairs = best(ms, 'engine', 'pair_updates')
        rows = []

        def add(stage, measured, floor, basis, target=None):
            rows.append({'stage': stage, 'measured': measured, 'floor': floor, 'basis': basis,
                         'target': target})

        sc = size_class(s)
        tgt = (lambda k: TARGETS[k][sc]) if sc is not None else (lambda k: None)
        hb = R.get('host_bw')
        # load
        f_parse = size / (args.cores * R['parse_core']) if size and R.get('parse_core') else None
        f_mem = (size + 2 * ratings * 8) / hb if size and ratings and hb else None
        f_load = max([x for x in (f_parse, f_mem) if x is not None], default=None)
        load = best(ms, 'timings_s', 'load')
        add('load', load, f_load,
            f'{fmt(size / 1e6 if size else None, 0)} MB / ({args.cores} cores x {fmt(R["parse_core"] / 1e6, 0)} MB/s a core)'
            + (f'; memory {fmt(f_mem)} s' if f_mem else ''), tgt('load'))
        parts = ', '.join(f'{k} {fmt(best(ms, "load_detail_s", k))}'
                          for k in ('read_parse', 'ids', 'duplicates', 'split', 'model'))
        f_up = 2 * ratings * 8 / R['pcie'] if ratings and R.get('pcie') else None
        add('upload (engine)', best(ms, 'engine', 'upload_s'), f_up, '2 x ratings x 8 B over PCIe')
        na = ATOMICS.get(metric)
        f_sim = pairs * na / R['smem32'] if pairs and na else None
        add('similarity', best(ms, 'timings_s', 'similarity'), f_sim,
            f'{fmt(float(pairs) if pairs else None)} pairs x {na} atomics / {fmt(R["smem32"])}/s')
        f_sel = items * items * 4 / R['dev_bw'] if items else None
        add('select', best(ms, 'timings_s', 'select'), f_sel, 'items^2 x 4 B at device-memory speed')
        f_tn = updates / smem64 if updates else None
        basis = f'{fmt(float(updates) if updates else None)} list entries ({upd_src}) / {fmt(smem64)}/s 64-bit atomics'
        if f_tn is not None and R.get('smem_read') and users and items:
            f_tn += users * items * 16 / R['smem_read']
            basis += f' + users x items x 16 B / {fmt(R["smem_read"])} B/s'
        add('top-N compute, kernel', best(kern, 'topn', 'compute_s'), f_tn, basis, tgt('topn'))
        add('top-N compute, spgemm', best(spg, 'topn', 'compute_s'), f_tn, 'the same sums', tgt('topn'))
        f_sink = rec_b / hb if rec_b and hb else None
        add('top-N sink (format + write)', best(ms, 'topn', 'sink_s'), f_sink,
            f'{fmt(rec_b / 1e6 if rec_b else None, 1)} MB recommendations.csv / host memory')
        add('top-N wall, kernel', best(kern, 'topn', 'wall_s'), None, '')
        add('recommend (timings_s)', best(ms, 'timings_s', 'recommend'), None, '')
        f_wr = nb_b / hb if nb_b and hb else None
        add('write', best(ms, 'timings_s', 'write'), f_wr,
            f'{fmt(nb_b / 1e6 if nb_b else None, 1)} MB neighbors.csv / host memory')
        parts_f = [f_load, f_up, f_sim, f_sel, f_tn, f_sink, f_wr]
        f_job = sum(x for x in parts_f if x is not None) if any(x is not None for x in parts_f) else None
        add('whole job, kernel route', best(kern, 'timings_s', 'total'), f_job,
            'sum of the floors above' + ('' if all(x is not None for x in parts_f) else ' (where known)'),
            tgt('job'))
        add('whole job, spgemm route', best(spg, 'timings_s', 'total'), f_job, '', tgt('job'))
        if cpu:
            add('CPU engine: similarity', best(cpu, 'timings_s', 'similarity'), None, '')
            add('CPU engine: top-N compute', best(cpu, 'topn', 'compute_s'), None, '')
            add('CPU engine: whole job', best(cpu, 'timings_s', 'total'), None, '')
        tp = {}
        for p in peers:
            if p.get('file') == f'{s}.csv':
                tp[p.get('L', '?')] = p
        print(f'\n== {s}: {fmt(size / 1e6 if size else None, 0)} MB, {ratings or "-"} ratings, '
              f'{users or "-"} users x {items or "-"} items; runs: {len(kern)} kernel, {len(spg)} spgemm, '
              f'{len(cpu)} cpu (best of each stage)')
        print(f'  {"stage":<28} {"measured":>9} {"floor":>9} {"/floor":>7} {"target":>7}  floor from')
        for r in rows:
            print(f'  {r["stage"]:<28} {fmt(r["measured"], 4):>9} {fmt(r["floor"], 4):>9} '
                  f'{ratio(r["measured"], r["floor"]):>7} {fmt(r["target"]):>7}  {r["basis"]}')
        print(f'  load parts: {parts}; {fmt(size / load / 1e9 if size and load else None, 2)} GB/s')
        for L, p in sorted(tp.items()):
            print(f'  peer torch {L:<6} {p.get("route", "-")}: top-N {fmt(p.get("topn_s"), 4)} s '
                  f'(matmul {fmt(p.get("matmul_s"), 4)}, mask+topk {fmt(p.get("select_s"), 4)}; batch '
                  f'{p.get("batch", "-")} x {p.get("batches", "-")}, peak {p.get("peak_gpu_gb", "-")} GB) '
                  f'agree {p.get("agree_sets", "-")} / modulo ties {p.get("agree_modulo_ties", "-")} '
                  f'[{p.get("status")}{": " + p.get("error_kind", "") if p.get("status") == "failed" else ""}]')
        report['sets'][s] = {'file': path, 'bytes': size, 'rows': rows, 'peers': tp}
        summary[s] = {'load': load, 'gbs': size / load / 1e9 if size and load else None,
                      'kernel': best(kern, 'topn', 'compute_s'), 'spgemm': best(spg, 'topn', 'compute_s'),
                      'job': best(kern, 'timings_s', 'total'), 'job_spgemm': best(spg, 'timings_s', 'total'),
                      'f_load': f_load, 'f_tn': f_tn, 'f_job': f_job,
                      'torch_dense': g(tp.get('dense'), 'topn_s'), 'torch_sparse': g(tp.get('sparse'), 'topn_s')}

    # the table: ML-20M and Netflix sizes side by side, random order first
    def cell(s, k, p=3, unit=' s'):
        v = summary.get(s, {}).get(k)
        return f'{v:.{p}f}{unit}' if isinstance(v, (int, float)) else '-'

    def fl(s, k, f):  # "floor F (measured/F x)"
        v, w = summary.get(s, {}).get(k), summary.get(s, {}).get(f)
        if not isinstance(w, (int, float)) or not w:
            return 'floor -'
        return f'floor {w:.3g} s' + (f', {v / w:.1f}x' if isinstance(v, (int, float)) else '')

    print('\n== the issue\'s table (measured; floor, measured/floor for the kernel route; target)')
    print('| what | ML-20M size | Netflix size |')
    print('|---|---|---|')
    for order, suffix in (('random order', '-random'), ('sorted by user', '')):
        a, b = 'ml20m' + suffix, 'netflix' + suffix
        print(f'| load, {order} | {cell(a, "load")} ({cell(a, "gbs", 2, " GB/s")}); {fl(a, "load", "f_load")}; '
              f'<= 0.3 s | {cell(b, "load")} ({cell(b, "gbs", 2, " GB/s")}); {fl(b, "load", "f_load")}; <= 1.3 s |')
    for order, suffix in (('random order', '-random'), ('sorted by user', '')):
        a, b = 'ml20m' + suffix, 'netflix' + suffix
        print(f'| top-10 for every user, GPU kernels, {order}: kernel / spgemm | {cell(a, "kernel", 4)} / '
              f'{cell(a, "spgemm", 4)}; {fl(a, "kernel", "f_tn")}; <= 0.03 s | {cell(b, "kernel", 4)} / '
              f'{cell(b, "spgemm", 4)}; {fl(b, "kernel", "f_tn")}; <= 0.1 s |')
    for order, suffix in (('random order', '-random'), ('sorted by user', '')):
        a, b = 'ml20m' + suffix, 'netflix' + suffix
        print(f'| whole nightly job, {order}: kernel / spgemm route | {cell(a, "job")} / {cell(a, "job_spgemm")}; '
              f'{fl(a, "job", "f_job")}; <= 0.6 s | {cell(b, "job")} / {cell(b, "job_spgemm")}; '
              f'{fl(b, "job", "f_job")}; <= 2.5 s |')
    for order, suffix in (('random order', '-random'), ('sorted by user', '')):
        a, b = 'ml20m' + suffix, 'netflix' + suffix
        if any(summary.get(x, {}).get(k) is not None for x in (a, b) for k in ('torch_dense', 'torch_sparse')):
            print(f'| PyTorch peer, same file, {order}: R @ dense L (SpMM) / R @ sparse L (SpGEMM), + topk | '
                  f'{cell(a, "torch_dense", 4)} / {cell(a, "torch_sparse", 4)} | '
                  f'{cell(b, "torch_dense", 4)} / {cell(b, "torch_sparse", 4)} |')
    if args.json:
        report['summary'] = summary
        with open(args.json, 'w') as f:
            json.dump(report, f, indent=1, default=str)


if __name__ == '__main__':
    main()
