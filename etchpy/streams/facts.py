"""What lowering may assume of a stream, as typed values (proofs_notes/facts.md).

A stream's record (stream.py) says what it means: its run and its values. What a combinator or
lowering may *assume* of it beyond that is a fact: a frozen value whose docstring is its
contract, true in every state lowering reads (at most one of each class in a `Facts` value).

Facts are the stream's correctness assumptions: code relying on one gives the result of the
plain loop `init; while valid { if ready {value}; next }` only because the fact holds. Hints are
facts read only to choose a schedule (merge or gallop, prefetches): never for results.

Propagation is opt-in: a combinator building a stream from another names the
classes it keeps (`facts.keep(Locate, Prelude)`) or builds new facts; a fact it
does not name is dropped, never inherited, so a new kind is absent until each
combinator keeping it is argued to keep it true. Read one with
`s.facts.get(Counter)` (None when absent) or `Counter in s.facts`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, TypeVar

from .. import imp


class Fact:
    """A correctness assumption about one stream level (its contract is the
    class docstring). Subclasses are frozen dataclasses."""


class Hint(Fact):
    """A fact read only to choose a schedule, never for a result."""


F = TypeVar("F", bound=Fact)


@dataclass(frozen=True)
class Facts:
    """An immutable collection of facts, at most one per class, in insertion order."""

    items: tuple = ()

    @staticmethod
    def of(*facts: Fact | None) -> "Facts":
        """The facts given (None entries are skipped; a later one of a class wins)."""
        return Facts().add(*facts)

    def get(self, kind: type[F]) -> F | None:
        """The fact of class `kind`, or None."""
        for f in self.items:
            if type(f) is kind:
                return f
        return None

    def __contains__(self, kind: type) -> bool:
        return self.get(kind) is not None

    def keep(self, *kinds: type) -> "Facts":
        """Only the facts of the classes named; every other fact is dropped."""
        return Facts(tuple(f for f in self.items if type(f) in kinds))

    def add(self, *facts: Fact | None) -> "Facts":
        """These facts and the given ones (a given fact replaces one of its class)."""
        items = list(self.items)
        for f in facts:
            if f is None:
                continue
            assert isinstance(f, Fact), f"not a fact: {f!r}"
            items = [g for g in items if type(g) is not type(f)] + [f]
        return Facts(tuple(items))


NO_FACTS = Facts()

# ------------------------------------------------------------------------ facts


@dataclass(frozen=True, eq=False)
class Locate(Fact):
    """The stream holds every coordinate t in [0, n) it may be asked for, and
    `at(t)` is its value at t, reading no state of the stream itself (only
    enclosing state and arrays its Prelude filled): once the Prelude (if any)
    has run in the current parent state, ⟦at(t)⟧ = ⟦s⟧(t) for every t in
    [0, n). A product or union may then walk the other operand and read this
    one at the other's coordinates."""

    at: Callable[[imp.Expr], object]


@dataclass(frozen=True)
class Prelude(Fact):
    """Statements that must run in the parent state before `Locate.at` is read,
    even when the stream is only located into and never iterated (a marker's
    fill). `init` already runs them. Absent means there are none: a stream with
    no Prelude has an `init` that only sets its own state."""

    stmt: imp.Stmt

    @staticmethod
    def of(stmt: imp.Stmt) -> "Prelude | None":
        """The fact for `stmt`, or None when it is empty."""
        return None if stmt == imp.SKIP else Prelude(stmt)


@dataclass(frozen=True)
class Most(Fact):
    """An upper bound on the number of ready states of the run, read right after
    `init` (never negative, whatever the state). A sparse output reserves that
    many appends once before the loop, so it must never be below the true
    count (proofs_notes/lowering.md)."""

    bound: imp.Expr


@dataclass(frozen=True)
class Full(Fact):
    """The run visits every coordinate 0..n-1 once, in order, each ready (a
    range). A Full stream also carries Locate."""


@dataclass(frozen=True)
class Counter(Fact):
    """The run is a plain counted loop: `init` sets `name` := first (and the
    Prelude), `valid` is name < end, `ready` true, `next` name := name + 1; `index`
    and `value` read no other state. Lowering may split [first, end) across threads
    (no Prelude) and use `name` as the position. `fixed` (a band's): (parent p, a
    formats.level.Fixed): for p in its rows, first = its first, end = first + width."""

    name: str
    first: imp.Expr
    end: imp.Expr
    fixed: tuple | None = None


@dataclass(frozen=True)
class Choice(Fact):
    """`flag` is a bool state variable that `init` sets and nothing else writes,
    and `next` is `If(flag, then, else)`: lowering may emit one loop per way
    and test the flag once, after init."""

    flag: str


