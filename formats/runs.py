"""The run-length level kind ("runs"): a dense run list.

A run-length level stores, per parent position, runs of equal values that
cover the parent's whole fibre 0..size-1 in order:

    rseg    one entry per parent position, plus one: parent p's runs are
            r = rseg[p] .. rseg[p+1]-1 (none when size is 0, else at least one)
    rend    one entry per run: its end (exclusive); run r holds the coordinates
            rend[r-1] .. rend[r]-1 (from 0 for a parent's first run), all with
            the value at position r. Within a parent the ends strictly increase
            and the last is size.

A level's positions are its runs, so a value is stored once per run and a run
is read whole (a formats.level RunList): a Σ over a run of a value constant on
it is computed once (Semiring.repeat). Runs cover the fibre (Finch's dense
run list): the cells between stored entries are runs of the fill. The level is
the storage's last (`last_only`: nothing can hang below a run shared by its
coordinates). Packing makes each stored entry and each gap a run, and `merge`
then joins neighbours of equal value, so a packed level holds maximal runs.
Written by a kernel as runs, in order (lower.targets.runs: one run per piece
of a run stream, equal neighbours merged) when the loops are the output's
levels in order and sum nothing; any other output in this format is produced
as coordinate records and packed, which merges equal neighbours.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import imp
from ..errors import InputError
from ..formats.blocks import spread
from ..formats.compressed import check_pointers, index_array, require_keys
from ..formats.level import RunList, kind
from ..imp import ONE, Load


class RunSegments:
    """What run lists with a segment array `rseg` (a parent's runs rseg[p] ..
    rseg[p+1] - 1) share: their positions are their runs."""

    def fibres(self, arrays):
        """Each parent's positions, which are its runs, and its runs."""
        runs = np.diff(np.asarray(arrays["rseg"], dtype=np.int64))
        return runs, runs

    # -- reading (formats.level) -------------------------------------------
    def children(self, lo, hi, size, arrays):
        """The runs of parent positions lo..hi-1: rseg[lo] .. rseg[hi] - 1."""
        return Load(arrays["rseg"], lo), Load(arrays["rseg"], hi)


