"""The optimizer: RA translation, canonical forms, e-graph rules and extraction."""
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings

import etchpy as ep
from etchpy.api import evaluate
from etchpy.optimizer.rules import RULES, rules_for
from etchpy.expr.nodes import Access, Add, Lit, Mul, Sum, free_indices
from etchpy.optimizer.optimize import (canonical, cost, equivalent, from_ra, optimize, proves,
                                       to_ra)
from etchpy.semiring import semirings
from etchpy.testing import assert_same, max_min, problems

FAST = dict(max_examples=40, deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

i, j, k, r, rp = ep.indices("i j k r rp")


def reference(e, inputs, sr, out):
    return evaluate(e, semiring=sr, backend="reference", out_indices=out, **inputs)


def n_sums(e) -> int:
    match e:
        case Sum(_, body):
            return 1 + n_sums(body)
        case Mul(a, b) | Add(a, b):
            return n_sums(a) + n_sums(b)
    return 0

# ------------------------------------------------------------- semantics preserved


@settings(**FAST)
@given(problems())
def test_optimize_preserves_value_on_every_semiring(p):
    opt = optimize(p.expr, semiring=p.semiring, limits=dict(seconds=0.3))
    out = free_indices(p.expr)
    assert set(free_indices(opt.expr)) == set(out)
    assert opt.cost_after <= opt.cost_before
    want = reference(p.expr, p.inputs, p.semiring, out)
    got = reference(opt.expr, {n: p.inputs[n] for n in ep.expr.nodes.tensors(opt.expr)},
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

# --------------------------------------------------- equivalent vs numeric testing


def random_inputs(p, seed):
    rng = np.random.default_rng(seed)
    return {n: rng.standard_normal(np.shape(a)) for n, a in p.inputs.items()}


def sizes_by_name(e, p) -> bool:
    """Does every index name have one size in e? (the canonical form assumes it)"""
    sizes = {}
    for acc in ep.expr.nodes.accesses(e):
        for ix, n in zip(acc.indices, np.shape(p.inputs[acc.tensor.name])):
            if sizes.setdefault(ix.name, n) != n:
                return False
    return True


def numerically_equal(e1, e2, p) -> bool:
    out = free_indices(e1)
    for seed in range(2):
        ins = random_inputs(p, seed)
        a = reference(e1, {n: ins[n] for n in ep.expr.nodes.tensors(e1)}, semirings.real, out)
        b = reference(e2, {n: ins[n] for n in ep.expr.nodes.tensors(e2)}, semirings.real, out)
        if not np.allclose(a, b, rtol=1e-7, atol=1e-9):
            return False
    return True


def commute(e):
    match e:
        case Mul(a, b):
            return Mul(commute(b), commute(a))
        case Add(a, b):
            return Add(commute(b), commute(a))
        case Sum(ix, body):
            return Sum(ix, commute(body))
    return e


def distribute(e):
    """a·(b + c) -> a·b + a·c wherever it occurs."""
    match e:
        case Mul(a, Add(b, c)):
            return Add(Mul(distribute(a), distribute(b)), Mul(distribute(a), distribute(c)))
        case Mul(Add(b, c), a):
            return Add(Mul(distribute(b), distribute(a)), Mul(distribute(c), distribute(a)))
        case Mul(a, b):
            return Mul(distribute(a), distribute(b))
        case Add(a, b):
            return Add(distribute(a), distribute(b))
        case Sum(ix, body):
            return Sum(ix, distribute(body))
    return e


def pull_sums(e):
    """(Σ_i a)·b -> Σ_i (a·b) when i is not free in b."""
    match e:
        case Mul(Sum(ix, a), b) if ix not in free_indices(b):
            return Sum(ix, Mul(pull_sums(a), pull_sums(b)))
        case Mul(a, b):
            return Mul(pull_sums(a), pull_sums(b))
        case Add(a, b):
            return Add(pull_sums(a), pull_sums(b))
        case Sum(ix, body):
            return Sum(ix, pull_sums(body))
    return e


def drop_factor(e):
    """Drop the right factor of the first product that keeps the free indices."""
    match e:
        case Mul(a, b) if set(free_indices(a)) == set(free_indices(e)):
            return a
        case Mul(a, b):
            return Mul(a, drop_factor(b))
        case Add(a, b):
            return Add(drop_factor(a), b)
        case Sum(ix, body):
            return Sum(ix, drop_factor(body))
    return e


def swap_axes(e):
    """Transpose the first 2-d access: X[i,j] -> X[j,i] (needs equal sizes)."""
    match e:
        case Access(t, (a, b)):
            return Access(t, (b, a))
        case Mul(x, y) | Add(x, y):
            new = swap_axes(x)
            return type(e)(new, y) if new != x else type(e)(x, swap_axes(y))
        case Sum(ix, body):
            return Sum(ix, swap_axes(body))
    return e


@settings(**FAST)
@given(problems(semiring=semirings.real))
def test_equivalent_accepts_valid_rewrites(p):
    for rewrite in (commute, distribute, pull_sums,
                    lambda e: pull_sums(distribute(commute(e)))):
        other = rewrite(p.expr)
        assert equivalent(p.expr, other), f"{p.expr} vs {other}"
        assert numerically_equal(p.expr, other, p)


@settings(**FAST)
@given(problems(semiring=semirings.real))
def test_equivalent_agrees_with_numbers_on_mutations(p):
    mutants = [drop_factor(p.expr), p.expr + p.expr, p.expr * p.expr
               if not free_indices(p.expr) else p.expr + 1]
    try:
        mutants.append(swap_axes(p.expr))
    except ep.ExpressionTypeError:
        pass
    for m in mutants:
        if set(free_indices(m)) != set(free_indices(p.expr)) or not sizes_by_name(m, p):
            continue
        try:
            same = numerically_equal(p.expr, m, p)
        except (ep.EtchpyError, ValueError):    # a transposed non-square access
            continue
        eq = equivalent(p.expr, m)
        if eq:
            assert same, f"equivalent but numerically different: {p.expr} vs {m}"
        if not same:
            assert not eq


def test_known_non_equivalent_pairs():
    X, v = ep.tensor("X", 2), ep.tensor("v", 1)
    assert not equivalent(ep.sum(j, X[i, j] * v[j]), ep.sum(j, X[j, i] * v[j]))
    assert not equivalent(ep.sum(j, X[i, j] * v[j]), ep.sum(j, X[i, j]))
    assert not equivalent(ep.sum(i, v[i]) * ep.sum(i, v[i]), ep.sum(i, v[i] * v[i]))
    assert not equivalent(v[i], v[j])


def test_index_sizes_are_those_of_the_modes_they_index():
    """Σ_j c counts |j|: renaming j keeps that size, and j over a different mode
    (a transposed access of a non-square A) changes it."""
    A, M, B = ep.tensor("A", 1), ep.tensor("M", 2), ep.tensor("B", 1)
    assert equivalent(ep.sum(j, A[j] + 1), ep.sum(k, A[k] + 1))
    assert not equivalent(ep.sum(j, ep.sum(i, M[i, j]) + 1),
                          ep.sum(j, ep.sum(i, M[j, i]) + 1))
    assert equivalent(ep.sum(j, M[i, j] * B[j] + 1),
                      ep.sum(k, M[i, k] * B[k]) + ep.sum(j, B[j] + 1) - ep.sum(j, B[j]))
    # a factor with coefficient 0 still fixes j's size, whichever side it is on
    assert equivalent(ep.sum(j, 1 + 0 * B[j]), ep.sum(j, B[j] * 0 + 1))


# ------------------------------------------------------------- laws, one per test


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


SQ_DIMS = {"i": 10_000, "j": 10_000}
SQ_NNZ = {"X": 100_000}


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

# --------------------------------------------------------- RA, rules, extraction


@settings(**FAST)
@given(problems())
def test_ra_round_trip(p):
    back = from_ra(to_ra(p.expr))
    assert set(free_indices(back)) == set(free_indices(p.expr))
    assert canonical(back, p.semiring) == canonical(p.expr, p.semiring)


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


def test_exact_extraction_is_never_worse_than_greedy():
    A, B, C = ep.tensor("A", 2), ep.tensor("B", 2), ep.tensor("C", 2)
    e = ep.sum((i, j, k), A[i, j] * (B[j, k] + C[j, k]))
    greedy, exact = optimize(e), optimize(e, exact=True)
    assert equivalent(exact.expr, e)
    assert exact.cost_after <= greedy.cost_after


def test_limits_and_stats():
    X = ep.tensor("X", 2, "csr")
    U, V = ep.tensor("U", 1), ep.tensor("V", 1)
    e = ep.sum((i, j), (X[i, j] - U[i] * V[j]) ** 2)
    opt = optimize(e, limits=dict(iterations=2))
    assert opt.stats["iterations"] <= 2 and opt.stats["stop"] == "iteration limit"
    opt = optimize(e, limits=dict(nodes=50))
    assert opt.stats["stop"] == "node limit"
    assert equivalent(opt.expr, e)
    text = opt.explain()
    assert "before" in text and "after" in text and "cost" in text


def test_saturation_stops_when_the_best_cost_stops_improving():
    X = ep.tensor("X", 2, "csr")
    U, V = ep.tensor("U", 1), ep.tensor("V", 1)
    e = ep.sum((i, j), (X[i, j] - U[i] * V[j]) ** 2)
    opt = optimize(e, dims=SQ_DIMS, nnz=SQ_NNZ)
    assert opt.stats["stop"] == "no improvement"
    assert opt.stats["iterations"] < 30
    costs = [c for _, c in opt.stats["root costs"]]
    assert costs == sorted(costs, reverse=True)          # the best cost never grows
    patience = ep.tuning.Saturation().patience
    assert len(costs) >= patience + 1
    assert all(c >= costs[-1] * (1 - 1e-3) for c in costs[-patience - 1:])
    full = optimize(e, dims=SQ_DIMS, nnz=SQ_NNZ, limits=dict(patience=0))
    assert full.stats["stop"] != "no improvement" and not full.stats["root costs"]
    assert opt.cost_after <= full.cost_after * (1 + 1e-3)
    # a short patience stops before the expansion pays off (it takes 3 iterations)
    short = optimize(e, dims=SQ_DIMS, nnz=SQ_NNZ, limits=dict(patience=1))
    assert short.stats["stop"] == "no improvement" and short.stats["iterations"] == 1
    assert equivalent(short.expr, e)
    # checking every 2 iterations still stops, on a multiple of 2
    every2 = optimize(e, dims=SQ_DIMS, nnz=SQ_NNZ, limits=dict(check_every=2))
    assert every2.stats["stop"] == "no improvement"
    assert all(it % 2 == 0 for it, _ in every2.stats["root costs"])


def test_subtraction_needs_a_ring():
    v = ep.tensor("v", 1)
    with pytest.raises(ep.SemiringError):
        optimize(v[i] - v[i], semiring="min_plus")


def test_lit_folding_keeps_the_value():
    v = ep.tensor("v", 1)
    opt = optimize(2 * v[i] * 3 + Lit(0))
    assert equivalent(opt.expr, 6 * v[i])


# ------------------------------------------------- compiled optimized kernels

from hypothesis import given as _given, settings as _settings  # noqa: E402

from etchpy.testing import check_backends as _check_backends, problems as _problems  # noqa: E402


@_settings(max_examples=12, deadline=None)
@_given(_problems(max_occurrences=3))
def test_compiled_optimized_kernels_equal_reference(p):
    """compile(optimize=True): the factorised plan (Σ factors kept in their own
    loop nests) computes the same values as the reference."""
    _check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("c",), optimize=True,
                    optimizer_options={"rewrite_margin": float("inf")})


def test_squared_loss_compiles_to_factorised_plan():
    import scipy.sparse as sp
    i, j = ep.indices("i j")
    X = ep.tensor("X", 2, format="csr")
    U, V = ep.tensor("U", 1), ep.tensor("V", 1)
    loss = ep.sum((i, j), (X[i, j] - U[i] * V[j]) ** 2)
    rng = np.random.default_rng(0)
    n = 300
    Xs = sp.coo_array((rng.random(900), (rng.integers(0, n, 900), rng.integers(0, n, 900))),
                      shape=(n, n)).tocsr()
    u, v = rng.random(n), rng.random(n)
    kern = ep.compile(loss, optimize=True,
                      optimizer_options={"dims": {"i": 10**4, "j": 10**4}, "nnz": {"X": 10**5},
                                         "limits": {"iterations": 6}})
    assert kern.optimized.cost_after * 100 < kern.optimized.cost_before
    assert len(kern.plan.steps) > 1                  # the factors run as separate nests
    assert "optimizer:" in kern.explain()
    want = float(np.sum((Xs.toarray() - np.outer(u, v)) ** 2))
    assert abs(kern(X=Xs, U=u, V=v) - want) <= 1e-9 * abs(want)


def test_sum_pull_renames_a_captured_bound_index():
    """(Σ_i v[i])·(Σ_i w[i]): pulling the second Σ under the first would capture i,
    so sum-pull renames it to a fresh i__r1 and reaches Σ_{i,i__r1} v[i]·w[i__r1]."""
    from etchpy.optimizer.egraph import EGraph
    from etchpy.optimizer.saturate import saturate
    from etchpy.plan.cost import Stats
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
    assert eg2.dim("i__r1") == 7


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


# ------------------------------------------------- the optimizer inside compile


def test_default_compile_runs_the_optimizer():
    """compile() optimizes by default; order= (a hand-fixed loop order) turns it off
    unless optimize=True is passed too; optimize=False compiles the expression as written."""
    import scipy.sparse as sp
    X = ep.tensor("X", 2, format="csr")
    U, V = ep.tensor("U", 1), ep.tensor("V", 1)
    loss = ep.sum((i, j), (X[i, j] - U[i] * V[j]) ** 2)
    kern = ep.compile(loss)
    assert kern.optimized is not None and kern.plan_costs[2]      # the rewrite is compiled
    assert kern.plan_costs[1] * 100 < kern.plan_costs[0]
    assert len(kern.plan.steps) > 1
    assert "compiling the optimized expression" in kern.explain()
    assert ep.compile(loss, optimize=False).optimized is None
    assert ep.compile(loss, order=("i", "j")).optimized is None
    rng = np.random.default_rng(2)
    Xs = sp.random(30, 20, density=0.1, random_state=3, format="csr")
    u, v = rng.random(30), rng.random(20)
    want = float(np.sum((Xs.toarray() - np.outer(u, v)) ** 2))
    for k in (kern, ep.compile(loss, optimize=False)):
        assert abs(k(X=Xs, U=u, V=v) - want) <= 1e-9 * want


def test_mttkrp_is_not_factorised_by_default():
    """The optimizer finds Σ_k D·(Σ_j B·C), but its plan needs a dense i×k×r
    temporary and saves only one multiplication per nonzero: the plan-level cost
    keeps the fused loop nest (which ran 16× faster when measured)."""
    B, C, D = ep.tensor("B", 3, "csf"), ep.tensor("C", 2), ep.tensor("D", 2)
    r = ep.Index("r")
    e = ep.sum((j, k), B[i, j, k] * C[j, r] * D[k, r])
    kern = ep.compile(e)
    written, rewritten, used = kern.plan_costs
    assert not used and rewritten > 0.5 * written
    assert len(kern.plan.steps) == 1 and kern.plan.steps[0].order == ("i", "j", "k", "r")
    forced = ep.compile(e, optimizer_options={"rewrite_margin": float("inf")})
    assert forced.plan_costs[2] and len(forced.plan.steps) == 2
    rng = np.random.default_rng(4)
    Bd = rng.random((4, 5, 6)) * (rng.random((4, 5, 6)) < 0.3)
    Cd, Dd = rng.random((5, 3)), rng.random((6, 3))
    want = np.einsum("ijk,jr,kr->ir", Bd, Cd, Dd)
    for kk in (kern, forced):
        np.testing.assert_allclose(kk(B=ep.Tensor.from_dense(Bd, "csf"), C=Cd, D=Dd), want)


def test_cheapest_order_prefers_less_work():
    """y[i] = Σ_j a[i]·b[j] with a full and b nearly empty: the heuristic order
    (free index first) visits |i|·nnz(b) + |i| records, (j, i) only nnz(b)·(1 + |i|)."""
    from etchpy.plan.cost import Stats, nest_cost
    from etchpy.plan.plan import make_plan
    a, b = ep.tensor("a", 1, "csf"), ep.tensor("b", 1, "csf")
    e = ep.sum(j, a[i] * b[j])
    assert make_plan(e).steps[0].order == ("i", "j")
    stats = Stats(nnz={"a": 1000, "b": 1})
    plan = make_plan(e, stats=stats)
    assert plan.steps[0].order == ("j", "i")
    body = plan.steps[0].body
    assert nest_cost(body, ("j", "i"), stats) < 0.9 * nest_cost(body, ("i", "j"), stats)
    kern = ep.compile(e, optimizer_options={"nnz": {"a": 1000, "b": 1}})
    assert kern.plan.steps[0].order == ("j", "i")
    av, bv = np.arange(1.0, 6.0), np.array([0, 0, 3.0, 0])
    np.testing.assert_allclose(kern(a=av, b=bv), av * 3.0)


def test_optimized_plan_and_shared_temporaries():
    """ep.optimize(e).plan is the sequence of loop nests; a Σ that occurs twice
    (equal up to bound names) is one temporary, computed once (cost counted once)."""
    from etchpy.plan.cost import plan_cost
    from etchpy.plan.plan import make_plan
    A, x = ep.tensor("A", 2), ep.tensor("x", 1)
    e = x[i] * (ep.sum(j, A[i, j] * x[j]) + ep.sum(k, A[i, k] * x[k]))
    plan = make_plan(e)
    assert [s.target for s in plan.steps] == ["tmp", "out"]
    single = make_plan(x[i] * ep.sum(j, A[i, j] * x[j]), keep_factored=True)
    assert plan_cost(plan) < 1.1 * plan_cost(single)
    ins = {"A": np.arange(9.0).reshape(3, 3), "x": np.array([1.0, -2.0, 0.5])}
    want = ep.evaluate(e, backend="reference", **ins)
    np.testing.assert_allclose(ep.evaluate(e, optimize=False, **ins), want)
    opt = optimize(ep.sum((i, j, k), A[i, j] * A[j, k]))
    assert len(opt.plan.steps) >= 2 and "loop order" in opt.explain()


def test_an_optimizer_plan_with_no_walkable_order_is_reported_not_raised():
    """explain() of a rewrite that no loop order can walk says so instead of
    raising (the debug report built it on every compile; found by the dev
    Hypothesis profile)."""
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    opt = optimize(ep.sum((i, j), A[i, j] * B[j, i]))
    assert "none: no loop order walks" in opt.explain()
