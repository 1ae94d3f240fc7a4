"""Matching a sketch (optimizer.sketch) against an e-graph, and extracting the
cheapest term that satisfies it.

`SketchMatch(eg, sketch)` fills one table per sketch node t: for every class c,
the least tree cost of a term of c that satisfies t, with its witness (the
e-node chosen, and for each of its operands the sketch node that operand must
satisfy, or a hole). The tables are a dynamic program over (class, sketch
node) pairs, children of the sketch first:

    hole           the class's greedy best (optimizer.extract: least tree cost)
    tensor(A)      1 at an access of A
    mul/add(s..)   node cost + the cheapest injective assignment of the sketch's
                   k children to k of the node's m operands (a DP over subsets of
                   the children, operand by operand), the m - k others at their
                   greedy best: the children match a SUBSET of the operands
    sum(I, s)      node cost + the body's entry for s, at a Σ over exactly I
    materialised   the entry of its sketch, at Σ nodes only
    either         the least over its options
    contains(s)    min(entry for s, node cost + every child at its best except one
                   child at its entry for contains(s)): a fixpoint (the e-graph
                   may have cycles), like greedy extraction

Every cost is positive, so a finite entry's witnesses never go round a cycle:
`extract` rebuilds a finite term. The extracted term is the cheapest, by tree
cost (a class used twice counted twice), among all terms of the root class that
satisfy the sketch: exact for the sketch, not a filter applied to one greedy
choice. Its DAG cost (each distinct subterm once) is what `optimize` reports.
"""
from __future__ import annotations

import math

from ..expr.nodes import Expr, Index, Lit, Map, Mul, Add
from ..expr.nodes import sum as ep_sum
from .egraph import EGraph
from .extract import _display_rank, _greedy, node_cost, to_expr
from .sketch import Contains, Either, Hole, Materialised, Op, Sketch, SumOf, Tensor, walk
from ..plan.cost import base_name

HOLE = Hole()
INF = (math.inf, None)


class SketchMatch:
    """The tables of `sketch` over `eg` (see the module docstring)."""

    def __init__(self, eg: EGraph, sketch: Sketch):
        self.eg, self.sketch = eg, sketch
        self.best, self.choice = _greedy(eg)
        self.cost = {}                        # node -> node_cost, memoised
        self.rows = [(c, n) for c, ns in eg.classes.items() for n in ns]
        self.rows.sort(key=lambda r: r[0])
        self.table: dict[Sketch, dict[int, tuple]] = {}
        for t in walk(sketch):
            if not isinstance(t, Hole):
                self._fill(t)

    # -- lookups ---------------------------------------------------------------
    def entry(self, c: int, t: Sketch) -> float:
        """Least tree cost of a term of class c satisfying t (inf: none)."""
        c = self.eg.find(c)
        if isinstance(t, Hole):
            return self.best.get(c, math.inf)
        return self.table[t].get(c, INF)[0]

    def satisfied(self, root: int) -> bool:
        return self.entry(root, self.sketch) < math.inf

    def matched_anywhere(self, t: Sketch) -> bool:
        """Does some class of the e-graph satisfy the sub-sketch t?"""
        if isinstance(t, Hole):
            return True
        return any(v[0] < math.inf for v in self.table[t].values())

    def _ncost(self, n: tuple) -> float:
        v = self.cost.get(n)
        if v is None:
            v = self.cost[n] = node_cost(self.eg, n)
        return v

    # -- the dynamic program -----------------------------------------------------
    def _fill(self, t: Sketch) -> None:
        tab: dict[int, tuple] = {}
        self.table[t] = tab
        rows = [r for r in self.rows if _may_match(r[1], t)]
        changed = True
        while changed:                 # one pass, except contains() (a fixpoint)
            changed = False
            for c, n in rows:
                got = self.node_match(n, t)
                if got[0] < tab.get(c, INF)[0]:
                    tab[c] = got
                    changed = True
            if not isinstance(t, Contains):
                break

    def node_match(self, n: tuple, t: Sketch) -> tuple:
        """(cost, (n, plan)) of the cheapest term with root node n satisfying t;
        plan gives each operand's sketch node. INF when n cannot."""
        op, payload, kids = n
        match t:
            case Hole():
                own = self._ncost(n) + _total(self.best.get(self.eg.find(k), math.inf)
                                              for k in kids)
                return (own, (n, (HOLE,) * len(kids))) if own < math.inf else INF
            case Tensor(name):
                return (1.0, (n, ())) if op == "acc" and payload.tensor.name == name else INF
            case Op():
                return self._op_match(n, t) if op == t.op else INF
            case SumOf(indices, body):
                if op != "sum" or (indices is not None and tuple(
                        sorted(base_name(i) for i in payload)) != indices):
                    return INF
                return self._with(n, [body])
            case Materialised(inner):
                return self.node_match(n, inner) if op == "sum" else INF
            case Either(options):
                return min((self.node_match(n, o) for o in options), key=_first)
            case Contains(inner):
                return min(self.node_match(n, inner), self._descend(n, t), key=_first)
        return INF

    def _with(self, n: tuple, plan) -> tuple:
        cost = self._ncost(n) + _total(self.entry(k, s) for k, s in zip(n[2], plan))
        return (cost, (n, tuple(plan))) if cost < math.inf else INF

    def _descend(self, n: tuple, t: Contains) -> tuple:
        """One operand of n contains t's sketch, the others anything."""
        kids = n[2]
        if not kids:
            return INF
        plans = [[t if q == p else HOLE for q in range(len(kids))] for p in range(len(kids))]
        return min((self._with(n, plan) for plan in plans), key=_first)

    def _op_match(self, n: tuple, t: Op) -> tuple:
        """The cheapest injective assignment of t's children to n's operands."""
        kids, want = n[2], t.kids
        if len(want) > len(kids):
            return INF
        full = (1 << len(want)) - 1
        dp = {0: (0.0, ())}                     # mask of assigned children -> (cost, plan)
        for p, k in enumerate(kids):
            hole = self.entry(k, HOLE)
            nxt: dict[int, tuple] = {}
            for mask, (cost, plan) in dp.items():
                left = len(kids) - p - 1         # operands after this one
                if bin(full & ~mask).count("1") <= left:
                    _keep(nxt, mask, cost + hole, plan + (HOLE,))
                for a, s in enumerate(want):
                    if not mask >> a & 1:
                        _keep(nxt, mask | 1 << a, cost + self.entry(k, s), plan + (s,))
            dp = nxt
        cost, plan = dp.get(full, INF)
        cost += self._ncost(n)
        return (cost, (n, plan)) if cost < math.inf else INF

    # -- extraction ------------------------------------------------------------
    def extract(self, root: int) -> Expr:
        """The cheapest term of `root` satisfying the sketch (ValueError if none)."""
        if not self.satisfied(root):
            raise ValueError("no term of this class satisfies the sketch")
        return self._build(root, self.sketch, {})

    def _build(self, c: int, t: Sketch, memo: dict) -> Expr:
        c = self.eg.find(c)
        if isinstance(t, Hole):
            return to_expr(self.eg, c, self.choice)
        key = (c, t)
        if key not in memo:
            n, plan = self.table[t][c][1]
            memo[key] = build_node(self.eg, n, [self._build(k, s, memo)
                                                for k, s in zip(n[2], plan)])
        return memo[key]


