"""The sparse run-length level kind ("sparse_runs"): runs with the fill between.

A sparse run-length level stores, per parent position, runs of equal values in
increasing order, each holding consecutive coordinates; the coordinates in no
run hold the fill (Finch's sparse run list, SparseRLE):

    rseg    one entry per parent position, plus one: parent p's runs are
            r = rseg[p] .. rseg[p+1]-1 (none for an empty fibre)
    rbeg    one entry per run: its first coordinate
    rend    one entry per run: its end (exclusive); run r holds the
            coordinates rbeg[r] .. rend[r]-1, all with the value at position r.
            Within a parent a run starts at or after the previous run's end.

A level's positions are its runs, so a value is stored once per run and a run
is read whole (a formats.level RunList with `starts`): a Σ over a run of a
value constant on it is computed once (Semiring.repeat), and a cell between
runs is not visited at all. Unlike `runs` (a dense run list) the fill is not
stored, so a fibre that is mostly fill with a few long runs costs its runs
only. The level is the storage's last (`last_only`). Packing makes each stored
entry a run of one coordinate and `merge` then joins neighbours of equal
value with no gap between them, so a packed level holds maximal runs. An
output in this format is written a run at a time (lower.targets.runs) where
the loops enter its cells in order, else produced as coordinate records and
packed (which merges equal neighbours), the records of the fill left out
(Format.drops_fill), so that either way no run of the fill is stored.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import imp
from ..errors import InputError
from ..formats.blocks import spread
from ..formats.compressed import check_pointers, index_array, require_keys
from ..formats.level import RunList, kind
from ..formats.runs import RunSegments
from ..imp import ONE, Load


@kind("sparse_runs", named="sparse_rle")
@dataclass(frozen=True)
class SparseRuns(RunSegments):
    """A sparse run-length level: per parent, runs of equal values with the fill
    between them (rseg, rbeg, rend; see the module docstring). The last level
    of its format.

        >>> ep.Format(["dense", "sparse_runs"])   # row runs over a fill: "sparse_rle"
    """

    unique = True
    roles = ("rseg", "rbeg", "rend")
    segment_roles = None
    located = False
    appends = False
    one_per_parent = False  # formats.level
    inserts = False         # formats.level: not written in any order
    last_only = "a run shares one value among its coordinates"   # formats.level

    def __str__(self):
        return "sparse_runs"

    # -- packing ------------------------------------------------------------
    def pack(self, parent_ids, n_parents, coord, size, split=None):
        """Runs from sorted unique entries: each entry is a run of one
        coordinate. Returns (arrays, run of each entry, runs); `merge` joins
        equal neighbours with no gap between them once the values are placed."""
        parent_ids = np.asarray(parent_ids, dtype=np.int64)
        coord = np.asarray(coord, dtype=np.int64)
        rseg = np.zeros(n_parents + 1, dtype=np.int64)
        np.cumsum(np.bincount(parent_ids, minlength=n_parents), out=rseg[1:])
        arrays = {"rseg": rseg, "rbeg": coord.copy(), "rend": coord + 1}
        return arrays, np.arange(len(coord), dtype=np.int64), len(coord)

    def merge(self, arrays, vals):
        """Neighbouring runs of one parent that meet (a run's start is the
        previous run's end) and hold equal values become one (formats.level).
        Returns (arrays, vals) of the maximal runs."""
        rseg = np.asarray(arrays["rseg"], dtype=np.int64)
        begins = np.asarray(arrays["rbeg"], dtype=np.int64)
        ends = np.asarray(arrays["rend"], dtype=np.int64)
        drop = np.zeros(len(ends), dtype=bool)
        drop[1:] = (vals[1:] == vals[:-1]) & (begins[1:] == ends[:-1])
        drop[rseg[:-1][rseg[:-1] < len(ends)]] = False     # a parent's first run stays
        keep = np.flatnonzero(~drop)
        last = np.r_[keep[1:], len(ends)][:len(keep)] - 1
        before = np.r_[0, np.cumsum(~drop)]
        return ({"rseg": before[rseg], "rbeg": begins[keep], "rend": ends[last]},
                vals[keep])

    def pack_rows(self, rows, fill):
        """The level of the fibres `rows` (a 2-d array, one row a parent), read
        straight from the dense values (formats.level): a run is a maximal
        stretch of equal values other than `fill`. Returns (arrays, vals): the
        maximal runs, as packing and `merge` give."""
        n_parents, size = rows.shape
        rseg = np.zeros(n_parents + 1, dtype=np.int64)
        if size == 0:
            none = np.zeros(0, dtype=np.int64)
            return {"rseg": rseg, "rbeg": none, "rend": none.copy()}, rows.reshape(-1)
        stored = rows != fill
        same = np.zeros(rows.shape, dtype=bool)       # continues the run on its left
        same[:, 1:] = stored[:, 1:] & stored[:, :-1] & (rows[:, 1:] == rows[:, :-1])
        first = stored & ~same
        last = stored & ~np.c_[same[:, 1:], np.zeros((n_parents, 1), dtype=bool)]
        at, to = np.flatnonzero(first), np.flatnonzero(last)
        np.cumsum(np.count_nonzero(first, axis=1), out=rseg[1:])
        return {"rseg": rseg, "rbeg": at % size, "rend": to % size + 1}, rows.reshape(-1)[at]

    def unpack(self, arrays, parents, size):
        """Every coordinate in a run of the fibres of `parents`, in order:
        (owner, coord, positions), a coordinate's position being its run."""
        rseg = np.asarray(arrays["rseg"], dtype=np.int64)
        begins = np.asarray(arrays["rbeg"], dtype=np.int64)
        ends = np.asarray(arrays["rend"], dtype=np.int64)
        parents = np.asarray(parents, dtype=np.int64)
        run_owner, offset, first = spread(rseg[parents], rseg[parents + 1])
        runs = first + offset
        cell_run, step, start = spread(begins[runs], ends[runs])
        return run_owner[cell_run], start + step, runs[cell_run]

    def check(self, arrays, n_parents, size, where, order=True, parent_runs=None,
              coords_above=None):
        """Validate rseg/rbeg/rend under `n_parents` positions (InputError naming
        `where`): each run non-empty inside 0..size-1 and, with `order`, each
        starting at or after the previous run of its parent ends. Returns the
        number of runs."""
        require_keys(arrays, self.roles, where)
        rseg = index_array(arrays["rseg"], f"{where}: rseg", exact=True)
        begins = index_array(arrays["rbeg"], f"{where}: rbeg", exact=True)
        ends = index_array(arrays["rend"], f"{where}: rend", exact=True)
        check_pointers(rseg, n_parents, len(ends), where, "rseg", "rend")
        if len(begins) != len(ends):
            raise InputError(f"{where}: rbeg has {len(begins)} entries but rend has "
                             f"{len(ends)} (one of each per run)")
        begins, ends = begins.astype(np.int64), ends.astype(np.int64)
        bad = np.flatnonzero((begins < 0) | (ends <= begins) | (ends > size))
        if bad.size:
            r = int(bad[0])
            raise InputError(f"{where}: run {r} holds rbeg[{r}] = {begins[r]} .. rend[{r}] "
                             f"= {ends[r]} (exclusive); a run must hold at least one "
                             f"coordinate in 0 .. {size - 1}")
        if order:
            first = np.zeros(len(ends), dtype=bool)
            first[rseg[:-1][rseg[:-1] < len(ends)]] = True
            bad = np.flatnonzero(~first[1:] & (begins[1:] < ends[:-1])) + 1
            if bad.size:
                r = int(bad[0])
                raise InputError(f"{where}: rbeg[{r}] = {begins[r]} is before the end "
                                 f"rend[{r - 1}] = {ends[r - 1]} of the run before it: a "
                                 f"parent's runs must be in order and must not overlap")
        return len(ends)

    def read(self, lo, hi, size, arrays) -> RunList:
        """Parent lo's runs rseg[lo] .. rseg[lo+1] - 1, run r over rbeg[r] ..
        rend[r] - 1."""
        rseg = arrays["rseg"]
        return RunList(arrays["rend"], Load(rseg, lo), Load(rseg, imp.add(lo, ONE)),
                       starts=arrays["rbeg"])

    writes_runs = True      # lower.targets.runs writes it in order, a run at a time
    run_starts = True       # with each run's start; no run of the fill is written

    def assemble(self, take, k, parents, size, count):
        """rseg (parents + 1 entries), rbeg and rend (count entries each); count
        positions (runs), as lower.targets.runs writes them."""
        return ({"rseg": take(f"rseg{k}", parents + 1), "rbeg": take(f"rbeg{k}", count),
                 "rend": take(f"rend{k}", count)}, count)

    def describe(self, k, axis, arrays, parents, size=None, count=None):
        """The header text of level k over `axis` (of dimension `size`, C text;
        default dim_<axis>) below `parents` positions, and its number of
        positions (rseg[parents], its runs); an output level (lower.targets.runs)
        has the same layout."""
        rseg, begins, ends = arrays["rseg"], arrays["rbeg"], arrays["rend"]
        size = size or f"dim_{axis}"
        count = count or f"{rseg}[{parents}]"
        return (f"level {k} (sparse_runs, {axis}): {rseg} has {parents} + 1 entries, "
                f"nondecreasing from {rseg}[0] = 0; the runs of position p are "
                f"r = {rseg}[p] .. {rseg}[p+1]-1, in order: run r holds coordinates "
                f"{begins}[r] .. {ends}[r]-1 with the one value at position r, "
                f"0 <= {begins}[r] < {ends}[r] <= {size}, and {begins}[r] >= "
                f"{ends}[r-1] within p; coordinates in no run hold the fill; "
                f"{count} positions (runs)."), count
