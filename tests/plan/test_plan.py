"""The plan layer on its own: a plan means what its expression means.

A plan's meaning: run its steps in order, each adding Σ_bound body (dense
reference semantics, over the inputs and the temporaries computed so far) into
its target. That must equal the reference value of the expression, and every
step must be a loop nest that lowering can walk.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import OrderError
from etchpy.expr import reference
from etchpy.expr.nodes import Index, Sum
from etchpy.expr.walk import accesses
from etchpy.plan.plan import make_plan
from etchpy.testing import assert_same, problems


def dense_inputs(p):
    return {name: np.asarray(ep.testing.dense_value(value, p.semiring))
            for name, value in p.inputs.items()}


def run_plan(plan, sr, inputs, sizes):
    """The plan's meaning: its steps in order under the dense reference semantics."""
    values = dict(inputs)
    for step in plan.steps:
        loops = step.out + step.bound
        got = reference.evaluate(step.body, sr, values, tuple(Index(v) for v in loops))
        got = np.broadcast_to(got, tuple(sizes[v] for v in loops))
        for _ in step.bound:                 # fold the innermost bound axis
            acc = np.full(got.shape[:-1], sr.zero, dtype=sr.dtype)
            for k in range(got.shape[-1]):
                acc = np.asarray(sr.add(acc, got[..., k]), dtype=sr.dtype)
            got = acc
        old = values.get(step.target)
        values[step.target] = got if old is None else np.asarray(sr.add(old, got), sr.dtype)
    return values["out"]


def index_sizes(plan, inputs):
    sizes = {}
    for step in plan.steps:
        for acc in accesses(step.body):
            if acc.tensor.name in inputs:
                for ix, n in zip(acc.indices, np.shape(inputs[acc.tensor.name])):
                    sizes[ix.name] = n
    return sizes


def assert_walkable(step):
    """Every sparse input is walked in its storage order; the body has no Σ."""
    assert sorted(step.order) == sorted(step.out + step.bound)
    for acc in accesses(step.body):
        assert not isinstance(acc, Sum)
        fmt = acc.tensor.format
        if fmt is None or fmt.is_dense:
            continue
        storage = [acc.indices[m].name for m in fmt.mode_order]
        positions = [step.order.index(v) for v in storage]
        assert positions == sorted(positions), (step, storage)


@settings(deadline=None)
@given(problems())
def test_a_plan_means_its_expression(p):
    check_plan_means(p.expr, p)


MAPS = [("exp", None), ("abs", None), ("neg", None), ("maximum", 0.5), ("minimum", -1.0)]


@settings(deadline=None, max_examples=40)
@given(problems(semiring=ep.semirings.real, max_occurrences=3), st.sampled_from(MAPS),
       st.sampled_from(["map", "summed", "times"]))
def test_a_plan_with_maps_means_its_expression(p, f, shape):
    """A map over any expression (its sums computed into a temporary first),
    summed or multiplied around it: proofs_notes/map.md."""
    e = ep.map(f[0], p.expr, f[1])
    if shape == "summed" and e.free:
        e = ep.sum(e.free[0], e)
    elif shape == "times":
        e = e * p.expr
    check_plan_means(e, p)


def check_plan_means(e, p):
    plan = make_plan(e)
    for step in plan.steps:
        assert_walkable(step)
    inputs = dense_inputs(p)
    for c in plan.conversions:       # a converted input holds the same values
        inputs[c.name] = inputs[c.source]
    sizes = index_sizes(plan, inputs)
    out = plan.out
    expected = reference.evaluate(e, p.semiring, inputs, tuple(Index(v) for v in out))
    known = {v for s in plan.steps for v in s.out + s.bound}
    if any(v not in sizes for v in known):
        return       # an index only a literal reads has no size to read off
    got = run_plan(plan, p.semiring, inputs, sizes)
    assert_same(got, expected, p.semiring, str(plan.explain()))


def test_a_top_level_union_is_one_step_per_term():
    i, j = ep.indices("i j")
    A, x, y = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1), ep.tensor("y", 1)
    plan = make_plan(ep.sum(j, A[i, j] * x[j]) + y[i])
    assert [s.target for s in plan.steps] == ["out", "out"]


def test_a_sum_under_a_union_under_a_product_becomes_a_temporary():
    i, j = ep.indices("i j")
    A, x, y = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1), ep.tensor("y", 1)
    w = ep.tensor("w", 1)
    plan = make_plan(w[i] * (ep.sum(j, A[i, j] * x[j]) + y[i]))
    assert len(plan.steps) == 2 and plan.steps[0].target != "out"
    assert plan.steps[0].target in plan.temps


def test_the_loop_order_follows_the_storage_order():
    i, j = ep.indices("i j")
    A = ep.tensor("A", 2, format="csc")
    x = ep.tensor("x", 1)
    (step,) = make_plan(ep.sum(j, A[i, j] * x[j])).steps
    assert step.order == ("j", "i")


def test_no_order_walks_crossed_storage_orders():
    i, j = ep.indices("i j")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    with pytest.raises(OrderError):                  # a user order is kept
        make_plan(ep.sum((i, j), A[i, j] * B[j, i]), order=("i", "j"))
    plan = make_plan(ep.sum((i, j), A[i, j] * B[j, i]))   # else: one input converted
    (conv,) = plan.conversions
    assert conv.format.name == "csc" and conv.source in ("A", "B")


def test_an_index_named_like_generated_code_keeps_its_meaning():
    pos, row = ep.indices("pos row")
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    plan = make_plan(ep.sum(row, A[pos, row] * x[row]))
    assert plan.out == ("pos",)
    assert plan.origin["pos"] == "pos"
