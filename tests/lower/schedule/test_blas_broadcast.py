"""A GEMM batched along an M or N index, the other operand broadcast (plan.dense.
blas_roles, Tuning.blas_broadcast): a tensor times a matrix along its middle mode
(`Σ_j X[i,j,k]·A[j,r]` into (i, r, k)) runs as one BLAS call per i; the Imp
interpreter, the C kernel and numpy agree; off, or where a product would be a
matrix-vector product a point, the loops stay."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.plan.dense import blas_roles, gemm_roles
from etchpy.testing import imp_evaluate
from etchpy.expr.einsum import einsum_expr
from test_schedule_blas import gemms, program

OFF = ep.Tuning(blas_broadcast=False)


def test_roles_move_the_fewest_indices_into_the_batch():
    """Plain roles where the layouts take them; else M (or N) indices as a batch,
    the other operand read again at each point; None where no move helps or off."""
    plain = (("i", "j"), ("j", "k"), ("i", "k"))
    assert blas_roles(*plain, ("j",)) == gemm_roles(*plain, ("j",))
    middle = (("i", "j", "k"), ("j", "r"), ("i", "r", "k"))
    assert blas_roles(*middle, ("j",)) == (("k",), ("r",), ("j",), ("i",))
    assert blas_roles(*middle, ("j",), broadcast=False) is None
    turned = (("j", "r"), ("i", "j", "k"), ("i", "r", "k"))      # the tensor second: N moves
    assert blas_roles(*turned, ("j",)) == (("r",), ("k",), ("j",), ("i",))
    assert blas_roles(("i", "j", "k"), ("j", "r"), ("r", "k", "i"), ("j",)) is None
    assert blas_roles(("i", "j", "b"), ("j", "k", "b"), ("k", "b", "i"), ("j",)) is None


SPECS = [("ijk,jr->irk", (6, 5, 7), (5, 3)), ("jr,ijk->irk", (5, 3), (6, 5, 7)),
         ("ijkl,kr->ijrl", (3, 4, 5, 6), (5, 2)), ("ijk,jr->rik", (4, 5, 6), (5, 3)),
         ("aijk,jr->airk", (2, 3, 4, 5), (4, 3))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("spec, sa, sb", SPECS)
def test_a_product_along_a_middle_mode_is_a_gemm_a_point(spec, sa, sb, dtype):
    """The compiled kernel (not numpy's matmul: ep.compile's own) has one Gemm with
    the broadcast batch, none with the knob off; C, the interpreter and numpy
    agree, in float64 and float32."""
    rng = np.random.default_rng(len(spec))
    ops = [rng.random(sa).astype(dtype), rng.random(sb).astype(dtype)]
    sr = "real32" if dtype == np.float32 else None
    assert len(gemms(program(spec, ops, semiring=sr))) == 1
    assert not gemms(program(spec, ops, tuning=OFF, semiring=sr))
    want = np.einsum(spec, *ops)
    expr, out, inputs = einsum_expr(spec, ops)
    for tuning in (None, OFF):
        kern = ep.compile(expr, out_indices=out, tuning=tuning, semiring=sr)
        got = kern(**inputs)
        np.testing.assert_allclose(got, want, rtol=1e-5)
        np.testing.assert_allclose(imp_evaluate(expr, inputs, out_indices=out, tuning=tuning,
                                                semiring=sr), want, rtol=1e-5)


@pytest.mark.parametrize("shape", [(7, 6, 5), (1, 6, 5), (7, 1, 5), (7, 6, 1), (20, 3, 9)])
@pytest.mark.parametrize("rank", [1, 4])
@pytest.mark.parametrize("spec", ["ijk,jr,kr->ir", "ijk,ir,kr->jr", "ijk,ir,jr->kr"])
def test_mttkrp_of_every_mode_and_extent_agrees(spec, shape, rank):
    """Dense MTTKRP, whose first mode plans a middle-mode product: numpy's values
    with and without the broadcast batch, size-1 extents and rank 1 included."""
    rng = np.random.default_rng(sum(shape) + rank)
    t = rng.random(shape)
    dims = dict(zip("ijk", shape))
    ops = [t, rng.random((dims[spec[4]], rank)), rng.random((dims[spec[7]], rank))]
    want = np.einsum(spec, *ops)
    for tuning in (None, OFF):
        np.testing.assert_allclose(ep.einsum(spec, *ops, tuning=tuning), want, rtol=1e-12)
