"""The banded level kind ("banded").

A banded level stores one band of consecutive coordinates per parent position,
its values contiguous:

    bfirst  one entry per parent position: the band's first coordinate
    bpos    one entry per parent position, plus one: parent p's band holds the
            positions bpos[p] .. bpos[p+1]-1, coordinate bfirst[p] + i at
            position bpos[p] + i (an empty band has bpos[p] = bpos[p+1])

It is the block-list level (formats.blocks) with one block per parent; it is
read as the formats.level Band shape (the run bfirst[p] .. bfirst[p] +
bpos[p+1] - bpos[p] - 1 at the shift bpos[p] - bfirst[p]), as the uniform band
level (formats.uniform_band) is: any coordinate inside the band is found in O(1). Packing spans each parent's stored coordinates, from the
smallest to the largest; the coordinates between them that hold no entry get
positions holding the fill. Never written by a kernel (an output in this format
is produced as coordinate records and packed).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import imp
from ..formats.blocks import check_runs, distinct, runs_of
from ..formats.compressed import require_keys
from ..formats.level import Band, kind
from ..imp import ONE, Bin, Load


@kind("banded", named="banded")
@dataclass(frozen=True)
class Banded:
    """A banded level: one band of consecutive coordinates per parent (bfirst,
    bpos; see the module docstring).

        >>> ep.Format(["dense", "banded"])      # row bands, each its own
    """

    unique = True
    roles = ("bfirst", "bpos")
    segment_roles = None
    located = False
    appends = False
    one_per_parent = False  # formats.level
    inserts = False         # formats.level: not written in any order

    def __str__(self):
        return "banded"

    # -- packing ------------------------------------------------------------
    def pack(self, parent_ids, n_parents, coord, size, split=None):
        """Bands from sorted entries: parent p's band runs from its smallest to its
        largest stored coordinate. Returns (arrays, positions of the entries,
        number of positions)."""
        up, uc, _ = distinct(parent_ids, coord)
        first = np.zeros(n_parents, dtype=np.int64)
        length = np.zeros(n_parents, dtype=np.int64)
        if len(uc):
            head = np.flatnonzero(np.r_[True, up[1:] != up[:-1]])
            tail = np.r_[head[1:], len(uc)] - 1
            first[up[head]] = uc[head]
            length[up[head]] = uc[tail] - uc[head] + 1
        bpos = np.zeros(n_parents + 1, dtype=np.int64)
        np.cumsum(length, out=bpos[1:])
        parent_ids = np.asarray(parent_ids, dtype=np.int64)
        positions = bpos[parent_ids] + np.asarray(coord, dtype=np.int64) - first[parent_ids]
        return {"bfirst": first, "bpos": bpos}, positions, int(bpos[-1])

    def unpack(self, arrays, parents, size):
        """Every position of the bands of `parents`, in storage order:
        (owner, coord, positions), child c belonging to parents[owner[c]]."""
        return runs_of(arrays["bfirst"], arrays["bpos"], parents)

    def check(self, arrays, n_parents, size, where, order=True, parent_runs=None,
              coords_above=None):
        """Validate bfirst/bpos under `n_parents` positions (InputError naming
        `where`); return the position count. A band is ordered by construction."""
        require_keys(arrays, self.roles, where)
        check_runs(arrays, n_parents, size, where, empty=True)
        return int(arrays["bpos"][-1])

    def fibres(self, arrays):
        """Each parent's band length, and its runs: one per non-empty band."""
        lengths = np.diff(np.asarray(arrays["bpos"], dtype=np.int64))
        return lengths, (lengths > 0).astype(np.int64)

    # -- reading (formats.level) -------------------------------------------
    def children(self, lo, hi, size, arrays):
        """The children of parent positions lo..hi-1: bpos[lo] .. bpos[hi] - 1."""
        return Load(arrays["bpos"], lo), Load(arrays["bpos"], hi)

    def read(self, lo, hi, size, arrays) -> Band:
        """Parent lo's band: bfirst[lo] .. bfirst[lo] + bpos[lo+1] - bpos[lo] - 1,
        at the shift bpos[lo] - bfirst[lo]."""
        first, bpos = Load(arrays["bfirst"], lo), arrays["bpos"]
        length = Bin("-", Load(bpos, imp.add(lo, ONE)), Load(bpos, lo))
        return Band(first, imp.add(first, length), Bin("-", Load(bpos, lo), first))

    def describe(self, k, axis, arrays, parents, size=None, count=None):
        """The header text of level k over `axis` (of dimension `size`, C text;
        default dim_<axis>) below `parents` positions, and its number of
        positions (bpos[parents]). Never an output level."""
        first, bpos = arrays["bfirst"], arrays["bpos"]
        size = size or f"dim_{axis}"
        count = count or f"{bpos}[{parents}]"
        return (f"level {k} (banded, {axis}): {first} has {parents} entries and {bpos} "
                f"{parents} + 1, nondecreasing from {bpos}[0] = 0; the band of position p "
                f"holds coordinate {first}[p] + i at position {bpos}[p] + i for "
                f"i < {bpos}[p+1] - {bpos}[p], each in [0, {size}); {count} positions."), \
            count
