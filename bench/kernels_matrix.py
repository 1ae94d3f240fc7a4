"""The benchmark kernels over matrices (bench/kernels.py): spmv, the triad
bandwidth, stencil, spmm, spgemm, element-wise, transpose, sddmm."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import etchpy as ep

from . import exprs
from .cases import Case, Impl, check_csr_sorted
from .kernel_impls import _gb, etchpy_impls, gb_impl, gb_spmv_impl, prebuild, tensora_impl
from .kernel_inputs import overlapping_csr, per_row_csr, random_csr, rng_for, stencil_csr
from .timing import summarize, timed


# ------------------------------------------------------------------ kernels

def gen_spmv(ctx):
    rng = rng_for("spmv")
    n, nnz = (10_000, 100_000) if ctx.quick else (100_000, 1_000_000)
    cases = [("random", lambda: random_csr(rng, n, n, nnz))]
    if not ctx.quick:
        cases.append(("50/row", lambda: per_row_csr(rng, n, n, 50)))
    for label, make in cases:
        A = make()
        x = rng.random(n)
        info = {}
        impls = etchpy_impls("spmv", {"A": A, "x": x}, info)
        impls.append(Impl("scipy", lambda A=A, x=x: (lambda: A @ x), note="csr @ x"))
        if _gb(ctx):
            impls.append(gb_spmv_impl(ctx, A, x))
        if "tensora" in ctx.peers:
            impls.append(tensora_impl(ctx, "y(i) = A(i,j) * x(j)", "d",
                                      {"A": ("ds", A), "x": ("d", x)}))
        yield Case("spmv", f"{label} n={n:,} nnz={A.nnz:,}", impls,
                   sizes={"n": n, "nnz": int(A.nnz)}, info=info)
        del A, x, impls


def triad_bandwidth(ctx):
    """STREAM-like figures with numpy on arrays far larger than the caches."""
    N = 10_000_000 if ctx.quick else 20_000_000
    rng = rng_for("triad")
    a, b, c = np.empty(N), rng.random(N), rng.random(N)
    s = 3.0
    reps = max(ctx.repeat, 5)

    def triad():                       # a = b + s*c, two numpy passes
        np.multiply(c, s, out=a)
        np.add(a, b, out=a)

    def copy():
        np.copyto(a, b)

    out = {"N": N, "array_MB": N * 8 / 1e6}
    for name, fn, nbytes, formula in (
            ("numpy triad a = b + s*c (2 passes)", triad, 5 * 8 * N,
             "5·8·N (reads c, b, a; writes a twice)"),
            ("numpy copy a = b", copy, 2 * 8 * N, "2·8·N")):
        fn()
        samples = [timed(fn)[0] for _ in range(reps)]
        summ = summarize(samples)
        out[name] = {"summary": summ, "bytes": nbytes, "formula": formula,
                     "GB/s median": nbytes / summ["median"] / 1e9,
                     "GB/s best": nbytes / summ["min"] / 1e9}
    try:                               # a true one-pass triad, if numba happens to exist
        import numba

        @numba.njit(cache=False)
        def _triad(a, b, c, s):
            for i in range(a.shape[0]):
                a[i] = b[i] + s * c[i]
        _triad(a, b, c, s)
        samples = [timed(lambda: _triad(a, b, c, s))[0] for _ in range(reps)]
        summ = summarize(samples)
        nbytes = 3 * 8 * N
        out["numba fused triad (1 pass)"] = {
            "summary": summ, "bytes": nbytes, "formula": "3·8·N (STREAM convention)",
            "GB/s median": nbytes / summ["median"] / 1e9,
            "GB/s best": nbytes / summ["min"] / 1e9}
    except Exception as exc:  # numba absent: numpy figures only
        out["numba"] = f"not measured ({type(exc).__name__})"
    return out


def gen_stencil(ctx):
    g = 316 if ctx.quick else 1000
    A = stencil_csr(g)
    n = A.shape[0]
    x = rng_for("stencil").random(n)
    formula = "nnz·(8+4) + n·(8+8+4)  [values+col index; x read, y written, row pointer]"
    nbytes = A.nnz * (8 + 4) + n * (8 + 8 + 4)
    info = {}
    impls = etchpy_impls("spmv", {"A": A, "x": x}, info)

    def build_out():             # the triad writes into an allocated array; so does this
        expr, kw = exprs.get("spmv")
        k = ep.compile(expr, **kw)
        tin, y = prebuild(k, {"A": A, "x": x}), np.empty(n)
        return lambda: k(out=y, **tin)
    impls.append(Impl("etchpy[out=]", build_out, role="etchpy-out",
                      note="the same kernel writing into a preallocated y (out=), as the "
                           "triads write into theirs"))
    impls.append(Impl("scipy", lambda: (lambda: A @ x), note="csr @ x"))
    if _gb(ctx):
        impls.append(gb_spmv_impl(ctx, A, x))
    notes = ["etchpy and scipy allocate y on every call; the triads and etchpy[out=] "
             "write into arrays allocated once"]
    if ctx.quick:
        notes.append("quick size: the matrix may fit in the last-level cache, so GB/s can "
                     "exceed DRAM bandwidth")
    yield Case("stencil", f"5-point {g}² n={n:,} nnz={A.nnz:,}", impls,
               sizes={"grid": g, "n": n, "nnz": int(A.nnz)}, bytes=nbytes,
               bytes_formula=formula, notes=notes, info=info)
    ctx.say("    · measuring triad bandwidth (numpy) ...")
    bw = triad_bandwidth(ctx)
    ctx.extras["bandwidth"] = bw
    for k, v in bw.items():
        if isinstance(v, dict):
            ctx.say(f"    · {k}: {v['GB/s median']:.2f} GB/s (median), "
                    f"{v['GB/s best']:.2f} GB/s (best); bytes = {v['formula']}")


def gen_spmm(ctx):
    rng = rng_for("spmm")
    n, nnz, cols = (10_000, 100_000, 32) if ctx.quick else (100_000, 1_000_000, 32)
    A = random_csr(rng, n, n, nnz)
    X = rng.random((n, cols))
    info = {}
    impls = etchpy_impls("spmm", {"A": A, "X": X}, info)
    impls.append(Impl("scipy", lambda: (lambda: A @ X), note="csr @ dense (n x 32)"))
    if _gb(ctx):
        impls.append(gb_impl(
            ctx, lambda gb: (gb.io.from_scipy_sparse(A), gb.Matrix.from_dense(X)),
            lambda gb, Ag, Xg: Ag.mxm(Xg, gb.semiring.plus_times),
            lambda gb, Y: Y.to_dense(fill_value=0.0), "A.mxm(X full, plus_times), 1 thread"))
    yield Case("spmm", f"n={n:,} nnz={A.nnz:,} × {cols} cols", impls,
               sizes={"n": n, "nnz": int(A.nnz), "cols": cols}, info=info)


def gen_spgemm(ctx):
    for n in ((2_000, 10_000) if ctx.quick else (20_000, 100_000)):
        yield from _spgemm_case(ctx, n, 10)


def _spgemm_case(ctx, n, k):
    rng = rng_for(f"spgemm{n}")
    A, B = per_row_csr(rng, n, n, k), per_row_csr(rng, n, n, k)
    info = {}
    impls = etchpy_impls("spgemm", {"A": A, "B": B}, info)
    impls.append(Impl("scipy", lambda: (lambda: A @ B),
                      note="A @ B; scipy leaves the column indices inside rows unsorted"))

    def sorted_scipy():
        def f():
            C = A @ B
            C.sort_indices()
            return C
        return f
    impls.append(Impl("scipy+sort", sorted_scipy,
                      note="A @ B then C.sort_indices(): like for like with etchpy's "
                           "sorted rows"))
    if _gb(ctx):
        impls.append(gb_impl(
            ctx, lambda gb: (gb.io.from_scipy_sparse(A), gb.io.from_scipy_sparse(B)),
            lambda gb, Ag, Bg: Ag.mxm(Bg, gb.semiring.plus_times), _gb_csr,
            "A.mxm(B, plus_times).new(); wait() (materialized)"))
    yield Case("spgemm", f"n={n:,} {k}/row nnz={A.nnz:,}", impls, check=check_csr_sorted,
               sizes={"n": n, "per_row": k, "nnz_A": int(A.nnz), "nnz_B": int(B.nnz)},
               notes=["etchpy outputs sorted rows; scipy does not (see scipy+sort)"],
               info=info)


def _gb_csr(gb, C):
    return gb.io.to_scipy_sparse(C, format="csr")


def gen_ewise(ctx):
    rng = rng_for("ewise")
    n, nnz = (10_000, 100_000) if ctx.quick else (100_000, 1_000_000)
    A = random_csr(rng, n, n, nnz)
    B = overlapping_csr(rng, A, 0.5)
    for label, ename, sfn, gop, gname in (
            ("A+B", "ewise_add", lambda: A + B, "ewise_add", "plus"),
            ("A∘B", "ewise_mul", lambda: A.multiply(B), "ewise_mult", "times")):
        info = {}
        impls = etchpy_impls(ename, {"A": A, "B": B}, info)
        impls.append(Impl("scipy", lambda sfn=sfn: sfn,
                          note="A + B" if label == "A+B" else "A.multiply(B)"))
        if _gb(ctx):
            impls.append(gb_impl(
                ctx, lambda gb: (gb.io.from_scipy_sparse(A), gb.io.from_scipy_sparse(B)),
                lambda gb, Ag, Bg, gop=gop, gname=gname: getattr(Ag, gop)(
                    Bg, getattr(gb.binary, gname)),
                _gb_csr, f"A.{gop}(B, {gname})"))
        yield Case("ewise", f"{label} n={n:,} nnz={A.nnz:,}+{B.nnz:,}", impls,
                   sizes={"n": n, "nnz_A": int(A.nnz), "nnz_B": int(B.nnz)},
                   notes=["B shares about half of A's coordinates"], info=info)


def gen_transpose(ctx):
    rng = rng_for("transpose")
    n, nnz = (10_000, 100_000) if ctx.quick else (100_000, 1_000_000)
    A = random_csr(rng, n, n, nnz)
    info = {}
    impls = etchpy_impls("transpose", {"A": A}, info)
    impls.append(Impl("scipy", lambda: A.tocsc, note="A.tocsc() (sorted rows)"))
    if _gb(ctx):
        impls.append(gb_impl(ctx, lambda gb: (gb.io.from_scipy_sparse(A),),
                             lambda gb, Ag: Ag.T, lambda gb, C: _gb_csr(gb, C).T,
                             "A.T.new(), by rows (= csc of A)"))
    yield Case("transpose", f"csr → csc n={n:,} nnz={A.nnz:,}", impls,
               sizes={"n": n, "nnz": int(A.nnz)}, info=info)


def gen_sddmm(ctx):
    rng = rng_for("sddmm")
    n, nnz, rank = (1_000, 10_000, 32) if ctx.quick else (10_000, 100_000, 32)
    X = random_csr(rng, n, n, nnz)
    U, V = rng.random((n, rank)), rng.random((n, rank))
    info = {}
    impls = etchpy_impls("sddmm", {"X": X, "U": U, "V": V}, info)

    def build():
        rows = np.repeat(np.arange(n), np.diff(X.indptr))    # structure, not timed
        cols, data, indptr = X.indices, X.data, X.indptr

        def f():
            vals = data * np.einsum("ij,ij->i", U[rows], V[cols])
            return sp.csr_matrix((vals, cols, indptr), shape=X.shape)
        return f
    impls.append(Impl("numpy", build,
                      note="X.data * einsum('ij,ij->i', U[rows], V[cols]) -> csr"))
    yield Case("sddmm", f"n={n:,} nnz={X.nnz:,} rank {rank}", impls,
               sizes={"n": n, "nnz": int(X.nnz), "rank": rank}, info=info)
