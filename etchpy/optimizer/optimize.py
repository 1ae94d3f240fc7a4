"""The optimizer's driver: equality saturation plus cost-based extraction.

    opt = optimize(expr, semiring=None, dims=None, nnz=None, exact=False,
                   limits=None, tuning=None)
    opt.expr          an equivalent expression over the same TensorVar objects
    opt.cost_before   estimated work of `expr`      (see optimizer.extract.node_cost)
    opt.cost_after    estimated work of `opt.expr`  (never above cost_before)
    opt.rules_used    {rule name: times it merged two classes}
    opt.stats         saturation statistics (iterations, nodes, classes, stop reason)
    opt.plan          the loop nests it compiles to (plan.make_plan with its factors
                      kept apart and loop orders priced by plan.cost)
    opt.explain()     a readable report: the rules used with their laws, the plan

    equivalent(e1, e2, semiring=None) -> bool     canonical forms (optimizer.ra)
    proves(e1, e2, semiring) -> bool              saturation puts them in one class
    cost(expr, ...)                               estimated work as written
    to_ra(expr), from_ra(q), canonical(expr, semiring)

`dims` maps index names (or Index objects) to sizes; `nnz` maps tensor names
to nonzero counts (defaults: plan.cost.Stats's guesses). Saturation runs under
the limits `tuning.of(tuning).saturation` (an `etchpy.tuning.Saturation`);
`limits=` overrides them with a Saturation, or a dict of some of its fields
(nodes, iterations, seconds, match_limit, ban_length, patience, check_every,
min_gain, saturate_below): a graph smaller than saturate_below e-nodes runs to
saturation; a larger one also stops ("no improvement") once the root's best
extracted cost has not decreased (by more than the fraction min_gain) for
`patience` consecutive iterations; patience=0 turns early stopping off.

The cost model assumes a Σ nested inside a product is computed on its own
(materialised, or fused as a separate loop), which is what makes factorised
forms like Σ_j (Σ_i A[i,j])·(Σ_k B[j,k]) cheaper than Σ_{i,j,k} A[i,j]·B[j,k].
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace

from ..errors import OrderError
from ..expr.nodes import Expr, Sum, as_expr
from ..expr.walk import subexprs, uses_negation
from ..plan.cost import Stats
from ..plan.stats import size_notes
from ..plan.plan import make_plan
from ..semiring import Semiring, semirings
from ..settings import LIMITS
from ..tuning import DEFAULT, Saturation, Tuning, of as tuning_of
from .egraph import EGraph
from .extract import (alternatives, best_costs, dag_cost, extract_exact, extract_greedy,
                      term_dag_cost, ties, to_expr)
from .ra import canonical, equivalent, from_ra, to_ra
from .rules import RULES_BY_NAME, rules_for
from .saturate import saturate

__all__ = ["optimize", "Optimized", "equivalent", "proves", "canonical", "to_ra", "from_ra",
           "cost"]


@dataclass(frozen=True)
class Optimized:
    """The result of `optimize`: the chosen expression, its costs and how it was found."""
    expr: Expr
    original: Expr
    cost_before: float
    cost_after: float
    rules_used: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict)
    semiring: str = "real"
    dims: dict | None = None
    nnz: dict | None = None
    tuning: Tuning = DEFAULT
    searches: tuple = ()          # optimizer.sketch.search.Search per sketch (sketch=, sketches=)
    alternatives: tuple = ()      # other terms of the graph, one class's choice apart
                                  # (extract.alternatives), for the plan model to price

    def __repr__(self):
        return (f"Optimized({self.original} -> {self.expr}, cost {self.cost_before:.4g} -> "
                f"{self.cost_after:.4g})")

    @property
    def plan(self):
        """The loop nests of `expr`, its Σ factors kept apart (may raise OrderError)."""
        return make_plan(self.expr, keep_factored=True, stats=Stats(self.dims, self.nnz,
                                                               tuning=self.tuning))

    def explain(self) -> str:
        """A readable report: the search (rules used with their laws, saturation), its
        cost estimate, which sizes it assumed (given or guessed), and the plan.

            >>> print(ep.optimize(ep.sum(j, A[i, j] * x[j])).explain())
        """
        ratio = self.cost_before / self.cost_after if self.cost_after else float("inf")
        return "\n".join([
            *self.search_lines(),
            f"cost      {self.cost_before:.4g} -> {self.cost_after:.4g} ({ratio:.3g}x less "
            f"work, e-graph estimate)",
            *size_notes(self.original, self.dims, self.nnz, self.tuning),
            "plan",
            *("  " + ln for ln in self._plan_text().splitlines()),
        ])

    def search_lines(self) -> list[str]:
        """The search alone: semiring, the expression before and after, the rules
        used with their laws, and the saturation's statistics."""
        s = self.stats
        graph = [f"e-graph   {s.get('iterations')} iterations, {s.get('nodes')} nodes, "
                 f"{s.get('classes')} classes, stopped: {s.get('stop')}, "
                 f"{s.get('seconds', 0) * 1000:.1f} ms"]
        if self.searches:
            graph = [f"guided    {len(self.searches)} sketch searches, "
                     f"{s.get('nodes')} e-nodes in all ({s.get('nodes with restarts')} "
                     f"counting each restart's start term again), "
                     f"{s.get('seconds', 0) * 1000:.1f} ms",
                     *(f"  {x.line(k)}" for k, x in enumerate(self.searches, 1))]
        return [f"semiring  {self.semiring}", f"before    {self.original}",
                f"after     {self.expr}", *self._rules_text(), *graph]

    def _rules_text(self) -> list[str]:
        used = sorted(self.rules_used.items())
        if not used:
            return ["rules     none"]
        width = max(len(f"{k}×{v}") for k, v in used)
        return [f"{'rules' if n == 0 else '':<10}{f'{k}×{v}':<{width}}  {_law(k)}"
                for n, (k, v) in enumerate(used)]

    def _plan_text(self) -> str:
        try:
            return self.plan.explain()
        except OrderError as err:     # the written expression is compiled instead
            return f"none: {err}"