@dataclass(frozen=True)
class Split(Fact):
    """The stream is valid while `a_valid` or `b_valid` holds (a union runs
    until both operands are exhausted), and once either test is false it stays
    false under `next` and `skip`. Lowering may run the loop in phases (both
    valid, only a, only b, neither), with the tests folded to constants in
    the fields each phase reads."""

    a_valid: imp.Expr
    b_valid: imp.Expr


@dataclass(frozen=True)
class Segment(Fact):
    """A unique segment level: its state is position q in crd[q..end), with
    coordinate crd[q], q increasing by one at each `next`; crd holds `crd_len`
    entries in all. Lowering may hide q from the C compiler's vectoriser and
    read crd near q within [0, crd_len)."""

    q: str
    end: str
    crd: str
    crd_len: imp.Expr


@dataclass(frozen=True)
class Walk(Fact):
    """A whole walk of the last level of input `tensor`, a unique segment level
    below one located level: the stream's loop is `while (q < end)` (Segment's q
    and end) with `q := q + 1` last, it reads the level's coordinates `crd` and
    values `vals` at q only, and each parent position p (`parents` of them, a C
    size) has its segment at pos[p] .. pos[p+1] of `pos`, coordinates below the
    size `dim`; with `rows` (first, end), it walks the segments of parents
    first..end-1 as one (lower.schedule.flat_walks). A loop built from the
    stream's own fields says so (imp.While.walk, lower.driver): a kernel may
    check the level's entries where it reads them (lower.schedule.fused_checks)
    when the input was bound without its full check."""

    tensor: str
    q: str
    end: str
    crd: str
    vals: str
    pos: str
    parents: str
    dim: str
    narrow: object = None   # a window walk's narrowing of long segments (WindowWalk)
    appends: tuple = ()     # (n, wheres, values): buffers only ⊕-added out later (order_free)
    inside: bool = False    # reads at its coordinate only inside its window's test (window_walks)
    rows: tuple | None = None


@dataclass(frozen=True)
class Scatter(Fact):
    """A walk of every stored entry of input `tensor`, one entry per state: a
    non-unique segment level at the top of the input's storage, read one entry
    at a time (Entries, run = q + 1), each level below it having one child per
    parent position (formats.level one_per_parent), so that its position is q.
    The stream's loop is `while (q < end)` with `q := q + 1` as its last
    statement; q runs over the segment pos[0] .. pos[1] of `pos`, all the input's
    positions; entry q's coordinate at level m is crds[m][q], below the C size
    dims[m], and its value is vals[q]. Set by the entries split from the Entries
    fact that carries it; a loop built from the stream's own fields says so
    (imp.While.walk): a kernel may check the coordinates where it reads them
    (lower.schedule.coo_checks) when the input was bound without its full check."""

    tensor: str
    q: str
    end: str
    crds: tuple
    vals: str
    dims: tuple
    pos: str


@dataclass(frozen=True)
class Short(Fact):
    """A merging intersection of two unique, always-ready segment levels a and
    b, innermost (its value is not a stream), whose next, on its merge way,
    advances exactly the operands at the smaller index. Its ready states are
    the coordinates common to both segments, in ascending order, at the pair
    of positions holding them: lowering may find them all at once
    (imp.ShortIntersect) when both segments are short."""

    a: Segment
    b: Segment

@dataclass(frozen=True)
class Interval(Fact):
    """The run is the coordinates lo..hi-1 in order (none when hi <= lo), each
    ready, and the value is the same at each and reads no state of the stream;
    `lo` and `hi` read no state of it either (a bounded range). A product with a
    stream that does not locate may then walk that stream alone, from its first
    index >= lo while its index < hi (combinators.clip)."""

    lo: imp.Expr
    hi: imp.Expr


@dataclass(frozen=True)
class Pieces(Fact):
    """The run is a sequence of counted pieces (a segment of dense blocks):
    `valid` is `counter < end` (two state variables), `ready` is true, `next`
    is `counter := counter + 1; if counter >= end: advance`, and `advance`
    either starts the next piece (counter < end again) or leaves counter >= end
    for good; `index` and `value` read the counter and state that only
    `advance` and `init` write. Lowering may run each piece as its own counted loop:
    `while counter < end { while counter < end { ready code; counter++ }; advance }`
    visits the same states in the same order. `sizes`: (the level's positions, its
    pieces), fixed for the call, where its parents are visited in order, else ()."""

    counter: str
    end: str
    advance: imp.Stmt
    sizes: tuple = ()


@dataclass(frozen=True)
class Flat(Fact):
    """The stream has Pieces, and within one piece its value reads no state that
    the piece's counter changes (it reads what `init` and `advance` set): the
    value is the same at every state of a piece (a run of equal values). A Σ of
    a leaf value over the rest of a piece, from counter to end, may then be
    taken at once as `repeat(value, end − counter)` (Semiring.repeat, the n-fold
    ⊕), followed by `counter := end; advance` (proofs_notes/runs.md). Pieces
    need not meet: coordinates between them may be absent (a sparse run list)."""


