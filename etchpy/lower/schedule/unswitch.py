"""Unswitching, switched by tuning.unswitch: a loop whose next picks its way by a
flag set once per segment (merge or leapfrog) becomes one loop per way, and a
merging intersection of two short segments may take them at once."""
from __future__ import annotations

from ... import imp, streams
from ...imp import Bin, Const, If, Var, seq


def size(stmt) -> int:
    """The Imp statements in stmt: what tuning.unswitch_limit counts."""
    return sum(1 for _ in imp.statements(stmt))


def unswitchable(s, tuning) -> bool:
    """next picks its way by a flag (s.choice) that init sets."""
    nxt = s.next
    choice = s.facts.get(streams.Choice)
    return (tuning.unswitch and choice is not None and isinstance(nxt, If)
            and nxt.cond == Var(choice.flag) and nxt.else_ is not None)


def run(em, s, parts) -> imp.Stmt | None:
    """The pass: a loop whose next picks its way by a per-segment flag, with a
    small ready code, as one loop per way."""
    if parts.small and unswitchable(s, em.tuning):
        return unswitched(s, parts.init, parts.step, parts.on_ready, em.tuning)
    return None


def unswitched(s, init, step, on_ready, tuning) -> imp.Stmt:
    """init, then one loop per way of s.next (step(v, next, on_ready) is one loop);
    the merging way first tries both segments at once when they are short."""
    nxt = s.next
    merge = step(s, nxt.else_, on_ready)
    short = s.facts.get(streams.Short)
    if short is not None:
        merge = If(short_fits(short, tuning),
                   short_intersect(s, on_ready, tuning.short_segment), merge)
    return seq(init, If(nxt.cond, step(s, nxt.then, on_ready), merge))


def short_fits(short, tuning) -> imp.Expr:
    """imp.ShortIntersect's precondition, for width tuning.short_segment."""
    n = Const(tuning.short_segment)
    fits = imp.TRUE
    for seg in (short.a, short.b):
        fits = imp.and_(fits, imp.and_(imp.le(Bin("-", Var(seg.end), Var(seg.q)), n),
                                       imp.le(imp.add(Var(seg.q), n), seg.crd_len)))
    return fits


def short_intersect(s, on_ready, width: int) -> imp.Stmt:
    """The merge loop's ready states, in its order, found at once (imp.ShortIntersect)."""
    short = s.facts.get(streams.Short)
    a, b = short.a, short.b
    return imp.ShortIntersect(a.q, a.end, a.crd, b.q, b.end, b.crd, imp.if_(s.ready, on_ready),
                              width)