def _law(name: str) -> str:
    if name in RULES_BY_NAME:
        return RULES_BY_NAME[name].law
    from .sketch.rules import PUSH_TO_LAW       # sum-p*-to: fired only by a sketch's search
    return PUSH_TO_LAW


def _semiring(expr, semiring) -> Semiring:
    sr = semirings.get(semiring if semiring is not None else semirings.real)
    if uses_negation(expr):
        sr.require("negation")
    return sr


def saturation_limits(tuning=None, limits=None) -> Saturation:
    """The saturation limits: `limits` (a Saturation, or a dict of fields changed
    from the tuning's) over `tuning.of(tuning).saturation`."""
    base = tuning_of(tuning).saturation
    if limits is None:
        return base
    if isinstance(limits, Saturation):
        return limits
    return replace(base, **dict(limits))


def cost(expr, *, semiring=None, dims=None, nnz=None) -> float:
    """Estimated work of `expr` as written (shared subexpressions counted once)."""
    expr = as_expr(expr)
    return term_dag_cost(EGraph(_semiring(expr, semiring), Stats(dims, nnz)), expr)


def remembered(expr: Expr, semiring: Semiring, tuning: Tuning, options: dict) -> Optimized:
    """`optimize(expr, semiring=..., tuning=..., **options)`, kept for the process.

    The result is a function of those arguments alone; the expression's text is
    part of the key too (`0.0` and `-0.0`, `1` and `1.0` are equal literals but
    other programs). The last `LIMITS.optimized` results are kept, so a size
    class, another backend, output or thread count of one expression does not
    saturate it again; options that do not hash (a sketch) are optimized anew."""
    try:
        key = (repr(expr), expr, semiring, tuning, _frozen(options))
        hit = _REMEMBERED.get(key)
    except TypeError:
        key = hit = None
    if hit is None:
        hit = optimize(expr, semiring=semiring, tuning=tuning, **options)
        if key is not None:
            with _LOCK:             # compiles may run in several threads (dask)
                while len(_REMEMBERED) >= max(1, LIMITS.optimized):
                    del _REMEMBERED[next(iter(_REMEMBERED))]       # the oldest
                _REMEMBERED[key] = hit
    return hit


_REMEMBERED: dict = {}
_LOCK = threading.Lock()


