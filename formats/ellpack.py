"""The ELLPACK level kind ("ellpack"): a compressed level of fixed-width rows.

Every parent position owns the same number of slots, `width`: parent p's slots
are the positions p·width .. p·width + width - 1, and its first elen[p] of them
hold its coordinates, strictly increasing; the rest are padding (their value
is the fill, never read). Its arrays:

    elen    one entry per parent position: how many of its slots it uses
            (0 <= elen[p] <= width)
    ecrd    parents · width entries: the coordinate of each slot (a padding
            slot holds any coordinate in [0, size): GPU and SIMD codes pad with
            a real one, so that a gather through it stays in bounds)
    ewidth  one entry: the width

So no segment start is stored or loaded: a row's positions are computed from
its number. This is the layout GPU libraries, Ginkgo's and MAGMA's ell, and a
k-nearest-neighbour query (scipy.spatial.KDTree.query: k columns per row) hand
over. It reads as the formats.level Segment shape, the positions p·width ..
p·width + elen[p] - 1 of ecrd (the compressed level's read, its start
computed). Packing takes the width from the longest fibre. Never written by a
kernel (an output in this format is produced as coordinate records and
packed).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import imp
from ..errors import InputError
from ..formats.blocks import distinct, spread
from ..formats.compressed import check_range, index_array, require_keys
from ..formats.level import Segment, kind
from ..imp import Const, Load


@kind("ellpack", named="ellpack")
@dataclass(frozen=True)
class Ellpack:
    """An ELLPACK level: parent p's coordinates are ecrd[p·width ..
    p·width + elen[p] - 1], strictly increasing (see the module docstring).

        >>> ep.Format(["dense", "ellpack"])    # rows of at most `width` entries
    """

    unique = True
    roles = ("elen", "ecrd", "ewidth")
    segment_roles = None    # formats.level: no stored segment starts
    located = False
    appends = False
    one_per_parent = False  # formats.level
    inserts = False         # formats.level: not written in any order

    def __str__(self):
        return "ellpack"

    # -- packing ------------------------------------------------------------
    def pack(self, parent_ids, n_parents, coord, size, split=None):
        """Rows of the sorted entries, each in the first slots of its parent: the
        width is the longest row's length. Returns (arrays, positions of the
        entries, number of positions)."""
        up, uc, which = distinct(parent_ids, coord)
        elen = np.bincount(up, minlength=n_parents).astype(np.int64)
        width = int(elen.max()) if len(up) else 0
        first = np.cumsum(elen) - elen
        slots = up * width + np.arange(len(up), dtype=np.int64) - first[up]
        ecrd = np.zeros(n_parents * width, dtype=np.int64)
        ecrd[slots] = uc
        arrays = {"elen": elen, "ecrd": ecrd, "ewidth": np.array([width], dtype=np.int64)}
        return arrays, slots[which], n_parents * width

    def unpack(self, arrays, parents, size):
        """The used slots of `parents`, in storage order: (owner, coord, positions),
        child c belonging to parents[owner[c]]."""
        width = int(arrays["ewidth"][0])
        parents = np.asarray(parents, dtype=np.int64)
        begin = parents * width
        owner, offset, start = spread(begin, begin + np.asarray(arrays["elen"],
                                                                dtype=np.int64)[parents])
        positions = start + offset
        return owner, np.asarray(arrays["ecrd"], dtype=np.int64)[positions], positions

    def check(self, arrays, n_parents, size, where, order=True, parent_runs=None,
              coords_above=None):
        """Validate elen/ecrd/ewidth under `n_parents` positions (InputError naming
        `where`); return the position count, parents · width."""
        require_keys(arrays, self.roles, where)
        elen = index_array(arrays["elen"], f"{where}: elen", exact=True)
        ecrd = index_array(arrays["ecrd"], f"{where}: ecrd", exact=True)
        shape = index_array(arrays["ewidth"], f"{where}: ewidth", exact=True)
        if len(shape) != 1 or not 0 <= int(shape[0]) <= size:
            raise InputError(f"{where}: ewidth must hold one width in [0, {size}] (a row "
                             f"stores each of the {size} coordinates at most once), got "
                             f"{shape.tolist()}")
        width = int(shape[0])
        if len(elen) != n_parents:
            raise InputError(f"{where}: elen has length {len(elen)} but needs one entry "
                             f"per parent position ({n_parents})")
        if len(ecrd) != n_parents * width:
            raise InputError(f"{where}: ecrd has length {len(ecrd)} but needs "
                             f"{n_parents} parent positions x width {width} = "
                             f"{n_parents * width}")
        bad = np.flatnonzero((elen < 0) | (elen > width))
        if bad.size:
            p = int(bad[0])
            raise InputError(f"{where}: elen[{p}] = {elen[p]} must lie in [0, {width}] "
                             f"(the width)")
        check_range(ecrd, size, f"{where}: ecrd")
        if order and width > 1:
            rows = np.asarray(ecrd, dtype=np.int64).reshape(n_parents, width)
            used = np.arange(1, width) < elen[:, None]
            wrong = np.argwhere(used & (np.diff(rows, axis=1) <= 0))
            if len(wrong):
                p, s = (int(v) for v in wrong[0])
                q = p * width + s
                raise InputError(f"{where}: coordinates must strictly increase within a "
                                 f"parent's slots, but ecrd[{q}] = {ecrd[q]} is followed "
                                 f"by ecrd[{q + 1}] = {ecrd[q + 1]} under parent "
                                 f"position {p}")
        return n_parents * width

    def fibres(self, arrays):
        """Each parent's number of entries; no runs (formats.level)."""
        return np.asarray(arrays["elen"], dtype=np.int64), None

    def stored(self, arrays):
        """The used slots (formats.level: the padding slots are positions, not
        entries)."""
        return int(np.asarray(arrays["elen"], dtype=np.int64).sum())

    # -- reading (formats.level) -------------------------------------------
    def children(self, lo, hi, size, arrays):
        """The children of parent positions lo..hi-1: lo·width .. hi·width - 1."""
        width = Load(arrays["ewidth"], Const(0))
        return imp.mul(lo, width), imp.mul(hi, width)

    def read(self, lo, hi, size, arrays) -> Segment:
        """Parent lo's used slots lo·width .. lo·width + elen[lo] - 1."""
        start = imp.mul(lo, Load(arrays["ewidth"], Const(0)))
        return Segment(arrays["ecrd"], start, imp.add(start, Load(arrays["elen"], lo)), True)

    def describe(self, k, axis, arrays, parents, size=None, count=None):
        """The header text of level k over `axis` (of dimension `size`, C text;
        default dim_<axis>) below `parents` positions, and its number of
        positions (parents · ewidth[0]). Never an output level."""
        elen, ecrd, width = arrays["elen"], arrays["ecrd"], arrays["ewidth"]
        size = size or f"dim_{axis}"
        count = count or f"({parents}) * {width}[0]"
        return (f"level {k} (ellpack, {axis}): {width} has 1 entry, the width; {elen} "
                f"has {parents} entries, each in [0, {width}[0]]; the children of "
                f"position p are the positions p*{width}[0] .. p*{width}[0] + {elen}[p] - 1, "
                f"their coordinates {ecrd}[...] strictly increasing, each in [0, {size}); "
                f"{ecrd} has {count} entries (the slots past {elen}[p] are padding: any "
                f"coordinate in [0, {size}), the fill as value)."), count
