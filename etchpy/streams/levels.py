"""The read streams of storage levels.

A level stream walks one storage level of a tensor below a parent position
range (lo, hi); hi is lo + 1 below a unique level. `child((lo', hi'))` builds
the value at a position range of this level: the next level's stream, or the
leaf value. The level says how it is walked (`level.read`: a formats.level
Range or Segment, stream shapes rather than level kinds); this module builds
the stream of each shape. proofs_notes/levels.md.
"""
from __future__ import annotations

from .. import imp
from ..formats import level as shapes
from ..imp import ONE, TRUE, Assign, Bin, Load, Var, While, and_, eq, incr, lt, or_, seq
from .combinators import range_stream
from .facts import Ahead, Counter, Extent, Facts, Most, Runs, Segment
from .stream import Stream, is_stream


def range_level(names, var, size, first: imp.Expr, child) -> Stream:
    """Every coordinate c in 0..size-1 at position first + c (a formats.level.Range)."""
    return range_stream(names, var, size,
                        lambda c: child((imp.add(first, c), imp.add(imp.add(first, c), ONE))))


def dense_level(names, var, size, parent, child) -> Stream:
    """Every coordinate c of var below position lo: position lo·size + c."""
    return range_level(names, var, size, imp.mul(parent[0], size), child)


def segment_level(names, var, crd: str, start: imp.Expr, end: imp.Expr, unique: bool,
                  child, crd_len: imp.Expr | None = None, in_order: bool = False) -> Stream:
    """Positions start..end-1 with coordinates crd[q] (a formats.level.Segment).

    A non-unique level groups each run of equal coordinates into one state and
    hands the whole run [q, q_run) to its child. `in_order`: the parent's
    positions are visited in order, so successive segments follow one another.
    """
    if unique:
        return unique_segment(names, var, crd, start, end, child, crd_len, in_order)
    q, e, run = (names.fresh(f"{var}_{x}") for x in ("q", "end", "run"))
    qv, ev, rv = Var(q), Var(e), Var(run)
    crd_q = Load(crd, qv)

    def behind(t, r):      # (crd[q], true) ≤ (t, r)
        return or_(lt(crd_q, t), and_(eq(crd_q, t), r))

    find_run = seq(Assign(run, imp.add(qv, ONE)),
                   While(and_(lt(rv, ev), eq(Load(crd, rv), crd_q)), incr(run)))
    state = ((q, "index"), (e, "index"), (run, "index"))
    return Stream(var=var, state=state, init=seq(Assign(q, start), Assign(e, end), find_run),
                  valid=lt(qv, ev), index=crd_q, ready=TRUE, value=child((qv, rv)),
                  next=seq(Assign(q, rv), find_run),
                  skip=lambda t, r: seq(While(and_(lt(qv, ev), behind(t, r)), incr(q)),
                                        find_run),
                  search="linear", facts=Facts.of(Most(Bin("-", ev, qv))))


def unique_segment(names, var, crd: str, start, end, child, crd_len, in_order) -> Stream:
    """A segment whose coordinates strictly increase: one position per state."""
    q, e = names.fresh(f"{var}_q"), names.fresh(f"{var}_end")
    qv, ev = Var(q), Var(e)
    value = child((qv, imp.add(qv, ONE)))
    runs = None
    if in_order and crd_len is not None:
        read = imp.arrays_loaded_at(value.init if is_stream(value) else value, qv)
        runs = Runs((crd, *[a for a in read if a != crd]), crd_len)
    known = crd_len is not None
    facts = Facts.of(Counter(q, start, end), Extent(Bin("-", ev, qv)), Most(Bin("-", ev, qv)),
                     Ahead(crd, crd_len) if known else None,
                     Segment(q, e, crd, crd_len) if known else None, runs)
    return Stream(var=var, state=((q, "index"), (e, "index")),
                  init=seq(Assign(q, start), Assign(e, end)), valid=lt(qv, ev),
                  index=Load(crd, qv), ready=TRUE, value=value, next=incr(q),
                  skip=lambda t, r: imp.Seek(q, ev, crd, t, r),
                  search="linear, then gallop", facts=facts)


def level_stream(names, level, var, size, arrays, parent, child, crd_len=None) -> Stream:
    """The read stream of one storage level (arrays: its array names by role;
    crd_len: the length of its crd array, if known)."""
    lo, hi = parent
    in_order = not imp.arrays_loaded_at(lo, None)     # a counter, not a gathered coordinate
    match level.read(lo, hi, size, arrays):
        case shapes.Range(first):
            return range_level(names, var, size, first, child)
        case shapes.Segment(crd, start, end, unique):
            return segment_level(names, var, crd, start, end, unique, child, crd_len,
                                 in_order)
    raise TypeError(f"level {level!r} reads as neither a Range nor a Segment")
