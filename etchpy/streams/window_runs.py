"""A run list read through a window (lo, n, step): runs again, restricted and
shifted (streams.runs, streams.window).

Run r holds the operand coordinates [a_r, b_r) with one value; through the
window it holds the window coordinates w with a_r ≤ lo + w·step < b_r and
0 ≤ w < n, which is the interval [cd(a_r), min(cd(b_r), n)) with
cd(x) = max(⌈(x − lo)/step⌉, 0): a run again (possibly empty at a step > 1,
or outside the window, such runs are passed over), with the same value. So
the window of a run list is a run list with gaps (before the operand's first
coordinate and after its last, and between runs where the operand has gaps):
Pieces and Flat, every state ready, indexed by its counter (`has_runs`). A
product of such windows meets once per overlap of their runs (runs.meet_runs)
and a Σ over one is taken once per piece (the run_sums pass), never cell by
cell. proofs_notes/windows.md, "A window of a run list".
"""
from __future__ import annotations

from .. import imp
from ..imp import ONE, ZERO, Assign, Bin, If, Load, Var, While, and_, eq, le, lt, max_, \
    min_, or_, select, seq
from .facts import Extent, Facts, Flat, Most, Pieces
from .stream import Stream, is_stream
from .shift_runs import shifted
from .window import ceil_div


def window_runs(names, var, ends: str, start: imp.Expr, end: imp.Expr, child,
                starts: str | None, lo: imp.Expr, n: imp.Expr, step: imp.Expr,
                zero: imp.Expr | None = None, key=None) -> Stream:
    """The runs start..end-1 of a run list (formats.level.RunList: run r ends at
    ends[r]; starts None: it starts where run r-1 ends, else at starts[r])
    read through the window (lo, n, step). State r, re, c, e: the run, the end
    of the parent's runs, the window coordinate and the run's end in window
    coordinates; `settle` passes runs that hold no window coordinate (e ≤ c)
    while the window is not exhausted (c < n). `zero` (the semiring's, or
    None): a run whose value, a leaf, equals it is passed as a gap too (the
    fill a gap reads), so a product meets only the runs that are not zero.
    `key` (the operand, its mode and the parent position, or None): with a
    constant shift and step 1 the stream is Shifted, so windows of one row at
    several shifts may be met as one (streams.shift_runs)."""
    r, re, c, e = (names.fresh(f"{var}_{x}") for x in ("wr", "wrend", "wc", "whi"))
    rv, rev, cv, ev = (Var(x) for x in (r, re, c, e))

    def cd(x: imp.Expr) -> imp.Expr:
        return ceil_div(max_(Bin("-", x, lo), ZERO), step)

    enter = Assign(e, min_(cd(Load(ends, rv)), n))
    if starts is not None:
        enter = seq(Assign(c, max_(cv, cd(Load(starts, rv)))), enter)
    value = child((rv, imp.add(rv, ONE)))
    gap = le(ev, cv) if zero is None or is_stream(value) else or_(le(ev, cv), eq(value, zero))
    settle = While(and_(and_(lt(rv, rev), gap), lt(cv, n)),
                   seq(Assign(c, max_(cv, ev)), imp.incr(r), If(lt(rv, rev), enter)))
    advance = seq(imp.incr(r), If(lt(rv, rev), enter), settle)
    init = seq(Assign(r, start), Assign(re, end), Assign(c, cd(ZERO)), Assign(e, ZERO),
               If(lt(rv, rev), enter), settle)

    def skip(t, rf):
        target = select(rf, imp.add(t, ONE), t)
        return seq(While(and_(lt(cv, ev), le(ev, target)), seq(Assign(c, ev), advance)),
                   Assign(c, max_(cv, target)))

    s = Stream(var=var, state=tuple((x, "index") for x in (r, re, c, e)), init=init,
               valid=lt(cv, ev), index=cv, ready=imp.TRUE, value=value,
               next=seq(imp.incr(c), If(le(ev, cv), advance)), skip=skip,
               search="runs through a window: whole runs, restricted and shifted",
               facts=Facts.of(Most(n), Extent(n), Pieces(c, e, advance), Flat()))
    return shifted(s, key, lo, step, (var, ends, start, end, child, starts, n, zero))
