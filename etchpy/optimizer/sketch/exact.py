"""The satisfying term of least DAG cost: branch and bound over the choices of
the sketch-restricted e-graph (optimizer.sketch.search's extraction).

`SketchMatch` (optimizer.sketch.match) gives, for every pair (class, sketch
node), the least TREE cost of a term of the class satisfying that part of the
sketch (a class used twice counted twice). `exact_extract` minimises the DAG
cost instead: the sum of `node_cost` (in the search's e-graph) over the
DISTINCT subterms of the term, each once. A choice assigns each pair it reaches
one witness:

    a pair (c, t), t a sketch node      a node n of c and a plan: for each operand
                                        of n the pair it must satisfy (the cases of
                                        match: every injective assignment of
                                        a product's sketch children to operands or
                                        spliced subsets, not only the cheapest)
    a pair (c, (op sketch, mask))       an operand spliced into its parent: a
                                        node of c covering those children
    a pair (c, hole)                    a node of c with holes below, or the term
                                        already chosen for a pair (c, t) (a term
                                        satisfying t satisfies a hole: sharing)

The search is depth first, the sketch's pairs before the holes, witnesses in
order of their tree cost (so the first complete choice is close to the
tree-cost term), and a branch is cut when a lower bound reaches
the incumbent: the cost of the distinct (class, node) pairs chosen so far plus,
for each class still to be chosen that has none yet, its cheapest node. The
DAG cost of a complete choice is computed exactly (the term hash-consed) and a
choice whose witnesses form a cycle is skipped.

Which terms it ranges over: one term per pair, and a hole's term may be any
term of its class already chosen for another pair (or its own). An optimal
term can be brought to that form without raising its DAG cost (two different
subterms at pairs with the same requirement: replace the one not containing
the other by it; every subterm it brings is there already), so the minimum
is the least DAG cost over all the satisfying terms of the root class; the
test compares it with brute-force enumeration on small e-graphs
(tests/optimizer/test_sketch_exact.py).

Bound: at most `budget` branches (Saturation.exact_branches by default). A search that
exceeds it returns the best term found so far with `exact=False`, and optimizer.sketch.search reports the fallback in explain().
"""
from __future__ import annotations

import math

from ...expr.nodes import Expr
from ..extract import build_node, node_cost
from .language import Contains, Either, Hole, Materialised, Op, Sketch, SumOf, Tensor
from .match import HOLE
from ...plan.cost import base_name
from ...tuning import Saturation



class _Budget(Exception):
    pass


