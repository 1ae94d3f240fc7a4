"""The block-list level kind ("blocks").

A block-list level stores, per parent position, a segment of blocks, each a run
of consecutive coordinates whose values are stored contiguously:

    bseg    one entry per parent position, plus one: the blocks of parent p are
            b = bseg[p] .. bseg[p+1]-1
    bfirst  one entry per block: its first coordinate
    bpos    one entry per block, plus one: block b holds the positions
            bpos[b] .. bpos[b+1]-1, coordinate bfirst[b] + i at position
            bpos[b] + i (so its length is bpos[b+1] - bpos[b], at least 1)

Within a parent the coordinates strictly increase from block to block
(bfirst[b+1] >= bfirst[b] + length of b). Packing makes each block a maximal run
of consecutive stored coordinates. It is read as a formats.level Blocks shape (a
segment of dense runs): no coordinate array is loaded inside a block. It is
never written by a kernel: an output in this format is produced as coordinate
records and packed (formats.level: `appends` is False).

The module also holds what the banded level (formats.banded, one block per
parent) shares with it: listing the children of runs, and checking them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import imp
from ..errors import InputError
from ..formats.compressed import check_pointers, index_array, require_keys
from ..formats.level import Blocks, kind
from ..imp import ONE, Load


@kind("blocks", named="blocks")
@dataclass(frozen=True)
class BlockList:
    """A block-list level: per parent, a segment of blocks of consecutive
    coordinates (bseg, bfirst, bpos; see the module docstring).

        >>> ep.Format(["dense", "blocks"])      # rows of dense blocks
    """

    unique = True
    roles = ("bseg", "bfirst", "bpos")
    segment_roles = None
    located = False
    appends = False
    one_per_parent = False  # formats.level
    inserts = False         # formats.level: not written in any order

    def __str__(self):
        return "blocks"

    # -- packing ------------------------------------------------------------
    def pack(self, parent_ids, n_parents, coord, size, split=None):
        """Blocks from sorted entries (`parent_ids` nondecreasing, `coord` sorted
        within a parent): each maximal run of consecutive coordinates of a parent
        is one block. Returns (arrays, positions of the entries, positions)."""
        up, uc, positions = distinct(parent_ids, coord)
        new_block = np.ones(len(uc), dtype=bool)
        new_block[1:] = (up[1:] != up[:-1]) | (uc[1:] != uc[:-1] + 1)
        starts = np.flatnonzero(new_block)
        bpos = np.append(starts, len(uc)).astype(np.int64)
        bseg = np.zeros(n_parents + 1, dtype=np.int64)
        np.cumsum(np.bincount(up[starts], minlength=n_parents), out=bseg[1:])
        return {"bseg": bseg, "bfirst": uc[starts], "bpos": bpos}, positions, len(uc)

    def unpack(self, arrays, parents, size):
        """All children of the positions `parents`, in storage order:
        (owner, coord, positions), child c belonging to parents[owner[c]]."""
        bseg = arrays["bseg"]
        parents = np.asarray(parents, dtype=np.int64)
        owner_b, offset, begin = spread(bseg[parents].astype(np.int64),
                                        bseg[parents + 1].astype(np.int64))
        owner, coord, positions = runs_of(arrays["bfirst"], arrays["bpos"], begin + offset)
        return owner_b[owner], coord, positions

    def check(self, arrays, n_parents, size, where, order=True, parent_runs=None,
              coords_above=None):
        """Validate bseg/bfirst/bpos under `n_parents` positions (InputError naming
        `where`); return the position count. `order=False` checks bounds only."""
        require_keys(arrays, self.roles, where)
        bseg = index_array(arrays["bseg"], f"{where}: bseg", exact=True)
        first = index_array(arrays["bfirst"], f"{where}: bfirst", exact=True)
        check_pointers(bseg, n_parents, len(first), where, "bseg", "bfirst")
        lengths = check_runs(arrays, len(first), size, where, empty=False)
        if order:
            check_block_order(bseg, first, lengths, where)
        return int(arrays["bpos"][-1])

    def fibres(self, arrays):
        """Each parent's positions and its number of blocks (formats.level)."""
        bseg = np.asarray(arrays["bseg"], dtype=np.int64)
        return np.diff(np.asarray(arrays["bpos"], dtype=np.int64)[bseg]), np.diff(bseg)

    # -- reading (formats.level) -------------------------------------------
    def children(self, lo, hi, size, arrays):
        """The children of parent positions lo..hi-1: bpos[bseg[lo]] .. bpos[bseg[hi]] - 1."""
        bseg, bpos = arrays["bseg"], arrays["bpos"]
        return Load(bpos, Load(bseg, lo)), Load(bpos, Load(bseg, hi))

    def read(self, lo, hi, size, arrays) -> Blocks:
        """Parent lo's blocks bseg[lo] .. bseg[lo+1] - 1."""
        bseg = arrays["bseg"]
        return Blocks(arrays["bfirst"], arrays["bpos"], Load(bseg, lo),
                      Load(bseg, imp.add(lo, ONE)))

    def describe(self, k, axis, arrays, parents, size=None, count=None):
        """The header text of level k over `axis` (of dimension `size`, C text;
        default dim_<axis>) below `parents` positions, and its number of
        positions (bpos[bseg[parents]]). Never an output level."""
        bseg, first, bpos = arrays["bseg"], arrays["bfirst"], arrays["bpos"]
        size = size or f"dim_{axis}"
        count = count or f"{bpos}[{bseg}[{parents}]]"
        return (f"level {k} (blocks, {axis}): {bseg} has {parents} + 1 entries, "
                f"nondecreasing from {bseg}[0] = 0; the blocks of position p are "
                f"b = {bseg}[p] .. {bseg}[p+1]-1; block b holds coordinate {first}[b] + i "
                f"at position {bpos}[b] + i for i < {bpos}[b+1] - {bpos}[b] (at least 1), "
                f"each in [0, {size}), increasing from block to block; {first} has "
                f"{bseg}[{parents}] entries, {bpos} one more, from {bpos}[0] = 0; "
                f"{count} positions."), count


