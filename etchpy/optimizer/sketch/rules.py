"""Rewrites aimed by a sketch (optimizer.sketch.search adds them to a search's rules).

sum-push-to (at a Σ node) and sum-pull-to (at a product node): at a class the
sketch wants to be a Σ over exactly the indices I (a `sum(I, ...)` node of the
sketch that `demand.demand` names for the class), the node is read as
one Σ_A (f1·f2·…·fm), pulling up the nested Σ of its factors that lead to an
index of I (the others stay whole factors; a pull that would capture a
sibling's free index, or bind an index twice, stops the rule), and gets, in
one step,

    Σ_{A∖S} (the factors free of S) · Π_c Σ_{S_c} (the factors of c)

where S = the indices of A not in I, and the factors that read S are split
into the components c of "shares an index of S" (S_c: the indices of S that
c's factors read). It is what sum-pull, sum-push (Σ_A (x·y) = Σ_{A∖a} (y·Σ_a
x)) and sum-merge (Σ_a Σ_b x = Σ_{a,b} x) reach one index at a time, in every
order (2^|S| intermediate Σ nodes), so it holds under the same laws: ⊗ distributes
over ⊕ and is commutative, and a factor free of an index is constant in the
sum over it (proofs_notes/sketch.md). Unguided saturation never has it (no
sketch, no target).
"""
from __future__ import annotations

from ..egraph import EGraph
from ..rules import Pattern, Rule, always
from .demand import _roots
from ...plan.cost import base_name
from ...tuning import Saturation

PUSH_TO_LAW = ("Σ_A (x·(Σ_B y)) -> Σ_{I} (x'·Π Σ_{S_c} y_c), I: the indices the wanted "
               "Σ keeps, S = A+B-I")


def push_to_rule(held: dict, op: str, depth: int = Saturation.flatten_depth) -> Rule:
    """sum-push-to at the `op` ("sum" or "mul") nodes of the classes of
    `held["wants"]` (class -> sketch nodes, the last demand of the search; read
    at every search of the rule) wanted as a Σ over given indices; `depth` Σ and
    product nodes are read through at most."""

    def find(eg: EGraph, node: tuple):
        c = eg.find(eg.memo[node]) if node in eg.memo else None
        targets = {x[1] for t in held.get("wants", {}).get(c, ())
                   for x in _roots(t) if x is not None and x[0] == "sum" and x[1]}
        for keep in targets:
            flat = _flat_node(eg, node, keep, depth)
            if flat is not None and any(base_name(i) in keep for i in flat[0]):
                yield (keep, flat)

    name = "sum-push-to" if op == "sum" else "sum-pull-to"
    return Rule(name, Pattern(op, "Σ_A (x·(Σ_B y))", find), always, push_to,
                "Σ_I (x'·Π Σ_{S_c} y_c)")


def _flat_node(eg: EGraph, node: tuple, keep, depth: int):
    """(bound indices, factor classes): node read as one Σ over a product, the
    nested Σ of its factors pulled up when they lead to an index of `keep` (a
    Σ over keep's indices, or holding one such further down), the others kept
    whole as factors; None when a pulled index would capture a sibling's free
    index or is bound twice."""
    op, payload, kids = node
    if op == "sum":
        inner = _flat_body(eg, kids[0], keep, depth - 1)
        if inner is None or set(payload) & set(inner[0]):
            return None
        return tuple(payload) + inner[0], inner[1]
    return _flat_factors(eg, kids, keep, depth - 1) if op == "mul" else None


def _flat_body(eg: EGraph, k: int, keep, depth: int):
    n = eg.first(k, "mul")
    if n is not None:
        return _flat_factors(eg, n[2], keep, depth - 1)
    got = _pull(eg, k, keep, depth)
    if got == ():            # pulling it would capture an index: no flat reading
        return None
    return ((), [k]) if got is None else got


def _flat_factors(eg: EGraph, kids, keep, depth: int):
    bound, factors = (), []
    for p, k in enumerate(kids):
        got = _pull(eg, k, keep, depth)
        if got is None:
            factors.append(k)
            continue
        if got == ():
            return None
        others = frozenset().union(*(eg.info(q).free for x, q in enumerate(kids) if x != p))
        if set(got[0]) & (others | set(bound)):
            return None
        bound, factors = bound + got[0], factors + got[1]
    return bound, factors


def _pull(eg: EGraph, k: int, keep, depth: int):
    """The flattened first Σ node of class k when it leads to an index of keep;
    None (keep k whole) otherwise; () when it would capture an index."""
    n = eg.first(k, "sum") if depth > 0 else None
    if n is None:
        return None
    inner = _flat_body(eg, n[2][0], keep, depth - 1)
    if inner is None or set(n[1]) & set(inner[0]):
        return ()
    bound = tuple(n[1]) + inner[0]
    return (bound, inner[1]) if any(base_name(i) in keep for i in bound) else None


def push_to(eg: EGraph, node: tuple, binding) -> int:
    """Σ_keep (factors free of the moved indices · Π over components of Σ_{S_c}
    their product), from the flattened node."""
    keep, (bound, factors) = binding
    moved = {i for i in bound if base_name(i) not in keep}
    outer, parts = [], []            # parts: [(indices of S read, factor classes)]
    for k in factors:
        reads = eg.info(k).free & moved
        if not reads:
            outer.append(k)
            continue
        joined = [p for p in parts if p[0] & reads]
        for p in joined:
            parts.remove(p)
        parts.append((reads.union(*(p[0] for p in joined)),
                      [k] + [f for p in joined for f in p[1]]))
    inner = [eg.sum_of(tuple(sorted(ix)), eg.mul_of(fs)) for ix, fs in parts]
    rest = tuple(i for i in bound if i not in moved)
    return eg.sum_of(rest, eg.mul_of(outer + inner))
