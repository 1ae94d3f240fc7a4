"""The singleton level kind.

A singleton level stores `crd` with one entry per parent position: the only
child of position p is p itself, with coordinate crd[p]. It sits under a
non-unique level (as in coo), which gives every stored entry its own position,
or under a unique level each of whose positions has exactly one child (a key
that depends on the keys above, as ep.table stores one: its pos would be
0, 1, ..., n), where each run below is one position.

The parent streams each *run* of its positions (consecutive positions with equal
coordinates at every level above and at the parent) as one coordinate and hands
the whole run to this level, which streams it as a segment: within a run the
coordinates strictly increase (unique level) or never decrease (non-unique).
It is read as a Segment (formats.level has the protocol); it is never written
by a kernel (a sparse output's coordinates are canonicalised into it).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import FormatError, InputError
from ..formats.compressed import Compressed, check_range, index_array, require_keys
from ..formats.level import Segment, kind


@kind("singleton")
@dataclass(frozen=True)
class Singleton:
    """A singleton level: exactly one child per parent position, its coordinate in
    crd; it sits under a non-unique level, or a unique one whose every position
    has one child. Parameters: unique, False when it is itself followed by a
    singleton level.

        >>> ep.Format([ep.Compressed(unique=False), ep.Singleton()])   # coo's levels
    """

    unique: bool = True
    roles = ("crd",)
    segment_roles = None
    located = False
    appends = False
    one_per_parent = True   # formats.level: position p's only child is p
    inserts = False         # formats.level: not written in any order

    def __str__(self):
        return "singleton" + ("" if self.unique else "-nonunique")

    # -- packing ------------------------------------------------------------
    def pack(self, parent_ids, n_parents, coord, size, split=None):
        """Build crd from sorted entries: every parent position needs exactly one
        coordinate. Returns (arrays, positions of the entries, number of positions).
        """
        parent_ids = np.asarray(parent_ids, dtype=np.int64)
        coord = np.asarray(coord, dtype=np.int64)
        crd = np.zeros(n_parents, dtype=np.int64)
        crd[parent_ids] = coord
        covered = np.zeros(n_parents, dtype=bool)
        covered[parent_ids] = True
        if not covered.all() or np.any(crd[parent_ids] != coord):
            raise FormatError("a singleton level needs exactly one coordinate per "
                              "parent position; put it under a non-unique level")
        return {"crd": crd}, parent_ids, n_parents

    def unpack(self, arrays, parents, size):
        """The child of each position in `parents`: (owner, coord, positions)."""
        parents = np.asarray(parents, dtype=np.int64)
        owner = np.arange(len(parents), dtype=np.int64)
        return owner, arrays["crd"][parents].astype(np.int64), parents

    def check(self, arrays, n_parents, size, where, order=True, parent_runs=None,
              coords_above=None):
        """Validate crd under `n_parents` positions; return the position count.

        `parent_runs[p]` is True where a run of the parent level begins at
        position p (bool, one per parent position); without it, or with
        `order=False`, the order within runs is not checked. `coords_above(p)` names the coordinates of parent
        position p (a tuple) in the error message.
        """
        require_keys(arrays, ("crd",), where)
        crd = index_array(arrays["crd"], f"{where}: crd", exact=True)
        if len(crd) != n_parents:
            raise InputError(f"{where}: crd has length {len(crd)} but a singleton "
                             f"level needs one entry per parent position ({n_parents})")
        check_range(crd, size, f"{where}: crd")
        if parent_runs is None or not order:
            return n_parents
        bad = first_run_violation(crd, parent_runs, strict=self.unique)
        if bad >= 0:
            above = tuple(int(c) for c in coords_above(bad)) if coords_above else ()
            before, after = above + (int(crd[bad - 1]),), above + (int(crd[bad]),)
            rule = "strictly increase" if self.unique else "not decrease"
            problem = (f"duplicate coordinate {after}" if crd[bad] == crd[bad - 1]
                       else f"coordinates unsorted within a run, {before} is followed "
                            f"by {after}")
            raise InputError(f"{where}: {problem}; within a run of the parent level "
                             f"(positions with equal coordinates above) the coordinates "
                             f"must {rule}, but crd[{bad - 1}] = {crd[bad - 1]} is "
                             f"followed by crd[{bad}] = {crd[bad]}")
        return n_parents

    def fibres(self, arrays):
        """Nothing to measure (formats.level)."""
        return None

    # -- reading (formats.level) -------------------------------------------
    def children(self, lo, hi, size, arrays):
        """Every parent position is its own only child."""
        return lo, hi

    def read(self, lo, hi, size, arrays) -> Segment:
        """The parent's run lo .. hi - 1 itself."""
        return Segment(arrays["crd"], lo, hi, self.unique)

    def describe(self, k, axis, arrays, parents, size=None, count=None):
        """The header text of level k over `axis` (of dimension `size`, C text;
        default dim_<axis>) below `parents` positions, and its number of positions
        (the same). Not appended (`appends` is False): written as an output only
        under a repeating level whose entries are written in order."""
        crd = arrays["crd"]
        order = "strictly increasing" if self.unique else "nondecreasing"
        return (f"level {k} ({self}, {axis}): {crd} has {parents} entries, one per parent "
                f"position (position p's only child is p, at coordinate {crd}[p]), each in "
                f"[0, {size or f'dim_{axis}'}); {order} along each run of positions whose "
                f"coordinates above are equal."), parents

    def assemble(self, take, k, parents, size, count):
        """crd (one entry per parent position); as many positions (formats.level)."""
        return {"crd": take(f"crd{k}", parents)}, parents


def first_run_violation(crd, run_starts, strict):
    """First q with crd[q] out of order after crd[q-1] in the same run, or -1.

    `run_starts[q]` is True where a run begins; strict order forbids repeats.
    """
    if len(crd) < 2:
        return -1
    step = np.diff(crd.astype(np.int64))
    same_run = ~np.asarray(run_starts, dtype=bool)[1:]
    hits = np.flatnonzero(same_run & ((step <= 0) if strict else (step < 0)))
    return int(hits[0]) + 1 if hits.size else -1


def dependent(kinds: list, arrays: list) -> tuple[list, list]:
    """(kinds, arrays) of a trie's levels with each unique compressed level below
    the first whose pos is 0, 1, ..., n (every parent position one child: a key
    that depends on the keys above) a singleton level, its crd alone."""
    kinds, arrays = list(kinds), [dict(a) for a in arrays]
    for k in range(1, len(kinds)):
        if isinstance(kinds[k], Compressed) and kinds[k].unique and _identity(
                arrays[k].get("pos")):
            kinds[k], arrays[k] = Singleton(), {"crd": arrays[k]["crd"]}
    return kinds, arrays


def independent(kinds) -> list:
    """`kinds` with each singleton level under a unique level compressed (in
    another order, or with other data, a level may hold several children)."""
    return [Compressed() if k and isinstance(lv, Singleton) and kinds[k - 1].unique else lv
            for k, lv in enumerate(kinds)]


def _identity(pos) -> bool:
    if pos is None:
        return False
    pos = np.asarray(pos)
    return bool(len(pos) and pos[0] == 0 and pos[-1] == len(pos) - 1
                and (np.diff(pos) == 1).all())
