"""Runs of compressed levels read as one level over their positions (expr.collapse).

The children of a range of consecutive positions of a unique compressed level
are a range of consecutive positions, so under a position p of level k-1 the
positions of level j >= k are [P(p), P(p+1)), P the composition of the pos
arrays of levels k..j (proofs_notes/shared.md, "Runs of levels"). A singleton
level inside the run (the one child of position p is p) composes as the
identity.

    collapsible(level)              may a level start such a run?
    passes_through(level)           may a level continue one (a singleton)?
    collapsed_format(fmt, k, j)     fmt (in mode order) with levels k..j as one
    collapsed_levels(levels, k, j)  (the level arrays so, the new level's size)
"""
from __future__ import annotations

import numpy as np

from ..formats.compressed import Compressed
from ..formats.singleton import Singleton


def collapsible(level) -> bool:
    """A unique compressed level (its children of p are [pos[p], pos[p+1])): one
    that may start a run."""
    return isinstance(level, Compressed) and level.unique


def passes_through(level) -> bool:
    """A singleton level (the one child of position p is p itself: its pos would
    be the identity): one that may continue a run started by a collapsible one."""
    return isinstance(level, Singleton)


def collapsed_format(fmt, k: int, j: int):
    """`fmt` (stored in mode order) with storage levels k..j as one compressed level."""
    return type(fmt)(list(fmt.levels[:k]) + [Compressed()] + list(fmt.levels[j + 1:]))


def collapsed_levels(levels: tuple, k: int, j: int) -> tuple:
    """(level arrays with levels k..j as one: pos the composition of their pos
    arrays, crd the positions of level j; the number of those positions)."""
    starts = np.asarray(levels[k]["pos"])
    for lv in levels[k + 1:j + 1]:
        if "pos" in lv:                   # (a singleton level's positions are its parent's)
            starts = np.asarray(lv["pos"])[starts]
    n = len(levels[j]["crd"])
    one = {"pos": starts, "crd": np.arange(n, dtype=starts.dtype)}
    return tuple(levels[:k]) + (one,) + tuple(levels[j + 1:]), n
