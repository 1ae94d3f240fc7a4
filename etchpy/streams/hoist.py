"""A located factor that is zero unless a test holds guards the loops below it.

A product that walks one operand and locates the other (combinators.
iterate_locate) multiplies the located value in at the leaves. When that value
is `select(c, x, zero)` (a marker probe: `mark[t] == stamp ? wv[t] : 0`, a
filter stored sparse) and `c` reads nothing of the levels below, every value
under a coordinate where `c` fails is the semiring's zero, so the whole subtree
there contributes nothing. `guard_ready` makes `c` part of the walked level's
`ready`: the loops below run only under coordinates where it holds (a failing
segment test skips its order's lineitems instead of multiplying them by zero).

    zero_unless(value, zero)     the test c (an Imp bool) or None
    guard_ready(s, test, zero)   s with ready := ready ∧ test(index)
    guard_product(...)           either, or, when c reads nothing of the level,
                                 the level entered only where c holds
    guard_state(s, test)         s with ready := ready ∧ test, a test of each state
                                 (the located test joined with the walked operand's
                                 own row test, without branches between them)

Both keep (index, ready) strictly increasing: where s has states that are not
ready, several may share an index (a strided window's off-stride coordinate
before its stride point, a leapfrog's operands apart then met), and a guard
that fails at the later one would repeat the earlier's (index, false); their
`next` then steps on past the states at the index it left that the guard made
not ready (`_step`).

proofs_notes/hoist.md states the law.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .. import imp
from ..imp import TRUE, Assign, Bin, Const, If, Ring, Select, Var, While, and_, eq, not_, seq
from ..imp.analysis import arrays_written, names_used
from .facts import (Ahead, Choice, Extent, Fact, Most, Prefetch, Prelude, Runs, Segment,
                    Split, Walk)
from .stream import Stream, Value, is_stream


@dataclass(frozen=True)
class Distinct(Fact):
    """No two states of the run share an index (its indices strictly increase),
    though some states may not be ready: a guard's stream over one whose every
    state was ready. Kept by iterate_locate (the run is the walked side's) and
    by the guards here; a guard over such a stream keeps its step."""


def zero_unless(value: Value, zero, eager: bool = False) -> imp.Expr | None:
    """A test c such that every leaf of `value` is the semiring's `zero` where c
    is false, and c reads no state of value's own levels (nor an array their
    statements write), so it can be read once above them; None when there is
    none. Found in `select(c, x, zero)` leaves and in either factor of a
    product (tests of both factors are joined). `eager`: the tests of a
    product's two factors are joined by `&` (both evaluated, no branch between
    them: the leaf evaluates both factors' tests too); a select's test guards
    its operand's with `&&` either way."""
    inner: set[str] = set()
    leaf = value
    while is_stream(leaf):
        inner |= {n for n, _ in leaf.state}
        inner |= arrays_written(leaf.init) | arrays_written(leaf.next)
        leaf = leaf.value
    return _test(leaf, Const(zero, "value"), inner, eager)


def _test(x, zero, inner: set[str], eager: bool) -> imp.Expr | None:
    match x:
        case Select(cond, a, b) if b == zero and not (names_used(cond) & inner):
            return _both(cond, _test(a, zero, inner, eager))
        case Ring("mul", a, b):
            ta, tb = _test(a, zero, inner, eager), _test(b, zero, inner, eager)
            return tb if ta is None else _both(ta, tb, eager)
    return None


def _both(a: imp.Expr, b: imp.Expr | None, eager: bool = False) -> imp.Expr:
    """a ∧ b, a alone when b is none or the same test (a factor's test met again
    in its product, or below the level it guards); `eager`: `a & b`."""
    if b is None or b == a:
        return a
    joined = and_(a, b)
    return Bin("&", a, b) if eager and joined not in (a, b, imp.FALSE) else joined


def guard_ready(names: imp.Names, s: Stream,
                test: Callable[[imp.Expr], imp.Expr | None]) -> Stream:
    """s (a product that walks one operand and locates another, its value a
    nested stream) ready only where `test(index)` holds as well. Its run is
    s's but for states at one index that the guard made not ready (`_step`):
    the ready states are the same, some no longer ready, so a skip to (t, r)
    that lands at index t where the test fails goes on past t (no state at t
    is ready). Facts about the
    run that do not speak of ready states stay; Counter and Full (every state
    ready) and Locate (this stream is now walked, not located) are dropped."""
    here = test(s.index)
    if here is None:
        return s

    def skip(t, r):
        # landed at index t where the test fails: no state at t is ready, go past it
        # (the test is read only at a valid state's index, a coordinate of the level)
        past = and_(s.valid, and_(eq(s.index, t), not_(here)))
        return seq(s.skip(t, r), If(past, s.skip(t, TRUE)))

    ready = and_(s.ready, here)
    state, nxt, facts = _step(names, s, ready)
    return s.derive(facts, state=state, ready=ready, skip=skip, next=nxt,
                    search=f"{s.search}, guarded by the located test")


