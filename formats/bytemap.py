"""The bytemap level kind ("bytemap"): dense positions plus the sorted stored coordinates.

A bytemap level gives every coordinate c of parent position p the position
p·size + c (as a dense level does), so any coordinate is found in O(1), and
lists the coordinates actually stored, in order, so a walk visits only those:

    mpos    one entry per parent position, plus one: parent p's stored
            coordinates are mcrd[mpos[p]] .. mcrd[mpos[p+1]-1]
    mcrd    the stored coordinates, strictly increasing within a parent

Every position that is not listed holds the fill (checked: `check_fill`), so
the value at position p·size + c is the value of coordinate c whether c is
listed or not, and presence needs no array of its own: a reader that walks
reads mcrd, a reader that probes reads the value (a formats.level Lookup). A
writer that inserts at random keeps its presence as scratch (the dense
workspace's touched bits, lower/targets/workspace.py) and sorts the touched
coordinates into mcrd when the parent closes. The level is the storage's last
(`last_only`): below a coordinate that is not listed nothing would say its
children are empty. Finch's SparseByteMap keeps the presence in a table; here
the fill stands for it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import imp
from ..errors import InputError
from ..formats.compressed import (check_pointers, check_range, first_order_violation,
                                  index_array, require_keys)
from ..formats.level import Lookup
from ..imp import ONE, Load


@dataclass(frozen=True)
class ByteMap:
    """A bytemap level: located positions p·size + c, and per parent its stored
    coordinates in order (mpos, mcrd; see the module docstring). The last level
    of its format.

        >>> ep.Format(["dense", "bytemap"])      # rows probed in O(1), walked sparse
    """

    unique = True
    roles = ("mpos", "mcrd")
    segment_roles = None     # position q of mcrd is not the child position
    located = False          # not written by location: not every coordinate is stored
    appends = False
    one_per_parent = False   # formats.level
    last_only = "a coordinate that is not listed has no children to say so"
    locates = True           # formats.level (optional): a read finds any coordinate in O(1)

    def __str__(self):
        return "bytemap"

    # -- packing ------------------------------------------------------------
    def pack(self, parent_ids, n_parents, coord, size, split=None):
        """From sorted unique entries: each entry at p·size + c, its coordinate
        listed under p. Returns (arrays, positions of the entries, positions)."""
        parent_ids = np.asarray(parent_ids, dtype=np.int64)
        coord = np.asarray(coord, dtype=np.int64)
        mpos = np.zeros(n_parents + 1, dtype=np.int64)
        np.cumsum(np.bincount(parent_ids, minlength=n_parents), out=mpos[1:])
        return {"mpos": mpos, "mcrd": coord.copy()}, parent_ids * size + coord, \
            n_parents * size

    def unpack(self, arrays, parents, size):
        """The listed children of `parents`, in storage order: (owner, coord,
        positions), child c belonging to parents[owner[c]]."""
        mpos = np.asarray(arrays["mpos"], dtype=np.int64)
        parents = np.asarray(parents, dtype=np.int64)
        begin = mpos[parents]
        counts = mpos[parents + 1] - begin
        owner = np.repeat(np.arange(len(parents), dtype=np.int64), counts)
        offset = np.arange(len(owner), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts,
                                                                    counts)
        coord = np.asarray(arrays["mcrd"], dtype=np.int64)[np.repeat(begin, counts) + offset]
        return owner, coord, parents[owner] * size + coord

    def check(self, arrays, n_parents, size, where, order=True, parent_runs=None,
              coords_above=None):
        """Validate mpos/mcrd under `n_parents` positions (InputError naming
        `where`); return the position count, n_parents·size."""
        require_keys(arrays, self.roles, where)
        mpos = index_array(arrays["mpos"], f"{where}: mpos", exact=True)
        mcrd = index_array(arrays["mcrd"], f"{where}: mcrd", exact=True)
        check_pointers(mpos, n_parents, len(mcrd), where, "mpos", "mcrd")
        check_range(mcrd, size, f"{where}: mcrd")
        bad = first_order_violation(mpos, mcrd, strict=True) if order else -1
        if bad >= 0:
            raise InputError(f"{where}: stored coordinates must strictly increase within "
                             f"a parent, but mcrd[{bad - 1}] = {mcrd[bad - 1]} is followed "
                             f"by mcrd[{bad}] = {mcrd[bad]}")
        return n_parents * size

    def check_fill(self, arrays, vals, fill, size, where):
        """Every position not listed holds `fill` (InputError naming `where` and
        the first that does not): a probe reads the value without the list."""
        listed = np.zeros(len(vals), dtype=bool)
        _, _, at = self.unpack(arrays, np.arange(len(arrays["mpos"]) - 1), size)
        listed[at] = True
        stray = np.flatnonzero(~listed & ~_same(vals, fill))
        if stray.size:
            p = int(stray[0])
            raise InputError(f"{where}: vals[{p}] = {vals[p]} but coordinate {p % size} of "
                             f"parent position {p // size} is not listed in mcrd; a "
                             f"position not listed must hold the fill {fill}")

    def fibres(self, arrays):
        """Each parent's number of stored coordinates; no runs (formats.level)."""
        return np.diff(np.asarray(arrays["mpos"], dtype=np.int64)), None

    def stored(self, arrays) -> int:
        """The number of stored coordinates (formats.level, optional): what the
        planner counts, not the positions (parents·size)."""
        return int(arrays["mpos"][-1])

    # -- reading (formats.level) -------------------------------------------
    def children(self, lo, hi, size, arrays):
        """The positions below parent positions lo..hi-1: lo·size .. hi·size - 1."""
        return imp.mul(lo, size), imp.mul(hi, size)

    def read(self, lo, hi, size, arrays) -> Lookup:
        """Parent lo's listed coordinates mcrd[mpos[lo] .. mpos[lo+1]-1], any
        coordinate c at position lo·size + c."""
        mpos = arrays["mpos"]
        return Lookup(arrays["mcrd"], Load(mpos, lo), Load(mpos, imp.add(lo, ONE)),
                      imp.mul(lo, size))

    def describe(self, k, axis, arrays, parents, size=None, count=None):
        """The header text of level k over `axis` (of dimension `size`, C text;
        default dim_<axis>) below `parents` positions, and its number of
        positions (parents·size). Never an output level."""
        mpos, mcrd = arrays["mpos"], arrays["mcrd"]
        size = size or f"dim_{axis}"
        count = count or (f"{parents}·{size}" if parents != "1" else size)
        return (f"level {k} (bytemap, {axis}): {mpos} has {parents} + 1 entries, "
                f"nondecreasing from {mpos}[0] = 0; the stored {axis} coordinates of "
                f"parent position p are {mcrd}[{mpos}[p] .. {mpos}[p+1]-1], strictly "
                f"increasing, each in [0, {size}); coordinate c of p is at position "
                f"p·{size} + c whether stored or not, and every position not stored "
                f"holds the fill; {count} positions."), count


def _same(vals, fill):
    """vals == fill elementwise, NaN equal to a NaN fill."""
    same = vals == fill
    if isinstance(fill, float) and fill != fill:
        same |= vals != vals
    return same
