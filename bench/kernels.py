"""The benchmark kernels: input generation (fixed seeds) and every implementation.

Each `gen_<name>(ctx)` yields `Case`s lazily, so that --only builds only the data it
needs and each case's inputs are freed before the next one is generated. Inputs are
generated from numpy's default_rng with a seed fixed per kernel (never with
scipy.sparse.random, which is slow): coordinates -> coo -> canonical csr.

--quick shrinks every problem about 10x (nonzeros / rows).
"""
from __future__ import annotations

import re
import sqlite3
import time
import zlib

import numpy as np
import scipy.sparse as sp

import etchpy as ep

from . import exprs
from .cases import Case, Impl, check_close, check_csr_sorted
from .timing import fmt_time, summarize, timed

SEED = 20240917


def rng_for(name: str) -> np.random.Generator:
    """A generator seeded by SEED and the kernel name (independent of --only)."""
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


# ------------------------------------------------------------------ input data

def _csr(rows, cols, vals, shape):
    m = sp.csr_matrix((vals, (rows, cols)), shape=shape)   # coo -> csr, sums duplicates
    m.sum_duplicates()
    m.sort_indices()
    return m


def random_csr(rng, n, m, nnz):
    """n x m, about `nnz` uniformly random nonzeros in [0, 1) (duplicates summed)."""
    rows = rng.integers(0, n, nnz)
    cols = rng.integers(0, m, nnz)
    return _csr(rows, cols, rng.random(nnz), (n, m))


def per_row_csr(rng, n, m, k):
    """n x m with k random columns per row (duplicates summed, so ≤ k)."""
    rows = np.repeat(np.arange(n), k)
    cols = rng.integers(0, m, n * k)
    return _csr(rows, cols, rng.random(n * k), (n, m))


def overlapping_csr(rng, a, frac=0.5):
    """A matrix sharing `frac` of a's coordinates (new values) plus as many new random ones."""
    coo = a.tocoo()
    nnz = coo.nnz
    keep = rng.random(nnz) < frac
    extra = nnz - int(keep.sum())
    rows = np.concatenate([coo.row[keep], rng.integers(0, a.shape[0], extra)])
    cols = np.concatenate([coo.col[keep], rng.integers(0, a.shape[1], extra)])
    return _csr(rows, cols, rng.random(len(rows)), a.shape)


def stencil_csr(g):
    """The 2-D 5-point Laplacian on a g x g grid (4 on the diagonal, -1 to neighbours)."""
    n = g * g
    idx = np.arange(n).reshape(g, g)
    rows, cols, vals = [idx.ravel()], [idx.ravel()], [np.full(n, 4.0)]
    for src, dst in ((idx[1:, :], idx[:-1, :]), (idx[:-1, :], idx[1:, :]),
                     (idx[:, 1:], idx[:, :-1]), (idx[:, :-1], idx[:, 1:])):
        rows.append(src.ravel())
        cols.append(dst.ravel())
        vals.append(np.full(src.size, -1.0))
    return _csr(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), (n, n))


def er_degree_ordered_upper(rng, n, m):
    """Erdős–Rényi graph (m random pairs), degree-ordered upper triangle."""
    return degree_ordered_upper(n, rng.integers(0, n, m), rng.integers(0, n, m))


RMAT_PROBS = (0.57, 0.19, 0.19, 0.05)       # the Graph500 R-MAT parameters


def rmat_degree_ordered_upper(rng, scale, m, probs=RMAT_PROBS):
    """R-MAT power-law graph on 2**scale vertices from m edge draws: each draw picks
    one of four quadrants per bit with probabilities a, b, c, d; vertex ids are then
    permuted at random (so high degree is not tied to low ids), and the result is
    degree-ordered like the ER graph."""
    n = 1 << scale
    a, b, c, _ = probs
    src = np.zeros(m, dtype=np.int64)
    dst = np.zeros(m, dtype=np.int64)
    for _bit in range(scale):
        u = rng.random(m)
        row = u >= a + b                      # quadrants c, d: lower half
        col = ((u >= a) & (u < a + b)) | (u >= a + b + c)    # quadrants b, d
        src = (src << 1) | row
        dst = (dst << 1) | col
    perm = rng.permutation(n)
    return degree_ordered_upper(n, perm[src], perm[dst])


