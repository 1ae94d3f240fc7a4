"""Kernels over a Dask cluster (etchpy.distributed) on this machine, against the same
kernel in one process on one thread and on two OpenMP threads.

    python -m bench dask --json PATH [--quick] [--repeat N]

Workloads: SpMV (5e7 nonzeros, n = 5e6), PageRank (20 iterations, 1e7 edges,
n = 1e6), MTTKRP (1e7 nonzeros, rank 16); `--quick` divides the sizes by 100. Each
is timed alternately (one thread, two threads, two workers, ...) and reported as
medians: `two_workers_ms` end to end on a LocalCluster of two single-threaded
worker processes on loopback, `two_workers_compute_ms` the slowest worker's time
inside the kernels, `model_ms` what docs/distributed.md's model predicts from the
measured per-call and per-task overheads, bandwidth and compute. Then the per-call
overhead on a tiny input, and the memory case: workers limited to 1.5 GB run an
SpMV over a 2.4 GB matrix built on the workers, while a single such worker refuses
the same size before anything moves. First, the lost-worker rows (bench/dask_lost.py:
a call that loses a worker half-way against the same call undisturbed;
`--only-lost` runs only these). Writes a JSON list, one object per workload.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
import scipy.sparse as sp

import etchpy as ep
from etchpy.distributed import compute_seconds, tasks

from . import exprs
from .dask_lost import lost_worker_rows
from .kernels import Tensor3, random_csr, rng_for
from .timing import timed

GB = 1e9
NETWORK_GBPS = 1.25          # the network the scaling predictions assume: 10 Gbit/s


def _cluster(distributed, n_workers=2, memory_limit="auto"):
    cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                       processes=True, host="127.0.0.1",
                                       dashboard_address=":0", memory_limit=memory_limit)
    return cluster, distributed.Client(cluster)


def copies(held, client, value, workers):
    """A copy of `value` on each of `workers`, as a call sends its inputs."""
    return tasks.copies(client, held, lambda: value, workers)


def _overheads(client, repeat):
    """(per-call seconds, per-task seconds, broadcast bytes/s, tiny call seconds,
    gather bytes/s) of the Dask path, from tiny SpMVs cut into 2 and 8 blocks, a
    broadcast of 64 MB and a gather of 64 MB."""
    kern = ep.compile(*exprs.get("spmv")[:1])
    M = random_csr(rng_for("dask-tiny"), 64, 64, 256)
    x = np.ones(64)
    times = {}
    for k in (2, 8):
        parts = ep.partition(M, mode=0, blocks=k, client=client)
        kern(A=parts, x=x)
        times[k] = float(np.median([timed(lambda: kern(A=parts, x=x))[0]
                                    for _ in range(max(3 * repeat, 25))]))
    per_task = max(0.0, (times[8] - times[2]) / 6)
    payload = np.ones(8_000_000)
    workers = sorted(client.scheduler_info()["workers"])
    copies({}, client, payload, workers)
    seconds = np.median([timed(lambda: copies({}, client, payload, workers))[0]
                         for _ in range(3)])
    n_workers = len(workers)
    held = client.submit(np.ones, payload.size, pure=False)
    held.result()
    back = np.median([timed(lambda: held.result())[0] for _ in range(3)])
    return (times[2] - 2 * per_task, per_task, n_workers * payload.nbytes / seconds,
            times[2], payload.nbytes / back)


def _alternate(fns, repeat, client):
    """Median seconds of each of `fns` timed alternately; for the distributed one
    (the last) also the median slowest-worker compute seconds."""
    samples, compute, phases = [[] for _ in fns], [], []
    for fn in fns:
        fn()
    compute_seconds(client)
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            seconds, _ = timed(fn)
            samples[k].append(seconds)
        compute.append(max(compute_seconds(client).values()))
        phases.append(dict(fns[-1].phases))
    where = {k: 1e3 * float(np.median([p[k] for p in phases])) for k in phases[0]}
    return [float(np.median(s)) for s in samples], float(np.median(compute)), where


def _workload(name, expr, inputs, split_name, mode, client, repeat, over, iterations=1,
              update=None):
    """One workload's row: timings, model and correctness."""
    call_s, task_s, bandwidth, _, gather = over
    one, two = ep.compile(expr, threads=1), ep.compile(expr, threads=2)
    parts = ep.partition(inputs[split_name], mode=mode, client=client)
    dist = dict(inputs, **{split_name: parts})
    vec = next(n for n in inputs if n != split_name and np.ndim(inputs[n]) == 1) \
        if update else None

    def loop(kern, args):
        def run():
            out, run.phases = None, {}
            for _ in range(iterations):
                out = kern(**args)
                for key, value in parts.last_call.items():
                    run.phases[key] = run.phases.get(key, 0.0) + value
                if update:
                    args[vec] = update(out)
            return out
        return run
    fns = [loop(one, dict(inputs)), loop(two, dict(inputs)), loop(one, dict(dist))]
    (t1, t2, tw), compute, where = _alternate(fns, repeat, client)
    correct = bool(np.allclose(fns[2](), fns[0](), rtol=1e-9, atol=1e-12))
    moved = sum(np.asarray(v).nbytes for n, v in inputs.items() if n != split_name)
    out_bytes = np.asarray(fns[0]()).nbytes
    per_call = (call_s + task_s * len(parts.bounds)
                + len(client.scheduler_info()["workers"]) * moved / bandwidth
                + out_bytes / gather)
    model = iterations * per_call + compute
    return {"workload": name, "one_thread_ms": 1e3 * t1, "two_threads_ms": 1e3 * t2,
            "two_workers_ms": 1e3 * tw, "two_workers_compute_ms": 1e3 * compute,
            "model_ms": 1e3 * model, "correct": correct, "blocks": len(parts.bounds),
            "iterations": iterations, "phases_ms": where,
            "client_side_ms": 1e3 * tw - sum(where.values()), "broadcast_bytes": moved, "output_bytes": out_bytes,
            "block_bytes": [s.nbytes for s in parts.stats],
            "compute_over_one_thread": t1 / compute if compute else None,
            "scaling": _weak_scaling(compute, moved, out_bytes, call_s, task_s, iterations)}


