"""Row streams, switched by tuning.row_streams (and a row_stream_count > 1, the host's at -1):
the rows of a dense output whose row reads counted runs (streams.Pieces without
Flat: a band, a row of blocks) run as `row_stream_count` interleaved chunks in
one thread. Iteration t runs row start + t, then row start + q + t, ..., with q
= ⌊(end − start) / count⌋, and the last rows (from start + count·q) one by one
after. Each row is written by its own body alone, as on threads (the same
conditions as `threads.parallel_dense_rows`), so the order of rows changes
nothing the kernel computes. A band's rows follow one another in memory: one
chunk is one sequential stream, and `count` chunks are `count` streams that the
hardware prefetcher follows at once, where one stream alone is held below the
memory's bandwidth (docs/performance.md, "Row streams"; proofs_notes/band.md)."""
from __future__ import annotations

from ... import host_facts, imp, streams
from ...imp import Assign, Block, Const, Decl, Var, While, lt, seq
from .threads import plain_counted


def run(em, s) -> imp.Stmt | None:
    """The pass at a step's loop nest: the interleaved rows, or None."""
    count = host_facts.resolved(em.tuning).row_stream_count
    if count < 2 or em.markers or not plain_counted(s) or s.contracted:
        return None
    if em.target.dense_axes is None or not reads_runs(s.value):
        return None
    c, start, end = streams.counter_range(s)
    return seq(imp.Comment(f"{s.var}: {s.search}, rows in {count} interleaved streams"),
               interleave(em, c, start, end, em.row_body(s, em.top()), count))


def interleave(em, c: str, start: imp.Expr, end: imp.Expr, body: imp.Stmt,
               count: int) -> imp.Stmt:
    """`body` run at c = start .. end - 1 as `count` interleaved chunks, then the
    rows left over one by one (the module docstring)."""
    t, q = em.names.fresh(f"{c}_t"), em.names.fresh(f"{c}_q")

    def row(at):
        return Block(seq(Decl(c, "index", at), body))
    spread = imp.Bin("max", imp.Bin("-", end, start), Const(0))
    rows = [row(Var(t) if k == 0 else imp.add(Var(t), imp.Bin("*", Var(q), Const(k))))
            for k in range(count)]
    return seq(Decl(q, "index", imp.Bin("/", spread, Const(count))),
               Decl(t, "index", start),
               While(lt(Var(t), imp.add(start, Var(q))),
                     seq(*rows, Assign(t, imp.add(Var(t), Const(1))))),
               Assign(t, imp.add(start, imp.Bin("*", Var(q), Const(count)))),
               While(lt(Var(t), end), seq(row(Var(t)), Assign(t, imp.add(Var(t), Const(1))))))


def reads_runs(v) -> bool:
    """Some level below the row is read as counted runs that are not runs of one
    value (those are summed once per run, not streamed)."""
    return any(streams.Pieces in lv.facts and streams.Flat not in lv.facts
               for lv in streams.levels_of(v))
