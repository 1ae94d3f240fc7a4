"""Where a sketch still needs the e-graph to grow: the classes a guided search
rewrites first (optimizer.guided).

`demand(m, root)` walks the sketch top-down over (class, sketch node) pairs
that a `SketchMatch` m says are NOT satisfied yet, starting at (root, the
sketch):

    the class is demanded (a rewrite there may give a node of the right shape);
    for each of its nodes whose operator fits the sketch node, each operand
    class paired with the sub-sketch it would have to satisfy is visited too:
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

from .sketch import Contains, Either, Materialised, Op, Sketch, SumOf


def demand(m, root: int) -> set[int]:
    """The classes the sketch m.sketch still needs at `root` (see the module
    docstring); empty when the root satisfies it."""
    find, out, seen = m.eg.find, set(), set()
    todo = [(find(root), m.sketch)]
    while todo:
        c, t = todo.pop()
        key = (c, id(t))
        if key in seen:
            continue
        seen.add(key)
        if m.entry(c, t) < math.inf:
            continue
        out.add(c)
        for n in m.eg.classes.get(c, ()):
            todo.extend((find(k), s) for k, s in _wants(m, n, t))
    return out


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
