"""The compressed level kind.

A compressed level stores `pos` (one entry per parent position, plus one) and
`crd`: the children of parent p are the positions pos[p]..pos[p+1]-1, and
position q has coordinate crd[q]. Within a parent's segment the coordinates
strictly increase (unique level) or never decrease (non-unique level). It is
read as a Segment bounded by pos, and a unique one is written by appending
(formats.level has the protocol).

The module also holds the vectorised index-array checks shared by the sparse
level kinds and by the scipy input path.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .. import imp
from ..errors import InputError
from ..formats.level import Segment, kind
from ..imp import ONE, ZERO, Alloc, Decl, If, Load, Reserve, Store, Var, While, incr, lt, seq

INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


@kind("compressed")
@dataclass(frozen=True)
class Compressed:
    """A compressed level: pos[p]..pos[p+1] delimit the children of parent p, crd
    holds their coordinates. Parameters: unique, False when one parent may store
    a coordinate more than once (the first level of coo).

        >>> ep.Format([ep.Compressed(), ep.Compressed()])    # dcsr's levels
    """

    unique: bool = True
    roles = ("pos", "crd")
    segment_roles = ("pos", "crd")
    located = False
    one_per_parent = False  # formats.level
    inserts = False         # formats.level: not written in any order

    def __str__(self):
        return "compressed" + ("" if self.unique else "-nonunique")

    @property
    def appends(self) -> bool:
        """A unique compressed level is written by appending, in the segment layout."""
        return self.unique

    # -- packing ------------------------------------------------------------
    def pack(self, parent_ids, n_parents, coord, size, split=None):
        """Build pos/crd from sorted entries.

        `parent_ids[e]` is the (nondecreasing) parent position of entry e and
        `coord[e]` its coordinate here. Consecutive entries with the same parent
        and coordinate share a position, unless this level is non-unique and
        `split[e]` asks for a fresh one. Returns (arrays, positions of the
        entries, number of positions).
        """
        parent_ids = np.asarray(parent_ids, dtype=np.int64)
        coord = np.asarray(coord, dtype=np.int64)
        starts = np.ones(len(coord), dtype=bool)
        starts[1:] = (parent_ids[1:] != parent_ids[:-1]) | (coord[1:] != coord[:-1])
        if split is not None and not self.unique:
            starts[1:] |= np.asarray(split, dtype=bool)[1:]
        positions = np.cumsum(starts, dtype=np.int64) - 1
        crd = coord[starts]
        counts = np.bincount(parent_ids[starts], minlength=n_parents)
        pos = np.zeros(n_parents + 1, dtype=np.int64)
        np.cumsum(counts, out=pos[1:])
        return {"pos": pos, "crd": crd}, positions, len(crd)

    def unpack(self, arrays, parents, size):
        """All children of the positions `parents`, in storage order.

        Returns (owner, coord, positions): child c belongs to `parents[owner[c]]`.
        """
        pos = arrays["pos"]
        parents = np.asarray(parents, dtype=np.int64)
        if len(parents) == len(pos) - 1 and pos[0] == 0 and np.array_equal(
                parents, np.arange(len(parents))):
            # every position in order (how storage is listed): the children are
            # all of crd, and each one's owner is its segment
            counts = np.diff(pos).astype(np.int64)
            owner = np.repeat(np.arange(len(parents), dtype=np.int64), counts)
            n = int(pos[-1])
            return owner, arrays["crd"][:n].astype(np.int64), np.arange(n, dtype=np.int64)
        begin = pos[parents].astype(np.int64)
        counts = pos[parents + 1].astype(np.int64) - begin
        owner = np.repeat(np.arange(len(parents), dtype=np.int64), counts)
        segment_start = np.cumsum(counts) - counts
        offset = np.arange(len(owner), dtype=np.int64) - np.repeat(segment_start, counts)
        children = np.repeat(begin, counts) + offset
        return owner, arrays["crd"][children].astype(np.int64), children

    def check(self, arrays, n_parents, size, where, order=True, parent_runs=None,
              coords_above=None):
        """Validate pos/crd under `n_parents` positions; return the position count.
        `order=False` checks the bounds only (not the order within segments);
        `parent_runs` and `coords_above` are for levels that are one_per_parent."""
        require_keys(arrays, ("pos", "crd"), where)
        pos = index_array(arrays["pos"], f"{where}: pos", exact=True)
        crd = index_array(arrays["crd"], f"{where}: crd", exact=True)
        check_pointers(pos, n_parents, len(crd), where)
        check_range(crd, size, f"{where}: crd")
        bad = first_order_violation(pos, crd, strict=self.unique) if order else -1
        if bad >= 0:
            parent = int(np.searchsorted(pos, bad, side="right")) - 1
            rule = "strictly increase" if self.unique else "not decrease"
            raise InputError(f"{where}: coordinates must {rule} within a parent's "
                             f"segment, but crd[{bad - 1}] = {crd[bad - 1]} is followed "
                             f"by crd[{bad}] = {crd[bad]} under parent position {parent}")
        return len(crd)

    def fibres(self, arrays):
        """Each parent's segment length; no runs (formats.level)."""
        return np.diff(np.asarray(arrays["pos"], dtype=np.int64)), None

    # -- reading (formats.level) -------------------------------------------
    def children(self, lo, hi, size, arrays):
        """The children of parent positions lo..hi-1: pos[lo] .. pos[hi] - 1."""
        return Load(arrays["pos"], lo), Load(arrays["pos"], hi)

    def read(self, lo, hi, size, arrays) -> Segment:
        """Parent lo's segment pos[lo] .. pos[lo+1] - 1."""
        pos = arrays["pos"]
        return Segment(arrays["crd"], Load(pos, lo), Load(pos, imp.add(lo, ONE)), self.unique,
                       bounds=pos)

    # -- writing by appending (formats.level) ------------------------------
    def start(self, arrays, count: str, parents, capacity, initial) -> imp.Stmt:
        """Before the first append: `count` (positions appended) is 0, pos is zero
        for `parents` parents (None: not known yet; `initial` entries, grown by
        parent_room), and crd has room for `capacity` positions."""
        npos = initial if parents is None else imp.add(parents, ONE)
        return seq(Decl(count, "index", ZERO), Alloc(arrays["pos"], "index", npos, ZERO),
                   Alloc(arrays["crd"], "index", capacity, None))

    def append(self, arrays, count: str, at: str, index, grow) -> imp.Stmt:
        """Append coordinate `index` at position `at` := count (after `grow`, which
        makes room for it), and count it."""
        return seq(Decl(at, "index", Var(count)), grow, self.place(arrays, Var(at), index),
                   incr(count))

    def place(self, arrays, at, index) -> imp.Stmt:
        """Position `at` holds coordinate `index`."""
        return Store(arrays["crd"], at, index)

    def room(self, arrays, n) -> imp.Stmt:
        """Room for positions 0..n-1."""
        return Reserve(arrays["crd"], "index", n)

    def parent_room(self, arrays, n) -> imp.Stmt:
        """Room for parents 0..n-1 (their segment starts)."""
        return Reserve(arrays["pos"], "index", imp.add(n, ONE))

    def close(self, arrays, parent, n) -> imp.Stmt:
        """Parent `parent`'s segment ends before position n."""
        return Store(arrays["pos"], imp.add(parent, ONE), n)

    def fill_forward(self, arrays, r: str, parents) -> imp.Stmt:
        """After the last append, when parents were skipped (never closed): each
        segment end is at least its start, so skipped parents are empty."""
        pos = arrays["pos"]
        here, nxt = Load(pos, Var(r)), Load(pos, imp.add(Var(r), ONE))
        return seq(Decl(r, "index", ZERO), While(
            lt(Var(r), parents),
            seq(If(lt(nxt, here), Store(pos, imp.add(Var(r), ONE), here)), incr(r))))

    def describe(self, k, axis, arrays, parents, size=None, count=None):
        """The header text of level k over `axis` (of dimension `size`, C text;
        default dim_<axis>) below `parents` positions, and its number of
        positions (`count`; default pos[parents])."""
        pos, crd = arrays["pos"], arrays["crd"]
        size = size or f"dim_{axis}"
        if parents == "1":
            count = count or ("n" if self.unique else "nnz")
            what = f"stored {axis} coordinates" if self.unique else "stored entries"
            starts = f"{pos} = {{0, {count}}} (2 entries; {count}: the number of {what})"
        else:
            count = count or f"{pos}[{parents}]"
            starts = f"{pos} has {parents} + 1 entries, nondecreasing from {pos}[0] = 0"
        order = ("strictly increasing (sorted, no duplicates)" if self.unique else
                 "nondecreasing (sorted; a coordinate repeats once per entry below it)")
        return (f"level {k} ({self}, {axis}): {starts}; the children of position p "
                f"are {crd}[{pos}[p] .. {pos}[p+1]-1], {order}, each in [0, {size}); "
                f"{crd} has {count} entries."), count

    def assemble(self, take, k, parents, size, count):
        """pos (parents + 1 entries) and crd (count entries); count positions.
        take(key, length) reads the output array `key` (out_<role><k>)."""
        return {"pos": take(f"pos{k}", parents + 1), "crd": take(f"crd{k}", count)}, count