@kind("runs", named="rle")
@dataclass(frozen=True)
class Runs(RunSegments):
    """A run-length level: per parent, runs of equal values covering its fibre
    (rseg, rend; see the module docstring). The last level of its format.

        >>> ep.Format(["dense", "runs"])        # row runs: the "rle" format
    """

    unique = True
    roles = ("rseg", "rend")
    segment_roles = None
    located = False
    appends = False
    one_per_parent = False  # formats.level
    inserts = False         # formats.level: not written in any order
    last_only = "a run shares one value among its coordinates"   # formats.level
    every_coordinate = True

    def __str__(self):
        return "runs"

    # -- packing ------------------------------------------------------------
    def pack(self, parent_ids, n_parents, coord, size, split=None):
        """Runs from sorted unique entries: each entry is a run of one
        coordinate, each gap between them (and before the first, after the
        last) a run of the fill. Returns (arrays, run of each entry, runs);
        `merge` joins equal neighbours once the values are placed."""
        parent_ids = np.asarray(parent_ids, dtype=np.int64)
        coord = np.asarray(coord, dtype=np.int64)
        same = np.r_[False, parent_ids[1:] == parent_ids[:-1]]
        prev_end = np.where(same, np.r_[0, coord[:-1] + 1], 0)
        gap = coord > prev_end
        last = np.r_[~same[1:], True] if len(coord) else np.zeros(0, dtype=bool)
        tails = np.ones(n_parents, dtype=bool) if size > 0 else np.zeros(n_parents, bool)
        tails[parent_ids[last & (coord + 1 == size)]] = False
        owners = np.concatenate([parent_ids, parent_ids[gap], np.flatnonzero(tails)])
        ends = np.concatenate([coord + 1, coord[gap], np.full(int(tails.sum()), size)])
        key = owners * (size + 1) + ends
        order = np.argsort(key, kind="stable")
        rseg = np.zeros(n_parents + 1, dtype=np.int64)
        np.cumsum(np.bincount(owners, minlength=n_parents), out=rseg[1:])
        positions = np.searchsorted(key[order], parent_ids * (size + 1) + coord + 1)
        return {"rseg": rseg, "rend": ends[order]}, positions, len(ends)

    def merge(self, arrays, vals):
        """Neighbouring runs of one parent holding equal values become one
        (formats.level). Returns (arrays, vals) of the maximal runs."""
        rseg = np.asarray(arrays["rseg"], dtype=np.int64)
        ends = np.asarray(arrays["rend"], dtype=np.int64)
        drop = np.zeros(len(ends), dtype=bool)
        drop[1:] = vals[1:] == vals[:-1]
        drop[rseg[:-1][rseg[:-1] < len(ends)]] = False     # a parent's first run stays
        keep = np.flatnonzero(~drop)
        last = np.r_[keep[1:], len(ends)][:len(keep)] - 1
        before = np.r_[0, np.cumsum(~drop)]
        return {"rseg": before[rseg], "rend": ends[last]}, vals[keep]

    def pack_rows(self, rows, fill=None):
        """The level of the fibres `rows` (a 2-d array, one row a parent), read
        straight from the dense values (formats.level; the fill is a run like
        any other value, so `fill` is not read): a run ends wherever the
        next value differs, and at the row's end. Returns (arrays, vals): the
        maximal runs, as packing and `merge` give."""
        n_parents, size = rows.shape
        rseg = np.zeros(n_parents + 1, dtype=np.int64)
        if size == 0:
            return {"rseg": rseg, "rend": np.zeros(0, np.int64)}, rows.reshape(-1)
        boundary = np.ones(rows.shape, dtype=bool)
        np.not_equal(rows[:, 1:], rows[:, :-1], out=boundary[:, :-1])
        at = np.flatnonzero(boundary)
        np.cumsum(np.count_nonzero(boundary, axis=1), out=rseg[1:])
        return {"rseg": rseg, "rend": at % size + 1}, rows.reshape(-1)[at]

    def unpack(self, arrays, parents, size):
        """Every coordinate of the fibres of `parents`, in order: (owner, coord,
        positions), a coordinate's position being its run."""
        rseg = np.asarray(arrays["rseg"], dtype=np.int64)
        ends = np.asarray(arrays["rend"], dtype=np.int64)
        parents = np.asarray(parents, dtype=np.int64)
        _, offset, begin = spread(rseg[parents], rseg[parents + 1])
        runs = begin + offset
        starts = np.where(offset > 0, ends[np.maximum(runs - 1, 0)], 0)
        positions = np.repeat(runs, ends[runs] - starts)
        owner = np.repeat(np.arange(len(parents), dtype=np.int64), size)
        coord = np.tile(np.arange(size, dtype=np.int64), len(parents))
        return owner, coord, positions

    def check(self, arrays, n_parents, size, where, order=True, parent_runs=None,
              coords_above=None):
        """Validate rseg/rend under `n_parents` positions (InputError naming
        `where`): each parent's ends strictly increase from above 0 to size
        (its runs cover its fibre); returns the number of runs. `order=False`
        is the same check (runs cover a fibre only in order)."""
        require_keys(arrays, self.roles, where)
        rseg = index_array(arrays["rseg"], f"{where}: rseg", exact=True)
        ends = index_array(arrays["rend"], f"{where}: rend", exact=True)
        check_pointers(rseg, n_parents, len(ends), where, "rseg", "rend")
        counts = np.diff(rseg.astype(np.int64))
        bad = np.flatnonzero(counts == 0 if size > 0 else counts != 0)
        if bad.size:
            p = int(bad[0])
            raise InputError(f"{where}: parent position {p} has {counts[p]} runs; runs "
                             f"must cover its fibre of size {size}")
        ends = ends.astype(np.int64)
        first = np.zeros(len(ends), dtype=bool)
        first[rseg[:-1][counts > 0]] = True
        prev = np.where(first, 0, np.r_[0, ends[:-1]])
        bad = np.flatnonzero(ends <= prev)
        if bad.size:
            r = int(bad[0])
            raise InputError(f"{where}: rend[{r}] = {ends[r]} does not exceed the run's "
                             f"start {prev[r]}: run ends must strictly increase from 0 "
                             f"within a parent")
        lasts = rseg[1:][counts > 0] - 1
        bad = lasts[ends[lasts] != size]
        if bad.size:
            r = int(bad[0])
            raise InputError(f"{where}: rend[{r}] = {ends[r]} ends its parent's runs, but "
                             f"the last run must end at the size {size}")
        return len(ends)

    def read(self, lo, hi, size, arrays) -> RunList:
        """Parent lo's runs rseg[lo] .. rseg[lo+1] - 1."""
        rseg = arrays["rseg"]
        return RunList(arrays["rend"], Load(rseg, lo), Load(rseg, imp.add(lo, ONE)))

    writes_runs = True      # lower.targets.runs writes it in order, a run at a time

    def assemble(self, take, k, parents, size, count):
        """rseg (parents + 1 entries) and rend (count entries); count positions
        (runs), as lower.targets.runs writes them."""
        return {"rseg": take(f"rseg{k}", parents + 1), "rend": take(f"rend{k}", count)}, count

    def describe(self, k, axis, arrays, parents, size=None, count=None):
        """The header text of level k over `axis` (of dimension `size`, C text;
        default dim_<axis>) below `parents` positions, and its number of
        positions (rseg[parents], its runs); an output level (lower.targets.runs)
        has the same layout."""
        rseg, ends = arrays["rseg"], arrays["rend"]
        size = size or f"dim_{axis}"
        count = count or f"{rseg}[{parents}]"
        return (f"level {k} (runs, {axis}): {rseg} has {parents} + 1 entries, "
                f"nondecreasing from {rseg}[0] = 0; the runs of position p are "
                f"r = {rseg}[p] .. {rseg}[p+1]-1 and cover 0 .. {size}-1 in order: run r "
                f"holds coordinates {ends}[r-1] .. {ends}[r]-1 (from 0 for p's first run) "
                f"with the one value at position r; {ends} strictly increases within p "
                f"and ends at {size}; {count} positions (runs)."), count
