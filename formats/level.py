"""What every level kind answers: the protocol the rest of the compiler asks.

Nothing outside formats/ branches on a level's kind; readers (streams) and
writers (lower's output targets) ask a level through these members instead.
A new level kind is one module here implementing them (proofs_notes/levels.md
states the law of each), its class registered by one line, `@kind(name)` (or
`@kind(name, named=format)`: also the named format of dense levels over one
level of it); formats/__init__.py imports every module here, so that nothing
else names the kind.

Arrays. A level stores named arrays; `roles` lists their roles in C-argument
order, and a tensor's level k passes the array of role r as `<tensor>_<r><k>`
(an output's as `out_<r><k>`). Every method that reads or writes them takes
`arrays`, a dict from role to the Imp array name.

Checking and packing (runtime.tensor, runtime.convert).
    check(arrays, n_parents, size, where, order=True, parent_runs=None,
          coords_above=None) -> positions
        validate the level's arrays below n_parents positions (InputError
        naming `where`); `order=False` checks bounds only. A level that is
        one_per_parent orders its coordinates within each run of its parent
        (`parent_runs[p]`: a run starts at p; `coords_above(p)` names them)
    one_per_parent
               each parent position has exactly one child, itself (so the
               level sits under a non-unique level, and that level's packing
               splits its positions where these levels' coordinates change)
    segment_roles
               (starts, coords): the roles of a level stored in the segment
               layout, one run of sorted coordinates per parent position p at
               coords[starts[p]:starts[p+1]] (compressed: ("pos", "crd")); None
               for any other layout. Readers that measure fibres or search them,
               and writers that fill such a level row by row, ask this instead
               of naming the arrays
    pack(parent_ids, n_parents, coord, size, split) / unpack(arrays, parents, size)
        sorted entries into the level's arrays, and back
    fibres(arrays) -> (lengths, runs) | None
        measured on bound numpy arrays, for the planner: each parent's number
        of positions, and its number of dense runs (bands, blocks) when the
        level reads as runs (else None); None for a located or one-per-parent
        level (nothing to measure)

Reading.
    children(lo, hi, size, arrays) -> (lo', hi')
        the positions below the parent positions lo..hi-1 are lo'..hi'-1
        (Imp expressions; `size` is the level's dimension)
    read(lo, hi, size, arrays) -> Range | Segment | Blocks | Band | RunList | Lookup | Hashed
        how one parent (the position range lo..hi-1; hi = lo + 1 below a
        unique level) is walked: the stream shape, built by streams.levels

Writing (output levels).
    located    a child's position is computed from its parent's and its
               coordinate (p·size + c): nothing to store, nothing to grow;
               every coordinate has a position (none is left out)
    appends    children can be appended in coordinate order, one closed segment
               per parent, into growing arrays in the segment layout: `pos`
               (segment starts, one per parent plus one) and `crd` (one
               coordinate per position). Such a level builds the Imp of each
               append step (start, append, room, parent_room, close, fill_forward)
    inserts    children can be inserted in any order under located parents: such a
               level names its scratch (`scratch_roles`) and builds the Imp of
               begin(scratch, cells, vals, zero, first) (before the loops: its
               scratch, and what holds the values of `cells` positions while it
               is written; `first`, a table's first size), write_at(scratch, at,
               vals, zero) -> (statement, array, position) (at each write: where
               cell `at`'s value is added, after the statement) and end(arrays,
               scratch, var, r, count, parents, size, vals, zero) (after the
               loops: its arrays, `count` stored, and the values in `vals`)
    describe(k, axis, arrays, parents, size=None, count=None) -> (text, positions)
        the exported header's text for level k (input or output) over `axis`
        (of dimension `size`, C text), its arrays' lengths, ranges and order,
        and its number of positions (C text, `count` when the caller names
        it) given its parents'
    assemble(take, k, parents) -> (arrays, positions)
        the kernel's output arrays of this level, taken from the C call

Optional (asked with getattr; absent means no).
    last_only  the level must be the storage's last; its value (a string)
               says why (a run shares one value among its coordinates)
    locates    a read finds any coordinate in O(1) though the level is not
               `located` for writing (a Lookup, a Hashed probe): the planner
               prices a probe
    stored(arrays) -> int
               the number of entries stored, when that is not the last
               level's positions (a Lookup level's positions count every cell, a
               Hashed level's every slot); Tensor.nnz and the planner count these
    every_coordinate
               each fibre stores every coordinate 0..size-1 (a dense run list),
               though not one position each: an output in it stores every cell
               under a stored parent, whatever products were made there
    merge(arrays, vals) -> (arrays, vals)
        after packing the values of a last level: positions whose values are
        equal and that the level may share become one (runs merge equal
        neighbours)
    writes_runs
               an output's last level written a run at a time, in order, with
               assemble taking rseg/rend (lower.targets.runs; Format.writes_runs)
    run_starts
               (with writes_runs) each run also has its start, assemble takes
               rbeg too, and cells between runs are not stored: the writer
               stores no run of the zero (a sparse run list)
    pack_rows(rows, fill) -> (arrays, vals)
        a last level under located levels only, in the identity mode order,
        packed straight from the dense values (`rows`: one row per parent;
        `fill`, the value of cells nothing stores), without listing
        coordinates; the same arrays as pack and merge give
"""
from __future__ import annotations

from dataclasses import dataclass

from ..imp import Bin, Expr, Load

# The registered level kinds (formats._LEVEL_NAMES): name -> class, and the named
# formats of dense levels over one last level: format name -> that level's name.
KINDS: dict = {}
NAMED: dict = {}


