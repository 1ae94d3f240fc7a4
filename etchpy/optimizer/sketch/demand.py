"""Where a sketch still needs the e-graph to grow: the classes a guided search
rewrites first (optimizer.sketch.search).

`demand(m, root)` walks the sketch top-down over (class, sketch node) pairs
that a `SketchMatch` m says are NOT satisfied yet, starting at (root, the
sketch):

    the class is demanded (a rewrite there may give a node of the right shape);
    for each of its nodes whose operator fits the sketch node, each operand
    class paired with the sub-sketch it would have to satisfy is visited too,
    when the class reads every tensor the sub-sketch names (`needs`,
    `class_tensors`):
      mul/add(s1..sk)   every operand, with every si it does not satisfy yet
      sum(I, s)         the body, with s (whatever the node's bound indices:
                        a Σ pulled or merged higher up may bring them)
      materialised(s)   as s;  either(...): as each option
      contains(s)       as s, and every operand with contains(s)
    a hole or a tensor demands nothing below the class.

A satisfied pair demands nothing. Growing only the demanded classes is a
restriction of which matches are applied, never of which rules are sound:
every class still holds only terms equal to its original term. When the
demanded classes offer no new match, the search applies the matches of the
whole graph (saturate's `focus`), so the restriction never stops a search
that unguided growth would continue.
"""
from __future__ import annotations

import math

from .language import Contains, Either, Materialised, Op, Sketch, SumOf, Tensor
from ...plan.cost import base_name


def demand(m, root: int) -> dict[int, set]:
    """The classes the sketch m.sketch still needs at `root` (see the module
    docstring), each with the sketch nodes it is wanted for; empty when the root
    satisfies it."""
    find, out, seen = m.eg.find, {}, set()
    has = class_tensors(m.eg)
    todo = [(find(root), m.sketch)]
    while todo:
        c, t = todo.pop()
        key = (c, id(t))
        if key in seen:
            continue
        seen.add(key)
        if m.entry(c, t) < math.inf:
            continue
        out.setdefault(c, set()).add(t)
        for n in m.eg.classes.get(c, ()):
            todo.extend((find(k), s) for k, s in _wants(m, n, t)
                        if needs(s) <= has.get(find(k), frozenset()))
    return out


def class_tensors(eg) -> dict:
    """class -> the names of the tensors some term of it reads (a fixpoint over
    every node: an over-approximation)."""
    find, out = eg.find, {c: set() for c in eg.classes}
    changed = True
    while changed:
        changed = False
        for c, ns in eg.classes.items():
            mine = out[c]
            before = len(mine)
            for op, payload, kids in ns:
                if op == "acc":
                    mine.add(payload.tensor.name)
                for k in kids:
                    mine |= out[find(k)]
            changed |= len(mine) != before
    return out


def needs(t: Sketch) -> frozenset:
    """The tensor names every term satisfying t reads (outside its holes)."""
    match t:
        case Tensor(name):
            return frozenset((name,))
        case Op(_, kids):
            return frozenset().union(*(needs(k) for k in kids))
        case SumOf(_, inner) | Materialised(inner) | Contains(inner):
            return needs(inner)
        case Either(options):
            return frozenset.intersection(*(needs(o) for o in options))
    return frozenset()


def _wants(m, n: tuple, t: Sketch):
    """(operand class, sub-sketch) pairs the node n needs for t."""
    op, _, kids = n
    match t:
        case Op():
            if op == t.op:
                return [(k, s) for k in kids for s in t.kids if m.entry(k, s) == math.inf]
        case SumOf(_, body):
            if op == "sum":
                return [(kids[0], body)]
        case Materialised(inner):
            return _wants(m, n, inner)
        case Either(options):
            return [w for o in options for w in _wants(m, n, o)]
        case Contains(inner):
            return list(_wants(m, n, inner)) + [(k, t) for k in kids]
    return []


def aimed(wants: dict):
    """A match filter for saturate's `aim`: keep a match at a demanded class c
    unless the Σ it adds to c cannot lead to any sketch node c is wanted for.
    Only the Σ rules are judged (each adds a Σ node Σ_S to c):

        sum-push of a out of Σ_A    S = A - {a}: useless for a wanted Σ over
                                    given indices I (optimizer.sketch.rules'
                                    sum-push-to moves every index not in I at
                                    once), or when A = {a}
        sum-pull of Σ_B             S = B: useless when B is not a subset of I
        sum-merge of Σ_A Σ_B        S = A + B: useless when not a subset of I

    and each is useless for a wanted product, sum (+) or tensor (a Σ node does
    not fit them). A hole, `contains` or a Σ with any indices keeps every
    match; so does every other rule. A filter only orders the growth: saturate
    searches the whole graph, unfiltered, when a focused iteration adds nothing.
    """
    def keep(rule, c: int, node: tuple, binding) -> bool:
        targets = [x for t in wants.get(c, ()) for x in _roots(t)]
        if not targets or any(x is None for x in targets):
            return True
        made = _made(rule.name, node, binding)
        if made is None:
            return True
        return any(_fits(x, rule.name, made) for x in targets)
    return keep


def _roots(t: Sketch) -> list:
    """What a node at the root of a term satisfying t may be: ("sum", indices or
    None) or (op, None); None: anything."""
    match t:
        case SumOf(indices, _):
            return [("sum", None if indices is None else frozenset(indices))]
        case Materialised(inner):
            return [x for x in _roots(inner) if x is None or x[0] == "sum"] or [("none",)]
        case Op(op):
            return [(op, None)]
        case Tensor():
            return [("acc", None)]
        case Either(options):
            return [x for o in options for x in _roots(o)]
    return [None]


def _made(name: str, node: tuple, binding):
    """(the index names of the Σ the rule adds, the index it moves) or None."""
    match name:
        case "sum-push":
            return frozenset(base_name(i) for i in node[1]), base_name(binding[0])
        case "sum-pull":
            return frozenset(base_name(i) for i in binding[0][1]), None
        case "sum-merge":
            return frozenset(base_name(i) for i in node[1] + binding[0][1]), None
    return None


def _fits(target: tuple, name: str, made: tuple) -> bool:
    if target[0] != "sum":
        return False
    wanted, have = target[1], made[0]
    if name == "sum-push":      # toward a known I, sum-push-to pushes all at once
        return len(have) > 1 and wanted is None
    return wanted is None or (have <= wanted and bool(have))