# -- shared vectorised checks ---------------------------------------------------
def require_keys(arrays, keys, where):
    """The level mapping must hold exactly `keys`."""
    if not isinstance(arrays, Mapping) or set(arrays) != set(keys):
        got = sorted(arrays) if isinstance(arrays, Mapping) else type(arrays).__name__
        raise InputError(f"{where}: the level needs arrays {list(keys)}, got {got}")


def index_array(a, what, exact=False):
    """`a` as a 1-d integer array; `exact` demands int32 or int64."""
    if not isinstance(a, np.ndarray):
        raise InputError(f"{what} must be a numpy array, got {type(a).__name__}")
    if a.ndim != 1:
        raise InputError(f"{what} must be 1-d, got shape {a.shape}")
    if a.dtype.kind not in "iu":
        raise InputError(f"{what} must hold integers, got dtype {a.dtype}")
    if exact and a.dtype not in INDEX_DTYPES:
        raise InputError(f"{what} must be int32 or int64, got dtype {a.dtype}")
    return a


def check_pointers(pos, n_parents, n_children, where, pos_name="pos",
                   crd_name="crd", parents="parent positions"):
    """pos has n_parents + 1 entries, starts at 0, never decreases, ends at n_children."""
    if len(pos) != n_parents + 1:
        raise InputError(f"{where}: {pos_name} has length {len(pos)} but needs "
                         f"{n_parents + 1} (one more than the {n_parents} {parents})")
    if pos[0] != 0:
        raise InputError(f"{where}: {pos_name}[0] must be 0, got {pos[0]}")
    drops = np.flatnonzero(pos[1:] < pos[:-1])
    if drops.size:
        i = int(drops[0])
        raise InputError(f"{where}: {pos_name} must be nondecreasing, but "
                         f"{pos_name}[{i}] = {pos[i]} > {pos_name}[{i + 1}] = {pos[i + 1]}")
    if pos[-1] != n_children:
        relation = "smaller than" if pos[-1] < n_children else "larger than"
        raise InputError(f"{where}: {pos_name}[-1] = {pos[-1]} is {relation} the "
                         f"{n_children} entries of {crd_name}; they must be equal")


def check_range(crd, size, what):
    """Every coordinate lies in [0, size)."""
    bad = np.flatnonzero((crd < 0) | (crd >= size))
    if bad.size:
        q = int(bad[0])
        kind = "negative" if crd[q] < 0 else "out of range"
        raise InputError(f"{what} has value {crd[q]} at index {q}, which is {kind}: "
                         f"coordinates must lie in [0, {size})")


def first_order_violation(pos, crd, strict):
    """First q with crd[q] out of order after crd[q-1] in the same segment, or -1.

    `pos` must already be valid pointers into `crd`. Strict order forbids
    repeats (the coordinates must increase).
    """
    if len(crd) < 2:
        return -1
    step = np.diff(crd.astype(np.int64))
    same_segment = np.ones(len(crd) - 1, dtype=bool)
    starts = np.asarray(pos[1:-1], dtype=np.int64)
    starts = starts[(starts > 0) & (starts < len(crd))]
    same_segment[starts - 1] = False
    bad = same_segment & ((step <= 0) if strict else (step < 0))
    hits = np.flatnonzero(bad)
    return int(hits[0]) + 1 if hits.size else -1
