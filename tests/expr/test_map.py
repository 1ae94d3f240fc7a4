"""The map node in the expression language: `ep.map(fn, e, arg)`, its checks,
its text, its dense meaning, its plan (a contracted operand is a temporary)
and its opacity to the optimizer (no rewrite crosses a map)."""
import numpy as np
import pytest

import etchpy as ep
from etchpy import maps
from etchpy.expr.nodes import Map
from etchpy.expr.parse import parse
from etchpy.optimizer.ra import Apply, from_ra, to_ra
from etchpy.plan.plan import make_plan

pos, row, out, n = ep.indices("pos row out n")
A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2)
x, y = ep.tensor("x", 1), ep.tensor("y", 1)


def test_ep_map_builds_a_map_node_with_its_operands_free_indices():
    e = ep.map("exp", A[pos, row] * x[row])
    assert isinstance(e, Map) and e.fn == "exp" and e.arg is None
    assert e.free == (pos, row)
    assert ep.map("maximum", ep.sum(row, A[pos, row]), 0.0).free == (pos,)
    assert ep.map is ep.expr.maps.map
    assert str(e) == "exp(A[pos,row]·x[row])"
    assert str(ep.map("maximum", x[out], 0.0)) == "maximum(x[out], 0.0)"
    assert ep.map("exp", 2.0).free == ()


@pytest.mark.parametrize("call, what", [
    (lambda: ep.map("tanh", x[out]), "unknown map 'tanh'"),
    (lambda: ep.map("maximum", x[out]), "needs a number"),
    (lambda: ep.map("exp", x[out], 1.0), "takes no scalar"),
    (lambda: ep.map("minimum", x[out], "0"), "needs a number"),
    (lambda: ep.map(3, x[out]), "unknown map 3"),
])
def test_bad_maps_raise_a_map_error_naming_them(call, what):
    with pytest.raises(ep.MapError, match=what) as err:
        call()
    assert isinstance(err.value, ValueError) and isinstance(err.value, TypeError)


def test_the_registry_knows_f_of_zero():
    assert maps.at_zero("exp") == 1.0 and maps.keeps_zero("abs")
    assert maps.at_zero("log") == -np.inf and maps.at_zero("recip") == np.inf
    assert maps.keeps_zero("maximum", 0.0) and not maps.keeps_zero("maximum", 1.0)
    assert maps.keeps_zero("minimum", 2) and not maps.keeps_zero("minimum", -1)


@pytest.mark.parametrize("semiring", ["min_plus", "max_plus", "boolean", "max_times"])
def test_a_map_under_a_non_numeric_semiring_is_refused_by_name(semiring):
    with pytest.raises(ep.SemiringError, match="map 'exp'"):
        ep.evaluate(ep.map("exp", x[out]), semiring=semiring, backend="reference",
                    x=np.ones(3))


def test_a_real_map_under_the_integer_semiring_is_refused():
    with pytest.raises(ep.SemiringError, match="map 'sqrt'"):
        ep.compile(ep.map("sqrt", x[out]), semiring="integer")
    got = ep.evaluate(ep.map("abs", x[out]), semiring="integer", backend="streams",
                      x=np.array([-2, 0, 3]))
    assert list(got) == [2, 0, 3]


def test_reference_semantics_applies_numpy_to_the_completed_value():
    M = np.array([[0.0, 1.0], [-2.0, 0.0]])
    v = np.array([0.5, -1.0])
    got = ep.evaluate(ep.map("exp", ep.sum(row, B[pos, row] * x[row])), backend="reference",
                      B=M, x=v)
    np.testing.assert_allclose(got, np.exp(M @ v))
    got = ep.evaluate(ep.sum(row, ep.map("exp", B[pos, row])), backend="reference", B=M)
    np.testing.assert_allclose(got, np.exp(M).sum(1))


