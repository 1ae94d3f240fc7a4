"""Fused checks and gathered sums under several tunings, one process (session 55).

    python -m bench.checks_ab [--seconds S] [--whole | --tensor] [--alternate] [--real MOST]
                              [--large] [TUNING ...]

Each TUNING is `field=value[,field=value]` of ep.Tuning (e.g. `gather_sums=False`,
`check_rows=True`); the default Tuning is always the first. Without --whole,
for each matrix, the SpMV kernel's C function of every tuning is called with
prebuilt arguments (what bench.calls' `checks` part times): its build with fused
checks (a scipy input's) and its build without them (an ep.Tensor's), a new x
from a pool of three on every call. With --whole, the whole call
`kern(A=A, x=x)` on the scipy csr input of every tuning against scipy's `A @ x`;
with --tensor, the whole call on an ep.Tensor made from it (the build without
checks), ratios to the default tuning's call.
All the calls of a matrix alternate in a shuffled order in one process, in
batches of about 2e5 entries (1e5 with --whole), or with --alternate one call at a
time (bench.timing.alternate_clocks); medians of thread CPU time.
Ratios: to the default build without checks (or to scipy with --whole, to the
default's call with --tensor).

Matrices: 2-D 5-point Poisson 45² and 141², 3-D 7-point Poisson 23³ (as
bench.calls' spmv part), rows of 10 random columns (1e4 rows) and rows of 40
(2500 rows): the last takes the scalar loop's long rows where the lanes are off.
With --real MOST, then scikit-fem's matrices of bench.audit39 of at most MOST
stored entries (csr, int32 indices; needs scikit-fem, the bench extra). With
--large, instead of the five above, stencils and random rows of 8e5 to 5e6
entries around the size from which rows prefetch their arrays
(Tuning.run_min_entries; session 71), and scikit-fem matrices of 1.6e6 to 5.2e6
(Tuning.mesh_runs; session 75).
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import itertools
import time

import numpy as np
import scipy.sparse as sp

import etchpy as ep

from bench import calls_sparse
from bench.calls import stencil3_csr, stencil_csr
from bench.kernel_inputs import per_row_csr
from bench.kernels import rng_for
from bench.timing import alternate_clocks

SPMV = "y[i] = A[i, j] * x[j]"


def matrices():
    """(label, canonical csr matrix with int32 indices)."""
    rng = rng_for("checks-ab")

    def rows(n, per):
        cols = np.sort(np.stack([rng.choice(n, per, replace=False) for _ in range(n)]), axis=1)
        return sp.csr_array((rng.random(n * per), cols.ravel().astype(np.int32),
                             np.arange(0, n * per + 1, per, dtype=np.int32)), shape=(n, n))
    yield "2-D Poisson 45²", stencil_csr(45)
    yield "2-D Poisson 141²", stencil_csr(141)
    yield "3-D Poisson 23³", stencil3_csr(23)
    yield "rows of 10, 1e4 rows", rows(10_000, 10)
    yield "rows of 40, 2500 rows", rows(2500, 40)


def large_matrices():
    """(label, csr matrix with int32 indices) of 8e5 to 5e6 stored entries."""
    rng = rng_for("checks-ab-large")
    for g in (400, 550, 600, 1000):
        yield f"2-D Poisson {g}²", stencil_csr(g)
    for g in (50, 60, 70, 90):
        yield f"3-D Poisson {g}³", stencil3_csr(g)
    for per in (10, 12):
        yield f"rows of {per}, 1e5 rows", per_row_csr(rng, 100_000, 100_000, per)
    from bench import audit39        # scikit-fem's meshes (Tuning.mesh_runs; session 75)
    for family, k in (("elast2", 8), ("triP2", 8), ("tetP1", 6), ("triP1", 10)):
        A = audit39.fem(family, k)
        yield f"{family} r{k}", sp.csr_array(
            (A.data, A.indices.astype(np.int32), A.indptr.astype(np.int32)), shape=A.shape)


def real_matrices(most: int):
    """(label, canonical csr matrix with int32 indices) of bench.audit39's
    scikit-fem ladder up to `most` stored entries."""
    from bench import audit39
    for label, A in audit39.matrices(most):
        yield label, sp.csr_array((A.data, A.indices.astype(np.int32), A.indptr.astype(np.int32)),
                                  shape=A.shape)


def tuning_of(spec: str) -> ep.Tuning:
    """ep.Tuning from `field=value[,field=value]` (True/False, else an int)."""
    kw = {}
    for part in spec.split(","):
        k, v = part.split("=")
        kw[k] = v == "True" if v in ("True", "False") else int(v)
    return ep.Tuning(**kw)


def c_calls(kern, A, pool):
    """The checked and the unchecked C function of kern on A, each a call with
    prebuilt arguments taking the next x of `pool` (bench.calls_sparse.c_calls)."""
    return calls_sparse.c_calls(kern, A, pool, _cycling)


def _cycling(items):
    k = [0]

    def nxt():
        k[0] += 1
        return items[k[0] % len(items)]
    return nxt


def medians(calls, batch: int, seconds: float) -> list[float]:
    """Median thread CPU seconds a call of each, the calls run `batch` at a time
    in a shuffled order until `seconds` of thread time have passed."""
    ts = [[] for _ in calls]
    order, end = list(range(len(calls))), time.thread_time() + seconds
    rng = np.random.default_rng(0)
    while time.thread_time() < end:
        rng.shuffle(order)
        for k in order:
            a = time.thread_time()
            for _ in range(batch):
                calls[k]()
            ts[k].append((time.thread_time() - a) / batch)
    return [float(np.median(t)) for t in ts]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tunings", nargs="*")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--whole", action="store_true")
    ap.add_argument("--tensor", action="store_true")
    ap.add_argument("--alternate", action="store_true")
    ap.add_argument("--real", type=int, default=0, metavar="MOST")
    ap.add_argument("--large", action="store_true")
    args = ap.parse_args(argv)
    specs = {"default": ep.Tuning(), **{s: tuning_of(s) for s in args.tunings}}
    kerns = {k: ep.compile(SPMV, formats={"A": "csr"}, tuning=t) for k, t in specs.items()}
    both = itertools.chain(large_matrices() if args.large else matrices(),
                           real_matrices(args.real) if args.real else ())
    for label, A in both:
        A = sp.csr_array((A.data, A.indices.astype(np.int32), A.indptr.astype(np.int32)),
                         shape=A.shape)
        pool = [rng_for(f"checks-ab-x-{k}").random(A.shape[1]) for k in range(3)]
        if args.whole or args.tensor:
            def whole(f, c=[0]):
                c[0] += 1
                return f(pool[c[0] % 3])
            given = ep.Tensor.from_scipy(A) if args.tensor else A
            calls = [lambda k=k: whole(lambda x: k(A=given, x=x)) for k in kerns.values()]
            calls.append(lambda: whole(lambda x: A @ x))
            names = [f"{k}" for k in kerns] + ["scipy"]
        else:
            calls, names = [], []
            for k, kern in kerns.items():
                calls += c_calls(kern, A, pool)
                names += [f"{k} checked", f"{k} unchecked"]
        per = 1e5 if args.whole or args.tensor else 2e5
        med = [cpu for cpu, _ in alternate_clocks(calls, args.seconds, most=10**6)] \
            if args.alternate else medians(calls, max(1, int(per / A.nnz)), args.seconds)
        at = -1 if args.whole else 0 if args.tensor else 1
        base = med[at]
        shown = "  ".join(f"{n} {m / base:.3f}" for k, (n, m) in enumerate(zip(names, med))
                          if k != at % len(med))
        what = "scipy" if args.whole else "default" if args.tensor else "default unchecked"
        print(f"{label:22s} nnz={A.nnz:7d}  {what} {base * 1e6:7.2f} µs | {shown}", flush=True)


if __name__ == "__main__":
    main()
