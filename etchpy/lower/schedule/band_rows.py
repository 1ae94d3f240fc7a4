"""Band rows, switched by tuning.band_rows: the rows of a dense output whose row
reads a band of one width per call (streams.Counter's `fixed`, a uniform band's:
formats.level.Fixed) run in three ranges. The rows whose band is clipped by the
dimension (its first and last few) run as before; the rows in between run with
the band's bounds replaced by first and first + width, so that no row computes
a clip, and, when the call's width is one of tuning.band_widths, by a width that
is that constant: one test per call, and each row is its straight-line piece with
no length test (the adds in the loop's order, so the same bits). The middle
rows run as row streams do (interleaved chunks) when those are on. Each row is
written by its own body alone (the conditions of row streams), so the ranges'
order changes nothing computed (proofs_notes/band.md, "Fixed width")."""
from __future__ import annotations

import copy
import dataclasses
import functools

from ... import host_facts, imp, streams
from ...imp import Block, Const, Decl, If, Var, While, incr, lt, seq
from . import row_streams
from .threads import plain_counted


def run(em, s) -> imp.Stmt | None:
    """The pass at a step's loop nest: the rows in three ranges when the call's
    width is one of tuning.band_widths, else as row streams run them; or None."""
    widths = [n for n in dict.fromkeys(em.tuning.band_widths) if n >= 1]
    if (not widths or em.markers or not plain_counted(s) or s.contracted
            or em.target.dense_axes is None):
        return None
    c, start, end = streams.counter_range(s)
    found = _fixed(s.value, c)
    if found is None:
        return None
    lo, hi, fixed, pieces = found
    body = em.row_body(s, em.top())
    edge = _lowered(em, s, sum_lanes=1)      # the clipped rows: the plain loop's order
    a, b = em.names.fresh(f"{c}_in"), em.names.fresh(f"{c}_out")
    middle = imp.SKIP
    for n in reversed(widths):
        row = imp.replaced(imp.replaced(_straight(em, s, pieces, n), lo, fixed.first), hi,
                           imp.add(fixed.first, fixed.width))
        row = imp.replaced(row, fixed.width, Const(n))
        rows = _rows(em, s, c, Var(a), Var(b), row, em.tuning.band_row_streams)
        middle = If(imp.eq(fixed.width, Const(n)), Block(rows),
                    None if middle == imp.SKIP else Block(middle))
    first, last = fixed.rows
    ranges = seq(imp.Comment(f"{s.var}: {s.search}, rows of unclipped bands of width "
                             f"{', '.join(map(str, widths))} straight-line"),
                 Decl(a, "index", imp.min_(imp.max_(first, start), end)),
                 Decl(b, "index", imp.min_(imp.max_(last, Var(a)), end)),
                 _plain(em, c, start, Var(a), edge), middle, _plain(em, c, Var(b), end, edge))
    known = functools.reduce(imp.or_, [imp.eq(fixed.width, Const(n)) for n in widths])
    other = host_facts.resolved(em.tuning).row_stream_count      # any other width
    return If(known, Block(ranges), Block(_rows(em, s, c, start, end, body, other)))


def _straight(em, s, pieces, n: int) -> imp.Stmt:
    """The row body with the band's piece of n states added straight-line: lowered
    with tuning.short_pieces = n, and its test that the piece has n states (true
    on these rows: nothing moves the counter or the end before it) taken as
    passed."""
    test = imp.eq(Var(pieces.end), imp.add(Var(pieces.counter), Const(n)))
    return _passed(_lowered(em, s, short_pieces=n), test)


def _lowered(em, s, **changes) -> imp.Stmt:
    """The row body of s lowered under em's tuning with `changes`."""
    other = copy.copy(em)
    other.tuning = dataclasses.replace(em.tuning, **changes)
    return other.row_body(s, other.top())


def _passed(node, test):
    """node with each `if test: a else: b` replaced by a."""
    match node:
        case If(cond, then, _) if cond == test:
            return then
    return imp.map_parts(node, lambda x: _passed(x, test), notes=True)


def _fixed(v, c: str) -> tuple | None:
    """(lo, hi, formats.level.Fixed) of the first level below the row whose
    Counter has a fixed width under the parent position c, else None."""
    for lv in streams.levels_of(v):
        counter = lv.facts.get(streams.Counter)
        if counter is not None and counter.fixed is not None and counter.fixed[0] == Var(c):
            pieces = lv.facts.get(streams.Pieces)
            return counter.first, counter.end, counter.fixed[1], pieces
    return None


def _rows(em, s, c: str, start, end, body, count: int) -> imp.Stmt:
    """`body` at c = start .. end - 1: interleaved in `count` streams as row
    streams run them when those are on and apply (count >= 2), else one by one
    (the fixed widths' rows take tuning.band_row_streams, others the host's
    row_stream_count)."""
    if em.tuning.row_streams and count >= 2 and row_streams.reads_runs(s.value):
        return seq(imp.Comment(f"{s.var}: rows in {count} interleaved streams"),
                   row_streams.interleave(em, c, start, end, body, count))
    return _plain(em, c, start, end, body)


def _plain(em, c: str, start, end, body) -> imp.Stmt:
    """`body` at c = start .. end - 1, one row after another."""
    t = em.names.fresh(f"{c}_r")
    return seq(Decl(t, "index", start),
               While(lt(Var(t), end), seq(Block(seq(Decl(c, "index", Var(t)), body)), incr(t))))