def degree_ordered_upper(n, a, b):
    """The simple graph on edges (a, b) (loops and duplicates dropped), vertices
    relabelled by ascending degree, each edge oriented low -> high label: the
    strictly upper triangular U (int64 ones) and its edge arrays."""
    keep = a != b
    lo, hi = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
    key = np.unique(lo * n + hi)
    lo, hi = key // n, key % n
    deg = np.bincount(lo, minlength=n) + np.bincount(hi, minlength=n)
    order = np.lexsort((np.arange(n), deg))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    ra, rb = rank[lo], rank[hi]
    u, w = np.minimum(ra, rb), np.maximum(ra, rb)
    U = _csr(u, w, np.ones(len(u), dtype=np.int64), (n, n))
    coo = U.tocoo()
    return U, coo.row.astype(np.int64), coo.col.astype(np.int64)


class Tensor3:
    """A random 3-tensor (unique coordinates in lexicographic order) in several forms."""

    def __init__(self, rng, dims, nnz, base=None, share=0.5):
        I, J, K = dims
        self.dims = dims
        keys = rng.integers(0, I * J * K, nnz, dtype=np.int64)
        if base is not None:     # share about `share` of base's coordinates
            keep = rng.random(len(base.keys)) < share
            keys = np.concatenate([base.keys[keep], keys[: nnz - int(keep.sum())]])
        self.keys = np.unique(keys)
        self.i = self.keys // (J * K)
        self.j = (self.keys // K) % J
        self.k = self.keys % K
        self.vals = rng.random(len(self.keys))
        self.nnz = len(self.keys)
        self._cache = {}

    def coords(self):
        return np.stack([self.i, self.j, self.k])

    def etchpy(self, name):
        key = ("ep", name)
        if key not in self._cache:
            self._cache[key] = ep.Tensor.from_coords(self.coords(), self.vals, self.dims,
                                                     "csf", name=name)
        return self._cache[key]

    def unfold3(self):
        """Mode-3 unfolding: csr of shape (I*J, K), row = i*J + j."""
        if "u3" not in self._cache:
            I, J, K = self.dims
            self._cache["u3"] = _csr(self.i * J + self.j, self.k, self.vals, (I * J, K))
        return self._cache["u3"]

    def fibers(self):
        """(fiber row ids i*J+j of the present fibers, csr of shape (#fibers, K))."""
        if "fib" not in self._cache:
            I, J, K = self.dims
            fid, inv = np.unique(self.i * J + self.j, return_inverse=True)
            self._cache["fib"] = (fid, _csr(inv, self.k, self.vals, (len(fid), K)))
        return self._cache["fib"]

    def mode1_pairs(self):
        """(j, k of the present (j,k) pairs, csr B₍₁₎ of shape (I, #pairs))."""
        if "m1" not in self._cache:
            I, J, K = self.dims
            pk, inv = np.unique(self.j * K + self.k, return_inverse=True)
            self._cache["m1"] = (pk // K, pk % K,
                                 _csr(self.i, inv, self.vals, (I, len(pk))))
        return self._cache["m1"]

    def pydata(self, sparse):
        if "pd" not in self._cache:
            self._cache["pd"] = sparse.COO(self.coords(), self.vals, shape=self.dims,
                                           has_duplicates=False, sorted=True)
        return self._cache["pd"]


# ------------------------------------------------------------------ etchpy impls

def prebuild(kernel, inputs):
    """Inputs converted once to ep.Tensor in the declared formats (not timed)."""
    out = {}
    for name, tv in kernel.tensors.items():
        v = inputs[name]
        if isinstance(v, ep.Tensor):
            out[name] = v
        elif sp.issparse(v):
            out[name] = ep.Tensor.from_scipy(v, tv.format, semiring=kernel.semiring, name=name)
        else:
            out[name] = ep.Tensor.from_dense(np.asarray(v), tv.format,
                                             semiring=kernel.semiring, name=name)
    return out


def etchpy_impls(expr_name, inputs, info, norm=None):
    """etchpy on prebuilt ep.Tensor inputs, and (when some input is scipy) on the raw
    scipy/numpy inputs, which the kernel converts and validates on every call."""
    expr, kw = exprs.get(expr_name)

    def build():
        k = ep.compile(expr, **kw)
        info["expression"] = str(k.expr)
        info["semiring"] = k.semiring.name
        info["loop order"] = "; ".join(f"{s.target} over ({', '.join(s.order)})"
                                       for s in k.plan.steps)
        tin = prebuild(k, inputs)
        return (lambda: k(**tin)), norm

    impls = [Impl("etchpy", build, role="etchpy",
                  note="compiled kernel, inputs prebuilt as ep.Tensor")]
    if any(sp.issparse(v) for v in inputs.values()):
        def build_raw():
            k = ep.compile(expr, **kw)
            return (lambda: k(**inputs)), norm
        impls.append(Impl("etchpy[scipy in]", build_raw, role="etchpy-raw",
                          note="same kernel fed scipy/numpy inputs (converted + validated "
                               "per call)"))
    return impls


# ------------------------------------------------------------------ peer helpers

def _gb(ctx):
    return ctx.peers.get("graphblas")


def gb_spmv_impl(ctx, A, x):
    gb = _gb(ctx)

    def build():
        Ag, xg = gb.io.from_scipy_sparse(A), gb.Vector.from_dense(x)

        def f():
            y = Ag.mxv(xg, gb.semiring.plus_times).new()
            y.wait()
            return y
        return f, lambda y: y.to_dense(fill_value=0.0)
    return Impl("GraphBLAS", build, note="A.mxv(x, plus_times), 1 thread")


def tensora_impl(ctx, assignment, out_format, inputs, note=""):
    """tensora (cffi backend) on `inputs`: name -> (tensora format, array). A dense
    format takes a numpy array; a sparse one a scipy matrix or a 3-tensor (.i .j .k
    .vals .dims). It runs in this process or in tensora's own venv (bench/peers.py)."""
    peer = ctx.peers["tensora"]
    output = re.match(r"\s*(\w+)", assignment).group(1)

    def external(ctx):
        arrays, formats = {}, {}
        for name, (fmt, data) in inputs.items():
            formats[name] = fmt
            if isinstance(data, np.ndarray):
                arrays[name] = data
            elif sp.issparse(data):
                coo = data.tocoo()
                arrays[name + ".coords"] = np.vstack([coo.row, coo.col]).astype(np.int64)
                arrays[name + ".vals"], arrays[name + ".dims"] = coo.data, np.array(coo.shape)
            else:
                arrays[name + ".coords"] = np.vstack([data.i, data.j, data.k]).astype(np.int64)
                arrays[name + ".vals"], arrays[name + ".dims"] = data.vals, np.array(data.dims)
        spec = {"assignment": assignment, "formats": formats, "output": output,
                "output_format": out_format, "repeat": ctx.repeat, "budget": ctx.budget,
                "impl_budget": ctx.impl_budget}
        return peer.run(spec, arrays)
    where = "own venv" if peer.python else "in process"
    return Impl("tensora", None, external=external,
                note=note or f"tensor_method({assignment!r}), cffi backend, {where}")


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
        gb = _gb(ctx)

        def build():
            Ag, Xg = gb.io.from_scipy_sparse(A), gb.Matrix.from_dense(X)

            def f():
                Y = Ag.mxm(Xg, gb.semiring.plus_times).new()
                Y.wait()
                return Y
            return f, lambda Y: Y.to_dense(fill_value=0.0)
        impls.append(Impl("GraphBLAS", build, note="A.mxm(X full, plus_times), 1 thread"))
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
        gb = _gb(ctx)

        def build():
            Ag, Bg = gb.io.from_scipy_sparse(A), gb.io.from_scipy_sparse(B)

            def f():
                C = Ag.mxm(Bg, gb.semiring.plus_times).new()
                C.wait()          # finishes pending work (incl. sorting jumbled rows)
                return C
            return f, lambda C: gb.io.to_scipy_sparse(C, format="csr")
        impls.append(Impl("GraphBLAS", build,
                          note="A.mxm(B, plus_times).new(); wait() (materialized)"))
    yield Case("spgemm", f"n={n:,} {k}/row nnz={A.nnz:,}", impls, check=check_csr_sorted,
               sizes={"n": n, "per_row": k, "nnz_A": int(A.nnz), "nnz_B": int(B.nnz)},
               notes=["etchpy outputs sorted rows; scipy does not (see scipy+sort)"],
               info=info)


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
            gb = _gb(ctx)

            def build(gop=gop, gname=gname):
                Ag, Bg = gb.io.from_scipy_sparse(A), gb.io.from_scipy_sparse(B)
                op = getattr(gb.binary, gname)

                def f():
                    C = getattr(Ag, gop)(Bg, op).new()
                    C.wait()
                    return C
                return f, lambda C: gb.io.to_scipy_sparse(C, format="csr")
            impls.append(Impl("GraphBLAS", build, note=f"A.{gop}(B, {gname})"))
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
        gb = _gb(ctx)

        def build():
            Ag = gb.io.from_scipy_sparse(A)

            def f():
                C = Ag.T.new()
                C.wait()
                return C
            return f, lambda C: gb.io.to_scipy_sparse(C, format="csr").T
        impls.append(Impl("GraphBLAS", build, note="A.T.new(), by rows (= csc of A)"))
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


# ------------------------------------------------------------------ 3-tensors

def tensor_data(ctx):
    if "tensor3" not in ctx.cache:
        rng = rng_for("tensor3")
        dims = (464, 464, 464) if ctx.quick else (1000, 1000, 1000)
        nnz = 100_000 if ctx.quick else 1_000_000
        B = Tensor3(rng, dims, nnz)
        C = Tensor3(rng, dims, nnz, base=B, share=0.5)
        ctx.cache["tensor3"] = (B, C)
    return ctx.cache["tensor3"]


def _dims_txt(B):
    return f"{B.dims[0]}³ nnz={B.nnz:,}"


def gen_ttv(ctx):
    B, _ = tensor_data(ctx)
    v = rng_for("ttv").random(B.dims[2])
    I, J, K = B.dims
    info = {}
    impls = etchpy_impls("ttv", {"B": B.etchpy("B"), "v": v}, info)

    def build():
        U3 = B.unfold3()
        return lambda: (U3 @ v).reshape(I, J)
    impls.append(Impl("scipy", build, note="mode-3 unfolding (I·J x K csr) @ v, reshaped"))
    if "sparse" in ctx.peers:
        sparse = ctx.peers["sparse"]

        def build_pd():
            Bs = B.pydata(sparse)
            return (lambda: sparse.tensordot(Bs, v, axes=([2], [0]))), _pydata_dense
        impls.append(Impl("pydata sparse", build_pd, note="sparse.tensordot(B, v, axes=(2, 0))"))
    if "tensora" in ctx.peers:
        impls.append(tensora_impl(ctx, "y(i,j) = B(i,j,k) * v(k)", "dd",
                                  {"B": ("sss", B), "v": ("d", v)}))
    yield Case("ttv", f"{_dims_txt(B)}", impls, sizes={"dims": B.dims, "nnz": B.nnz},
               notes=["dense output (I x J)"], info=info)


def _pydata_dense(r):
    return np.asarray(r.todense()) if hasattr(r, "todense") else np.asarray(r)


def gen_ttm(ctx):
    B, _ = tensor_data(ctx)
    R = 16
    I, J, K = B.dims
    M = rng_for("ttm").random((K, R))
    pd = ctx.peers.get("sparse")

    def pydata_impl():
        def build_pd():
            Bs = B.pydata(pd)
            return (lambda: pd.tensordot(Bs, M, axes=([2], [0]))), _pydata_dense
        return Impl("pydata sparse", build_pd,
                    note="sparse.tensordot(B, M, axes=(2, 0)) (dense I x J x R result)")

    # 1. sparse output: (i, j) fibers compressed, r dense
    info = {}
    impls = etchpy_impls("ttm", {"B": B.etchpy("B"), "M": M}, info,
                         norm=lambda t: t.to_dense())

    def build():
        fid, Bf = B.fibers()

        def norm(res):
            out = np.zeros((I * J, R))
            out[fid] = res
            return out.reshape(I, J, R)
        return (lambda: Bf @ M), norm
    impls.append(Impl("scipy", build,
                      note="(present (i,j) fibers x K csr) @ M -> #fibers x R dense"))
    if pd is not None:
        impls.append(pydata_impl())
    if "tensora" in ctx.peers:
        impls.append(tensora_impl(ctx, "A(i,j,r) = B(i,j,k) * M(k,r)", "ssd",
                                  {"B": ("sss", B), "M": ("dd", M)}))
    yield Case("ttm", f"{_dims_txt(B)} R={R} → sparse (i,j), dense r", impls,
               sizes={"dims": B.dims, "nnz": B.nnz, "R": R},
               notes=["etchpy output format (compressed, compressed, dense)"], info=info)

    # 2. dense I x J x R output
    info = {}
    impls = etchpy_impls("ttm_dense", {"B": B.etchpy("B"), "M": M}, info)

    def build_dense():
        U3 = B.unfold3()
        return lambda: (U3 @ M).reshape(I, J, R)
    impls.append(Impl("scipy", build_dense,
                      note="mode-3 unfolding (I·J x K csr) @ M, reshaped (dense)"))
    if pd is not None:
        impls.append(pydata_impl())
    if "tensora" in ctx.peers:
        impls.append(tensora_impl(ctx, "A(i,j,r) = B(i,j,k) * M(k,r)", "ddd",
                                  {"B": ("sss", B), "M": ("dd", M)}))
    yield Case("ttm", f"{_dims_txt(B)} R={R} → dense", impls,
               sizes={"dims": B.dims, "nnz": B.nnz, "R": R},
               notes=["dense output I x J x R"], info=info)


def gen_mttkrp(ctx):
    B, _ = tensor_data(ctx)
    I, J, K = B.dims
    rng = rng_for("mttkrp")
    for R in (16, 32):
        C, D = rng.random((J, R)), rng.random((K, R))
        info = {}
        impls = etchpy_impls("mttkrp", {"B": B.etchpy("B"), "C": C, "D": D}, info)

        def build(C=C, D=D):
            pj, pk, B1 = B.mode1_pairs()
            return lambda: B1 @ (C[pj] * D[pk])
        impls.append(Impl("scipy", build,
                          note="B₍₁₎ (I x present (j,k) pairs, csr) @ (C[j]∘D[k]) "
                               "(Khatri-Rao rows of present pairs only)"))
        if "sparse" in ctx.peers:
            sparse = ctx.peers["sparse"]

            def build_pd(C=C, D=D):
                Bs = B.pydata(sparse)
                return (lambda: sparse.einsum("ijk,jr,kr->ir", Bs, C, D)), _pydata_dense
            impls.append(Impl("pydata sparse", build_pd,
                              note="sparse.einsum('ijk,jr,kr->ir') (materializes broadcasts)"))
        if "tensora" in ctx.peers:
            impls.append(tensora_impl(ctx, "A(i,r) = B(i,j,k) * C(j,r) * D(k,r)", "dd",
                                      {"B": ("sss", B), "C": ("dd", C), "D": ("dd", D)}))
        yield Case("mttkrp", f"{_dims_txt(B)} rank {R}", impls,
                   sizes={"dims": B.dims, "nnz": B.nnz, "rank": R}, info=info)


def gen_inner3(ctx):
    B, C = tensor_data(ctx)
    info = {}
    impls = etchpy_impls("inner3", {"B": B.etchpy("B"), "C": C.etchpy("C")}, info)

    def build():
        B3, C3 = B.unfold3(), C.unfold3()
        return lambda: B3.multiply(C3).sum()
    impls.append(Impl("scipy", build, note="mode-3 unfoldings: B3.multiply(C3).sum()"))
    if "sparse" in ctx.peers:
        sparse = ctx.peers["sparse"]

        def build_pd():
            Bs, Cs = B.pydata(sparse), C.pydata(sparse)
            return (lambda: (Bs * Cs).sum()), _pydata_dense
        impls.append(Impl("pydata sparse", build_pd, note="(B * C).sum()"))
    if "tensora" in ctx.peers:
        impls.append(tensora_impl(ctx, "s() = B(i,j,k) * C(i,j,k)", "",
                                  {"B": ("sss", B), "C": ("sss", C)}))
    yield Case("inner3", f"{_dims_txt(B)} & nnz={C.nnz:,}", impls,
               sizes={"dims": B.dims, "nnz_B": B.nnz, "nnz_C": C.nnz},
               notes=["C shares about half of B's coordinates"], info=info)


# ------------------------------------------------------------------ graph kernels

def graph_data(ctx):
    if "graph" not in ctx.cache:
        rng = rng_for("graph")
        n, k = (100_000, 5) if ctx.quick else (1_000_000, 5)
        W = per_row_csr(rng, n, n, k)             # W[u, v]: edge u -> v, weight in [0, 1)
        Wc = W.tocsc()
        Wc.sort_indices()
        Wb = sp.csc_matrix((np.ones(Wc.nnz, dtype=bool), Wc.indices, Wc.indptr),
                           shape=Wc.shape)
        Wbr = sp.csr_matrix((np.ones(W.nnz, dtype=bool), W.indices, W.indptr), shape=W.shape)
        d = rng.random(n) * 10.0
        d[rng.random(n) < 0.5] = np.inf          # half the vertices not reached yet
        f = rng.random(n) < 0.05                  # a 5% frontier
        nonempty = np.diff(Wc.indptr) > 0
        starts = Wc.indptr[:-1][nonempty]
        ctx.cache["graph"] = dict(n=n, k=k, W=W, Wc=Wc, Wb=Wb, Wbr=Wbr, d=d, f=f,
                                  nonempty=nonempty, starts=starts)
    return ctx.cache["graph"]


def gen_minplus(ctx):
    G = graph_data(ctx)
    n, Wc, d, W = G["n"], G["Wc"], G["d"], G["W"]
    info = {}
    impls = etchpy_impls("minplus", {"W": Wc, "d": d}, info)

    def build():
        idx, data, nonempty, starts = Wc.indices, Wc.data, G["nonempty"], G["starts"]

        def f():
            vals = d[idx] + data
            out = np.full(n, np.inf)
            out[nonempty] = np.minimum.reduceat(vals, starts)
            np.minimum(out, d, out=out)
            return out
        return f
    impls.append(Impl("numpy", build,
                      note="np.minimum.reduceat(d[csc rows] + csc data) per column, "
                           "then min with d"))
    if _gb(ctx):
        gb = _gb(ctx)

        def build_gb():
            Wg = gb.io.from_scipy_sparse(W)
            fin = np.flatnonzero(np.isfinite(d))
            dg = gb.Vector.from_coo(fin, d[fin], size=n)   # ∞ = not stored

            def f():
                out = dg.dup()
                out(accum=gb.binary.min) << dg.vxm(Wg, gb.semiring.min_plus)
                out.wait()
                return out
            return f, lambda v: v.to_dense(fill_value=np.inf)
        impls.append(Impl("GraphBLAS", build_gb,
                          note="out = d.dup(); out(accum=min) << d.vxm(W, min_plus); "
                               "d stores finite entries only"))
    yield Case("minplus", f"n={n:,} {G['k']}/row nnz={Wc.nnz:,}", impls,
               sizes={"n": n, "per_row": G["k"], "nnz": int(Wc.nnz)},
               notes=["W declared csc (pull); half of d is ∞"], info=info)


def gen_orand(ctx):
    G = graph_data(ctx)
    n, Wb, f = G["n"], G["Wb"], G["f"]
    info = {}
    impls = etchpy_impls("orand", {"W": G["Wbr"], "f": f}, info)

    def build():
        idx, nonempty, starts = Wb.indices, G["nonempty"], G["starts"]

        def fn():
            out = np.zeros(n, dtype=bool)
            out[nonempty] = np.logical_or.reduceat(f[idx], starts)
            return out
        return fn
    impls.append(Impl("numpy", build, note="np.logical_or.reduceat(f[csc rows]) per column"))
    if _gb(ctx):
        gb = _gb(ctx)

        def build_gb():
            Wg = gb.io.from_scipy_sparse(G["W"].astype(bool))
            fg = gb.Vector.from_coo(np.flatnonzero(f), True, size=n, dtype=bool)

            def fn():
                y = fg.vxm(Wg, gb.semiring.lor_land).new()
                y.wait()
                return y
            return fn, lambda v: v.to_dense(fill_value=False)
        impls.append(Impl("GraphBLAS", build_gb,
                          note="f.vxm(W, lor_land) with f a sparse bool vector (push)"))
    yield Case("orand", f"n={n:,} {G['k']}/row frontier {int(f.sum()):,}", impls,
               sizes={"n": n, "per_row": G["k"], "nnz": int(Wb.nnz), "frontier": int(f.sum())},
               notes=["etchpy: W csr and the frontier a sparse bool vector (push), the "
                      "same information GraphBLAS gets; numpy pulls over csc W"], info=info)


TRIANGLE_SQL = ("SELECT count(*) FROM u AS e1 JOIN u AS e2 ON e2.a = e1.b "
                "JOIN u AS e3 ON e3.a = e1.a AND e3.b = e2.b")


def gen_triangle(ctx):
    rng = rng_for("triangle")
    n, m = (10_000, 100_000) if ctx.quick else (100_000, 1_000_000)
    yield _triangle_case(ctx, "ER", n, *er_degree_ordered_upper(rng, n, m))
    scale = 13 if ctx.quick else 17                    # 8,192 or 131,072 vertices
    rng = rng_for("triangle-rmat")
    yield _triangle_case(ctx, f"R-MAT scale {scale}", 1 << scale,
                         *rmat_degree_ordered_upper(rng, scale, m))


def _triangle_case(ctx, graph, n, U, eu, ev):
    info = {}
    impls = etchpy_impls("triangle", {"U": U}, info, norm=int)
    impls.append(Impl("scipy", lambda: ((lambda: (U @ U).multiply(U).sum()), int),
                      note="(U @ U).multiply(U).sum()"))
    if _gb(ctx):
        gb = _gb(ctx)

        def build_gb():
            Ug = gb.io.from_scipy_sparse(U)

            def f():
                Cm = gb.Matrix(gb.dtypes.INT64, n, n)
                Cm(Ug.S) << Ug.mxm(Ug, gb.semiring.plus_pair)
                return Cm.reduce_scalar(gb.monoid.plus).new().value
            return f, int
        impls.append(Impl("GraphBLAS", build_gb,
                          note="C<U.S> = U plus_pair U; reduce (masked plus_pair)"))
    if "duckdb" in ctx.peers:
        duckdb = ctx.peers["duckdb"]

        def build_duck():
            con = duckdb.connect()
            con.execute("SET threads TO 1")
            edges = {"a": eu, "b": ev}              # noqa: F841 (DuckDB scans the local)
            con.execute("CREATE TABLE u AS SELECT * FROM edges")
            return (lambda: con.execute(TRIANGLE_SQL).fetchone()[0]), int
        impls.append(Impl("DuckDB", build_duck, note="3-way self-join count(*), 1 thread"))
    if "sqlite3" in ctx.peers:
        budget = ctx.budget

        def build_sqlite():
            con = sqlite3.connect(":memory:")
            con.execute("CREATE TABLE u (a INTEGER NOT NULL, b INTEGER NOT NULL, "
                        "PRIMARY KEY (a, b)) WITHOUT ROWID")
            con.executemany("INSERT INTO u VALUES (?, ?)", zip(eu.tolist(), ev.tolist()))
            con.commit()
            deadline = [float("inf")]
            con.set_progress_handler(lambda: int(time.perf_counter() > deadline[0]), 100_000)

            def f():
                deadline[0] = time.perf_counter() + budget
                try:
                    return con.execute(TRIANGLE_SQL).fetchone()[0]
                except sqlite3.OperationalError as exc:
                    if "interrupt" in str(exc):
                        raise TimeoutError(f"SQLite query interrupted after the "
                                           f"{budget:g} s budget") from None
                    raise
            return f, int
        impls.append(Impl("SQLite", build_sqlite,
                          note=f"same SQL, (a,b) primary key; interrupted after {budget:g} s"))
    return Case("triangle", f"{graph} n={n:,} m={U.nnz:,}", impls,
               sizes={"n": n, "m": int(U.nnz)},
               notes=["U: strictly upper triangle after relabelling vertices by degree",
                      "etchpy over the integer semiring"], info=info)


# name -> generator, in run order
KERNELS = {
    "spmv": gen_spmv, "stencil": gen_stencil, "spmm": gen_spmm, "spgemm": gen_spgemm,
    "ewise": gen_ewise, "transpose": gen_transpose, "sddmm": gen_sddmm, "ttv": gen_ttv,
    "ttm": gen_ttm, "mttkrp": gen_mttkrp, "inner3": gen_inner3, "minplus": gen_minplus,
    "orand": gen_orand, "triangle": gen_triangle,
}

__all__ = ["KERNELS", "check_close", "fmt_time"]
