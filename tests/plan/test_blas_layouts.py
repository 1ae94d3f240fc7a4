"""Temporaries laid out so that dense two-factor steps run as BLAS calls
(plan.layout.for_blas)."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.plan import dense, layout
from etchpy.plan import plan as planning
from etchpy.plan.cost import Stats
from etchpy.expr.walk import accesses

i, j, k, a, b, c = ep.indices("i j k a b c")
X = ep.tensor("X", 3, "csf")
U, V, W = ep.tensor("U", 2), ep.tensor("V", 2), ep.tensor("W", 2)
S = ep.sum
TUCKER_I_FIRST = S(k, W[k, c] * S(j, V[j, b] * S(i, X[i, j, k] * U[i, a])))
STATS = Stats(dims=dict(i=120, j=120, k=120, a=16, b=16, c=16), nnz={"X": 188_000},
              fibers=[("X", 1, 1, 120, 120, 120), ("X", 2, 120, 14400, 120, 120)])


def _gemm_ready(step) -> bool:
    fs = dense.factors(step.body)
    if fs is None or len(fs) != 2 or any(dense.storage_axes(f) is None for f in fs):
        return False
    axes = [dense.storage_axes(f) for f in fs]
    roles = dense.gemm_roles(*axes, step.out, step.bound)
    return roles is not None and dense.gemm_layouts(*axes, step.out, roles)


def _plan(tuning=None):
    st = STATS if tuning is None else Stats(STATS.dims, STATS.nnz, tuning=tuning)
    p = planning.make_plan(TUCKER_I_FIRST, (a, b, c), keep_factored=True, stats=st)
    return p, layout.for_blas(p, ep.semirings.real, st.with_origin(p.origin))


def test_the_dense_steps_of_a_tucker_chain_become_gemms():
    before, after = _plan()
    assert not all(_gemm_ready(s) for s in before.steps[1:])
    assert all(_gemm_ready(s) for s in after.steps[1:])
    for s in after.steps:          # a temporary still follows its maker's loop order
        if s.target in after.temps:
            assert s.out == tuple(v for v in s.order if v in s.out)


def test_nothing_moves_without_blas():
    before, after = _plan(ep.Tuning(blas=False))
    assert after.steps == before.steps


@pytest.mark.parametrize("blas", [True, False])
def test_the_relaid_chain_agrees(blas):
    n, r = 10, 3
    rng = np.random.default_rng(5)
    coords = np.unique(rng.integers(0, n, size=(250, 3)), axis=0)
    xt = ep.Tensor.from_coords(coords.T, rng.random(len(coords)), (n, n, n), "csf")
    u, v, w = (rng.random((n, r)) for _ in range(3))
    kern = ep.compile(TUCKER_I_FIRST, out_indices=(a, b, c), tuning=ep.Tuning(blas=blas))
    want = np.einsum("ijk,ia,jb,kc->abc", xt.to_dense(), u, v, w)
    np.testing.assert_allclose(kern(X=xt, U=u, V=v, W=w), want, rtol=1e-10)


def test_as_matrix_reads_groups_as_blas_does():
    assert dense.as_matrix(("j", "k", "a"), ("k", "a"), ("j",)) is True
    assert dense.as_matrix(("j", "b"), ("j",), ("b",)) is False
    assert dense.as_matrix(("a", "k", "b"), ("k", "a"), ("b",)) is None    # reordered
    assert dense.as_matrix(("j", "k", "a"), ("j", "a"), ("k",)) is None    # split


T3, R1, R2 = ep.tensor("T3", 3), ep.tensor("R1", 2), ep.tensor("R2", 2)
r = ep.indices("r")[0]
MTTKRP_K = S(j, R2[j, r] * S(i, T3[i, j, k] * R1[i, r]))     # ijk,ir,jr->kr


def _mttkrp_plan(e, out):
    st = Stats(dims=dict(i=100, j=100, k=100, r=32))
    p = planning.make_plan(e, out, keep_factored=True, stats=st)
    return p, layout.for_blas(p, ep.semirings.real, st.with_origin(p.origin))


def test_a_gemm_lays_out_its_temporary_to_read_the_larger_operand_as_stored():
    """Σ_i T3[i,j,k]·R1[i,r] into a temporary laid out (j, k, r) is T3ᵀ·R1, BLAS
    reading the tensor transposed; laid out (r, j, k) it is R1ᵀ·T3, the small
    matrix transposed. The reader then loops over the new layout."""
    _, after = _mttkrp_plan(MTTKRP_K, (k, r))
    gemm = next(s for s in after.steps if s.target in after.temps)
    assert _gemm_ready(gemm)
    assert gemm.out[0] == "r"
    reader = after.steps[-1]
    temp = next(a for a in accesses(reader.body) if a.tensor.name == gemm.target)
    assert [ix.name for ix in temp.indices] == list(gemm.out)
    assert reader.order[-1] == temp.indices[-1].name       # read along its last axis


@pytest.mark.parametrize("spec", ["ijk,ir,jr->kr", "ijk,ir,kr->jr", "ijk,jr,kr->ir"])
@pytest.mark.parametrize("blas", [True, False])
def test_mttkrp_agrees_whatever_the_layouts(spec, blas):
    rng = np.random.default_rng(9)
    t = rng.random((7, 6, 5))
    dims = dict(zip("ijk", t.shape))
    ops = [t, rng.random((dims[spec[4]], 3)), rng.random((dims[spec[7]], 3))]
    got = ep.einsum(spec, *ops, tuning=ep.Tuning(blas=blas))
    np.testing.assert_allclose(got, np.einsum(spec, *ops), rtol=1e-12)