def guard_state(names: imp.Names, s: Stream, test: imp.Expr) -> Stream:
    """s ready only at the states where `test` holds too (a test of the state:
    it may read s's own position, as a row test of the walked table's entry
    does). A skip to (t, r) that lands at index t on a state no longer ready
    steps on while it is at t and not ready (several states may share an
    index); its step as `guard_ready`'s; facts as there."""
    ready = and_(s.ready, test)

    def skip(t, r):
        stay = and_(s.valid, and_(eq(s.index, t), not_(ready)))
        return seq(s.skip(t, r), While(stay, s.next))

    state, nxt, facts = _step(names, s, ready)
    return s.derive(facts, state=state, ready=ready, skip=skip, next=nxt,
                    search=f"{s.search}, guarded by the located and row tests")


def _step(names: imp.Names, s: Stream, ready: imp.Expr) -> tuple:
    """(state, next, facts) of s guarded to `ready` (⊆ s.ready). Every state of s
    ready, or s Distinct: s's own (its indices strictly increase, so lowering
    ready repeats no (index, ready)), and the result is Distinct. Else next :=
    (t := index; s.next; while valid ∧ index = t ∧ ¬ready: s.next): on past the
    states at the index it left that are not ready, so that a state (t, false)
    is never followed by another; Choice, Segment and Walk (which describe s's
    next) are dropped."""
    kept = (Prelude, Most, Split, Extent, Ahead, Prefetch, Runs)
    if s.ready == TRUE or Distinct in s.facts:
        return s.state, s.next, s.facts.keep(*kept, Choice, Segment, Walk).add(Distinct())
    t = names.fresh(f"{s.var}_left")
    stay = and_(s.valid, and_(eq(s.index, Var(t)), not_(ready)))
    nxt = seq(Assign(t, s.index), s.next, While(stay, s.next))
    return s.state + ((t, "index"),), nxt, s.facts.keep(*kept)


def guard_product(names: imp.Names, s: Stream, located_at: Callable, zero, on: bool,
                  whole: Callable | None = None, rows: bool = False,
                  leaves: bool = False) -> Stream:
    """`guard_ready` for the product s whose located operand has value
    located_at(t), when `on` and s's value is a nested stream (at a leaf the
    select is as cheap as a branch). When the test reads nothing of s's own
    level (a value broadcast along it: a row test of the walked table's entry,
    read at a level below it), it holds or fails for the whole level, at a
    leaf level too: `whole(test, s)` (combinators.guard) tests it once on
    entry and keeps s's way of moving (a level that locates still locates),
    rather than testing it at each index. `rows`: when the located test guards
    s, so does the test of s's whole value at each state (the located test and
    the walked operand's, such as a row test of its entry, read at this level
    and joined by `&`: one branch a state, not one per test; `guard_state`).
    `leaves`: at a leaf level too (s's value not a stream), when the leaf's value
    tests more than the located probe (a row test of the walked entry, a
    filter, usually selective), the tests joined the same way make s's ready,
    so that an entry where they fail adds nothing to the output (no
    read-modify-write of zero); a probe alone stays a select (SpGEMM's marker,
    hit about as often as missed, is not made a branch)."""
    if not on:
        return s
    test = lambda t: zero_unless(located_at(t), zero)
    here = test(s.index)
    if here is not None and whole is not None and _invariant(here, s):
        return whole(here, s)
    if not is_stream(s.value):
        if leaves and here is not None:     # a leaf with a row test: its update made
            every = zero_unless(s.value, zero, eager=True)     # only where both hold
            return s if every is None or every == here else guard_state(names, s, every)
        return s
    if rows and here is not None:
        every = zero_unless(s.value, zero, eager=True)
        if every is not None and every != here:
            return guard_state(names, s, every)
    return guard_ready(names, s, lambda _: here)     # (the test at s.index, read once)


def once(at: Callable) -> Callable:
    """`at` (a located operand's value at an index: a stream built anew on each
    call, with its own located operands' values below) evaluated once per index:
    its product reads it for its value (iterate_locate) and for its guard
    (guard_product). Read afresh by each, a located operand whose levels
    locate in turn was built a number of times that multiplies at each level
    (an OR of two indices' tests over many loop levels: Q7's nation pair);
    read once, once per level. The same program up to fresh names (the guard
    reads only the value's test): proofs_notes/kept_index.md."""
    seen: list = []

    def read(t):
        for k, v in seen:
            if k is t or k == t:
                return v
        seen.append((t, v := at(t)))
        return v
    return read


def _invariant(test: imp.Expr, s: Stream) -> bool:
    """Whether `test` reads no state of s's level, nor an array its statements
    write: one value over s's whole run."""
    own = {n for n, _ in s.state} | arrays_written(s.init) | arrays_written(s.next)
    return not (names_used(test) & own)
