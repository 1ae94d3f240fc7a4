"""etchpy on one thread and on two, in the same run: the speedup of `threads=2`.

Each kernel is compiled twice (threads=1 and threads=2) over the same prebuilt
ep.Tensor inputs; both are warmed up, then timed alternately (1, 2, 1, 2, …) so
that drifting machine load hits both alike, in at least 3 x repeat rounds (a fast
kernel gets up to 30 x repeat within 1 s of one-thread calls). The figure
is median(1 thread) / median(2 threads); the target is ≥ 1.7 for SpMV, SpMM and
MTTKRP.

The section runs in a process of its own (`run_in_child`) under OpenMP's default
wait policy, as a user's program would: the rest of the benchmark sets
OMP_WAIT_POLICY=PASSIVE, under which each threaded call wakes a sleeping worker
(~47 µs a call here, 7% of a two-thread SpMV). The peers never run there.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import etchpy as ep

from . import exprs
from .kernels import Tensor3, overlapping_csr, per_row_csr, prebuild, random_csr, rng_for
from .timing import fmt_time, summarize, timed


def _reduction():
    i, j = ep.indices("i j")
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    return ep.sum((i, j), A[i, j] * x[j]), {}


def _cases(quick):
    rng = rng_for("threads")
    n, nnz = (10_000, 100_000) if quick else (100_000, 1_000_000)
    A = random_csr(rng, n, n, nnz)
    x = rng.random(n)
    yield "spmv", f"random n={n:,} nnz={A.nnz:,}", exprs.get("spmv"), {"A": A, "x": x}
    X = rng.random((n, 32))
    yield "spmm", f"n={n:,} nnz={A.nnz:,} × 32 cols", exprs.get("spmm"), {"A": A, "X": X}
    yield ("reduction", f"Σ_ij A[i,j]·x[j], n={n:,} nnz={A.nnz:,}", _reduction(),
           {"A": A, "x": x})
    m = 2_000 if quick else 20_000
    P, Q = per_row_csr(rng, m, m, 10), per_row_csr(rng, m, m, 10)
    yield ("spgemm", f"n={m:,} 10/row → csr", exprs.get("spgemm"), {"A": P, "B": Q})
    gus, kw = exprs.get("spgemm")
    yield ("spgemm", f"n={m:,} 10/row → csc (counting sort)", (gus, {**kw, "output": "csc"}),
           {"A": P, "B": Q})
    yield ("A+B", f"n={n:,} nnz={A.nnz:,} → csr", exprs.get("ewise_add"),
           {"A": A, "B": overlapping_csr(rng, A)})
    yield ("transpose", f"csr → csc n={n:,} nnz={A.nnz:,}", exprs.get("transpose"), {"A": A})
    dims, tnnz = ((200, 200, 200), 100_000) if quick else ((1000, 1000, 1000), 1_000_000)
    B = Tensor3(rng, dims, tnnz)
    C, D = rng.random((dims[1], 16)), rng.random((dims[2], 16))
    yield ("mttkrp", f"{dims[0]}³ nnz={len(B.keys):,} rank 16", exprs.get("mttkrp"),
           {"B": B.etchpy("B"), "C": C, "D": D})
    yield ("ttm", f"{dims[0]}³ nnz={len(B.keys):,} R=16 → fibers (i,j), dense r",
           exprs.get("ttm"), {"B": B.etchpy("B"), "M": C})


# Rounds of (1 thread, 2 threads): at least ROUND_FACTOR x repeat, and for fast
# kernels up to FAST_ROUNDS x repeat within ROUND_SECONDS of one-thread calls. A
# two-thread run needs both cores; a neighbour's spell of load on either one
# slows it and not the one-thread run. In one full run a spell of ~0.2 s made
# half of a two-thread SpMV's calls take 5-8 ms instead of 0.65 (median 4.9 ms),
# which 35 rounds of 1.4 ms could not outvote; rounds spread over a second can.
ROUND_FACTOR, FAST_ROUNDS, ROUND_SECONDS = 3, 30, 1.0


def rounds(repeat, warm) -> int:
    return max(ROUND_FACTOR * repeat, min(FAST_ROUNDS * repeat, int(ROUND_SECONDS // warm)))


def measure_threads(quick=False, repeat=7, say=print) -> dict:
    rows = []
    for kernel, case, (expr, kw), inputs in _cases(quick):
        k1 = ep.compile(expr, threads=1, **kw)
        k2 = ep.compile(expr, threads=2, **kw)
        tin = prebuild(k1, inputs)
        r1, r2 = k1(**tin), k2(**tin)          # warm-up, and the two must agree
        if hasattr(r1, "indptr"):        # csr: the same entries, in the same order
            assert (np.array_equal(r1.indptr, r2.indptr)
                    and np.array_equal(r1.indices, r2.indices))
            np.testing.assert_allclose(r2.data, r1.data, rtol=1e-9, atol=1e-9)
        elif isinstance(r1, ep.Tensor):  # the same level arrays
            for l1, l2 in zip(r1.levels, r2.levels, strict=True):
                assert all(np.array_equal(l1[key], l2[key]) for key in l1)
            np.testing.assert_allclose(r2.vals, r1.vals, rtol=1e-9, atol=1e-9)
        else:
            np.testing.assert_allclose(r2, r1, rtol=1e-9, atol=1e-9)
        t1, t2 = [], []
        warm = timed(lambda: k1(**tin))[0]
        for _ in range(rounds(repeat, warm)):
            t1.append(timed(lambda: k1(**tin))[0])
            t2.append(timed(lambda: k2(**tin))[0])
        s1, s2 = summarize(t1), summarize(t2)
        speedup = s1["median"] / s2["median"]
        parallel = "omp parallel" in k2.c_source
        rows.append({"kernel": kernel, "case": case, "one": s1, "two": s2,
                     "speedup": speedup, "parallel": parallel})
        say(f"    {kernel:10s} {case:44s} 1 thread {fmt_time(s1['median']):>9s}   "
            f"2 threads {fmt_time(s2['median']):>9s}   speedup {speedup:.2f}×"
            + ("" if parallel else "   (serial: no parallel loop)"))
    return {"rows": rows, "repeat": repeat, "min_rounds": ROUND_FACTOR * repeat}


def threads_table(th) -> str:
    if not th or "rows" not in th:
        return ""
    lines = ["| kernel | case | 1 thread | 2 threads | speedup |", "|---|---|---:|---:|---:|"]
    for r in th["rows"]:
        lines.append(f"| {r['kernel']} | {r['case']} | {fmt_time(r['one']['median'])} | "
                     f"{fmt_time(r['two']['median'])} | {r['speedup']:.2f}× |")
    return "\n".join(lines)


def _libgomp_loaded() -> bool:
    try:
        return "libgomp" in Path("/proc/self/maps").read_text()
    except OSError:
        return False


def run_in_child(quick=False, repeat=7, say=print) -> dict:
    """measure_threads in a new process with OMP_WAIT_POLICY unset; its lines are
    passed through to `say` as they come, and its rows returned."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env["ETCHPY_BENCH_OMP_DEFAULT"] = "1"       # read by bench/_env.py
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    cmd = [sys.executable, "-m", "bench.threads", "--repeat", str(repeat)]
    proc = subprocess.Popen(cmd + (["--quick"] if quick else []), env=env, cwd=root,
                            stdout=subprocess.PIPE, text=True)
    result = None
    for line in proc.stdout:
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
        else:
            say(line.rstrip("\n"))
    if proc.wait() != 0 or result is None:
        raise RuntimeError(f"the threads section's process failed (exit {proc.returncode})")
    return result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.threads")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--repeat", type=int, default=7)
    args = p.parse_args(argv)
    early = _libgomp_loaded()    # the policy is read when libgomp loads: before any kernel
    out = measure_threads(args.quick, args.repeat, say=lambda s: print(s, flush=True))
    out["omp_wait_policy"] = os.environ.get("OMP_WAIT_POLICY") or "default"
    out["libgomp_loaded_before_policy"] = early
    print("RESULT " + json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
