"""Runs of compressed levels read as one level over their positions (expr.collapse).

The children of a range of consecutive positions of a unique compressed level
are a range of consecutive positions, so under a position p of level k-1 the
positions of level j >= k are [P(p), P(p+1)), P the composition of the pos
arrays of levels k..j (proofs_notes/shared.md, "Runs of levels"). A singleton
level inside the run (the one child of position p is p) composes as the
identity.

    collapsible(level, first)       may a level start such a run?
    passes_through(level)           may a level continue one (a singleton)?
    collapsed_format(fmt, k, j)     fmt (in mode order) with levels k..j as one
    collapsed_levels(levels, k, j, dim)  (the level arrays so, the new level's size)
    head_span(fmt, levels, dim)     the first level's positions and their codes
    leaf_start(fmt, levels, p)      the first last-level position under position p
                                    of the first level (a value-keyed order's
                                    search: runtime.keyed)
    one_segment(fmt)                is a Σ over all its indices one range of positions
                                    as lowered (lower.schedule.flat_walks)?
"""
from __future__ import annotations

import numpy as np

from ..formats.compressed import Compressed
from ..formats.dense import Dense
from ..formats.singleton import Singleton


def collapsible(level, first: bool = False) -> bool:
    """A unique compressed level (its children of p are [pos[p], pos[p+1])): one
    that may start a run; with `first` (the first storage level), a dense one
    too (the root's children are [0, n): its pos would be [0, n])."""
    return (isinstance(level, Compressed) or first and isinstance(level, Dense)) \
        and level.unique


def passes_through(level) -> bool:
    """A singleton level (the one child of position p is p itself: its pos would
    be the identity): one that may continue a run started by a collapsible one."""
    return isinstance(level, Singleton)


def collapsed_format(fmt, k: int, j: int):
    """`fmt` (stored in mode order) with storage levels k..j as one compressed level."""
    return type(fmt)(list(fmt.levels[:k]) + [Compressed()] + list(fmt.levels[j + 1:]))


def collapsed_levels(levels: tuple, k: int, j: int, dim: int = 0) -> tuple:
    """(level arrays with levels k..j as one: pos the composition of their pos
    arrays, crd the positions of level j; the number of those positions).
    A dense first level (k = 0, of size `dim`) composes as the pos [0, dim]."""
    if "pos" in levels[k]:
        starts = np.asarray(levels[k]["pos"])
    else:                                 # (a dense first level: the root's children)
        ix = next((lv[r].dtype for lv in levels[k + 1:j + 1] for r in ("pos", "crd")
                   if r in lv), np.int64)
        starts = np.array([0, dim], dtype=ix)
    for lv in levels[k + 1:j + 1]:
        if "pos" in lv:                   # (a singleton level's positions are its parent's)
            starts = np.asarray(lv["pos"])[starts]
    n = len(levels[j]["crd"])
    one = {"pos": starts, "crd": np.arange(n, dtype=starts.dtype)}
    return tuple(levels[:k]) + (one,) + tuple(levels[j + 1:]), n


def head_span(fmt, levels, dim: int):
    """(positions of the first storage level, the code at each or None when a
    position is its code): a dense first level's are its `dim` codes, a
    compressed one's its stored coordinates; None for another kind."""
    first = fmt.levels[0]
    if isinstance(first, Dense) and first.unique:
        return dim, None
    if isinstance(first, Compressed) and first.unique:
        crd = levels[0]["crd"]
        return len(crd), crd
    return None


def leaf_start(fmt, levels, p: int) -> int | None:
    """The first position of the last storage level under position p of the
    first one (p may be one past the last: the end), through the pos arrays of
    the unique compressed levels below and the singleton ones (which pass a
    position through); None when another kind lies below."""
    for level, arrays in zip(fmt.levels[1:], levels[1:]):
        if passes_through(level):
            continue
        if not collapsible(level):
            return None
        p = int(arrays["pos"][p])
    return p


def one_segment(fmt) -> bool:
    """Whether a Σ over every index of an access of format `fmt` walks its stored
    positions as one range, in lanes, once lowered: a level of segments
    (formats.level `segment_roles`) under one located level, whose rows
    lower.schedule.flat_walks walks as one segment (Tuning.flat_walks). (A level
    of segments alone is one segment too, but walked one entry at a time.)"""
    levels = fmt.levels
    return len(levels) == 2 and levels[1].segment_roles is not None and levels[0].located
