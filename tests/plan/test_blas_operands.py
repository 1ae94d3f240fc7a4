"""A dense contraction over element-wise work, Σ_K A[..]·f(..), planned as a
temporary F = f and one GEMM (plan.dense.operand_temps, Tuning.blas_operands)
where the cost model prices it lower: taken at sizes where BLAS pays, not at
small ones, not over a sparse operand or in another semiring, not with the
switch off; the C kernel (BLAS), the Imp interpreter and numpy agree either
way, and a lazy program replaying it gives the plain path's answers on arrays
written in place, another shape and float32."""
import numpy as np
import pytest

import etchpy as ep
from etchpy import imp, pipeline
from etchpy.imp import Gemm
from etchpy.lazy import replay
from etchpy.runtime.kernel import make_request
from etchpy.testing import imp_evaluate

pytestmark = pytest.mark.usefixtures("shared_cache")

OFF = ep.Tuning(blas_operands=False)
i0, i1, i2 = ep.indices("i0 i1 i2")
X, W, Y = ep.tensor("X", 2), ep.tensor("w", 1), ep.tensor("y", 1)
# Xᵀ·(X·w − y): the planner makes X·w a temporary; the outer sum reads it under `+`
LSQ = ep.sum(i1, X[i1, i0] * (ep.sum(i2, X[i1, i2] * W[i2]) + -1 * Y[i1]))
DIMS = {"i0": 100, "i1": 100, "i2": 100}


def _compiled(e, n, tuning=None, semiring="real", out=(i0,)):
    dims = {"i0": n, "i1": n, "i2": n}
    req = make_request(e, out_indices=out, semiring=semiring, tuning=tuning,
                       optimize=False, optimizer_options={"dims": dims})
    return pipeline.compile_request(req)


def _gemms(program) -> int:
    return sum(isinstance(s, Gemm) for s in imp.statements(program.body))


def test_a_contraction_over_element_wise_work_is_a_temporary_and_a_gemm_where_priced_lower():
    c = _compiled(LSQ, 100)
    temps = [s for s in c.plan.steps if s.target.startswith("tmp_op")]
    assert len(temps) == 1 and not temps[0].bound and _gemms(c.program) == 2
    assert c.plan.steps[-1].target == "out" and temps[0].target in str(c.plan.steps[-1].body)
    s = ep.tensor("s", 1, format="csf")     # f over a sparse operand: not dense work
    sparse = ep.sum(i1, X[i1, i0] * (ep.sum(i2, X[i1, i2] * W[i2]) + -1 * s[i1]))
    # F[i1,i0] = y[i1] + w[i0] would hold more cells than any operand or the output
    outer = ep.sum(i1, X[i1, i2] * (Y[i1] + W[i0]))
    for none in (_compiled(LSQ, 8), _compiled(LSQ, 100, OFF),
                 _compiled(LSQ, 100, semiring="min_plus"), _compiled(sparse, 100),
                 _compiled(outer, 100, out=(i0, i2))):
        assert not any(s.target.startswith("tmp_op") for s in none.plan.steps)
    assert _gemms(_compiled(LSQ, 100, OFF).program) == 1


@pytest.mark.parametrize("semiring, dtype", [("real", np.float64), ("real32", np.float32)])
def test_the_split_answers_as_the_fused_step_on_imp(semiring, dtype):
    """Planned for 100² (the split), run on the Imp interpreter on other sizes."""
    rng = np.random.default_rng(3)
    for m, n in ((7, 5), (4, 9)):
        x, w, y = (rng.random(s).astype(dtype) for s in ((m, n), n, m))
        for tuning in (None, OFF):
            got = imp_evaluate(LSQ, {"X": x, "w": w, "y": y}, semiring=semiring,
                               out_indices=(i0,), tuning=tuning, optimize=False,
                               optimizer_options={"dims": DIMS})
            assert got.dtype == dtype
            np.testing.assert_allclose(got, x.T @ (x @ w - y), rtol=1e-5 if dtype == np.float32
                                       else 1e-12)


def _lsq(F, X, w, y):
    return X.T @ (X @ w - y)


@pytest.mark.usefixtures("fresh_keys")
def test_a_lazy_least_squares_gradient_replays_the_split_as_numpy_answers(tuning=None):
    """Its kernel runs the split in C (BLAS) at these sizes, one C for both shapes."""
    rng = np.random.default_rng(4)
    for m, n, dtype in ((80, 60, np.float64), (60, 80, np.float64)):
        args = [rng.random((m, n)) / n, rng.standard_normal(n), rng.random(m)]
        args = [a.astype(dtype) for a in args]
        for _ in range(3):
            got = ep.compute(_lsq(ep, *(ep.lazy(a) for a in args)), tuning=tuning)
            want = _lsq(np, *args)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-10)
            for a in args:              # written in place between calls
                a[...] = rng.random(a.shape).astype(dtype)
        out = _lsq(ep, *(ep.lazy(a) for a in args))
        tape = replay.PROGRAMS.get((replay.signature([out])[0], True, 1, tuning))
        assert ["tmp_op" in fn.kernel[0].c_source for _, fn in tape.steps] == [True]