@dataclass(frozen=True)
class Covers(Fact):
    """The stream is Flat and its states are the coordinates 0..n-1 of its
    fibre, each once, in order (a dense run list: its pieces meet end to start
    and cover the fibre). A product or a sum of two such streams may then
    merge their pieces (streams.runs.zip_runs; proofs_notes/runs.md)."""


@dataclass(frozen=True)
class Span(Fact):
    """This state stands for the coordinates index .. end-1 of its fibre, which
    all hold its value: a piece of a Flat stream handed to an output that
    writes runs (lower.target Target.writes_spans) whole. Set by the run-sums
    pass only; no combinator keeps it (proofs_notes/runs.md)."""

    end: imp.Expr


@dataclass(frozen=True)
class Entries(Fact):
    """A non-unique segment level: its state is position q, `run` the end of q's
    run of equal coordinates, found (in init, next and skip) by run := q + 1 and
    then the loop `scan`, which steps run past q's equal coordinates. Without
    `scan`, run = q + 1 throughout and every stored entry is a state of its
    own, in storage order, and the value at a state is the value of that entry
    alone; coordinates may then repeat and need not increase
    (Repeats). Lowering may do so where what it writes is ⊕-accumulated
    (lower.schedule.entries; proofs_notes/entries.md)."""

    q: str
    run: str
    scan: imp.Stmt
    scatter: "Scatter | None" = None    # the walk this level's loop is once split


@dataclass(frozen=True)
class Repeats(Fact):
    """The stream's ready coordinates may repeat and come in any order (a level
    read one entry at a time, Entries): a write under it adds into its cell."""


# ------------------------------------------------------------------------ hints


@dataclass(frozen=True, eq=False)
class Block:
    """The data under coordinate t of a level: array[offset(t) : offset(t) + length(t)],
    where the level's blocks together hold `total` values. When offset(t) reads
    an array itself (a compressed row's start, pos[t]), `via` = (that array,
    t ↦ the index it reads), so a prefetch can fetch that first. `written`: the
    loop writes this block (an output's scattered destination) rather than
    reads it, so it is prefetched for writing, even when it is one value."""

    array: str
    offset: Callable
    length: Callable
    total: imp.Expr
    via: tuple | None = None
    written: bool = False


@dataclass(frozen=True)
class Extent(Hint):
    """The number of states left, read right after init (a segment's end − start):
    chooses merge or leapfrog, whether a segment prefetches; any value does."""

    n: imp.Expr


@dataclass(frozen=True)
class Blocks(Hint):
    """Where the data under coordinate t lies (one Block per array: a row of a
    dense operand, the crd and vals of a compressed row). Read when this stream
    is located into, to prefetch a row before it is read."""

    blocks: tuple


@dataclass(frozen=True)
class Ahead(Hint):
    """State q of this unique segment level has coordinate crd[q], and while
    q + d < n, crd[q + d] is the coordinate d states later. A prefetch reads
    crd[q + d] only below n, so n must not exceed crd's length."""

    crd: str
    n: imp.Expr


@dataclass(frozen=True)
class Prefetch(Hint):
    """Blocks of operands located at this level's coordinate: knowing Ahead and
    Counter, a loop may prefetch them a few states early."""

    blocks: tuple


@dataclass(frozen=True)
class Runs(Hint):
    """A unique segment level (or a band) whose successive segments follow one
    another in memory (its parent's position is a counter, not a gathered
    coordinate): `arrays` are those it reads at its own position (its crd, a
    leaf's values, a child level's pos), each holding at least n entries, at
    `at` (a band's shift plus its counter), or the Segment's q when `at` is
    None. Lowering may prefetch them ahead at each segment's start."""

    arrays: tuple
    n: imp.Expr
    at: imp.Expr | None = None


@dataclass(frozen=True, eq=False)
class WindowWalk(Fact):
    """A window walk (streams.window.window_walk): `segment`, its level's Segment;
    `narrow`, its init's narrowing of long segments (searches relying on the
    order: a kernel checking the level as it reads drops it); `safe`, an index
    inside the window (0) where a loop may read any state's value (the walk
    runs no state when n <= 0); `stop`, (the search to lo, c - lo, n) for a
    search and stop (lower.schedule.window_walks). Kept by Σ, leaf maps, locating products."""

    segment: Segment
    narrow: object
    safe: imp.Expr
    stop: tuple | None = None


# Facts about a level's run that hold whatever is done with its coordinate or
# its values' leaves: Σ (contract) and a leaf map keep these.
RUN_FACTS = (Locate, Prelude, Most, Full, Counter, Choice, Split, Segment, Walk, Scatter, Short,
             Extent, Blocks, Ahead, Prefetch, Runs, Pieces, Flat, Covers, Entries, Repeats,
             WindowWalk)