def kind(name: str, named: str | None = None):
    """Register the decorated level class as the kind `name` (a Format's level
    spec), and, with `named`, the named format (dense..., name) of that name."""
    def register(cls):
        if (KINDS.get(name, cls).__qualname__ != cls.__qualname__
                or NAMED.get(named, name) != name):
            raise ValueError(f"level kind {name!r} (named format {named!r}) is "
                             f"registered twice")
        KINDS[name] = cls
        if named:
            NAMED[named] = name
        return cls
    return register


@dataclass(frozen=True)
class Range:
    """Every coordinate c in 0..size-1 is present, at position first + c (and the
    children of c are the positions below first + c alone). Such a level
    locates any coordinate in O(1)."""

    first: Expr


@dataclass(frozen=True)
class Segment:
    """The positions start..end-1, position q holding the coordinate crd[q].

    `unique`: the coordinates strictly increase; otherwise they never decrease,
    and each run of equal coordinates is one state whose whole position range
    goes to the level below. `bounds`: the array the segment is read from at
    its parent position lo (start = bounds[lo], end = bounds[lo + 1]), so that
    the parent position alone names the segment; None when start..end is the
    parent's own range."""

    crd: str
    start: Expr
    end: Expr
    unique: bool
    bounds: str | None = None


@dataclass(frozen=True)
class Blocks:
    """The blocks b = start..end-1: block b holds the coordinates first[b] ..
    first[b] + n_b - 1 at the positions pos[b] .. pos[b + 1] - 1 (n_b =
    pos[b + 1] - pos[b], at least 1), coordinate first[b] + i at position
    pos[b] + i; the coordinates strictly increase from block to block. A segment
    of dense runs: inside a block any coordinate is found in O(1) (position =
    coordinate + pos[b] - first[b]).

    `tiles` (width, step, at), with `pos` None: every block holds `width`
    coordinates, block b the coordinates first[b]·width + i at the positions
    at + b·step + i (formats.tiles: a bsr tile's row, the blocks of one parent
    not adjacent in memory)."""

    first: str
    pos: str | None
    start: Expr
    end: Expr
    tiles: tuple | None = None


@dataclass(frozen=True)
class Band:
    """One dense run, computed: the coordinates lo .. hi - 1 (none when hi <= lo),
    coordinate c at position at + c. No coordinate is loaded and any one inside
    the run is found in O(1). A band reads so: per-parent arrays (formats.banded:
    lo = bfirst[p]) or one shape for every parent (formats.uniform_band: lo, hi
    and at affine in p, clipped). `fixed`: where some parents' bands all have one
    width, unclipped (a Fixed), else None."""

    lo: Expr
    hi: Expr
    at: Expr
    fixed: "Fixed | None" = None


@dataclass(frozen=True)
class Fixed:
    """The parents rows[0] .. rows[1] - 1 (parent positions; the bounds read no
    parent position) have the band lo = first, hi = first + width, where width
    reads no parent position: one width per call (proofs_notes/band.md, "Fixed
    width")."""

    rows: tuple
    first: Expr
    width: Expr


@dataclass(frozen=True)
class RunList:
    """The runs r = start..end-1, in order, run r holding the coordinates up to
    ends[r] - 1, all with the one value at position r. Every run holds at least
    one coordinate. A reader may take a run whole: its coordinates share the
    child (lo, hi) = (r, r + 1).

    `starts` None: the runs cover the coordinates 0..size-1 (a dense run list),
    run r starting at the previous run's end (0 for run start); the last ends
    at size. `starts` an array: run r holds starts[r] .. ends[r] - 1 and the
    coordinates in no run are absent (a sparse run list: the fill between
    runs); starts[r] >= ends[r - 1] within the parent."""

    ends: str
    start: Expr
    end: Expr
    starts: str | None = None


@dataclass(frozen=True)
class Lookup:
    """The positions start..end-1 of `crd` list the parent's stored coordinates,
    strictly increasing; any coordinate c has the position first + c, and
    present[first + c] is 1 exactly when c is listed (else 0). A walk reads
    crd[q] and goes to position first + crd[q]; a probe of c reads
    present[first + c] and, where it is 1, the position first + c
    (proofs_notes/lookup.md)."""

    crd: str
    start: Expr
    end: Expr
    first: Expr
    present: str


@dataclass(frozen=True)
class Hashed:
    """The parent's stored coordinates, in increasing order, are crd[slots[q]] for
    q = start..end-1, coordinate crd[slots[q]] at the position slots[q]. They are
    stored in the table of positions table .. table + cap - 1 (cap a power of
    two, some slot empty: crd = -1), coordinate c at the first slot reached from
    table + ep_hash(c, cap - 1) stepping by one around the table. A walk reads
    slots[q] and then crd there; a probe of c steps from its hash slot to c or
    to an empty slot (imp.Probe; proofs_notes/hashed.md)."""

    crd: str
    slots: str
    start: Expr
    end: Expr
    table: Expr
    cap: Expr


@dataclass(frozen=True)
class Spike:
    """At most one coordinate, computed: `coord` (an index expression, -1 for
    none) is present, at the parent's position `at` (its child is (at, at + 1)).
    The values-as-coordinates level of a histogram reads so (formats.bins)."""

    coord: Expr
    at: Expr


def coordinate_at(read, q: Expr) -> Expr | None:
    """The coordinate held at position q (a child position) of a level's `read`
    shape, or None where one position holds many coordinates (a RunList's run) or
    the coordinate needs the block the position is in (Blocks): a value predicate
    notes it for its test (streams.from_expr)."""
    if isinstance(read, Spike):
        return read.coord
    if isinstance(read, (Range, Lookup)):
        return Bin("-", q, read.first)
    if isinstance(read, Band):
        return Bin("-", q, read.at)
    if isinstance(read, (Segment, Hashed)):
        return Load(read.crd, q)        # (a Hashed position is a slot: crd[slot])
    return None
