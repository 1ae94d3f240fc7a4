"""map_leaf and the lowering of maps (proofs_notes/map.md).

* the law ⟦map_leaf f s⟧ = f ∘ ⟦s⟧ for f(0) = 0 and s with no contracted
  level, point by point on the stream interpreter, invariants checked;
* why f(0) ≠ 0 needs the dense domain: map_leaf alone misses the absent
  entries, the lowered map (a union with zeros first) does not;
* why a contracted operand needs a temporary: on a contracted level map_leaf
  sums f of the summands;
* on random problems, the stream backend's ⟦map f e⟧ = f ∘ ⟦e⟧.
"""
import numpy as np
import scipy.sparse as sp
from hypothesis import assume, given, settings, strategies as st

import etchpy as ep
from etchpy import api, imp, maps, streams
from etchpy.expr.walk import tensors
from etchpy.plan import plan as planning
from etchpy.runtime import inputs as binding
from etchpy.runtime.planned import with_conversions
from etchpy.testing import assert_same, problems

REAL = ep.semirings.real
row, pos = ep.indices("row pos")


def leaf(fn, arg=None):
    c = imp.Const(REAL.literal(0 if arg is None else arg), "value")
    return lambda v: imp.Ring(fn, v, c)


def run(e, inputs, wrap=None, bound_names=None):
    """The points of the one-step plan of e, its stream wrapped by `wrap`."""
    bound = binding.bind_inputs(tensors(e), inputs, REAL)
    pl = planning.make_plan(e)
    assert len(pl.steps) == 1
    bound = with_conversions(pl, bound)
    step = pl.steps[0]
    names = {n: streams.array_names(n, t.format) for n, t in bound.items()}
    low = streams.Lowerer(REAL, names, imp.Names())
    s = low.lower(step.body, step.order)
    if wrap is not None:
        s = wrap(s)
    for v in bound_names if bound_names is not None else step.bound:
        s = streams.contract(s, v)
    out: dict = {}
    sizes = binding.index_sizes(pl, bound)
    streams.run_stream(s, imp.Machine(REAL, api.imp_env(bound, sizes)), out, check=True)
    return out


@settings(max_examples=40)
@given(problems(max_occurrences=2, max_indices=3, semiring=REAL),
       st.sampled_from([("abs", None), ("neg", None), ("maximum", 0.0), ("minimum", 0.0)]))
def test_law_map_leaf_for_f0_zero_and_no_contracted_level(p, f):
    fn, arg = f
    pl = planning.make_plan(p.expr)
    assume(len(pl.steps) == 1 and not pl.steps[0].bound)      # s has no contracted level
    plain = run(p.expr, p.inputs)
    mapped = run(p.expr, p.inputs, lambda s: streams.map_leaf(leaf(fn, arg), s))
    assert mapped.keys() == plain.keys()       # the runs are s's
    for key, v in plain.items():
        assert_same(mapped[key], maps.apply(fn, v, arg), REAL, what=f"{fn} {p.expr} {key}")


def test_map_leaf_alone_misses_absent_entries_when_f0_is_not_zero():
    A = ep.tensor("A", 2, format="csr")
    M = sp.csr_array(np.array([[0.0, 2.0], [0.0, 0.0]]))
    raw = run(A[pos, row], {"A": M}, lambda s: streams.map_leaf(leaf("exp"), s))
    assert raw == {(0, 1): np.exp(2.0)}      # exp(0) = 1 is lost at the 3 absent entries
    lowered = run(ep.map("exp", A[pos, row]), {"A": M})
    assert len(lowered) == 4
    for (a, b), v in lowered.items():
        assert v == np.exp(M.toarray()[a, b])


def test_map_leaf_on_a_contracted_level_sums_f_of_the_summands():
    A = ep.tensor("A", 2, format="csr")
    M = sp.csr_array(np.array([[1.0, -3.0], [0.0, 2.0]]))
    e = ep.sum(row, A[pos, row])
    summed_abs = run(e, {"A": M}, lambda s: streams.map_leaf(leaf("abs"), s))
    assert summed_abs == {(0,): 4.0, (1,): 2.0}          # |1| + |-3|, not |1 - 3|
    # so the planner computes the operand first and maps the temporary
    got = ep.evaluate(ep.map("abs", e), backend="streams", check=True, A=M)
    assert list(got) == [2.0, 2.0]


@settings(max_examples=30)
@given(problems(max_occurrences=3, max_indices=3, semiring=REAL),
       st.sampled_from([("exp", None), ("abs", None), ("neg", None), ("maximum", 0.5),
                        ("minimum", -1.0)]))
def test_the_lowered_map_is_f_of_the_completed_value(p, f):
    fn, arg = f
    want = maps.apply(fn, np.asarray(
        ep.evaluate(p.expr, semiring=REAL, backend="reference", **p.inputs)), arg)
    got = ep.evaluate(ep.map(fn, p.expr, arg), semiring=REAL, backend="streams", check=True,
                      **p.inputs)
    assert_same(got, want, REAL, what=f"{fn} {p.expr}")
