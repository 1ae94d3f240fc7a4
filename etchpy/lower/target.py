"""The output-target protocol and the frozen context its methods receive.

The driver (lower.driver) walks a stream nest and asks a target what to do
around each level and with each value; the target alone knows where values go.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Protocol

from .. import imp
from ..imp import ONE, ZERO
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
    """

    coords: tuple = ()
    pos: imp.Expr = ZERO
    row: imp.Expr | None = None
    iteration: imp.Expr | None = None
    fresh: bool = False
    reserved: frozenset = frozenset()
    made: str | None = None

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
    """

    sparse_writes: bool

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


class FlatTarget:
    """A target whose levels need nothing on entry, exit or ahead of their
    loops: only `write` (and setup/finish) does work. enter binds the index."""

    sparse_writes = False

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


EMPTY = imp.Const(-1)      # an unused slot or cell (hash keys, last-seen columns)