def _weak_scaling(compute, moved, out_bytes, call_s, task_s, iterations):
    """Predicted end-to-end ms on P workers, each keeping a block of today's size: the
    broadcast input and the output grow with P (a vector of the whole problem), the
    client sends the input to every worker, and the scheduler handles P tasks."""
    per_worker_in, per_worker_out = moved / 2, out_bytes / 2
    predicted = {}
    for p in (2, 8, 64, 512):
        transfer = (p * p * per_worker_in + p * per_worker_out) / (NETWORK_GBPS * GB)
        predicted[str(p)] = 1e3 * (iterations * (call_s + task_s * p + transfer) + compute)
    return {"network_GBps": NETWORK_GBPS, "predicted_ms": predicted}


def _pagerank_inputs(quick):
    n, m = (10_000, 100_000) if quick else (1_000_000, 10_000_000)
    W = random_csr(rng_for("dask-pagerank"), n, n, m)
    deg = np.asarray((W != 0).sum(axis=0)).ravel()
    P = sp.csr_matrix((W != 0).astype(float) @ sp.diags(1 / np.maximum(deg, 1)))
    P.sort_indices()
    return n, P


def _memory_case(distributed, quick, repeat):
    """The 2.4 GB SpMV on two 1.5 GB workers (blocks generated there), and one such
    worker refusing the same size."""
    rows, per_row = (200_000, 10) if quick else (20_000_000, 10)
    limit = "1.5GB"
    nblocks = 8
    rows_per = rows // nblocks
    import dask
    import dask.array as da
    chunks = [da.from_delayed(dask.delayed(_generated_rows)(b * rows_per, rows_per, rows, per_row),
                              (rows_per, rows), dtype=np.float64, meta=sp.csr_matrix((0, 0)))
              for b in range(nblocks)]
    darr = da.concatenate(chunks, axis=0)
    x = np.arange(rows, dtype=np.float64)
    want = _row_sums(np.arange(rows), rows, per_row)
    kern = ep.compile(*exprs.get("spmv")[:1])
    out = []
    cluster, client = _cluster(distributed, 2, limit)
    try:
        parts = ep.partition(darr, mode=0, client=client, name="A")
        seconds = [timed(lambda: kern(A=parts, x=x))[0] for _ in range(max(1, repeat // 3))]
        got = kern(A=parts, x=x)
        out.append({"workload": f"spmv {parts.nbytes / GB:.2f} GB matrix, 2 workers of "
                                f"{limit} each", "two_workers_ms": 1e3 * float(np.median(seconds)),
                    "correct": bool(np.allclose(got, want)), "blocks": nblocks,
                    "block_bytes": [s.nbytes for s in parts.stats]})
    finally:
        client.close()
        cluster.close()
    rows = 20_000_000           # the refusal moves nothing: full size even with --quick
    nnz = rows * per_row
    fake = sp.csr_matrix((np.zeros(nnz), np.zeros(nnz, dtype=np.int32),
                          np.arange(0, nnz + 1, per_row, dtype=np.int32)), shape=(rows, rows))
    cluster, client = _cluster(distributed, 1, limit)
    try:
        ep.partition(fake, mode=0, blocks=nblocks, client=client, name="A")
        message, refused = "not refused", False
    except ep.InputError as e:
        message, refused = str(e), True
    finally:
        client.close()
        cluster.close()
    out.append({"workload": f"spmv {(fake.data.nbytes + fake.indices.nbytes + fake.indptr.nbytes) / GB:.2f} GB "
                            f"matrix, 1 worker of {limit}", "correct": refused, "message": message})
    return out


def _generated_rows(start, count, n, per_row):
    """Rows start..start+count of the memory case's matrix: row r has ones at columns
    s(r) + t·(n // per_row), t < per_row (sorted, canonical, int64 indices)."""
    step = n // per_row
    r = np.arange(start, start + count, dtype=np.int64)
    cols = ((r * 7919) % step)[:, None] + step * np.arange(per_row, dtype=np.int64)
    return sp.csr_matrix((np.ones(count * per_row), cols.ravel(),
                          np.arange(0, count * per_row + 1, per_row, dtype=np.int64)),
                         shape=(count, n))


def _row_sums(r, n, per_row):
    """Each row's sum against x = arange(n): Σ_t s(r) + t·step."""
    step = n // per_row
    return per_row * ((r * 7919) % step) + step * per_row * (per_row - 1) / 2


def _workloads(quick):
    """(name, expr, inputs, split input, mode, iterations, update) of each workload."""
    scale = 100 if quick else 1
    rng = rng_for("dask-spmv")
    n, nnz = 5_000_000 // scale, 50_000_000 // scale
    A = random_csr(rng, n, n, nnz)
    yield (f"spmv n={n:,} nnz={A.nnz:,}", exprs.get("spmv")[0],
           {"A": A, "x": rng.random(n)}, "A", 0, 1, None)
    del A
    m, P = _pagerank_inputs(quick)
    yield (f"pagerank 20 iterations n={m:,} edges={P.nnz:,}", exprs.get("spmv")[0],
           {"A": P, "x": np.full(m, 1 / m)}, "A", 0, 20, lambda y: 0.15 / m + 0.85 * y)
    del P
    dims = (2000, 2000, 2000) if not quick else (400, 400, 400)
    T = Tensor3(rng_for("dask-mttkrp"), dims, 10_000_000 // scale)
    C, D = rng.random((dims[1], 16)), rng.random((dims[2], 16))
    yield (f"mttkrp {dims[0]}³ nnz={T.nnz:,} rank 16", exprs.get("mttkrp")[0],
           {"B": T.etchpy("B"), "C": C, "D": D}, "B", 0, 1, None)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench dask", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("--json", required=True, help="where to write the results")
    parser.add_argument("--quick", action="store_true", help="sizes divided by 100")
    parser.add_argument("--repeat", type=int, default=7, help="alternating rounds")
    parser.add_argument("--skip-memory", action="store_true", help="skip the 1.5 GB case")
    parser.add_argument("--only-lost", action="store_true",
                        help="only the lost-worker rows (bench/dask_lost.py)")
    args = parser.parse_args(argv)
    import dask.distributed as distributed
    rows = []
    for row in lost_worker_rows(distributed, args.quick, args.repeat):
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.only_lost:
        return _write(args.json, rows)
    cluster, client = _cluster(distributed)
    try:
        over = _overheads(client, args.repeat)
        call_s, task_s, bandwidth, tiny, gather = over
        print(f"per call {1e3 * call_s:.2f} ms, per task {1e3 * task_s:.2f} ms, "
              f"broadcast {bandwidth / GB:.2f} GB/s, gather {gather / GB:.2f} GB/s", flush=True)
        for name, expr, inputs, split, mode, iterations, update in _workloads(args.quick):
            row = _workload(name, expr, inputs, split, mode, client, args.repeat, over,
                            iterations, update)
            print(json.dumps(row), flush=True)
            rows.append(row)
        rows.append({"workload": "tiny spmv n=64 (per-call overhead of the Dask path)",
                     "two_workers_ms": 1e3 * tiny, "model_ms": 1e3 * (call_s + 2 * task_s),
                     "per_call_ms": 1e3 * call_s, "per_task_ms": 1e3 * task_s,
                     "broadcast_GBps": bandwidth / GB, "gather_GBps": gather / GB,
                     "correct": True})
    finally:
        client.close()
        cluster.close()
    if not args.skip_memory:
        for row in _memory_case(distributed, args.quick, args.repeat):
            print(json.dumps(row), flush=True)
            rows.append(row)
    return _write(args.json, rows)


def _write(path, rows) -> int:
    with open(path, "w") as f:
        json.dump(rows, f, indent=1)
    return 0
