"""Threads, switched by tuning.threads (and a kernel's threads > 1): the
outermost loop of a step on OpenMP threads, when that is safe: a dense
output's rows, a sparse output's rows (schedule.rows), a full reduction, a
counting sort's two passes (schedule.bucket_threads).

Never with markers: their scratch arrays are shared and filled inside the loop
(and the split loop skips the outer level's init, which may hold a fill)."""
from __future__ import annotations

from ... import imp
from ...imp import Const, Decl, Var, seq
from ... import streams
from ...streams import is_stream
from . import rows


def threads_on(em) -> bool:
    """This emitter may put loops on threads at all."""
    return em.tuning.threads and em.threads > 1 and not em.markers


def plain_counted(s) -> bool:
    """s is a level whose loop is a plain counted loop with nothing run on entry."""
    return (is_stream(s) and streams.Counter in s.facts and s.ready == imp.TRUE
            and streams.Prelude not in s.facts)


def on_threads(em, s) -> imp.Stmt | None:
    """The step's loop nest with its outermost loop on threads, or None. Not a
    full reduction into a temporary that keeps flags: its one accumulator would
    not know whether a product was added."""
    if not (threads_on(em) and plain_counted(s)):
        return None
    if em.target.keeps_flags and all(lv.contracted for lv in streams.levels_of(s)):
        return None
    dense = em.target.dense_axes is not None
    if dense and not s.contracted:
        return parallel_dense_rows(em, s)
    if em.target.rows_on_threads() and not s.contracted and s.var == em.target.storage[0]:
        return rows.parallel_rows(em, s)
    if dense and all(
            lv.contracted for lv in streams.levels_of(s)):
        return parallel_reduction(em, s)
    return None


def parallel_dense_rows(em, s) -> imp.Stmt:
    """Each thread writes disjoint rows of the dense output."""
    c, start, end = streams.counter_range(s)
    return seq(imp.Comment(f"{s.var}: {s.search}, split across {em.threads} threads"),
               imp.ParallelFor(c, start, end, em.row_body(s, em.top()), em.threads))


def parallel_reduction(em, s) -> imp.Stmt:
    """One accumulator per block, added up after the loop."""
    c, start, end = streams.counter_range(s)
    acc = em.names.fresh("acc")
    return seq(Decl(acc, "value", Const(em.sr.zero, "value")),
               imp.Comment(f"Σ {s.var}: {s.search}, split across {em.threads} threads, "
                           f"one accumulator per block"),
               imp.ParallelFor(c, start, end, em.accumulate(s.value, acc), em.threads,
                               reduce=acc),
               em.target.write(em.top(), Var(acc)))