def _may_match(n: tuple, t: Sketch) -> bool:
    """Could node n be the root of a term satisfying t? (a cheap filter)"""
    match t:
        case Tensor():
            return n[0] == "acc"
        case Op(op):
            return n[0] == op
        case SumOf() | Materialised():
            return n[0] == "sum"
        case Either(options):
            return any(_may_match(n, o) for o in options)
    return True


def _keep(d: dict, mask: int, cost: float, plan: tuple) -> None:
    if cost < d.get(mask, INF)[0]:
        d[mask] = (cost, plan)


def _first(x):
    return x[0]


def _total(costs) -> float:
    out = 0.0
    for v in costs:
        out += v
    return out


def build_node(eg: EGraph, n: tuple, kids: list) -> Expr:
    """The expression of node n over the expressions `kids` of its operands."""
    op, payload, _ = n
    match op:
        case "acc":
            return payload
        case "lit":
            neg = bool(eg.sr.negation and not isinstance(payload, bool) and payload < 0)
            return Lit(payload, negation=neg)
        case "sum":
            return ep_sum(tuple(Index(i) for i in payload), kids[0])
        case "map":
            return Map(payload[0], kids[0], payload[1])
        case "dim":
            raise ValueError("|i| has no expression; it is never extracted")
    parts = sorted(kids, key=_display_rank)
    out = parts[0]
    for p in parts[1:]:
        out = Mul(out, p) if op == "mul" else Add(out, p)
    return out


def report(m: SketchMatch) -> tuple[Sketch | None, list]:
    """(the largest sub-sketch some class satisfies, or None; the sub-sketches no
    class satisfies whose own parts are all satisfied: where matching stopped)."""
    nodes = walk(m.sketch)
    ok = [t for t in nodes if not isinstance(t, Hole) and m.matched_anywhere(t)]
    frontier = [t for t in nodes if not m.matched_anywhere(t)
                and all(m.matched_anywhere(p) for p in t.parts())]
    best = max(ok, key=lambda t: (t.height(), len(str(t))), default=None)
    return best, frontier
