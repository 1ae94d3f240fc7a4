"""The optimizer's driver (optimizer.optimize): values kept on every semiring,
costs never worse, and the rewrites it finds on known expressions."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import etchpy as ep
from etchpy.api import evaluate
from etchpy.expr.nodes import free_indices
from etchpy.optimizer.optimize import cost, equivalent, optimize
from etchpy.testing import assert_same, problems

FAST = dict(max_examples=40, deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

i, j, k, r, rp = ep.indices("i j k r rp")

SQ_DIMS = {"i": 10_000, "j": 10_000}
SQ_NNZ = {"X": 100_000}



def reference(e, inputs, sr, out):
    return evaluate(e, semiring=sr, backend="reference", out_indices=out, **inputs)


@settings(**FAST)
@given(problems())
def test_optimize_preserves_value_on_every_semiring(p):
    opt = optimize(p.expr, semiring=p.semiring, limits=dict(seconds=0.3))
    out = free_indices(p.expr)
    assert set(free_indices(opt.expr)) == set(out)
    assert opt.cost_after <= opt.cost_before
    want = reference(p.expr, p.inputs, p.semiring, out)
    got = reference(opt.expr, {n: p.inputs[n] for n in ep.expr.walk.tensors(opt.expr)},
                    p.semiring, out)
    assert_same(got, want, p.semiring, what=f"optimize({p.expr}) = {opt.expr}")


def test_optimized_expression_compiles_with_the_c_backend():
    A, B = ep.tensor("A", 2), ep.tensor("B", 2)
    e = ep.sum((i, j, k), A[i, j] * B[j, k])
    opt = optimize(e)
    rng = np.random.default_rng(0)
    ins = {"A": rng.integers(-3, 4, (3, 4)).astype(float),
           "B": rng.integers(-3, 4, (4, 5)).astype(float)}
    assert ep.evaluate(opt.expr, **ins) == pytest.approx(ep.evaluate(e, **ins))


def test_squared_loss_never_iterates_the_dense_space():
    X = ep.tensor("X", 2, "csr")
    U, V = ep.tensor("U", 1), ep.tensor("V", 1)
    e = ep.sum((i, j), (X[i, j] - U[i] * V[j]) ** 2)
    target = (ep.sum((i, j), X[i, j] ** 2) - 2 * ep.sum((i, j), U[i] * X[i, j] * V[j])
              + ep.sum(i, U[i] ** 2) * ep.sum(j, V[j] ** 2))
    opt = optimize(e, dims=SQ_DIMS, nnz=SQ_NNZ)
    assert equivalent(opt.expr, e)
    assert equivalent(opt.expr, target)
    assert opt.cost_before > 1e8
    assert opt.cost_after < 1e6
    assert opt.cost_after <= cost(target, dims=SQ_DIMS, nnz=SQ_NNZ)


def als(x_format):
    X = ep.tensor("X", 2, x_format)
    U, V = ep.tensor("U", 2), ep.tensor("V", 2)
    e = ep.sum(j, (ep.sum(rp, U[i, rp] * V[j, rp]) - X[i, j]) * V[j, r])
    expanded = (ep.sum(rp, U[i, rp] * ep.sum(j, V[j, rp] * V[j, r]))
                - ep.sum(j, X[i, j] * V[j, r]))
    return e, expanded


def test_als_expands_when_x_is_sparse():
    e, expanded = als("csr")
    dims = {"i": 10_000, "j": 10_000, "r": 10, "rp": 10}
    opt = optimize(e, dims=dims, nnz={"X": 100_000})
    assert equivalent(opt.expr, expanded)
    assert opt.cost_after <= cost(expanded, dims=dims, nnz={"X": 100_000})
    assert opt.cost_after < opt.cost_before / 100


def test_als_keeps_the_factored_form_when_x_is_dense_and_rank_large():
    e, expanded = als("dense")
    dims = {"i": 100, "j": 100, "r": 1000, "rp": 1000}
    opt = optimize(e, dims=dims)
    assert equivalent(opt.expr, e)
    assert cost(expanded, dims=dims) > opt.cost_before
    assert opt.cost_after <= opt.cost_before
    assert opt.cost_after < cost(expanded, dims=dims)


def test_subtraction_needs_a_ring():
    v = ep.tensor("v", 1)
    with pytest.raises(ep.SemiringError):
        optimize(v[i] - v[i], semiring="min_plus")
