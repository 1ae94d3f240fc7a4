"""Extraction: the cost of an e-node, the cheapest term of a class, and back to Expr.

Cost (`node_cost`): plan.cost's model split over a term's nodes, the loop order
left free: a product pays its operations at each record of its support
(EGraph.product_support: plan.cost.product_support, the planner's estimate),
a sum the entries its merge steps through, a Σ its body's support and, with
free indices, a dense temporary (plan.cost.temp_work).

Extraction chooses one node per class (`choice`: class -> node):
- greedy: the least tree cost per class, a bottom-up fixpoint (`extract_greedy`);
- exact: the least DAG cost from a root, shared classes counted once, by
  integer programming with scipy's MILP (`extract_exact`);
`dag_cost` prices a choice with each class counted once, and `to_expr` turns it
into an expression over the original TensorVar objects.
"""
from __future__ import annotations

import math

import numpy as np

from .egraph import EGraph
from .. import maps
from ..plan import cost
from ..expr.nodes import Access, Add, Expr, Index, Lit, Map, Mul
from ..expr.nodes import sum as ep_sum


def node_cost(eg: EGraph, node: tuple) -> float:
    """Estimated work of one node given its children's classes (the module
    docstring); what depends on the loop order (outer levels' visits, strided
    reads, re-walks, scatters into temporaries: plan.scatter) is the planner's. Leaves cost 1, |i| nodes ∞ (never chosen)."""
    op, payload, kids = node
    if op == "dim":
        return math.inf
    if op in ("acc", "lit"):
        return 1.0
    if op == "sum":
        body = eg.info(kids[0])
        free = body.free - set(payload)
        temp = cost.temp_work(eg.stats.full(free), eg.stats.tuning) if free else 0.0
        return 1.0 + body.nnz + temp
    if op == "map":                  # once per entry of its operand's (dense) domain
        body = eg.info(kids[0])
        return 1.0 + (body.nnz if maps.keeps_zero(*payload) else eg.stats.full(body.free))
    if op == "mul":
        return 1.0 + eg.product_support(kids) * max(1, len(kids) - 1)
    free = frozenset().union(*(eg.info(k).free for k in kids))
    return 1.0 + cost.merge_steps(eg.parts(kids), free, eg.stats)


def dag_cost(eg: EGraph, root: int, choice: dict) -> float:
    """Cost of the term chosen by `choice` (class -> node), each class counted once."""
    seen, total, todo = set(), 0.0, [eg.find(root)]
    while todo:
        c = eg.find(todo.pop())
        if c in seen:
            continue
        seen.add(c)
        node = choice[c]
        total += node_cost(eg, node)
        todo.extend(node[2])
    return total


def term_dag_cost(eg: EGraph, e: Expr) -> float:
    """The DAG cost of expression e as written (each distinct subterm once) under
    eg's semiring and statistics (optimizer.optimize.cost, the sketch searches)."""
    g = EGraph(eg.sr, eg.stats)
    r = g.add_expr(e)
    return dag_cost(g, r, {c: next(iter(ns)) for c, ns in g.classes.items()})

# -- greedy -----------------------------------------------------------------------


def extract_greedy(eg: EGraph) -> dict:
    """For every class the node of least tree cost (bottom-up fixpoint)."""
    return _greedy(eg)[1]


def best_costs(eg: EGraph) -> dict:
    """For every class its least tree cost (what `extract_greedy` minimises)."""
    return _greedy(eg)[0]


def _greedy(eg: EGraph):
    best: dict[int, float] = {c: math.inf for c in eg.classes}
    choice: dict[int, tuple] = {}
    rows = sorted(((c, n) for c, ns in eg.classes.items() for n in ns), key=lambda r: r[0])
    greedy(rows, {n: node_cost(eg, n) for _, n in rows}, eg.find, best.__getitem__, best, choice)
    return best, choice


def greedy(rows, own: dict, find, price, best: dict, choice: dict) -> None:
    """The least tree cost per class of `rows` [(class, node)] (children are mostly
    older classes: sorted by class, few passes), a bottom-up fixpoint over node
    costs `own`, into `best` and `choice` (which hold the other classes' already;
    a repeated operand class counted once; an operand class k costs price(k));
    |i| nodes (cost ∞) are never chosen. Shared with optimizer.sketch.match."""
    work = [(c, n, own[n], tuple({find(k): None for k in n[2]}))
            for c, n in rows if own[n] != math.inf]
    changed = True
    while changed:
        changed = False
        for c, n, cost, kids in work:
            for k in kids:
                cost += price(k)
            if cost < best.get(c, math.inf):
                best[c], choice[c] = cost, n
                changed = True

