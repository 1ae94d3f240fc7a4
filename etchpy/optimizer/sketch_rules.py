"""A rewrite aimed by a sketch (optimizer.guided adds it to a search's rules).

sum-push-to: at a class the sketch wants to be a Σ over exactly the indices I
(a `sum(I, ...)` node of the sketch that `sketch_demand.demand` names for the
class), a node Σ_A (f1·f2·…·fm) with A ⊋ I's indices gets, in one step,

    Σ_{A∖S} (the factors free of S) · Π_c Σ_{S_c} (the factors of c)

where S = the indices of A not in I, and the factors that read S are split
into the components c of "shares an index of S" (S_c: the indices of S that
c's factors read). It is what sum-push (Σ_A (x·y) = Σ_{A∖a} (y·Σ_a x)) and
sum-merge (Σ_a Σ_b x = Σ_{a,b} x) reach one index at a time, in every order
(2^|S| intermediate Σ nodes), so it holds under the same laws: ⊗ distributes
over ⊕ and is commutative, and a factor free of an index is constant in the
sum over it (proofs_notes/sketch.md). Unguided saturation never has it (no
sketch, no target).
"""
from __future__ import annotations

from .egraph import EGraph
from .rules import Pattern, Rule, always
from .sketch_demand import _roots
from ..plan.cost import base_name

PUSH_TO_LAW = "Σ_A (x·y) -> Σ_{A∖S} (y·Π Σ_{S_c} x_c), S: the indices the wanted Σ does not keep"


def push_to_rule(held: dict) -> Rule:
    """sum-push-to for the targets of `held["wants"]` (class -> sketch nodes, the
    last demand of the search; read at every search of the rule)."""

    def find(eg: EGraph, node: tuple):
        c = eg.find(eg.memo[node]) if node in eg.memo else None
        targets = {x[1] for t in held.get("wants", {}).get(c, ())
                   for x in _roots(t) if x is not None and x[0] == "sum" and x[1]}
        for keep in targets:
            move = tuple(i for i in node[1] if base_name(i) not in keep)
            if move and len(move) < len(node[1]):
                for m in [n for n in eg.nodes(node[2][0]) if n[0] == "mul"][:3]:
                    yield (move, m)

    return Rule("sum-push-to", Pattern("sum", "Σ_A (x·y)", find), always, push_to,
                "Σ_{A∖S} (y·Π Σ_{S_c} x_c)")


def push_to(eg: EGraph, node: tuple, binding) -> int:
    """Σ_{A∖S} (outer factors · Π over components of Σ_{S_c} their product)."""
    move, m = binding
    moved = set(move)
    outer, parts = [], []            # parts: [(indices of S read, factor classes)]
    for k in m[2]:
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
    rest = tuple(i for i in node[1] if i not in moved)
    return eg.sum_of(rest, eg.mul_of(outer + inner))
