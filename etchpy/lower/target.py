"""The output-target protocol and the frozen context its methods receive.

The driver (lower.driver) walks a stream nest and asks a target what to do
around each level and with each value; the target alone knows where values go.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Callable, Protocol

from .. import imp
from ..imp import ONE, ZERO, Param
from ..streams import dim_var


@dataclass(frozen=True)
class Context:
    """Where the loops are, as a target sees it: the coordinates bound so far, by
    index name, and, in fields of their own, what targets add on the way down (so
    a user may call an index `pos` or `row`).

    coords     (index name, Imp coordinate) for every free level entered so far
    pos        the output position of the last level a sparse target appended
               (ZERO above its first level)
    row        the row a threaded pass (targets.rows) fills, once entered
    iteration  the outermost loop's iteration number, counted from 0 (rows of
               a compressed first level filled on threads), or None
    fresh      the output cells under the coordinates bound so far are zero and
               written by nothing but the value emitted under them: True right
               after a target appended a position that brings its own zero block
               of its dense tail, and at the top of the one step that writes a
               dense output zero on entry (free levels keep it: a stream's ready
               coordinates strictly increase). A register block
               (schedule.blocks) may then store its values instead of adding
               them. Descending through a contracted level drops it.
    reserved   index names whose loops reserved room for their appends ahead
    made       the flag of the entry appended tentatively above (Target.tentative),
               which every product below sets, or None
    span       the end (exclusive) of the piece the innermost coordinate stands
               for, all its cells with the value written (streams.Span; only
               for a target that writes_spans), or None: one cell
    """

    coords: tuple = ()
    pos: imp.Expr = ZERO
    row: imp.Expr | None = None
    iteration: imp.Expr | None = None
    fresh: bool = False
    reserved: frozenset = frozenset()
    made: str | None = None
    span: imp.Expr | None = None

    def coord(self, var: str) -> imp.Expr:
        """The coordinate bound to index `var` (KeyError when not entered)."""
        for name, index in reversed(self.coords):
            if name == var:
                return index
        raise KeyError(var)

    def bind(self, var: str, index: imp.Expr, **facts) -> "Context":
        """This context with index `var` at `index`, and some facts changed."""
        return replace(self, coords=self.coords + ((var, index),), **facts)

    def with_(self, **facts) -> "Context":
        return replace(self, **facts)


class Target(Protocol):
    """Where the values of one step go. The driver calls, for a step:

    setup()                   once, before every step (allocations, zero fills)
    reserve(var, most, ctx)   before the loop over free index var: room for at
                              most `most` ready states -> (statement, context)
    enter(var, index, ctx)    at each ready state of var -> (statement, context
                              for the levels below)
    write(ctx, v, once)       a value v at the cell ctx names (`once`: a fresh
                              cell written exactly once, see Context.fresh)
    after(var, ctx)           after the levels below one ready state of var
    leave(var, ctx)           after the whole loop over var
    scatter_blocks(var)       blocks written at var's coordinate, known ahead
                              (streams.Block, written=True): prefetch hints
    finish()                  once, after every step
    tentative(var)            does enter append var's coordinate as an entry
                              that holds values (so that it must be taken back
                              when no product is made under it)?
    settle(var, ctx, made)    after the nest under a tentative entry at var
                              (Context.made set): keeps it where made, else
                              takes it back; nothing it wrote may lie outside
                              what it keeps (rows on threads: the next row's)
    sparse_writes             does a write make an entry (a sparse output)? It
                              is then made only for a product (lower.produced)

    What a target can do is declared, never read off its class: the driver and
    the schedule passes (lower.schedule) ask these, and a new target answers
    them (FlatTarget gives the answers of a target that can do none of it).

    dense_axes                the axes of the row-major array the target adds
                              each value into, cell by cell, or None: such a
                              target may be written by a BLAS gemm, by register
                              blocks, by several steps in one nest, by threads
                              over disjoint rows; it also has
                              own(every_cell_once) (DenseTarget.own)
    keeps_flags               each write also sets its cell's flag (a temporary
                              of a sparse output, lower.produced): register
                              blocks, gemm and fused nests, which write without
                              flags, are not for it
    fresh                     zero on entry and written by this step alone (the
                              outermost Context.fresh)
    workspace                 its last level is written through a workspace, in
                              any order, and flushed sorted
    tail                      the located levels under its last appending one,
                              written as a block per appended position (()
                              where there are none or no appends)
    refusals()                (index, largest size) pairs it cannot take: the
                              program refuses such a call (Program.refuse_above)
    passes()                  None, or how its loops are emitted more than once:
                              Either (one of two ways, chosen at run time) or
                              CountThenFill (a count pass, then a fill pass)
    rows_on_threads()         can threads fill its rows, the outermost level's
                              ready states, each on its own (lower.schedule.rows)?
    writes_spans              can a write stand for a piece of its last level's
                              cells, all one value (Context.span: a run output)?
    adds_into                 does each write ⊕ into its own cell alone, every
                              other cell as it was, unwritten cells already
                              zero (no store, no flag, no entry made)?
                              (lower.schedule.fixed_coordinates)
    in_registers              are its cells a register block's (schedule.blocks),
                              whose chain of ⊕ bounds the walk writing them?
                              (lower.schedule.prefetch: its gathered rows)

    A target of a kernel's output also has `arrays` (role -> Imp array: what
    the runtime reads back), counts() (role -> Imp variable holding a length)
    and params() (its C parameters; FlatTarget's: grown arrays), and its
    module registers it by one line, `@output(mode, rank, chooses)` on the
    function that makes it (see `output`): lower.outputs imports every module
    of lower/targets/ and gives a step's output to the first row, by rank,
    whose `chooses(want)` holds. Nothing else names a mode.
    """

    sparse_writes: bool
    dense_axes: tuple | None
    keeps_flags: bool
    fresh: bool
    workspace: bool
    tail: tuple
    writes_spans: bool
    adds_into: bool
    in_registers: bool

    def setup(self) -> imp.Stmt: ...
    def reserve(self, var: str, most, ctx: Context) -> tuple[imp.Stmt, Context]: ...
    def enter(self, var: str, index, ctx: Context) -> tuple[imp.Stmt, Context]: ...
    def write(self, ctx: Context, v: imp.Expr, once: bool = False) -> imp.Stmt: ...
    def after(self, var: str, ctx: Context) -> imp.Stmt: ...
    def leave(self, var: str, ctx: Context) -> imp.Stmt: ...
    def scatter_blocks(self, var: str) -> tuple: ...
    def finish(self) -> imp.Stmt: ...
    def tentative(self, var: str) -> bool: ...
    def settle(self, var: str, ctx: Context, made: imp.Expr) -> imp.Stmt: ...
    def refusals(self) -> tuple: ...
    def passes(self) -> "Either | CountThenFill | None": ...
    def rows_on_threads(self) -> bool: ...


@dataclass(frozen=True)
class Either:
    """A target written one of two ways, chosen once per call: `when_true` where
    the program's boolean `cond` holds, else `when_false` (each a Target)."""

    cond: str
    when_true: object
    when_false: object


@dataclass(frozen=True)
class CountThenFill:
    """A target written by running the loops twice: into `count` (which counts),
    then `between` (statements), then into `fill` (each a Target)."""

    count: object
    between: imp.Stmt
    fill: object


@dataclass(frozen=True)
class Want:
    """What an output target is chosen by and made from (lower.outputs): its format
    (None: dense), axes (mode -> index), the one step writing it (or None), and
    the constructors' arguments (`bound`: lower.driver's; `hash_workspace`)."""

    fmt: object
    axes: tuple
    step: object
    tuning: object
    sr: object
    names: object
    bound: object
    hash_workspace: bool

    @property
    def storage(self) -> list:
        """The output's index names in storage order."""
        return [self.axes[m] for m in self.fmt.mode_order]


@dataclass(frozen=True)
class Row:
    """A row of the output table (`output`); `records`: the runtime sorts and
    combines its (coordinates, value) records, else reads the format's arrays."""

    mode: str
    rank: int
    chooses: Callable
    make: Callable
    records: bool = False


OUTPUTS: dict = {}      # rank -> Row


def output(mode: str, rank: int, chooses: Callable, records: bool = False):
    """Register the decorated `make(want) -> target` as the target of output
    `mode`, tried at `rank` (a mode may have several rows). Ranks are unique."""
    def register(make):
        row = Row(mode, rank, chooses, make, records)
        old = OUTPUTS.setdefault(rank, row)
        if (old.mode, old.make.__qualname__) != (mode, make.__qualname__):
            raise ValueError(f"output rank {rank} ({mode!r}) is registered twice")
        OUTPUTS[rank] = row
        return make
    return register


class FlatTarget:
    """A target whose levels need nothing on entry, exit or ahead of their
    loops: only `write` (and setup/finish) does work. enter binds the index."""

    sparse_writes = False
    dense_axes = None
    keeps_flags = False
    fresh = False
    workspace = False
    tail: tuple = ()
    writes_spans = False
    adds_into = False
    in_registers = False

    def refusals(self) -> tuple:
        return ()

    def passes(self):
        return None

    def rows_on_threads(self) -> bool:
        return False

    def tentative(self, var) -> bool:
        return False

    def settle(self, var, ctx, made) -> imp.Stmt:
        return imp.SKIP

    def setup(self) -> imp.Stmt:
        return imp.SKIP

    def reserve(self, var, most, ctx):
        return imp.SKIP, ctx

    def enter(self, var, index, ctx):
        return imp.SKIP, ctx.bind(var, index)

    def after(self, var, ctx):
        return imp.SKIP

    def leave(self, var, ctx):
        return imp.SKIP

    def scatter_blocks(self, var) -> tuple:
        return ()

    def finish(self) -> imp.Stmt:
        return imp.SKIP

    def counts(self) -> dict:
        return {}

    def params(self) -> list:
        """A sparse output's C parameters: its arrays, grown, and their counts."""
        out = [Param(arr, "out_grown", "value" if role == "vals" else "index",
                     f"output {role}: set to a malloc'ed array; the caller frees it")
               for role, arr in self.arrays.items()]
        return out + [Param(var, "out_count", "index",
                            f"output {role}: number of entries written")
                      for role, var in self.counts().items()]


def fresh_names(names: imp.Names, bases: str) -> SimpleNamespace:
    """One fresh name per space-separated base, as attributes named by the base
    (`fresh_names(names, "ws_n ws_k").ws_n`)."""
    return SimpleNamespace(**{b: names.fresh(b) for b in bases.split()})


def product(factors) -> imp.Expr:
    out = ONE
    for f in factors:
        out = imp.mul(out, f)
    return out


def cells(axes) -> imp.Expr:
    """The number of cells of a dense array over `axes`: the product of their
    dimensions (1 for none)."""
    return product([dim_var(v) for v in axes])


EMPTY = imp.Const(-1)      # an unused cell (last-seen columns)