def alternatives(eg: EGraph, root: int, choice: dict, per_class: int = 3,
                 most: int = 8, best: dict | None = None) -> list[dict]:
    """Choices that differ from `choice` in one class of its term: each class the
    term reaches, with each of its `per_class` next-cheapest nodes by tree cost
    (children as `choice` has them), acyclic, at most doubling the term's tree cost;
    at most `most`, the term's outer classes first. The plan cost model prices them
    apart where this one ties (e.g. which index of a sparse tensor a chain
    contracts first). `best`: best_costs(eg), when the caller has it."""
    best = best_costs(eg) if best is None else best
    top = eg.find(root)
    cap = 2 * tree_size(eg, top, choice, math.inf) + 4
    out, seen, todo = [], set(), [top]
    while todo and len(out) < most:
        c = eg.find(todo.pop(0))
        if c in seen or c not in choice:
            continue
        seen.add(c)
        todo.extend(choice[c][2])
        priced = sorted((node_cost(eg, n) + sum(best[eg.find(k)] for k in n[2]), n)
                        for n in eg.nodes(c) if n != choice[c])
        for extra, n in priced[:per_class]:
            alt = {**choice, c: n}
            if (extra - best[c] <= best[top] and _acyclic(eg, root, alt)
                    and tree_size(eg, top, alt, cap) <= cap):
                out.append(alt)
    return out[:most]

def ties(eg: EGraph, root: int, choice: dict, most: int = 12,
         rel: float = 1e-9, best: dict | None = None) -> list[dict]:
    """Choices that differ from `choice` only where a class the term reaches holds
    several nodes at its least tree cost (within `rel`): this model cannot tell
    them apart (symmetric sizes; which level of a sparse tensor a step walks
    first), the plan model can. Outer classes are decided first; at most `most`,
    each acyclic, after at most 64·`most` partial choices. `best` as for
    `alternatives`."""
    best = best_costs(eg) if best is None else best
    found, budget = [], [64 * most]

    def tied(c):
        return [n for n in eg.nodes(c)
                if node_cost(eg, n) + sum(best[k] for k in {eg.find(x) for x in n[2]})
                <= best[c] * (1 + rel)]

    def grow(partial: dict, todo: list):
        todo = [c for c in map(eg.find, todo) if c not in partial]
        budget[0] -= 1
        if len(found) >= most or budget[0] < 0:
            return
        if not todo:
            full = {**choice, **partial}
            if _acyclic(eg, root, full):
                found.append(full)
            return
        for n in tied(todo[0]):
            grow({**partial, todo[0]: n}, todo[1:] + list(n[2]))
    grow({}, [root])
    return found


def tree_size(eg: EGraph, root: int, choice: dict, cap: float) -> float:
    """Nodes of the expression tree `choice` gives from `root` (shared classes
    counted at each use), or a number above `cap` once it passes it."""
    memo: dict[int, float] = {}

    def size(c) -> float:
        c = eg.find(c)
        if c not in memo:
            memo[c] = math.inf          # a cycle is never finite
            total = 1.0
            for k in choice[c][2]:
                total += size(k)
                if total > cap:
                    break
            memo[c] = total
        return memo[c]
    return size(root)

# -- exact --------------------------------------------------------------------------


def extract_exact(eg: EGraph, root: int, time_limit: float = 2.0) -> dict | None:
    """The choice of least DAG cost from `root` by integer programming; None if the
    solver finds none within `time_limit` seconds (or its choice has a cycle)."""
    # scipy.optimize is loaded only when exact extraction is asked for (import time).
    from scipy.optimize import Bounds, LinearConstraint, milp
    root = eg.find(root)
    nodes, cost, upper, mat, lo, hi = _milp_problem(eg, root)
    integrality = np.concatenate([np.ones(len(nodes)), np.zeros(len(cost) - len(nodes))])
    res = milp(cost, constraints=LinearConstraint(mat, lo, hi), integrality=integrality,
               bounds=Bounds(np.zeros(len(cost)), upper), options={"time_limit": time_limit})
    if res.x is None:
        return None
    choice = {c: n for k, (c, n) in enumerate(nodes) if res.x[k] > 0.5}
    return choice if _acyclic(eg, root, choice) else None


