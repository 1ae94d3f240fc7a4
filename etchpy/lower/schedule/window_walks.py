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
"""
from __future__ import annotations

from ... import imp, streams
from ...imp import Assign, Decl, Ring, Select, Var, seq
from ...streams.facts import WindowWalk


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
    return seq(parts.init, parts.step(s.derive(s.facts, ready=imp.TRUE), s.next, record))
