"""The cost of a call (issue 39), sparse parts of `python -m bench calls`:

  coo  y = A·x with A a scipy coo_array in row-major order without repeats (its
       has_canonical_format False), for a tensor declared coo, a new x on every
       call, against scipy's A @ x on the same coo_array (target: ≤ 1.2×).
  cg   150 iterations of scipy.sparse.linalg.cg with a LinearOperator whose
       matvec is the etchpy kernel on the scipy csr matrix, against cg(A) (which
       wraps A in a LinearOperator of its own); the matrices of the spmv part,
       random rows made symmetric positive definite (R + Rᵀ + a dominant
       diagonal). Target: ≤ 1.0×.

  checks  the price of checking a scipy csr input inside the kernel: the SpMV
       kernel's C function as a scipy input calls it (its build with fused
       checks) against the build without them (what an ep.Tensor input runs),
       both called with the same prebuilt arguments on the same arrays, a new x
       on every call (target: ≤ 1.03×, issue 39's "checks that cost next to
       nothing").

  checks2  the same on two threads; then the whole call of the two-thread
       kernel on the scipy input (fused checks) against the same kernel built
       with fused_checks=False (a check pass before the call) and against the
       one-thread kernel. The calls process runs OpenMP with
       OMP_WAIT_POLICY=PASSIVE (bench/_env.py), where a two-thread call pays
       tens of µs to wake its worker; ETCHPY_BENCH_OMP_DEFAULT=1 keeps
       OpenMP's default policy (the threads section's).

All over the sizes of the spmv part (bench.calls.spmv_matrices), alternating
the two sides call by call (bench.calls.alternate), ratios of medians.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, cg

import etchpy as ep
from etchpy.runtime import calling

from bench.kernels import rng_for

CG_ITERATIONS = 150


def part_coo(quick, seconds, say, calls) -> list[dict]:
    """SpMV on a coo tensor, scipy coo_array input (see the module docstring)."""
    kern = ep.compile("y[i] = A[i, j] * x[j]", formats={"A": "coo"})
    rows = []
    for family, A in calls.spmv_matrices(quick):
        C = sp.coo_array((A.data, tuple(A.tocoo().coords)), shape=A.shape)
        n = A.shape[1]
        rng = rng_for(f"calls-coo-x-{n}")
        pool = [rng.random(n) for _ in range(8 if n < 100_000 else 3)]
        np.testing.assert_allclose(kern(A=C, x=pool[0]), C @ pool[0], rtol=1e-12)
        ours_x, peer_x = calls.cycling(pool), calls.cycling(pool)
        t = calls.alternate([lambda: kern(A=C, x=ours_x()), lambda: C @ peer_x()],
                            seconds * (2 if A.nnz > 1e6 else 1), most=5000)
        rows.append(calls.row("coo", f"{family} n={A.shape[0]:,} nnz={A.nnz:,}", t[0],
                              "scipy coo A @ x", t[1], 1.2, nnz=int(A.nnz), family=family))
        calls.say_row(rows[-1], say)
    return rows


def spd(A):
    """A itself when symmetric, else A + Aᵀ plus a diagonal that dominates each row
    (so CG runs on a symmetric positive definite matrix), canonical csr."""
    if abs(A - A.T).max() == 0:
        return A
    S = (A + A.T).tocsr()
    S = (S + sp.diags_array(np.asarray(abs(S).sum(axis=1)).ravel() + 1.0)).tocsr()
    S.sum_duplicates()
    S.sort_indices()
    return sp.csr_array(S)


def part_cg(quick, seconds, say, calls) -> list[dict]:
    """150 CG iterations, LinearOperator over the kernel vs cg(A)."""
    kern = ep.compile("y[i] = A[i, j] * x[j]", formats={"A": "csr"})
    rows = []
    for family, A in calls.spmv_matrices(quick):
        A = spd(A)
        n = A.shape[0]
        b = rng_for(f"calls-cg-{n}").random(n)
        op = LinearOperator(A.shape, matvec=lambda x, A=A: kern(A=A, x=x), dtype=A.dtype)

        def ours(op=op, b=b):
            return cg(op, b, rtol=1e-300, atol=0.0, maxiter=CG_ITERATIONS)[0]

        def peer(A=A, b=b):
            return cg(A, b, rtol=1e-300, atol=0.0, maxiter=CG_ITERATIONS)[0]
        np.testing.assert_allclose(ours(), peer(), rtol=1e-8, atol=1e-12)
        t = calls.alternate([ours, peer], seconds * (3 if A.nnz > 1e6 else 1), most=400)
        rows.append(calls.row("cg", f"{family} n={n:,} nnz={A.nnz:,}", t[0],
                              "scipy cg(A)", t[1], 1.0, nnz=int(A.nnz), family=family,
                              iterations=CG_ITERATIONS))
        calls.say_row(rows[-1], say)
    return rows


def part_checks(quick, seconds, say, calls, threads=None, part="checks") -> list[dict]:
    """The fused-check build against the unchecked one (see the module docstring)."""
    kern = ep.compile("y[i] = A[i, j] * x[j]", formats={"A": "csr"}, threads=threads)
    rows = []
    for family, A in calls.spmv_matrices(quick):
        n = A.shape[1]
        pool = [rng_for(f"calls-x-{n}").random(n) for _ in range(3)]
        fns = c_calls(kern, A, pool, calls.cycling)
        t = calls.alternate(fns, seconds * (2 if A.nnz > 1e6 else 1), most=5000)
        rows.append(calls.row(part, f"{family} n={A.shape[0]:,} nnz={A.nnz:,}", t[0],
                              "the unchecked build", t[1], 1.03, nnz=int(A.nnz),
                              family=family))
        calls.say_row(rows[-1], say)
    return rows


def c_calls(kern, A, pool, cycling) -> list:
    """The checked and the unchecked C function of kern (y[i] = A[i, j]·x[j]) on A,
    each a call with prebuilt arguments taking the next x of `pool` (cycling(pool)
    gives them in turn); either raises if the kernel refuses its inputs."""
    runner, lib, types, checked, in_args, bound, out_shape, idx, _ = kern._make(
        {"A": A, "x": pool[0]}, None)
    args = list(in_args)
    runner._output_args(args, None, out_shape, bound, lib, types)
    ctype = "int32_t" if np.dtype(idx) == np.int32 else "int64_t"
    trusted = runner.library(ctype + calling.TRUSTED)
    name, = (f for f in dir(trusted.lib) if not f.endswith("_free"))
    xs = [lib.ffi.from_buffer("double[]", x) for x in pool]
    at = [i for i, a in enumerate(args) if a == lib.ffi.from_buffer("double[]", pool[0])][0]
    fns = []
    for f in (checked, getattr(trusted.lib, name)):
        def call(f=f, nxt=cycling(xs), args=list(args)):
            args[at] = nxt()
            if f(*args):
                raise RuntimeError("the kernel refused its inputs")
        fns.append(call)
    return fns


def part_checks2(quick, seconds, say, calls) -> list[dict]:
    """The checks part on two threads, then the whole call of the two-thread
    kernel on the scipy input against the same kernel built with
    fused_checks=False (a full check pass before the call) and against the
    one-thread kernel (see the module docstring)."""
    rows = part_checks(quick, seconds, say, calls, threads=2, part="checks2")
    two = ep.compile("y[i] = A[i, j] * x[j]", formats={"A": "csr"}, threads=2)
    passed = ep.compile("y[i] = A[i, j] * x[j]", formats={"A": "csr"}, threads=2,
                        tuning=ep.Tuning(fused_checks=False))
    one = ep.compile("y[i] = A[i, j] * x[j]", formats={"A": "csr"}, threads=1)
    for family, A in calls.spmv_matrices(quick):
        n = A.shape[1]
        pool = [rng_for(f"calls-x-{n}").random(n) for _ in range(3)]
        for peer, label in ((passed, "2 threads, a check pass"), (one, "1 thread, fused")):
            xs, ys = calls.cycling(pool), calls.cycling(pool)
            t = calls.alternate([lambda: two(A=A, x=xs()), lambda: peer(A=A, x=ys())],
                                seconds * (2 if A.nnz > 1e6 else 1), most=5000)
            rows.append(calls.row("checks2", f"{family} n={A.shape[0]:,} nnz={A.nnz:,}, call",
                                  t[0], label, t[1], 1.0, nnz=int(A.nnz), family=family))
            calls.say_row(rows[-1], say)
    return rows