class ExactSearch:
    """One branch-and-bound search over the witnesses of `m` (a SketchMatch)."""

    def __init__(self, m, root: int, budget: int = Saturation.exact_branches):
        self.m, self.eg, self.budget = m, m.eg, budget
        self.root = m.eg.find(root)
        self.own = {n: node_cost(self.eg, n) for ns in self.eg.classes.values() for n in ns}
        self.cheapest = {c: min((self.own[n] for n in ns), default=math.inf)
                         for c, ns in self.eg.classes.items()}
        self.chosen: dict = {}          # pair -> (node, plan) or ("alias", pair)
        self.uses: dict = {}            # (class, node) -> how many pairs chose it
        self.paid = 0.0                 # cost of the distinct (class, node) pairs chosen
        self.at: dict = {}              # class -> distinct nodes chosen there
        self.branches = 0
        self.best: tuple | None = None  # (DAG cost, term)
        self.exact = True
        self._options: dict = {}

    # -- the entries of the tables ------------------------------------------------
    def entry(self, pair) -> float:
        c, key = pair
        if isinstance(key, tuple):
            return self.m.parts[id(key[0])].get(c, {}).get(key[1], (math.inf,))[0]
        return self.m.entry(c, key)

    # -- the witnesses of a pair ----------------------------------------------------
    def options(self, pair) -> list:
        """[(node, plan)] for the pair, in order of tree cost; plan: one pair per operand."""
        if pair not in self._options:
            c, key = pair
            find, out = self.eg.find, []
            for n in self.eg.classes[c]:
                if self.own[n] == math.inf:
                    continue
                if isinstance(key, tuple):
                    plans = _op_plans(self, n, key[0], key[1]) if n[0] == key[0].op else []
                else:
                    plans = self.node_plans(n, key)
                for plan in plans:
                    kids = tuple((find(k), s) for k, s in zip(n[2], plan))
                    cost = self.own[n] + sum(self.entry(p) for p in kids)
                    if cost < math.inf:
                        out.append((cost, len(out), n, kids))
            out.sort(key=lambda r: r[:2])
            self._options[pair] = [(n, kids) for _, _, n, kids in out]
        return self._options[pair]

    def node_plans(self, n: tuple, t: Sketch) -> list:
        """Every plan (a sketch key per operand) making node n satisfy t."""
        op, payload, kids = n
        match t:
            case Hole():
                return [(HOLE,) * len(kids)]
            case Tensor(name):
                return [()] if op == "acc" and payload.tensor.name == name else []
            case Op():
                return _op_plans(self, n, t, (1 << len(t.kids)) - 1) if op == t.op else []
            case SumOf(indices, body):
                ok = op == "sum" and (indices is None or tuple(
                    sorted(base_name(i) for i in payload)) == indices)
                return [(body,)] if ok else []
            case Materialised(inner):
                return self.node_plans(n, inner) if op == "sum" else []
            case Either(options):
                return list(dict.fromkeys(p for o in options for p in self.node_plans(n, o)))
            case Contains(inner):
                down = [tuple(t if q == p else HOLE for q in range(len(kids)))
                        for p in range(len(kids))]
                return list(dict.fromkeys(self.node_plans(n, inner) + down))
        return []

    # -- the search -------------------------------------------------------------------
    def run(self) -> tuple[float, Expr, bool]:
        """(its DAG cost, the satisfying term of least DAG cost, exact?); see the
        module docstring."""
        try:
            self._dfs(((self.root, self.m.sketch),), ())
        except _Budget:
            self.exact = False
        if self.best is None:
            if self.exact:
                raise ValueError("no term of this class satisfies the sketch")
            return math.inf, None, False        # over the budget before any term
        return self.best[0], self.best[1], self.exact

    def _bound(self, todo, holes) -> float:
        fresh = {c for c, _ in todo + holes if not self.at.get(c)}
        return self.paid + sum(self.cheapest[c] for c in fresh)

    def _dfs(self, todo: tuple, holes: tuple) -> None:
        """Resolve the pending pairs: `todo` (sketch pairs) first, then `holes`."""
        self.branches += 1
        if self.branches > self.budget:
            raise _Budget
        while todo and todo[0] in self.chosen:
            todo = todo[1:]
        while not todo and holes and holes[0] in self.chosen:
            holes = holes[1:]
        if self.best is not None and self._bound(todo, holes) >= self.best[0]:
            return
        if not todo and not holes:
            return self._leaf()
        pair, todo, holes = (todo[0], todo[1:], holes) if todo else (holes[0], (), holes[1:])
        for w in self._witnesses(pair):
            self._choose(pair, w)
            kids = () if w[0] == "alias" else w[1]
            self._dfs(tuple(p for p in kids if not _is_hole(p)) + todo,
                      tuple(p for p in kids if _is_hole(p)) + holes)
            self._undo(pair, w)

    def _witnesses(self, pair) -> list:
        out = list(self.options(pair))
        if _is_hole(pair):          # any term already chosen at the class
            out = [("alias", p) for p, w in self.chosen.items()
                   if p[0] == pair[0] and w[0] != "alias"] + out
        return out

    def _choose(self, pair, w) -> None:
        self.chosen[pair] = w
        if w[0] != "alias":
            cn = (pair[0], w[0])
            self.uses[cn] = self.uses.get(cn, 0) + 1
            if self.uses[cn] == 1:
                self.paid += self.own[w[0]]
                self.at[pair[0]] = self.at.get(pair[0], 0) + 1

    def _undo(self, pair, w) -> None:
        del self.chosen[pair]
        if w[0] != "alias":
            cn = (pair[0], w[0])
            self.uses[cn] -= 1
            if not self.uses[cn]:
                del self.uses[cn]
                self.paid -= self.own[w[0]]
                self.at[pair[0]] -= 1

    def _leaf(self) -> None:
        terms: dict = {}
        got = _build(self, (self.root, self.m.sketch), {}, set(), terms)
        if got is None:
            return                          # the witnesses go round a cycle
        cost = sum(self.own[n] for n, _ in terms)     # each distinct subterm once
        if self.best is None or cost < self.best[0]:
            self.best = (cost, got[1])


def _is_hole(pair) -> bool:
    return isinstance(pair[1], Hole)


def _op_plans(x: ExactSearch, n: tuple, t: Op, target: int) -> list:
    """Every assignment of t's children in `target` (a mask) to n's operands: each
    operand a hole, one child, or (spliced) a subset of the children."""
    find, out = x.eg.find, []
    kids = [find(k) for k in n[2]]
    subsets = [x.m.parts[id(t)].get(k, {}) for k in kids]

    def go(p: int, mask: int, plan: tuple) -> None:
        if p == len(kids):
            if mask == target:
                out.append(plan)
            return
        k = kids[p]
        if x.entry((k, HOLE)) < math.inf:
            go(p + 1, mask, plan + (HOLE,))
        for a, s in enumerate(t.kids):
            bit = 1 << a
            if target & bit and not mask & bit and x.entry((k, s)) < math.inf:
                go(p + 1, mask | bit, plan + (s,))
        for sm, v in subsets[p].items():
            if sm and not sm & mask and not sm & ~target and v[0] < math.inf:
                go(p + 1, mask | sm, plan + ((t, sm),))
    go(0, 0, ())
    return list(dict.fromkeys(out))


def _build(x: ExactSearch, pair, memo: dict, path: set, terms: dict):
    """(term id, expression) of the choice at `pair`, None for a cycle; `terms`
    interns each distinct subterm (node, its operands' term ids) once."""
    if pair in memo:
        return memo[pair]
    if pair in path:
        return None
    path.add(pair)
    w = x.chosen[pair]
    if w[0] == "alias":
        out = _build(x, w[1], memo, path, terms)
    else:
        kids = [_build(x, p, memo, path, terms) for p in w[1]]
        out = None
        if all(k is not None for k in kids):
            key = (w[0], tuple(k[0] for k in kids))
            if key not in terms:
                terms[key] = (len(terms), build_node(x.eg, w[0], [k[1] for k in kids]))
            out = terms[key]
    path.discard(pair)
    memo[pair] = out
    return out


def exact_extract(m, root: int, budget: int = Saturation.exact_branches):
    """(DAG cost, the term of `root` satisfying m.sketch of least DAG cost, exact?,
    branches searched). Not exact: the best term found within the budget, None if
    it found none. ValueError when no term satisfies the sketch."""
    x = ExactSearch(m, root, budget)
    cost, term, exact = x.run()
    return cost, term, exact, x.branches