def test_a_contracted_operand_is_planned_as_a_temporary():
    plan = make_plan(ep.map("exp", ep.sum(row, A[pos, row] * x[row])) + y[pos])
    tmp = [s for s in plan.steps if s.target in plan.temps]
    assert len(tmp) == 1 and tmp[0].bound == ("row",)
    last = plan.steps[-1]
    assert last.target == "out" and "exp(tmp" in str(last.body) and not last.bound
    # a map under a sum applies per entry: no temporary, the sum is the step's
    plan = make_plan(ep.sum(row, ep.map("exp", A[pos, row]) * x[row]))
    assert not plan.temps and plan.steps[0].bound == ("row",)


def test_the_planner_knows_a_map_with_f0_nonzero_is_dense():
    from etchpy.plan.cost import Stats, support
    stats = Stats({"pos": 100, "row": 100}, {"A": 50})
    space = frozenset({"pos", "row"})
    assert support(A[pos, row], space, stats) == 50
    assert support(ep.map("abs", A[pos, row]), space, stats) == 50
    assert support(ep.map("exp", A[pos, row]), space, stats) == 100 * 100


def test_ra_has_an_opaque_apply_node():
    e = ep.map("maximum", ep.sum(row, A[pos, row] * x[row]), 0.0)
    q = to_ra(e)
    assert isinstance(q, Apply) and q.fn == "maximum" and q.arg == 0.0
    assert from_ra(q) == e


def test_equivalence_does_not_cross_a_map():
    a, b = x[out], y[out]
    assert not ep.equivalent(ep.map("exp", a + b), ep.map("exp", a) + ep.map("exp", b))
    assert not ep.equivalent(ep.map("exp", 2 * a), 2 * ep.map("exp", a))
    assert not ep.equivalent(ep.map("exp", ep.sum(row, B[out, row])),
                             ep.sum(row, ep.map("exp", B[out, row])))
    assert not ep.equivalent(ep.map("maximum", a, 0.0), ep.map("maximum", a, 1.0))
    # inside and around a map the usual laws hold
    assert ep.equivalent(ep.map("exp", a + b), ep.map("exp", b + a))
    assert ep.equivalent(ep.map("exp", ep.sum(row, B[out, row])),
                         ep.map("exp", ep.sum(n, B[out, n])))
    assert ep.equivalent(ep.map("exp", a) * (a + b),
                         ep.map("exp", a) * a + ep.map("exp", a) * b)
    assert ep.equivalent(ep.map("exp", ep.map("log", a)), ep.map("exp", ep.map("log", a)))
    assert not ep.equivalent(ep.map("exp", ep.map("log", a)), a)


def test_the_optimizer_rewrites_inside_and_around_a_map_never_across():
    C = ep.tensor("C", 2, format="csr")
    inner = ep.sum((row, n), A[pos, row] * C[row, n] * x[n])
    opt = ep.optimize(ep.map("exp", inner), dims={"pos": 1000, "row": 1000, "n": 1000})
    assert isinstance(opt.expr, Map) and opt.expr.fn == "exp"
    assert ep.equivalent(opt.expr.a, inner) and opt.cost_after < opt.cost_before
    # a sum around a map is never pushed into it, a factor never moves inside
    e = ep.sum(row, ep.map("exp", A[pos, row]) * x[row])
    opt = ep.optimize(e)
    assert ep.equivalent(opt.expr, e)
    maps_in = [m for m in ep.expr.maps.maps_of(opt.expr)]
    assert [str(m) for m in maps_in] == ["exp(A[pos,row])"]


def test_the_string_front_end_reads_maps():
    assert parse("y[i] = exp(sum(j, A[i,j]))").expr.fn == "exp"
    st = parse("y[i,j] = maximum(A[i,j], -1)")
    assert st.expr.arg == -1
    # an implicit Σ never enters a map
    assert str(parse("y[i] = exp(A[i,j])").expr) == "Σ_j exp(A[i,j])"
    with pytest.raises(ep.expr.parse.FrontendError, match="unknown function tanh"):
        parse("y[i] = tanh(A[i])")
