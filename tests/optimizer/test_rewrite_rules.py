"""The rewrite rules (optimizer.rules): the table's shape, one law per test,
gating by the semiring's laws, and renaming where a pull would capture."""
import numpy as np

import etchpy as ep
from etchpy.expr.nodes import Add, Lit, Mul, Sum
from etchpy.optimizer.egraph import EGraph
from etchpy.optimizer.optimize import cost, equivalent, optimize, proves
from etchpy.optimizer.rules import RULES, RULES_BY_NAME, rules_for
from etchpy.optimizer.saturate import saturate
from etchpy.plan.cost import Stats
from etchpy.semiring import semirings
from etchpy.testing import max_min

i, j, k, r, rp = ep.indices("i j k r rp")



def n_sums(e) -> int:
    match e:
        case Sum(_, body):
            return 1 + n_sums(body)
        case Mul(a, b) | Add(a, b):
            return n_sums(a) + n_sums(b)
    return 0


def test_sum_over_both_axes_is_order_free():
    X = ep.tensor("X", 2)
    assert equivalent(ep.sum((i, j), X[j, i]), ep.sum((i, j), X[i, j]))
    assert equivalent(ep.sum((i, j), X[j, i]), ep.sum((k, r), X[k, r]))


def test_sum_of_sum_is_sum_of_sums():
    A, B = ep.tensor("A", 2), ep.tensor("B", 2)
    lhs, rhs = ep.sum(i, A[i, j] + B[i, j]), ep.sum(i, A[i, j]) + ep.sum(i, B[i, j])
    assert equivalent(lhs, rhs)
    for sr in semirings.all():
        assert proves(lhs, rhs, sr)


def test_constant_factor_leaves_the_sum():
    X = ep.tensor("X", 2)
    lhs, rhs = ep.sum((i, j), 3 * X[i, j]), 3 * ep.sum((i, j), X[i, j])
    assert equivalent(lhs, rhs)
    assert proves(lhs, rhs, semirings.real)
    lam = ep.tensor("lam", 0)            # a symbolic scalar λ
    assert equivalent(ep.sum(i, lam * X[i, j]), lam * ep.sum(i, X[i, j]))
    assert proves(ep.sum(i, lam * X[i, j]), lam * ep.sum(i, X[i, j]), semirings.min_plus)


def test_chain_sum_factorises():
    A, B = ep.tensor("A", 2), ep.tensor("B", 2)
    e = ep.sum((i, j, k), A[i, j] * B[j, k])
    factored = ep.sum(j, ep.sum(i, A[i, j]) * ep.sum(k, B[j, k]))
    opt = optimize(e)
    assert equivalent(opt.expr, factored)
    assert opt.cost_after < opt.cost_before
    assert opt.cost_after <= cost(factored)
    assert opt.rules_used.get("sum-push", 0) > 0


def test_dot_product_stays_one_sum():
    v = ep.tensor("v", 1)
    opt = optimize(ep.sum(i, v[i] * v[i]))
    assert equivalent(opt.expr, ep.sum(i, v[i] ** 2))
    assert n_sums(opt.expr) == 1


def test_rules_fire_only_with_their_laws():
    names = {sr.name: {r.name for r in rules_for(sr)} for sr in semirings.all()}
    assert "add-repeated" in names["real"] and "add-idempotent" not in names["real"]
    assert "add-idempotent" in names["min_plus"] and "add-repeated" not in names["min_plus"]
    assert "dim-idempotent" in names["boolean"]
    assert {r.name for r in rules_for(max_min)} >= {"expand", "factor", "sum-push"}
    assert all(r.needs <= {"negation", "idempotent", "int_mul"} for r in RULES)


def test_idempotent_semiring_drops_index_sizes():
    A, B = ep.tensor("A", 1), ep.tensor("B", 1)
    e = ep.sum(i, A[i] + B[j])
    assert equivalent(e, ep.sum(i, A[i]) + B[j], semirings.min_plus)
    assert not equivalent(e, ep.sum(i, A[i]) + B[j], semirings.real)
    assert proves(e, ep.sum(i, A[i]) + B[j], semirings.max_plus)


def test_like_terms_combine():
    X, v = ep.tensor("X", 2), ep.tensor("v", 1)
    e = ep.sum(j, X[i, j] * v[j]) + ep.sum(j, v[j] * X[i, j])
    assert equivalent(e, 2 * ep.sum(k, X[i, k] * v[k]))
    assert equivalent(e, ep.sum(j, X[i, j] * v[j]), semirings.boolean)


