"""Sketch-guided equality saturation (after "Sketch-Guided Equality Saturation",
Koehler et al.): `guided_search(expr, sketches, ...)`, run by
`optimize(expr, sketch=s)` or `optimize(expr, sketches=[s1, s2, ...])`.

For each sketch in turn (a search):
1. a fresh e-graph holds the current term (the input, then the previous
   search's result);
2. it is saturated with the semiring's rules under the saturation limits (early
   stopping by cost, `patience`, is off: the goal is the sketch), and after each
   iteration (and before the first, and within an iteration every few merges) the
   sketch is matched (optimizer.sketch.match, incrementally: only the classes
   that changed and those above them are recomputed); the search stops as soon
   as a term of the root class satisfies it. Each iteration searches the rules
   only at the classes the sketch still needs (optimizer.sketch.demand), the
   matches aimed at the sketch first (`aimed`), and the whole graph when those
   offer nothing new;
3. the satisfying term of least DAG cost is extracted (`sketch_extract`:
   optimizer.sketch.exact's branch and bound, exact within a budget of
   branches; past it, a fallback that the Search's `extraction` names) and
   becomes the next search's start.
A sketch no term satisfies when saturation stops (saturated, or a limit hit)
raises SketchError naming the largest part of it that some class matched and
the parts that none did. Every extracted term is a term of the root class, so
equal to the input in the semiring (proofs_notes/sketch.md).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from ...errors import SketchError
from ...expr.nodes import Expr
from ...plan.cost import Stats
from ...semiring import Semiring
from ...tuning import Saturation
from ..egraph import EGraph
from ..extract import term_dag_cost
from ..rules import rules_for
from ..saturate import saturate
from .language import Sketch, as_sketch
from .demand import aimed, demand
from .exact import exact_extract
from .rules import push_to_rule
from .match import SketchMatch, report


@dataclass(frozen=True)
class Search:
    """One guided search: its sketch, the e-graph it grew, and the term it chose."""
    sketch: str
    nodes: int
    classes: int
    iterations: int
    seconds: float
    stop: str
    result: str
    start_nodes: int = 0        # e-nodes of the start term (the last search's result)
    extraction: str = ""        # "exact, N branches" or the fallback and why

    @property
    def grown(self) -> int:
        """The e-nodes this search added to its start term."""
        return self.nodes - self.start_nodes

    def line(self, k: int) -> str:
        return (f"search {k}  sketch {self.sketch}: satisfied after {self.iterations} "
                f"iterations, {self.nodes} e-nodes ({self.start_nodes} of its start "
                f"term), {self.classes} classes, {self.seconds * 1000:.1f} ms, "
                f"extraction {self.extraction} -> {self.result}")


def as_sketches(sketch, sketches) -> list[Sketch]:
    """The list of sketches `optimize` was given (one of sketch=, sketches=)."""
    if sketch is not None and sketches is not None:
        raise SketchError("give sketch= or sketches=, not both")
    items = [sketch] if sketch is not None else list(sketches)
    if not items:
        raise SketchError("sketches= is empty")
    return [as_sketch(s) for s in items]


def guided_search(expr: Expr, sketches, sr: Semiring, stats: Stats,
                  limits: Saturation) -> tuple[Expr, list[Search], Counter]:
    """(the term the last search extracted, the searches, rules fired): see the
    module docstring. Raises SketchError for a sketch no term satisfied."""
    term, searches, fired = expr, [], Counter()
    lim = replace(limits, patience=0)
    for k, s in enumerate(sketches, 1):
        eg = EGraph(sr, stats)
        root = eg.add_expr(term)
        start = eg.num_nodes()
        last = {"m": SketchMatch(eg, s)}

        def satisfied(root=root, last=last) -> bool:
            last["m"].update()              # incremental: the changed classes only
            return last["m"].satisfied(root)
        def focus(root=root, last=last) -> dict:
            last["wants"] = demand(last["m"], root)     # read by sum-push-to
            return last["wants"]
        pushes = [push_to_rule(last, op, lim.flatten_depth) for op in ("sum", "mul")]
        st = saturate(eg, rules_for(sr) + pushes, lim, until=satisfied,
                      focus=focus, aim=aimed)
        fired.update(st.fired)
        m = last["m"]
        if st.stop != "goal reached":
            raise SketchError(_unsatisfied(k, s, m, st))
        term, how = sketch_extract(eg, s, root, m, lim.exact_branches, lim.share_rounds)
        searches.append(Search(str(s), st.nodes, st.classes, st.iterations, st.seconds,
                               st.stop, str(term), start, how))
    return term, searches, fired


def sketch_extract(eg: EGraph, s: Sketch, root: int, m: SketchMatch,
                   budget: int = Saturation.exact_branches,
                   rounds: int = Saturation.share_rounds) -> tuple[Expr, str]:
    """(the term of `root` satisfying s of least DAG cost, how it was found):
    optimizer.sketch.exact's branch and bound, at most `budget` branches. Over
    the budget it falls back LOUDLY (the second value says so, and explain()
    shows it) to the cheaper by DAG cost of the best term found so far and
    `shared_extract`'s heuristic (at most `rounds` re-extractions)."""
    _, term, exact, branches = exact_extract(m, root, budget)
    if exact:
        return term, f"exact, {branches} branches"
    other = shared_extract(eg, s, root, m, rounds)
    if term is None or term_dag_cost(eg, other) < term_dag_cost(eg, term):
        term = other
    return term, f"NOT exact: over {budget} branches, heuristic fallback"


def shared_extract(eg: EGraph, s: Sketch, root: int, m: SketchMatch,
                   rounds: int = Saturation.share_rounds) -> Expr:
    """The term of `root` satisfying s that `m` gives (least TREE cost), improved
    for DAG cost (each distinct subterm counted once) by a heuristic: extract
    again with every class of the current term priced ~0 as an operand at a hole
    (SketchMatch(free=...): reusing it costs nothing more), and keep the new term
    when its DAG cost is lower; at most `rounds` times. Never costlier by DAG
    cost than the tree-cost term; not always the least DAG cost."""
    used: set = set()
    best = m.extract(root, used)
    best_cost = term_dag_cost(eg, best)
    for _ in range(rounds):
        again: set = set()
        other = SketchMatch(eg, s, free=used).extract(root, again)
        other_cost = term_dag_cost(eg, other)
        if not other_cost < best_cost:
            break
        best, best_cost, used = other, other_cost, again
    return best


def _unsatisfied(k: int, s: Sketch, m: SketchMatch, st) -> str:
    head = (f"sketch {k} {s} is not satisfied: saturation stopped ({st.stop}) after "
            f"{st.iterations} iterations with {st.nodes} e-nodes; ")
    if m.matched_anywhere(s):
        return head + ("it matches a subterm but not the whole expression (a sketch "
                       "describes the root: wrap it in contains(...) or in the root's "
                       "operator)")
    best, frontier = report(m)
    where = (f"the largest part some term matched: {best}" if best is not None
             else "no part of it matched any term")
    missing = "; ".join(str(t) for t in frontier[:3])
    return head + (f"{where}; not matched: {missing}. Raise the limits (limits=...), "
                   "or add an intermediate sketch (sketches=[...])")
