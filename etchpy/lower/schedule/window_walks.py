"""A window walk's loop with no branch (switched by tuning.window_walk): the
walk of a whole segment through a window (streams.window.window_walk) tests
each coordinate against the window; where each ready state only ⊕-adds one
value into a scalar accumulator, the loop computes every state's value and
keeps it where the test holds:

    while (q < e) { ok := ready; at := ok ? index : safe;
                    acc := ok ? acc ⊕ value[index := at] : acc; q := q + 1 }

in place of `if (ready) acc := acc ⊕ value`: a select, not a branch that the
window's edges make unpredictable. At a state that is not ready the value is
read at the window's `safe` index, inside the window (WindowWalk: every state's
value is readable there, and the walk runs no state when the window is
empty), and dropped. proofs_notes/windows.md, "A window walk".

A segment longer than tuning.window_walk_stop (0: none) takes, instead, the
search-and-stop loop (the walk's narrowing, noted on the loop's Walk as such),
then the walk that branches on the test, which then runs no state:

    if (e - q > L) { q := search(lo); while (q < e && c - lo < n) { acc ⊕= v; q++ }; q := e;
                     while (q < e) { if (ready) acc ⊕= v; q++ } }
    else <the branch-free walk>

A kernel that checks the level as it walks (lower.schedule.fused_checks)
drops the narrowing, so there the long segment is walked whole, branching:
the search and the stop rely on an order nobody checked. Either way the
segment's ready states are ⊕-added in order (proofs_notes/windows.md, "A
window walk", the choice per segment).
"""
from __future__ import annotations

from dataclasses import replace

from ... import imp
from ...imp import (Assign, Bin, Block, Const, Decl, If, Ring, Select, Var, While, and_, lt,
                    replaced, seq)
from ...streams.facts import Walk, WindowWalk


def run(em, s, parts) -> imp.Stmt | None:
    """The pass: s a window walk whose ready code is `acc := acc ⊕ v` for a
    scalar acc; else None."""
    walk = s.facts.get(WindowWalk)
    match parts.on_ready:
        case Assign(acc, Ring("add", Var(acc2), value)) if walk is not None and acc == acc2:
            pass
        case _:
            return None
    ok, at = em.names.fresh(f"{s.var}_in"), em.names.fresh(f"{s.var}_at")
    kept = imp.replaced(value, s.index, Var(at))
    hit = s.index.a if isinstance(s.index, Select) and s.index.cond == s.ready else s.index
    record = seq(Decl(ok, "bool", s.ready), Decl(at, "index", Select(Var(ok), hit, walk.safe)),
                 Assign(acc, Select(Var(ok), Ring("add", Var(acc), kept), Var(acc))))
    free = parts.step(s.derive(s.facts, ready=imp.TRUE), s.next, record)
    long = em.tuning.window_walk_stop
    if long <= 0 or walk.stop is None:
        return seq(parts.init, free)
    return seq(replaced(parts.init, walk.narrow, imp.SKIP),
               _by_length(em, s, parts, walk, long, free))


def _by_length(em, s, parts, walk, long: int, free) -> imp.Stmt:
    """`if (e - q > long) <search and stop; the branching walk> else free`."""
    seg, (seek, off, n) = walk.segment, walk.stop
    qv, ev = Var(seg.q), Var(seg.end)
    at = em.names.fresh(f"{s.var}_off")
    inside = seq(Decl(at, "index", off), replaced(parts.on_ready, s.index, Var(at)))
    stop = Block(seq(seek, While(and_(lt(qv, ev), lt(off, n)), seq(inside, imp.incr(seg.q))),
                     Assign(seg.q, ev)))
    w = s.facts.get(Walk)        # a loop the fused checks may take: the stop is its narrowing
    noted = s if w is None else s.derive(s.facts.add(replace(w, narrow=stop)))
    branching = parts.step(noted, s.next, parts.on_ready)
    return If(lt(Const(long), Bin("-", ev, qv)), seq(stop, branching), free)
