"""The dense level kind.

A dense level of size n stores no arrays: every parent position p has the
children p*n + i for i in 0..n-1, with coordinate i. It is read as a Range and
written by location (formats.level has the protocol).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import imp
from ..errors import InputError
from ..formats.level import Range, kind


@kind("dense")
@dataclass(frozen=True)
class Dense:
    """A dense level: every coordinate 0..n-1 is present (no index arrays).

        >>> ep.Format([ep.Dense(), ep.Compressed()])      # csr's levels
    """

    unique = True
    roles = ()              # no arrays
    segment_roles = None
    located = True          # written at p·n + c
    appends = False
    one_per_parent = False  # formats.level
    inserts = False         # formats.level: not written in any order

    def __str__(self):
        return "dense" + ("" if self.unique else "-nonunique")

    # -- packing ------------------------------------------------------------
    def pack(self, parent_ids, n_parents, coord, size, split=None):
        """Place sorted entries in this level.

        `parent_ids[e]` is the parent position of entry e and `coord[e]` its
        coordinate here. Returns (arrays, positions of the entries, number of
        positions). `split` only matters for non-unique levels.
        """
        positions = np.asarray(parent_ids, dtype=np.int64) * size + coord
        return {}, positions, n_parents * size

    def unpack(self, arrays, parents, size):
        """All children of the positions `parents`, in storage order.

        Returns (owner, coord, positions): child c belongs to `parents[owner[c]]`.
        """
        parents = np.asarray(parents, dtype=np.int64)
        owner = np.repeat(np.arange(len(parents), dtype=np.int64), size)
        coord = np.tile(np.arange(size, dtype=np.int64), len(parents))
        return owner, coord, parents[owner] * size + coord

    def check(self, arrays, n_parents, size, where, order=True, parent_runs=None,
              coords_above=None):
        """Validate this level's arrays; return its number of positions (`order` is
        for the other kinds: a dense level is ordered by construction)."""
        if arrays:
            raise InputError(f"{where}: a dense level stores no arrays, got "
                             f"{sorted(arrays)}")
        return n_parents * size

    def fibres(self, arrays):
        """Nothing to measure (formats.level)."""
        return None

    # -- reading (formats.level) -------------------------------------------
    def children(self, lo, hi, size, arrays):
        """The children of parent positions lo..hi-1: lo·n .. hi·n - 1."""
        return imp.mul(lo, size), imp.mul(hi, size)

    def read(self, lo, hi, size, arrays) -> Range:
        """Every coordinate c under parent lo, at position lo·n + c."""
        return Range(imp.mul(lo, size))

    # -- writing (formats.level) -------------------------------------------
    def describe(self, k, axis, arrays, parents, size=None, count=None):
        """The header text of level k over `axis` (of dimension `size`, C text;
        default dim_<axis>) below `parents` positions, and its number of positions.
        A dense level has no arrays."""
        size = size or f"dim_{axis}"
        line = (f"level {k} (dense, {axis}): no arrays; coordinate c of parent position p "
                f"is at position p·{size} + c.")
        return line, (f"{parents}·{size}" if parents != "1" else size)

    def assemble(self, take, k, parents, size, count):
        """No arrays; parents · size positions."""
        return {}, parents * size