# -- shared with the banded level -------------------------------------------------
def distinct(parent_ids, coord):
    """(parent, coordinate) of each distinct consecutive pair of the sorted entries,
    and each entry's index among them."""
    parent_ids = np.asarray(parent_ids, dtype=np.int64)
    coord = np.asarray(coord, dtype=np.int64)
    new = np.ones(len(coord), dtype=bool)
    new[1:] = (parent_ids[1:] != parent_ids[:-1]) | (coord[1:] != coord[:-1])
    return parent_ids[new], coord[new], np.cumsum(new, dtype=np.int64) - 1


def spread(begin, end):
    """For ranges begin[j]..end[j]-1: (owner j, offset in its range, begin[owner])
    of each member, in order."""
    counts = np.maximum(end - begin, 0)
    owner = np.repeat(np.arange(len(begin), dtype=np.int64), counts)
    offset = np.arange(len(owner), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts,
                                                                counts)
    return owner, offset, begin[owner]


def runs_of(first, pos, runs):
    """The members of the runs `runs` (indices into first/pos), in order:
    (owner index into runs, coordinate, position)."""
    runs = np.asarray(runs, dtype=np.int64)
    begin = np.asarray(pos, dtype=np.int64)[runs]
    owner, offset, start = spread(begin, np.asarray(pos, dtype=np.int64)[runs + 1])
    return owner, np.asarray(first, dtype=np.int64)[runs][owner] + offset, start + offset


def check_runs(arrays, n_runs, size, where, empty):
    """bfirst/bpos of `n_runs` runs: bpos pointers from 0, each run inside [0, size)
    (an empty run's first at most size); `empty`: a run may be empty. Returns the
    run lengths."""
    first = index_array(arrays["bfirst"], f"{where}: bfirst", exact=True)
    bpos = index_array(arrays["bpos"], f"{where}: bpos", exact=True)
    if len(first) != n_runs:
        raise InputError(f"{where}: bfirst has length {len(first)} but needs {n_runs} "
                         f"(one first coordinate per run)")
    total = int(bpos[-1]) if len(bpos) else 0
    check_pointers(bpos, n_runs, total, where, "bpos", "the positions", parents="runs")
    lengths = np.diff(bpos.astype(np.int64))
    if not empty and np.any(lengths == 0):
        b = int(np.flatnonzero(lengths == 0)[0])
        raise InputError(f"{where}: block {b} is empty (bpos[{b}] = bpos[{b + 1}] = "
                         f"{bpos[b]}); every block holds at least one coordinate")
    bad = np.flatnonzero((first < 0) | (first.astype(np.int64) + lengths > size))
    if bad.size:
        b = int(bad[0])
        raise InputError(f"{where}: bfirst[{b}] = {first[b]} with {lengths[b]} coordinates "
                         f"leaves [0, {size}): a run's coordinates must lie in [0, {size})")
    return lengths


def check_block_order(bseg, first, lengths, where):
    """Within each parent's segment, a block starts after the previous one ends."""
    if len(first) < 2:
        return
    first = first.astype(np.int64)
    same = np.ones(len(first) - 1, dtype=bool)
    starts = np.asarray(bseg[1:-1], dtype=np.int64)
    same[starts[(starts > 0) & (starts < len(first))] - 1] = False
    bad = np.flatnonzero(same & (first[1:] < first[:-1] + lengths[:-1]))
    if bad.size:
        b = int(bad[0]) + 1
        raise InputError(f"{where}: block {b} starts at coordinate {first[b]}, inside or "
                         f"before block {b - 1} ({first[b - 1]} .. "
                         f"{first[b - 1] + lengths[b - 1] - 1}) of the same parent: "
                         f"coordinates must increase from block to block")
