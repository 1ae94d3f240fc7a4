"""One cost model: the e-graph's extraction cost (optimizer.extract.node_cost, over
the class analysis) and the planner's (plan.cost) are one model, so on the
optimizer bench's expressions (bench/optimizer_times.py) and the bench kernels'
(bench/exprs.py) they rank the written form and the optimizer's rewrite alike:
the e-graph finds the rewrite cheaper exactly when the plan model does, and ties
where it ties. `rewrite_margin` then hedges only against guessed sizes."""
import math

import pytest

import etchpy as ep
from bench import exprs
from bench import optimizer_times as ot
from etchpy import pipeline
from etchpy.optimizer import egraph, extract
from etchpy.plan import cost
from etchpy.plan.cost import Stats
from etchpy.runtime.kernel import make_request

SIZES = {"optimizer_options": {"dims": ot.SQ_DIMS, "nnz": ot.SQ_NNZ}}
CASES = {"15-op": (ot.expr15(), {}), "40-op": (ot.expr40(), {}),
         "squared loss": (ot.squared_loss(), SIZES),
         "squared loss, guessed sizes": (ot.squared_loss(), {}),
         **{name: make() for name, make in exprs.EXPRS.items()}}


def _rank(before: float, after: float) -> int:
    """-1: the rewrite is cheaper, 0: a tie (within 1e-9), 1: dearer."""
    return 0 if math.isclose(before, after, rel_tol=1e-9) else (-1 if after < before else 1)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_egraph_and_the_planner_rank_written_and_rewritten_alike(name):
    expr, kwargs = CASES[name]
    req = make_request(expr, **kwargs)
    opt = pipeline.run_optimizer(req)
    _, (written, rewritten, _), _, _ = pipeline.choose_plan(req, opt)
    assert _rank(opt.cost_before, opt.cost_after) == _rank(written, rewritten), (
        f"{name}: e-graph {opt.cost_before:.4g} -> {opt.cost_after:.4g}, "
        f"plan {written:.4g} -> {rewritten:.4g}")


def test_the_optimizer_bench_rewrites_are_cheaper_in_both():
    for name in ("15-op", "40-op", "squared loss"):
        expr, kwargs = CASES[name]
        req = make_request(expr, **kwargs)
        opt = pipeline.run_optimizer(req)
        _, (written, rewritten, used), _, _ = pipeline.choose_plan(req, opt)
        assert opt.cost_after < opt.cost_before and rewritten < written and used, name


def test_a_class_support_is_the_planners_support():
    """The class analysis of a product is plan.cost's support of it (the
    sparsest factor's, and the join estimate over the factors' keys), not the
    bound of independent factors it was (S and T would meet in 1.8 entries)."""
    i, j = ep.indices("i j")
    S, T = ep.tensor("S", 2, "csr"), ep.tensor("T", 2, "csr")
    u = ep.tensor("u", 1)
    e = S[i, j] * T[i, j] * u[j]
    stats = Stats({"i": 300, "j": 200}, {"S": 600, "T": 900})
    eg = egraph.EGraph(ep.semirings.real, stats)
    got = eg.info(eg.add_expr(e)).nnz
    space = frozenset({"i", "j"})
    assert got == pytest.approx(cost.support(e, space, stats)) == pytest.approx(600)
    assert got > cost._bound(e, space, stats, True)


def test_a_product_class_joins_on_measured_keys():
    """Rows of A and B that hold entries coincide (measured keys: 10 rows each):
    A[i,j]·B[i,k] joins on those rows, 100 entries per row pair, 1e5 in all, as
    the planner's support says; independent factors would give 1e3."""
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    fibers = [("A", 1, 1000, 10, 100, 100.0), ("B", 1, 1000, 10, 100, 100.0)]
    stats = Stats({"i": 1000, "j": 1000, "k": 1000}, {"A": 1000, "B": 1000}, fibers=fibers)
    eg = egraph.EGraph(ep.semirings.real, stats)
    product = eg.add_expr(A[i, j] * B[i, k])
    planner = cost.support(A[i, j] * B[i, k], frozenset("ijk"), stats)
    assert eg.info(product).nnz == pytest.approx(planner) == pytest.approx(1e5)


def test_node_cost_prices_a_temporary_as_the_plan_does():
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2), ep.tensor("B", 2)
    stats = Stats({"i": 10, "j": 20, "k": 30})
    eg = egraph.EGraph(ep.semirings.real, stats)
    root = eg.add_expr(ep.sum(j, A[i, j] * B[j, k]))
    node = next(iter(eg.nodes(root)))
    body = eg.info(node[2][0]).nnz
    assert extract.node_cost(eg, node) == 1 + body + cost.temp_work(10 * 30, stats.tuning)


def test_classes_holding_compare_accesses_merge():
    """A class's sparse access is kept through a merge without asking its truth
    value (a comparison's access has none: bool() raises)."""
    i = ep.indices("i")[0]
    A = ep.tensor("A", 1, ep.Format(["compressed"]))
    eg = egraph.EGraph(ep.semirings.real, Stats({"i": 100}, {"A": 10}))
    a, b = eg.add_expr(A[i] > 0), eg.add_expr(A[i] < 5)
    assert eg.union(a, b) and eg.info(a).leaf is not None