def test_lit_folding_keeps_the_value():
    v = ep.tensor("v", 1)
    opt = optimize(2 * v[i] * 3 + Lit(0))
    assert equivalent(opt.expr, 6 * v[i])


def test_sum_pull_renames_a_captured_bound_index():
    """(Σ_i v[i])·(Σ_i w[i]): pulling the second Σ under the first would capture i,
    so sum-pull renames it to a fresh i__r1 and reaches Σ_{i,i__r1} v[i]·w[i__r1]."""
    v, w = ep.tensor("v", 1), ep.tensor("w", 1)
    r1 = ep.Index("i__r1")
    eg = EGraph(ep.semirings.real)
    lhs = eg.add_expr(ep.sum(i, v[i]) * ep.sum(i, w[i]))
    stats = saturate(eg, rules_for(ep.semirings.real))
    before = len(eg.classes)
    rhs = eg.add_expr(ep.sum((i, r1), v[i] * w[r1]))     # hash-consed: already there
    assert len(eg.classes) == before
    assert eg.find(lhs) == eg.find(rhs)
    assert stats.fired["sum-pull"] >= 1
    # the renamed index keeps i's size in the cost model
    eg2 = EGraph(ep.semirings.real, Stats(dims={"i": 7}))
    assert eg2.stats.dim("i__r1") == 7


def test_renamed_pull_keeps_values():
    v, w, x = ep.tensor("v", 1), ep.tensor("w", 1), ep.tensor("x", 1)
    e = x[i] * ep.sum(i, v[i]) * ep.sum(i, w[i] * x[i])     # free i outside, bound i inside
    rng = np.random.default_rng(1)
    ins = {n: rng.integers(-3, 4, 5).astype(float) for n in "vwx"}
    want = ep.evaluate(e, backend="reference", **ins)
    for margin in (0.5, float("inf")):
        got = ep.evaluate(e, optimizer_options={"rewrite_margin": margin}, **ins)
        np.testing.assert_allclose(got, want)


def test_repeated_sum_factors_rename_without_capture():
    """Found by Hypothesis: (Σ_j A[j])³·0 pulls one copy after another; each pull
    needs its own fresh name (a name reused across contexts would capture)."""
    A = ep.tensor("A", 1)
    s = ep.sum(j, A[j])
    e = s * s * Lit(0.0) * s
    opt = optimize(e)
    assert ep.equivalent(opt.expr, e)
    for margin in (0.5, float("inf")):
        got = ep.evaluate(e, optimizer_options={"rewrite_margin": margin}, A=np.array([2.0]))
        assert got == 0.0


# ------------------------------------------------------------------ the table


def test_each_rule_is_a_row_of_name_pattern_condition_and_applier():
    names = [r.name for r in RULES]
    assert len(set(names)) == len(names)
    for r in RULES:
        assert r.pattern.op in ("mul", "add", "sum") and callable(r.pattern.find)
        assert callable(r.condition) and callable(r.applier)
        assert r.law == f"{r.pattern.lhs} -> {r.rhs}"
        assert RULES_BY_NAME[r.name] is r
    expand = RULES_BY_NAME["expand"]
    assert (expand.pattern.op, expand.law) == ("mul", "a·(b + c + …) -> a·b + a·c + …")


def test_a_row_rewrites_one_node_by_its_pattern_condition_and_applier():
    A, B, C = ep.tensor("A", 1), ep.tensor("B", 1), ep.tensor("C", 1)
    eg = EGraph(semirings.real)
    node = eg.first(eg.add_expr(A[i] * (B[i] + C[i])), "mul")
    expand = RULES_BY_NAME["expand"]
    bindings = [b for b in expand.pattern.find(eg, node) if expand.condition(eg, node, b)]
    assert len(bindings) == 1
    rhs = expand.applier(eg, node, bindings[0])
    assert eg.find(rhs) == eg.find(eg.add_expr(A[i] * B[i] + A[i] * C[i]))   # hash-consed
    # a condition rejects a binding: 2·A[i] has nothing to fold
    fold = RULES_BY_NAME["fold-mul"]
    node = eg.first(eg.add_expr(2 * A[i]), "mul")
    assert not [b for b in fold.pattern.find(eg, node) if fold.condition(eg, node, b)]


def test_explain_names_each_rule_used_with_its_law():
    A, B = ep.tensor("A", 2), ep.tensor("B", 2)
    opt = optimize(ep.sum((i, j, k), A[i, j] * B[j, k]))
    text = opt.explain()
    assert opt.rules_used
    for name, times in opt.rules_used.items():
        assert f"{name}×{times}" in text and RULES_BY_NAME[name].law in text
    assert "rules     none" in optimize(A[i, j]).explain()
