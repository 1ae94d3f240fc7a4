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

import heapq
import math

from ...expr.nodes import Expr
from ..egraph import EGraph
from ..extract import build_node, greedy, node_cost, to_expr
from .language import Contains, Either, Hole, Materialised, Op, Sketch, SumOf, Tensor, walk
from ...plan.cost import base_name

HOLE = Hole()
INF = (math.inf, None)
FREE_COST = 1e-9        # an operand class already paid for (positive: no cycles)


def _all_nodes(s: Sketch):
    """Every node object of s, duplicates included."""
    yield s
    for p in s.parts():
        yield from _all_nodes(p)


class SketchMatch:
    """The tables of `sketch` over `eg` (see the module docstring), kept up to
    date incrementally: `update()` recomputes only the classes that changed
    since the last update (new nodes, merges) and the classes above them."""

    def __init__(self, eg: EGraph, sketch: Sketch, free=frozenset()):
        self.eg, self.sketch = eg, sketch
        self.free = frozenset(free)     # classes an operand takes at ~0 (already paid)
        self.snap: dict[int, frozenset] = {}            # class -> its nodes when computed
        self.own: dict[tuple, float] = {}
        self.best: dict[int, float] = {}
        self.choice: dict[int, tuple] = {}
        self.base: dict[tuple, float] = {}
        self.parts: dict[int, dict] = {}                # id(op sketch) -> class -> mask -> entry
        self.table: dict[int, dict[int, tuple]] = {id(HOLE): {}}  # id(sketch) -> entries
        self.canon = walk(sketch)
        first = {t: t for t in self.canon}
        for t in self.canon:
            self.table[id(t)] = self.table[id(HOLE)] if isinstance(t, Hole) else {}
            if isinstance(t, Op):
                self.parts[id(t)] = {}
        for t in _all_nodes(sketch):          # equal sketch nodes share one table
            self.table[id(t)] = self.table[id(first[t])]
            if isinstance(t, Op):
                self.parts[id(t)] = self.parts[id(first[t])]
        self.recomputed = 0
        self.update()

    def update(self) -> int:
        """Bring the tables up to date with the e-graph; the number of classes
        recomputed (0: nothing changed)."""
        eg, find = self.eg, self.eg.find
        changed = {c for c, ns in eg.classes.items() if self.snap.get(c) != ns.keys()}
        gone = [c for c in self.snap if c not in eg.classes]
        if not changed and not gone:
            return 0
        for c in gone:
            del self.snap[c]
        above: dict[int, set] = {}
        for c, ns in eg.classes.items():
            for n in ns:
                for k in n[2]:
                    above.setdefault(find(k), set()).add(c)
        dirty, todo = set(changed), list(changed)
        while todo:
            for p in above.get(todo.pop(), ()):
                if p not in dirty:
                    dirty.add(p)
                    todo.append(p)
        self._recompute(dirty, gone)
        self.recomputed = len(dirty)
        return len(dirty)

    def _recompute(self, dirty: set, gone: list) -> None:
        """The dynamic program over the rows of the `dirty` classes; the entries of
        every other class stand (nothing below them changed)."""
        eg, find = self.eg, self.eg.find
        self.rows = sorted(((c, n) for c in dirty for n in eg.classes[c]), key=lambda r: r[0])
        for c in dirty:
            self.snap[c] = frozenset(eg.classes[c])
        for _, n in self.rows:
            self.own[n] = node_cost(eg, n)
        for c in list(dirty) + gone:
            self.best.pop(c, None)
            self.choice.pop(c, None)
            for tab in self.table.values():
                tab.pop(c, None)
            for part in self.parts.values():
                part.pop(c, None)
        price = self._price
        greedy(self.rows, self.own, find, price, self.best, self.choice)
        for _, n in self.rows:
            self.base[n] = self.own[n] + _total(price(find(k)) for k in n[2])
        holes = self.table[id(HOLE)]
        for c in dirty:
            if c in self.best:
                holes[c] = (price(c), None)
        self.by_op: dict[str, list] = {}
        for r in self.rows:
            self.by_op.setdefault(r[1][0], []).append(r)
        self._parent_rows, self.dirty = None, dirty
        for t in self.canon:
            if not isinstance(t, Hole):
                self._fill(t)

    def _price(self, c: int) -> float:
        """A class's cost as an operand at a hole: its greedy best, or FREE_COST for
        a class in `free` that has a term (the sharing discount of optimizer.sketch.search)."""
        b = self.best.get(c, math.inf)
        return FREE_COST if c in self.free and b < math.inf else b

    # -- lookups ---------------------------------------------------------------
    def entry(self, c: int, t: Sketch) -> float:
        """Least tree cost of a term of class c satisfying t (inf: none)."""
        return self.table[id(t)].get(self.eg.find(c), INF)[0]

    def satisfied(self, root: int) -> bool:
        return self.entry(root, self.sketch) < math.inf

    def matched_anywhere(self, t: Sketch) -> bool:
        """Does some class of the e-graph satisfy the sub-sketch t?"""
        return any(v[0] < math.inf for v in self.table[id(t)].values())

    # -- the dynamic program -----------------------------------------------------
    def _fill(self, t: Sketch) -> None:
        if isinstance(t, Contains):
            return self._fill_contains(t)
        if isinstance(t, Op):
            return self._fill_op(t)
        tab = self.table[id(t)]
        for c, n in self._candidates(t):
            got = self.node_match(n, t)
            if got[0] < tab.get(c, INF)[0]:
                tab[c] = got

    def _candidates(self, t: Sketch) -> list:
        """The rows (class, node) whose node may be the root of a term satisfying t."""
        match t:
            case Tensor():
                return self.by_op.get("acc", [])
            case Op(op):
                return self.by_op.get(op, [])
            case SumOf() | Materialised():
                return self.by_op.get("sum", [])
            case Either(options):
                return list({r: None for o in options for r in self._candidates(o)})
        return self.rows

    def _fill_contains(self, t: Contains) -> None:
        """Shortest paths (Dijkstra): a class satisfies contains(s) through s, or
        through a node one operand of which does, at the node's cost plus its other
        operands' best; every such step adds a positive cost. Only the dirty
        classes are recomputed: the others' entries are the sources they stand at."""
        tab, holes = self.table[id(t)], self.table[id(HOLE)]
        inner, dirty = self.table[id(t.inner)], self.dirty
        heap = []
        for c, (cost, wit) in inner.items():
            if c in dirty and cost < math.inf:
                tab[c] = (cost, wit)
                heap.append((cost, c))
        parents = self._parents()
        heap += [(tab[c][0], c) for c in parents if c not in dirty and c in tab]
        heapq.heapify(heap)
        while heap:
            d, c = heapq.heappop(heap)
            if d > tab[c][0]:
                continue
            for p, n, at in parents.get(c, ()):
                nd = self.base[n] - holes[c][0] + d
                if p in dirty and nd < tab.get(p, INF)[0]:
                    tab[p] = (nd, (n, tuple(t if q == at else HOLE
                                            for q in range(len(n[2])))))
                    heapq.heappush(heap, (nd, p))

    def _parents(self) -> dict:
        """class -> [(parent class, node, operand position)] (computed once)."""
        if self._parent_rows is None:
            find, out = self.eg.find, {}
            for c, n in self.rows:
                if self.base[n] < math.inf:
                    for at, k in enumerate(n[2]):
                        out.setdefault(find(k), []).append((c, n, at))
            self._parent_rows = out
        return self._parent_rows

    def node_match(self, n: tuple, t: Sketch) -> tuple:
        """(cost, (n, plan)) of the cheapest term with root node n satisfying t;
        plan gives each operand's sketch node. INF when n cannot."""
        op, payload, kids = n
        match t:
            case Hole():
                own = self.base[n]
                return (own, (n, (t,) * len(kids))) if own < math.inf else INF
            case Tensor(name):
                return (1.0, (n, ())) if op == "acc" and payload.tensor.name == name else INF
            case Op():
                return self._op_match(n, t) if op == t.op else INF
            case SumOf(indices, body):
                if op != "sum" or (indices is not None and tuple(
                        sorted(base_name(i) for i in payload)) != indices):
                    return INF
                cost = self.own[n] + self.entry(kids[0], body)
                return (cost, (n, (body,))) if cost < math.inf else INF
            case Materialised(inner):
                return self.node_match(n, inner) if op == "sum" else INF
            case Either(options):
                return min((self.node_match(n, o) for o in options), key=_first)
            case Contains(inner):
                return min(self.node_match(n, inner), self._descend(n, t), key=_first)
        return INF

    def _descend(self, n: tuple, t: Contains) -> tuple:
        """One operand of n contains t's sketch, the others anything."""
        kids, tab, holes = n[2], self.table[id(t)], self.table[id(HOLE)]
        best, at = math.inf, -1
        for p, k in enumerate(kids):
            k = self.eg.find(k)
            gain = tab.get(k, INF)[0] - holes.get(k, INF)[0]
            if gain < best:
                best, at = gain, p
        cost = self.base[n] + best
        if at < 0 or not cost < math.inf:
            return INF
        return (cost, (n, tuple(t if q == at else HOLE for q in range(len(kids)))))

    def _fill_op(self, t: Op) -> None:
        """Per class and subset (mask) of t's children: the cheapest term rooted at
        a t.op node whose operands, flattened, match those children one each. A
        fixpoint: an operand class that holds a t.op node of its own (one the
        e-graph did not splice) may be spliced in, covering a subset itself."""
        part = self.parts[id(t)]
        rows = self.by_op.get(t.op, [])
        nested = {c for c, _ in rows}       # classes with a t.op node: spliceable
        while rows:             # after the first pass, only rows that can splice
            changed = False
            for c, n in rows:
                mine = part.setdefault(c, {})
                for mask, got in self._op_dp(n, t, part).items():
                    if got[0] < mine.get(mask, INF)[0]:
                        mine[mask] = got
                        changed = True
            find = self.eg.find
            rows = [r for r in rows if any(find(k) in nested for k in r[1][2])] \
                if changed else []
        full = (1 << len(t.kids)) - 1
        tab = self.table[id(t)]
        for c, mine in part.items():
            if c in self.dirty and full in mine:
                tab[c] = mine[full]

    def _op_match(self, n: tuple, t: Op) -> tuple:
        """The cheapest term rooted at n (a t.op node) matching all t's children."""
        return self._op_dp(n, t, self.parts[id(t)]).get((1 << len(t.kids)) - 1, INF)

    def _op_dp(self, n: tuple, t: Op, part: dict) -> dict:
        """mask -> (cost, (n, plan)): operand by operand, each a hole, one child, or
        (spliced) a subset of the children not yet assigned."""
        dp = {0: (0.0, ())}                     # mask of assigned children -> (cost, plan)
        for k in n[2]:
            k = self.eg.find(k)
            hole, sub = self.entry(k, HOLE), part.get(k, {})
            fits = [(1 << a, s, self.entry(k, s)) for a, s in enumerate(t.kids)]
            fits = [f for f in fits if f[2] < math.inf]
            nxt: dict[int, tuple] = {}
            for mask, (cost, plan) in dp.items():
                _keep(nxt, mask, cost + hole, plan + (HOLE,))
                for bit, s, e in fits:
                    if not mask & bit:
                        _keep(nxt, mask | bit, cost + e, plan + (s,))
                for sm, (sc, _) in sub.items():
                    if sm and not sm & mask:
                        _keep(nxt, mask | sm, cost + sc, plan + ((t, sm),))
            dp = nxt
        own = self.own[n]
        return {mask: (own + cost, (n, plan)) for mask, (cost, plan) in dp.items()
                if mask and own + cost < math.inf}

    # -- extraction ------------------------------------------------------------
    def extract(self, root: int, used: set | None = None) -> Expr:
        """The cheapest term of `root` satisfying the sketch (ValueError if none);
        the classes its subterms come from are added to `used`."""
        if not self.satisfied(root):
            raise ValueError("no term of this class satisfies the sketch")
        return self._build(root, self.sketch, {}, set() if used is None else used)

    def _build(self, c: int, t, memo: dict, used: set) -> Expr:
        """The term of class c chosen for t: a sketch node, or (op sketch, mask) for
        an operand spliced into its parent's product or sum."""
        c = self.eg.find(c)
        used.add(c)
        if isinstance(t, tuple):
            wit = self.parts[id(t[0])][c][t[1]][1]
        else:
            wit = self.table[id(t)][c][1]
        if wit is None:                  # a hole, or contains(hole)
            _chosen_classes(self.eg, c, self.choice, used)
            return to_expr(self.eg, c, self.choice)
        key = (c, id(t) if not isinstance(t, tuple) else (id(t[0]), t[1]))
        if key not in memo:
            n, plan = wit
            memo[key] = build_node(self.eg, n, [self._build(k, s, memo, used)
                                                for k, s in zip(n[2], plan)])
        return memo[key]


def _chosen_classes(eg: EGraph, c: int, choice: dict, out: set) -> None:
    """Add to `out` the classes of the term `choice` gives class c."""
    todo = [c]
    while todo:
        k = eg.find(todo.pop())
        if k not in out or k == c:
            out.add(k)
            todo.extend(x for x in choice[k][2] if eg.find(x) not in out)


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


def report(m: SketchMatch) -> tuple[Sketch | None, list]:
    """(the largest sub-sketch some class satisfies, or None; the sub-sketches no
    class satisfies whose own parts are all satisfied: where matching stopped)."""
    nodes = walk(m.sketch)
    ok = [t for t in nodes if not isinstance(t, Hole) and m.matched_anywhere(t)]
    frontier = [t for t in nodes if not m.matched_anywhere(t)
                and all(m.matched_anywhere(p) for p in t.parts())]
    best = max(ok, key=lambda t: (t.height(), len(str(t))), default=None)
    return best, frontier
