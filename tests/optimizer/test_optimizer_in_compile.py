"""The optimizer inside compile: optimized kernels compute the reference's
values, the plan-level cost decides whether the rewrite is compiled."""
import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings

import etchpy as ep
from etchpy.optimizer.optimize import optimize
from etchpy.plan.cost import Stats, nest_cost, plan_cost
from etchpy.plan.plan import make_plan
from etchpy.testing import check_backends, problems

i, j, k, r, rp = ep.indices("i j k r rp")



@settings(max_examples=12, deadline=None)
@given(problems(max_occurrences=3))
def test_compiled_optimized_kernels_equal_reference(p):
    """compile(optimize=True): the factorised plan (Σ factors kept in their own
    loop nests) computes the same values as the reference."""
    check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("c",), optimize=True,
                    optimizer_options={"rewrite_margin": float("inf")})


def test_squared_loss_compiles_to_factorised_plan():
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


def test_default_compile_runs_the_optimizer():
    """compile() optimizes by default; order= (a hand-fixed loop order) turns it off
    unless optimize=True is passed too; optimize=False compiles the expression as written."""
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
    """explain() of a rewrite that no loop order can walk as declared says so
    instead of raising (the debug report built it on every compile; found by
    the dev Hypothesis profile): its plan reads one input converted."""
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    opt = optimize(ep.sum((i, j), A[i, j] * B[j, i]))
    text = opt.explain()
    assert "convert tmp_" in text and "no loop order walks" in text
