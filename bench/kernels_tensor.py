"""The benchmark kernels over 3-tensors (bench/kernels.py): ttv, ttm, mttkrp,
inner3."""
from __future__ import annotations

import numpy as np

from .cases import Case, Impl
from .kernel_impls import etchpy_impls, tensora_impl
from .kernel_inputs import Tensor3, rng_for


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

    def peer_impls(out_formats):
        """pydata sparse and tensora (its output levels `out_formats`), where present."""
        found = []
        if pd is not None:
            def build_pd():
                Bs = B.pydata(pd)
                return (lambda: pd.tensordot(Bs, M, axes=([2], [0]))), _pydata_dense
            found.append(Impl("pydata sparse", build_pd,
                              note="sparse.tensordot(B, M, axes=(2, 0)) (dense I x J x R result)"))
        if "tensora" in ctx.peers:
            found.append(tensora_impl(ctx, "A(i,j,r) = B(i,j,k) * M(k,r)", out_formats,
                                      {"B": ("sss", B), "M": ("dd", M)}))
        return found

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
    impls += peer_impls("ssd")
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
    impls += peer_impls("ddd")
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