def _milp_problem(eg: EGraph, root: int):
    """Variables: one 0/1 per (class, node) reachable from root, then one order
    variable per class (a chosen node's class is ordered above its children's,
    which forbids cycles)."""
    from scipy.sparse import coo_matrix      # lazily, with scipy.optimize
    classes = _reachable(eg, root)
    nodes = [(c, n) for c in classes for n in eg.classes[c]]
    nidx = {cn: k for k, cn in enumerate(nodes)}
    cidx = {c: len(nodes) + k for k, c in enumerate(classes)}
    nvar, big = len(nodes) + len(classes), len(classes) + 1
    cost = np.array([node_cost(eg, n) for _, n in nodes] + [0.0] * len(classes))
    upper = np.concatenate([np.ones(len(nodes)), np.full(len(classes), big)])
    never = np.isinf(cost)
    cost[never], upper[never] = 0.0, 0.0
    rows, lo, hi = [], [], []
    for c in classes:      # a chosen class picks one node; the root is chosen
        rows.append({nidx[(c, n)]: 1.0 for n in eg.classes[c]})
        lo.append(1.0 if c == root else 0.0)
        hi.append(1.0)
    for k, (c, n) in enumerate(nodes):
        for kid in set(eg.find(x) for x in n[2]):
            row = {nidx[(kid, m)]: -1.0 for m in eg.classes[kid]}
            row[k] = row.get(k, 0.0) + 1.0
            rows += [row, {cidx[c]: 1.0, cidx[kid]: -1.0, k: -float(big)}]
            lo += [-np.inf, 1.0 - big]     # node chosen -> child class chosen
            hi += [0.0, np.inf]            # order(c) > order(kid) when chosen
    ri = [r for r, row in enumerate(rows) for _ in row]
    ci = [col for row in rows for col in row]
    vals = [v for row in rows for v in row.values()]
    mat = coo_matrix((vals, (ri, ci)), shape=(len(rows), nvar)).tocsr()
    return nodes, cost, upper, mat, lo, hi


def _acyclic(eg: EGraph, root: int, choice: dict) -> bool:
    state: dict[int, int] = {}

    def visit(c) -> bool:
        c = eg.find(c)
        if state.get(c) == 2:
            return True
        if state.get(c) == 1 or c not in choice:
            return False
        state[c] = 1
        ok = all(visit(k) for k in choice[c][2])
        state[c] = 2
        return ok
    return visit(root)


def _reachable(eg: EGraph, root: int) -> list[int]:
    seen, todo = {}, [root]
    while todo:
        c = eg.find(todo.pop())
        if c in seen:
            continue
        seen[c] = None
        for n in eg.classes[c]:
            todo.extend(n[2])
    return list(seen)

# -- back to Expr -----------------------------------------------------------------


def to_expr(eg: EGraph, root: int, choice: dict) -> Expr:
    """The expression chosen by `choice`, over the original TensorVar objects."""
    n = choice[eg.find(root)]
    return build_node(eg, n, [to_expr(eg, k, choice) for k in n[2]])


def build_node(eg: EGraph, n: tuple, kids: list) -> Expr:
    """The expression of e-node n over the expressions `kids` of its operands
    (a product's or sum's operands sorted for display)."""
    op, payload, _ = n
    match op:
        case "acc":
            return payload
        case "lit":
            neg = bool(eg.sr.negation and not isinstance(payload, (bool, complex))
                       and payload < 0)
            return Lit(payload, negation=neg)
        case "sum":
            return ep_sum(tuple(Index(i) for i in payload), kids[0])
        case "dim":
            raise ValueError("|i| has no expression; it is never extracted")
        case "map":
            return Map(payload[0], kids[0], payload[1])
    parts = sorted(kids, key=_display_rank)
    out = parts[0]
    for p in parts[1:]:
        out = Mul(out, p) if op == "mul" else Add(out, p)
    return out


def _display_rank(e: Expr):
    return ({Lit: 0, Access: 1}.get(type(e), 2), str(e))
