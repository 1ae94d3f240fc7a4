"""The bytemap level kind ("bytemap"): a presence map over dense positions, plus
the sorted stored coordinates.

A bytemap level gives every coordinate c of parent position p the position
p·size + c (as a dense level does), marks in a presence map which of them are
stored, and lists the stored ones in order, so a probe finds any coordinate
in O(1) and a walk visits only the stored:

    mpos    one entry per parent position, plus one: parent p's stored
            coordinates are mcrd[mpos[p]] .. mcrd[mpos[p+1]-1]
    mcrd    the stored coordinates, strictly increasing within a parent
    mmap    one entry per position (parents·size): 1 where the coordinate is
            stored (listed in mcrd), else 0

Values are stored per position; a position not stored holds the fill. It is
read as a formats.level Lookup (walked as a segment, probed by position and
presence). It is written by insertion in any order (`inserts`): each value
goes to its cell, the level marks the cell's first touch and lists it, and
after the loops the touched cells are listed in order; the dense workspace of
a compressed output (lower/targets/workspace.py) is one such row. The level is
the storage's last (`last_only`). Finch's SparseByteMap keeps the same table;
here its entries are the kernels' index type, as every level array is.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import imp
from ..errors import InputError
from ..formats.compressed import (check_pointers, check_range, first_order_violation,
                                  index_array, require_keys)
from ..formats.level import Lookup, kind
from ..imp import (ONE, ZERO, Alloc, Bin, Decl, ForSorted, If, Load, Store, Var, While, eq,
                   incr, lt, seq)


@kind("bytemap", named="bytemap")
@dataclass(frozen=True)
class ByteMap:
    """A bytemap level: located positions p·size + c, and per parent its stored
    coordinates in order (mpos, mcrd; see the module docstring). The last level
    of its format.

        >>> ep.Format(["dense", "bytemap"])      # rows probed in O(1), walked sparse
    """

    unique = True
    roles = ("mpos", "mcrd", "mmap")
    segment_roles = None     # position q of mcrd is not the child position
    located = False          # not written by location: not every coordinate is stored
    appends = False
    one_per_parent = False   # formats.level
    inserts = True           # written in any order under located parents (begin..end)
    last_only = "its values sit at dense positions, one per cell"
    locates = True           # formats.level (optional): a read finds any coordinate in O(1)

    def __str__(self):
        return "bytemap"

    # -- packing ------------------------------------------------------------
    def pack(self, parent_ids, n_parents, coord, size, split=None):
        """From sorted unique entries: each entry at p·size + c, marked in mmap,
        its coordinate listed under p. Returns (arrays, positions of the
        entries, positions)."""
        parent_ids = np.asarray(parent_ids, dtype=np.int64)
        coord = np.asarray(coord, dtype=np.int64)
        mpos = np.zeros(n_parents + 1, dtype=np.int64)
        np.cumsum(np.bincount(parent_ids, minlength=n_parents), out=mpos[1:])
        positions = parent_ids * size + coord
        mmap = np.zeros(n_parents * size, dtype=np.int64)
        mmap[positions] = 1
        return {"mpos": mpos, "mcrd": coord.copy(), "mmap": mmap}, positions, \
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
        """Validate mpos/mcrd/mmap under `n_parents` positions (InputError naming
        `where`); return the position count, n_parents·size."""
        require_keys(arrays, self.roles, where)
        mpos = index_array(arrays["mpos"], f"{where}: mpos", exact=True)
        mcrd = index_array(arrays["mcrd"], f"{where}: mcrd", exact=True)
        mmap = index_array(arrays["mmap"], f"{where}: mmap", exact=True)
        check_pointers(mpos, n_parents, len(mcrd), where, "mpos", "mcrd")
        check_range(mcrd, size, f"{where}: mcrd")
        bad = first_order_violation(mpos, mcrd, strict=True) if order else -1
        if bad >= 0:
            raise InputError(f"{where}: stored coordinates must strictly increase within "
                             f"a parent, but mcrd[{bad - 1}] = {mcrd[bad - 1]} is followed "
                             f"by mcrd[{bad}] = {mcrd[bad]}")
        if len(mmap) != n_parents * size:
            raise InputError(f"{where}: mmap has length {len(mmap)} but needs "
                             f"{n_parents * size} (one per cell)")
        listed = np.zeros(len(mmap), dtype=bool)
        listed[self.unpack(arrays, np.arange(n_parents), size)[2]] = True
        wrong = np.flatnonzero((mmap != listed.astype(mmap.dtype)))
        if wrong.size:
            p = int(wrong[0])
            raise InputError(f"{where}: mmap[{p}] = {mmap[p]} but coordinate {p % size} of "
                             f"parent position {p // size} is {'' if listed[p] else 'not '}"
                             f"listed in mcrd; mmap must be 1 exactly where listed, else 0")
        return n_parents * size

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
                      imp.mul(lo, size), arrays["mmap"])

    # -- writing by insertion (formats.level) ------------------------------

    scratch_roles = ("n", "marks", "bits", "list")     # formats.level inserts

    def begin(self, scratch, cells, vals, zero, first=None) -> imp.Stmt:
        """Before the first insert into `cells` positions: nothing touched
        (scratch.n = 0), no cell marked (scratch.marks, a byte per cell, and
        scratch.bits, imp.ForSorted's words, zeroed), room for every position
        in the touched list (scratch.list); `vals` holds the zero at every cell."""
        return seq(Decl(scratch.n, "index", ZERO),
                   Alloc(scratch.marks, "byte", cells, ZERO),
                   Alloc(scratch.bits, "bits", imp.sort_bits_words(cells), ZERO),
                   Alloc(scratch.list, "index", cells, None), Alloc(vals, "value", cells, zero))

    def write_at(self, scratch, at, vals, zero):
        """(statement, array, position): cell `at` is touched, its value at vals[at]."""
        return self.touch(scratch, at), vals, at

    def touch(self, scratch, at, first=None, again=None) -> imp.Stmt:
        """Position `at` is stored: on its first touch, marked (its byte in
        scratch.marks) and listed (the write path of the dense workspace,
        lower/targets/workspace.py, too), then `first` runs; on a later touch
        `again` does."""
        return If(eq(Load(scratch.marks, at), ZERO),
                  seq(Store(scratch.marks, at, ONE), Store(scratch.list, Var(scratch.n), at),
                      incr(scratch.n), first), again)

    def in_order(self, var, scratch, cells, body, place=None) -> imp.Stmt:
        """`body` once per touched position, ascending, bound to `var`; the marks
        are clear again afterwards (imp.ForSorted; `place`: the counter body appends at)."""
        return ForSorted(var, scratch.list, Var(scratch.n), cells, scratch.bits, body, place,
                         scratch.marks)

    def end(self, arrays, scratch, var, r, count, parents, size, vals=None,
            zero=None) -> imp.Stmt:
        """After the last insert: mmap marks the touched positions, mcrd lists
        their coordinates (t mod size, t bound to `var`) in order, `count` of
        them, and mpos their parents' (t / size) starts, counted per parent, then
        summed forward (by `r`); the values stay where they were added."""
        mpos, mcrd, mmap = arrays["mpos"], arrays["mcrd"], arrays["mmap"]
        t, c = Var(var), Var(count)
        parent = Bin("/", t, size)
        at = imp.add(parent, ONE)
        listed = seq(Store(mmap, t, ONE), Store(mcrd, c, Bin("-", t, imp.mul(parent, size))),
                     Store(mpos, at, imp.add(Load(mpos, at), ONE)), incr(count))
        nxt = imp.add(Var(r), ONE)
        forward = seq(Decl(r, "index", ZERO), While(lt(Var(r), parents), seq(
            Store(mpos, nxt, imp.add(Load(mpos, nxt), Load(mpos, Var(r)))), incr(r))))
        return seq(Decl(count, "index", ZERO),
                   Alloc(mpos, "index", imp.add(parents, ONE), ZERO),
                   Alloc(mcrd, "index", imp.max_(Var(scratch.n), ONE), None),
                   Alloc(mmap, "index", imp.mul(parents, size), ZERO),
                   self.in_order(var, scratch, imp.mul(parents, size), listed), forward)

    def describe(self, k, axis, arrays, parents, size=None, count=None):
        """The header text of level k over `axis` (of dimension `size`, C text;
        default dim_<axis>) below `parents` positions, and its number of
        positions (parents·size); `count`, an output's, counts the stored."""
        mpos, mcrd, mmap = arrays["mpos"], arrays["mcrd"], arrays["mmap"]
        size = size or f"dim_{axis}"
        cells = f"{parents}·{size}" if parents != "1" else size
        stored = count or f"{mpos}[{parents}]"
        return (f"level {k} (bytemap, {axis}): {mpos} has {parents} + 1 entries, "
                f"nondecreasing from {mpos}[0] = 0; the stored {axis} coordinates of "
                f"parent position p are {mcrd}[{mpos}[p] .. {mpos}[p+1]-1], strictly "
                f"increasing, each in [0, {size}); {mcrd} has {stored} entries; "
                f"coordinate c of p is at position p·{size} + c, and {mmap} has one entry "
                f"per position, 1 where the coordinate is stored, else 0; {cells} "
                f"positions."), cells

    def assemble(self, take, k, parents, size, count):
        """mpos (parents + 1 entries), mcrd (count entries) and mmap (one per
        position); parents·size positions. take(key, length) reads the output
        array out_<role><k>."""
        return {"mpos": take(f"mpos{k}", parents + 1), "mcrd": take(f"mcrd{k}", count),
                "mmap": take(f"mmap{k}", parents * size)}, parents * size
