"""A storage level read through a window: streams.window's combinators applied to
the level's read shape (a Range: window_range; a RunList: window_runs; any
other: the generic window of its stream). proofs_notes/windows.md."""
from __future__ import annotations

from typing import Callable

from .. import imp
from ..formats import level as shapes
from ..imp import ONE, Var
from .levels import level_stream
from .facts import Segment
from .stream import Stream
from .window import window, window_range, window_walk
from .window_runs import window_runs


def binding_window(tv, name: str) -> tuple:
    """Per mode of WindowVar tv (bound under `name`): None, or its (lo, step)."""
    return tuple(w and bounds_of(tv, m, name) for m, w in enumerate(tv.windows))


def bounds_of(tv, m: int, name: str) -> tuple:
    """(lo, step) of mode m of WindowVar tv as Imp: a number as a constant, a
    parameter as the kernel's size slot that carries it (runtime.windows)."""
    n = tv.order
    return tuple(imp.Const(b) if isinstance(b, int) else Var(f"{name}_dim{slot * n + m}")
                 for b, slot in ((tv.bound(m, 0), 2), (tv.bound(m, 2), 3)))


def window_level(names, level, var, n: imp.Expr, size: imp.Expr, arrays, parent, child,
                 crd_len, lo_step: tuple, guard: Callable, zero=None, key=None,
                 walk_long: int | None = None) -> Stream:
    """Storage level `level` (its operand size `size`) read through the window
    (lo, n, step) over `var`: a window_range when it reads as a Range (it
    holds every coordinate), window_runs when it reads as a RunList (runs
    again, restricted and shifted; with `zero`, the semiring's, its runs of
    the zero passed as gaps; `key`: streams.shift_runs), a window_walk when it
    reads as a unique segment, the step is 1 and `walk_long` is given
    (Tuning.window_walk_long), else the generic window of its stream."""
    lo, step = lo_step
    match level.read(parent[0], parent[1], size, arrays):
        case shapes.Range(first):
            return window_range(names, var, lo, n, step, size,
                                lambda c: child((imp.add(first, c),
                                                 imp.add(imp.add(first, c), ONE))), guard)
        case shapes.RunList(ends, start, end, starts):
            return window_runs(names, var, ends, start, end, child, starts, lo, n, step,
                               zero, key)
    s = level_stream(names, level, var, size, arrays, parent, child, crd_len)
    if walk_long is not None and step == ONE and Segment in s.facts:
        return window_walk(names, s, lo, n, walk_long)
    return window(s, lo, n, step)
