"""A counting sort's two passes on threads (part of the threads pass)."""
from __future__ import annotations

from ... import imp
from ...imp import (ONE, ZERO, Alloc, Assign, Bin, Const, Decl, Load, Reserve, Store, Var,
                    While, incr, lt, seq)
from ... import streams
from ..target import EMPTY
from .threads import plain_counted, threads_on


def blocked_passes(em, s) -> imp.Stmt | None:
    """Both passes of em's BucketTarget on threads, when the outermost loop is a
    plain counted loop over col: its range is cut into `threads` blocks of
    consecutive cols. Block b counts its entries of each row r in
    bk_blk[b·rows + r]; a serial pass over the rows, blocks in order within
    each row, turns those counts into cursors and pos; then block b writes
    each entry at its cursor. A row gets block 0's entries, then block 1's, …,
    each block's in loop order: sorted by col, as serially. With repeats,
    every repeat of a coordinate comes in one col's iteration, so in one
    block: each block keeps its own last col per row (bk_lastb[b·rows + r],
    reset to empty between the passes) and counts, or merges into its last
    entry, as the serial passes do. None when the loops do not qualify."""
    t = em.target
    if not (threads_on(em) and plain_counted(s) and not s.contracted and s.var == t.col):
        return None
    w, nb = t.v, Const(em.threads)
    rows, total = streams.dim_var(t.row), Load(t.segment(1)[0], streams.dim_var(t.row))
    return seq(imp.Comment(f"count each block's entries of each row, on {em.threads} "
                           "threads"),
               Alloc(w.bk_blk, "index", imp.mul(nb, rows), ZERO),
               Alloc(w.bk_lastb, "index", imp.mul(nb, rows), EMPTY)
               if t.repeats else imp.SKIP,
               Decl(w.bk_b, "index", ZERO), Decl(w.bk_r, "index", ZERO),
               _pass(em, s, True), _cursors(t, nb),
               Reserve(t.segment(1)[1], "index", total),
               Reserve(t.vals, "value", total),
               imp.Comment("write each entry at its block's cursor in its row"),
               _pass(em, s, False))


def _pass(em, s, counting: bool) -> imp.Stmt:
    """One pass, block bk_b of the cols on each thread."""
    c, start, end = streams.counter_range(s)
    t = em.target
    nb, b = Const(em.threads), Var(t.v.bk_b)

    def cut(k):                     # first col of block k
        return imp.add(start, Bin("/", imp.mul(Bin("-", end, start), k), nb))

    inner = em.with_target(t.way(counting, blocked=True))
    return imp.ParallelFor(t.v.bk_b, ZERO, nb, seq(
        Decl(c, "index", cut(b)),
        While(lt(Var(c), cut(imp.add(b, ONE))), seq(inner.row_body(s), incr(c)))),
        em.threads)


def _cursors(t, nb) -> imp.Stmt:
    """Serially, row by row and block by block: counts into cursors and pos."""
    w, pos = t.v, t.segment(1)[0]
    rows, b, r = streams.dim_var(t.row), Var(t.v.bk_b), Var(t.v.bk_r)
    at = imp.add(imp.mul(b, rows), r)
    reset = Store(w.bk_lastb, at, EMPTY) if t.repeats else imp.SKIP
    return seq(Decl(w.bk_run, "index", ZERO), Assign(w.bk_r, ZERO), While(
        lt(r, rows), seq(
            Store(pos, r, Var(w.bk_run)), Assign(w.bk_b, ZERO),
            While(lt(b, nb), seq(
                Decl(w.bk_n, "index", Load(w.bk_blk, at)),
                Store(w.bk_blk, at, Var(w.bk_run)), reset,
                Assign(w.bk_run, imp.add(Var(w.bk_run), Var(w.bk_n))), incr(w.bk_b))),
            incr(w.bk_r))),
        Store(pos, rows, Var(w.bk_run)))