def _frozen(value):
    """An options value as hashable data: a dict as its sorted items, a list as a tuple."""
    if isinstance(value, dict):
        return tuple(sorted((repr(k), _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def optimize(expr, *, semiring=None, dims: dict | None = None, nnz: dict | None = None,
             exact: bool = False, limits=None, tuning=None, sketch=None,
             sketches=None) -> Optimized:
    """Saturate the e-graph of `expr` with the semiring's rules; extract the cheapest term.

    The result is never costlier than `expr` (if extraction misses sharing, `expr`
    itself is returned). ep.compile runs it (optimizer_options= are its keyword
    arguments) and compiles the rewrite when its plan costs less.

    Parameters: expr, an expression (ep.optimize also takes a lazy array: its
    whole program, etchpy.lazy.optimize); semiring, a Semiring or a built-in name
    (default real: its rules are the ones applied); dims, {index or name: size};
    nnz, {tensor name: nonzero count} (sizes not given are guessed from the
    tuning's default_dim and sparse_density; explain() says which); exact, also
    extract with a MILP (scipy.optimize.milp) and keep the cheaper; limits, a
    Saturation or a dict of its fields over the tuning's; tuning, a Tuning, a
    preset name or a dict; sketch, a sketch (ep.sketch: the shape of the plan
    wanted), or sketches, a list of them searched in turn (optimizer.sketch.search): the
    result is the cheapest term satisfying the last one, even when it costs more
    than `expr` (exact= is not used); SketchError when one is not satisfied
    within the limits.
    Returns: an Optimized (.expr, .cost_before, .cost_after, .rules_used,
    .stats, .plan, .explain()).

        >>> opt = ep.optimize(ep.sum((j, k), A[i, j] * B[j, k] * x[k]), dims={"i": 10})
        >>> print(opt.expr)
        Σ_j A[i,j]·(Σ_k B[j,k]·x[k])
    """
    expr = as_expr(expr)
    sr = _semiring(expr, semiring)
    if sketch is not None or sketches is not None:
        from .sketch.search import as_sketches     # sketches load on first use (ep.sketch)
        return _guided(expr, sr, as_sketches(sketch, sketches), dims, nnz, limits, tuning)
    eg = EGraph(sr, Stats(dims, nnz))
    root = eg.add_expr(expr)
    stats = saturate(eg, rules_for(sr), saturation_limits(tuning, limits), root=root)
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
    others = _alternatives(eg, root, choice, best, expr)
    return Optimized(best, expr, before, after, dict(stats.fired), stats.as_dict(), sr.name,
                     dims, nnz, tuning_of(tuning), alternatives=others)


def _alternatives(eg, root, choice, best, expr) -> tuple:
    """Other terms for the plan model to price (extract.alternatives): those that
    contract something (a Σ) and are no larger than the chosen term plus two nodes
    (the graph also holds 1·1·…·x and such, equal and never cheaper)."""
    if not any(isinstance(n, Sum) for n in subexprs(best)):
        return ()
    size = sum(1 for _ in subexprs(best)) + 2
    costs = best_costs(eg)        # the greedy fixpoint, once for both
    picks = alternatives(eg, root, choice, best=costs) + ties(eg, root, choice, best=costs)
    terms = (to_expr(eg, root, alt) for alt in picks)
    return tuple(dict.fromkeys(e for e in terms if e != best and e != expr
                               and sum(1 for _ in subexprs(e)) <= size))


def _guided(expr, sr, sketches, dims, nnz, limits, tuning) -> Optimized:
    """optimize's sketch-guided search: the searches' statistics summed."""
    from .sketch.search import guided_search
    best, searches, fired = guided_search(expr, sketches, sr, Stats(dims, nnz),
                                          saturation_limits(tuning, limits))
    stats = {"iterations": sum(x.iterations for x in searches),
             # a later search's start term was extracted from the last one's graph
             # (counted there): its nodes once; "nodes with restarts" counts them again
             "nodes": searches[0].start_nodes + sum(x.grown for x in searches),
             "nodes with restarts": sum(x.nodes for x in searches),
             "classes": sum(x.classes for x in searches), "stop": searches[-1].stop,
             "seconds": round(sum(x.seconds for x in searches), 4),
             "rules fired": dict(fired), "searches": len(searches)}
    return Optimized(best, expr, cost(expr, semiring=sr, dims=dims, nnz=nnz),
                     cost(best, semiring=sr, dims=dims, nnz=nnz), dict(fired), stats,
                     sr.name, dims, nnz, tuning_of(tuning), tuple(searches))


def proves(e1, e2, semiring, limits=None, tuning=None) -> bool:
    """True when saturation puts e1 and e2 (same free indices) in one class.

    Sound in `semiring`; False may be a missed proof (a limit was hit)."""
    eg = EGraph(semirings.get(semiring))
    a, b = eg.add_expr(e1), eg.add_expr(e2)
    saturate(eg, rules_for(eg.sr), saturation_limits(tuning, limits))
    return eg.find(a) == eg.find(b)
