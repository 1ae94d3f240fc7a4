"""Algebraic optimisation of expressions: equality saturation plus cost-based extraction.

    opt = optimize(expr, semiring=None, dims=None, nnz=None, exact=False, limits=None)
    opt.expr          an equivalent expression over the same TensorVar objects
    opt.cost_before   estimated work of `expr`      (see etchpy.egraph.node_cost)
    opt.cost_after    estimated work of `opt.expr`  (never above cost_before)
    opt.rules_used    {rule name: times it merged two classes}
    opt.stats         saturation statistics (iterations, nodes, classes, stop reason)
    opt.plan          the loop nests it compiles to (plan.make_plan with its factors
                      kept apart and loop orders priced by etchpy.cost)
    opt.explain()     a readable report, plan included

    equivalent(e1, e2, semiring=None) -> bool     canonical forms (etchpy.ra)
    to_ra(expr), from_ra(q), canonical(expr, semiring)

`dims` maps index names (or Index objects) to sizes (default 1000); `nnz` maps
tensor names to nonzero counts (default: the full size for dense formats, 1%
for sparse ones). `limits` is an `etchpy.egraph.Limits` or a dict with keys
nodes (10_000), iterations (30), seconds (1.0), match_limit, ban_length, patience (3),
check_every (1) and min_gain (1e-3): saturation also stops ("no improvement") once the
root's best extracted cost has not decreased (by more than the fraction min_gain) for
`patience` consecutive iterations; patience=0 turns early stopping off.

The cost model assumes a Σ nested inside a product is computed on its own
(materialised, or fused as a separate loop), which is what makes factorised
forms like Σ_j (Σ_i A[i,j])·(Σ_k B[j,k]) cheaper than Σ_{i,j,k} A[i,j]·B[j,k].
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .egraph import (EGraph, Limits, dag_cost, extract_exact, extract_greedy, rules_for,
                     saturate, to_expr)
from ..expr.nodes import Expr, as_expr, uses_negation
from .ra import canonical, equivalent, from_ra, to_ra
from ..semiring import semirings
from ..tuning import DEFAULT, Tuning

__all__ = ["optimize", "Optimized", "equivalent", "canonical", "to_ra", "from_ra",
           "cost", "Limits"]


@dataclass(frozen=True)
class Optimized:
    expr: Expr
    original: Expr
    cost_before: float
    cost_after: float
    rules_used: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict)
    semiring: str = "real"
    dims: dict | None = None
    nnz: dict | None = None

    @property
    def plan(self):
        from ..plan.cost import Stats
        from ..plan.plan import make_plan
        return make_plan(self.expr, keep_factored=True, stats=Stats(self.dims, self.nnz))

    def explain(self) -> str:
        rules = ", ".join(f"{k}×{v}" for k, v in sorted(self.rules_used.items())) or "none"
        s = self.stats
        ratio = self.cost_before / self.cost_after if self.cost_after else float("inf")
        return "\n".join([
            f"semiring  {self.semiring}",
            f"before    {self.original}",
            f"after     {self.expr}",
            f"cost      {self.cost_before:.4g} -> {self.cost_after:.4g} ({ratio:.3g}x less work)",
            f"rules     {rules}",
            f"e-graph   {s.get('iterations')} iterations, {s.get('nodes')} nodes, "
            f"{s.get('classes')} classes, stopped: {s.get('stop')}, "
            f"{s.get('seconds', 0) * 1000:.1f} ms",
            "plan",
            *("  " + ln for ln in self._plan_text().splitlines()),
        ])

    def _plan_text(self) -> str:
        from ..errors import OrderError
        try:
            return self.plan.explain()
        except OrderError as err:     # the written expression is compiled instead
            return f"none: {err}"


def _semiring(expr, semiring):
    sr = semirings.get(semiring if semiring is not None else semirings.real)
    if uses_negation(expr):
        sr.require("negation")
    return sr


def cost(expr, *, semiring=None, dims=None, nnz=None) -> float:
    """Estimated work of `expr` as written (shared subexpressions counted once)."""
    expr = as_expr(expr)
    eg = EGraph(_semiring(expr, semiring), dims, nnz)
    root = eg.add_expr(expr)
    return dag_cost(eg, root, {c: next(iter(ns)) for c, ns in eg.classes.items()})


def optimize(expr, *, semiring=None, dims=None, nnz=None, exact=False,
             limits=None, tuning: Tuning = DEFAULT) -> Optimized:
    """Saturate the e-graph of `expr` with the semiring's rules; extract the cheapest term."""
    expr = as_expr(expr)
    sr = _semiring(expr, semiring)
    eg = EGraph(sr, dims, nnz)
    root = eg.add_expr(expr)
    stats = saturate(eg, rules_for(sr), limits, root=root)
    choice = extract_greedy(eg)
    if exact:       # the MILP may stop at its time limit: keep the cheaper of the two
        milp_choice = extract_exact(eg, root)
        if milp_choice is not None and (dag_cost(eg, root, milp_choice)
                                        < dag_cost(eg, root, choice)):
            choice = milp_choice
    best = to_expr(eg, root, choice)
    before = cost(expr, semiring=sr, dims=dims, nnz=nnz)
    after = cost(best, semiring=sr, dims=dims, nnz=nnz)
    if after > before:            # greedy tree cost can miss sharing: never get worse
        best, after = expr, before
    return Optimized(best, expr, before, after, dict(stats.fired), stats.as_dict(), sr.name,
                     dims, nnz)
