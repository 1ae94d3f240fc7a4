"""Stream combinators: each builds a new record from its operands' fields.

    range_stream(v, n, f)  every coordinate 0..n-1 of v, value f(c); skip locates
    replicate(v, n, x)     ↑: x repeated at every coordinate of v's range
    bounded_range(v, lo, hi, x)  x at every coordinate lo..hi-1; skip jumps, no locate
    mul(a, b)              intersection; by iterate-and-locate, by leapfrog, by
                           merge-or-leapfrog chosen per segment pair, or by a
                           plain merge (per level, as the planner chose; two_finger.py)
    add(a, b)              union; by iterate-and-locate, by skipping both operands past
                           the front, or by stepping the fronts (its index kept: kept_index)
    guard(c, x)            x where c holds, the empty stream elsewhere;  contract(s, v)  Σ over v
    map_leaf(f, s)         f applied to every innermost value

Each one names the facts it keeps (facts.py); every other fact of its operands
is dropped. The strategy switches (merge_or_gallop, match_step, short_intersect,
step_fronts) and the gallop ratio come from the Tuning passed in; with every
switch off, products leapfrog and unions skip, which is correct on its own
(proofs_notes/: one note per combinator, facts.md for the facts).
"""
from __future__ import annotations

from typing import Callable

from .. import imp
from ..imp import (ONE, TRUE, ZERO, Assign, Const, If, Ring, Var, and_, eq, incr, lt,
                  max_, not_, or_, select, seq)
from ..tuning import Tuning
from .facts import (RUN_FACTS, Ahead, Blocks, Choice, Counter, Entries, Extent, Facts, Flat, Full,
                    Interval, Locate, Most, Pieces, Prefetch, Prelude, Runs, Segment, Short, Split,
                    Walk, WindowWalk)
from .hoist import Distinct, guard_product, once
from .kept_index import kept_index
from .merged import met, merged as merged_walks
from .runs import LISTS, has_runs, is_runs, join_runs, runs_product, zip_runs
from .shift_runs import mul_idempotent
from .stream import Stream, Value, blocks_of, is_stream, most_bound
from .two_finger import advance_if, intersect_by_merge, intersect_by_merge_or_leapfrog
from .window import Inside, intersect_inside


def prelude(s: Stream) -> imp.Stmt:
    """The statements s needs run before it is located into (SKIP when none)."""
    p = s.facts.get(Prelude)
    return imp.SKIP if p is None else p.stmt


def range_stream(names: imp.Names, var: str, size: imp.Expr,
                 value_of: Callable[[imp.Expr], Value], search="locate") -> Stream:
    """Every coordinate 0..size-1 of `var`; skip locates in O(1)."""
    c = names.fresh(f"{var}_c")
    cv = Var(c)

    def skip(t, r):
        return Assign(c, select(r, max_(cv, imp.add(t, ONE)), max_(cv, t)))

    return Stream(var=var, state=((c, "index"),), init=Assign(c, ZERO),
                  valid=lt(cv, size), index=cv, ready=TRUE, value=value_of(cv),
                  next=incr(c), skip=skip, search=search,
                  facts=Facts.of(Locate(value_of), Counter(c, ZERO, size), Full(),
                                 Most(size)))


def replicate(names: imp.Names, var: str, size: imp.Expr, x: Value) -> Stream:
    """↑x: the same value x at every coordinate of var (skip jumps directly)."""
    return range_stream(names, var, size, lambda _: x, search="jump")

def bounded_range(names: imp.Names, var: str, lo: imp.Expr, hi: imp.Expr, x: Value) -> Stream:
    """x at every coordinate lo..hi-1 of `var` (none when hi <= lo). Its skip
    jumps (c := max(c, t)) but it does not locate, so a product with it walks
    the other operand from lo (one skip: a gallop) and stops at hi, rather than
    testing each of the other's coordinates (proofs_notes/predicates.md)."""
    c, e = names.fresh(f"{var}_lo"), names.fresh(f"{var}_hi")
    cv, ev = Var(c), Var(e)

    def skip(t, r):
        return Assign(c, select(r, max_(cv, imp.add(t, ONE)), max_(cv, t)))

    return Stream(var=var, state=((c, "index"), (e, "index")),
                  init=seq(Assign(c, lo), Assign(e, hi)), valid=lt(cv, ev), index=cv,
                  ready=TRUE, value=x, next=incr(c), skip=skip, search="jump (a range)",
                  facts=Facts.of(Most(max_(imp.Bin("-", ev, cv), ZERO)), Interval(lo, hi)))


def clip(s: Stream, lo: imp.Expr, hi: imp.Expr, value: Value) -> Stream:
    """The product of s with a bounded range lo..hi-1 (Interval) whose value
    combined with s's is `value`: s skipped to lo once on entry, ended at the
    first index >= hi. Its states are s's states in [lo, hi), so the product
    walks s alone over the range, one plain step each (proofs_notes/predicates.md)."""
    enter = If(s.valid, s.skip(lo, imp.FALSE))
    return s.derive(s.facts.keep(Prelude, Most), init=seq(s.init, enter),
                    valid=and_(s.valid, lt(s.index, hi)), value=value,
                    search=f"{s.search}, from lo while < hi")

# ------------------------------------------------------------------------- mul


def mul(names: imp.Names, sr, tuning: Tuning, a: Value, b: Value,
        choices: dict | None = None, rings=None) -> Value:
    """Intersection: ready where both are ready at the same index. Two windows
    intersect their ranges (streams.window); a side that can locate is located
    (the one not a full range walked: _walk_locate); run lists meet (runs_product);
    else they leapfrog, or, both always ready, merge or leapfrog. `choices` ({index:
    "merge" | "gallop" | "per pair"}: plan.algorithms) fixes a way neither locates;
    `rings`: run_meet's."""
    if not is_stream(a) and not is_stream(b):
        one = Const(sr.one, "value")      # an iso operand's value (streams.Binding.value)
        return b if a == one else a if b == one else Ring("mul", a, b)
    assert is_stream(a) and is_stream(b) and a.var == b.var, "mul needs aligned levels"

    def combine(x, y):
        return mul(names, sr, tuning, x, y, choices, rings)
    if Inside in a.facts and Inside in b.facts:     # two windows (streams.window)
        return intersect_inside(names, a, b, combine)
    if Locate in b.facts and (Locate not in a.facts or Full in b.facts
                              or Full not in a.facts):
        return _walk_locate(names, sr, tuning, a, b, combine)
    if Locate in a.facts:
        return _walk_locate(names, sr, tuning, b, a, lambda x, y: combine(y, x))
    if Interval in b.facts and tuning.clip_ranges:
        return clip(a, *_bounds(b), combine(a.value, b.value))
    if Interval in a.facts and tuning.clip_ranges:
        return clip(b, *_bounds(a), combine(a.value, b.value))
    if tuning.runs and (runs := run_meet(names, sr, tuning, a, b, combine, rings)):
        return runs                                       # one piece per overlap
    return _intersect(names, tuning, a, b, intersect_by_leapfrog(names, a, b, combine),
                      (choices or {}).get(a.var))


def run_meet(names, sr, tuning: Tuning, a: Stream, b: Stream, combine, rings):
    """runs_product of a and b, or None: shifts met once (⊗ idempotent, Tuning.shift_runs),
    rows kept across the output's rows in `rings` (shift_rows.Rings, Tuning.shift_rows)."""
    return runs_product(names, a, b, combine, tuning.shift_runs and mul_idempotent(sr),
                        rings if tuning.shift_rows else None)


def _walk_locate(names, sr, tuning: Tuning, it: Stream, loc: Stream, combine) -> Stream:
    """Walk `it`, locate `loc` (its value read once: hoist.once); when that value is zero unless
    a test holds (a marker probe) and levels lie below, the test guards them (guard_product)."""
    at = once(loc.facts.get(Locate).at)
    return guard_product(names, iterate_locate(names, it, loc, combine, at), at, sr.zero,
                         tuning.hoist_probes,
                         lambda test, s: guard(names, sr, test, s), tuning.hoist_row_tests,
                         tuning.hoist_row_tests and tuning.guard_leaves)


def _bounds(s: Stream) -> tuple:
    i = s.facts.get(Interval)
    return i.lo, i.hi


def _intersect(names, tuning: Tuning, a: Stream, b: Stream, leap: Stream, how) -> Stream:
    """Neither side locates: the way the planner chose (`how`), else the merge
    or leapfrog per segment pair when the Tuning and the operands allow it,
    else the leapfrog."""
    if how == "gallop":
        return leap.derive(leap.facts, search=leap.search + " (gallop: planned)")
    if how == "merge" and _always_ready_segments(a, b):
        return intersect_by_merge(names, a, b, leap, tuning)
    if not (tuning.merge_or_gallop and _always_ready_segments(a, b)):
        return leap
    return intersect_by_merge_or_leapfrog(names, tuning, a, b, leap)


def _always_ready_segments(a: Stream, b: Stream) -> bool:
    return (Extent in a.facts and Extent in b.facts and a.ready == TRUE
            and b.ready == TRUE)


def intersect_by_leapfrog(names, a: Stream, b: Stream, combine) -> Stream:
    """Both operands skip to the larger index until they meet (galloping)."""
    ready = and_(and_(a.ready, b.ready), eq(a.index, b.index))
    merged = _merged(names, a, b, and_(a.valid, b.valid), max_(a.index, b.index), ready,
                     combine(a.value, b.value), f"intersect [{a.search}] with [{b.search}]")
    # each ready state is a distinct one of both operands': either operand's bound holds
    most = imp.min_bound(most_bound(a), most_bound(b))
    return merged.derive(merged.facts.keep(Prelude).add(None if most is None else Most(most),
                                                        met(a, b)))   # streams.merged


def _merged(names, a: Stream, b: Stream, valid, index, ready, value, search) -> Stream:
    """The record shared by mul and add: both operands advance past (index, ready)."""
    t, r = names.fresh(f"{a.var}_t"), names.fresh(f"{a.var}_r")

    def skip(tt, rr):
        return seq(a.skip(tt, rr), b.skip(tt, rr))

    nxt = seq(Assign(t, index), Assign(r, ready), skip(Var(t), Var(r)))
    return Stream(var=a.var, state=a.state + b.state + ((t, "index"), (r, "bool")),
                  init=seq(a.init, b.init), valid=valid, index=index, ready=ready,
                  value=value, next=nxt, skip=skip, search=search,
                  facts=Facts.of(Prelude.of(seq(prelude(a), prelude(b)))))


def iterate_locate(names, it: Stream, loc: Stream, combine, at=None) -> Stream:
    """Walk `it` and read `loc` at each of its coordinates (loc has Locate; `at`:
    its located value, when not loc's own). loc's prelude still runs (it may fill
    a marker); its state is kept for that. The run is it's, so its facts stay."""
    at, it_at = at or loc.facts.get(Locate).at, it.facts.get(Locate)
    fetch = blocks_of(loc, Blocks) if Ahead in it.facts else ()
    prefetch = blocks_of(it, Prefetch) + fetch
    facts = it.facts.keep(Counter, Full, Extent, Most, Choice, Split, Ahead, Segment,
                          Walk, Short, Runs, Pieces, Entries, WindowWalk, Distinct).add(
        Prelude.of(seq(prelude(it), prelude(loc))),
        Prefetch(prefetch) if prefetch else None,
        None if it_at is None else Locate(lambda t: combine(it_at.at(t), at(t))))
    return it.derive(facts, state=it.state + loc.state, init=seq(it.init, prelude(loc)),
                     value=combine(it.value, at(it.index)),
                     search=f"{it.search}; locate into [{loc.search}]")

# ------------------------------------------------------------------------- add


def order_le(a: Stream, b: Stream) -> imp.Expr:
    """(a.index, a.ready) ≤ (b.index, b.ready), with an exhausted stream at +∞."""
    same = and_(eq(a.index, b.index), or_(not_(a.ready), b.ready))
    return and_(a.valid, or_(not_(b.valid), or_(lt(a.index, b.index), same)))


def add(names: imp.Names, sr, tuning: Tuning, a: Value, b: Value) -> Value:
    """Union: the front of the two streams; operands behind the front add zero.
    Two ranges are one range (iterate one, locate the other); two always-ready
    operands step their fronts; otherwise both skip past the front."""
    if not is_stream(a) and not is_stream(b):
        zero = Const(sr.zero, "value")
        return a if b == zero else b if a == zero else Ring("add", a, b)
    assert is_stream(a) and is_stream(b) and a.var == b.var, "add needs aligned levels"
    if Full in a.facts and Full in b.facts:
        return iterate_locate(names, a, b, lambda x, y: add(names, sr, tuning, x, y))
    if tuning.runs and is_runs(a) and is_runs(b):        # both hold every coordinate
        return zip_runs(names, a, b, lambda x, y: add(names, sr, tuning, x, y))
    if tuning.runs and has_runs(a) and has_runs(b):      # runs with gaps: per stretch
        return join_runs(names, a, b, lambda ia, ib: add(
            names, sr, tuning, guard(names, sr, ia, a.value), guard(names, sr, ib, b.value)),
            imp.sum_bound(most_bound(a), most_bound(b)))
    union = union_by_skipping(names, sr, tuning, a, b)
    if tuning.step_fronts and a.ready == TRUE and b.ready == TRUE:
        union = union_by_stepping_fronts(names, a, b, union)
    return kept_index(names, union) if tuning.keep_union_index else union


def union_by_skipping(names, sr, tuning: Tuning, a: Stream, b: Stream) -> Stream:
    """The front of the two; next skips both operands past it."""
    a_first, b_first = order_le(a, b), order_le(b, a)
    index = select(a_first, a.index, b.index)
    ready = and_(or_(not_(a_first), a.ready), or_(not_(b_first), b.ready))
    value = add(names, sr, tuning, guard(names, sr, a_first, a.value),
                guard(names, sr, b_first, b.value))
    union = _merged(names, a, b, or_(a.valid, b.valid), index, ready, value,
                    f"union [{a.search}] with [{b.search}]")
    # each ready state of the union has a ready operand at its front, which then
    # moves past it: no more ready states than both operands together
    most = imp.sum_bound(most_bound(a), most_bound(b))
    return union.derive(union.facts.keep(Prelude).add(
        Split(a.valid, b.valid), None if most is None else Most(most),
        _located_sum(names, sr, tuning, a, b)))


def _located_sum(names, sr, tuning: Tuning, a: Stream, b: Stream) -> Locate | None:
    """A union of two operands that locate locates too: its value at t is the sum
    of theirs (a union of guarded ranges, under a sum of two products)."""
    la, lb = a.facts.get(Locate), b.facts.get(Locate)
    if la is None or lb is None:
        return None
    return Locate(lambda t: add(names, sr, tuning, la.at(t), lb.at(t)))


def union_by_stepping_fronts(names, a: Stream, b: Stream, union: Stream) -> Stream:
    """A union of two always-ready operands advances exactly the operands at its
    front by one next each, instead of skipping both past its index.

    With ready ≡ true, next moves a stream strictly past its index, so an operand
    at the union's index t is past t after one next, and one whose index is
    greater than t is already past it: skip(t, true) is exactly 'next if at the
    front'. A counter step becomes q += flag, with no branch. Both run to their
    ends: its Merged fact lists the operand segments so walked (streams.merged)."""
    fa, fb = names.fresh(f"{a.var}_fa"), names.fresh(f"{a.var}_fb")
    a_first, b_first = order_le(a, b), order_le(b, a)
    return union.derive(union.facts.keep(Prelude, Split, Most, Locate).add(merged_walks(a, b)),
        state=union.state + ((fa, "bool"), (fb, "bool")),
        next=seq(Assign(fa, a_first), Assign(fb, b_first), advance_if(fa, a),
                 advance_if(fb, b)))

# ---------------------------------------------------------- guard, Σ, leaf maps


def guard(names: imp.Names, sr, cond: imp.Expr, x: Value) -> Value:
    """x where cond holds, the empty stream (or zero) elsewhere. Its run is x's
    or empty, so facts about ready states and the way x moves stay true; it no
    longer holds every coordinate (Locate, Full), and init is no longer a
    plain counter start (Counter) or in memory order (Runs). An x that locates
    with no Prelude still locates: at(t) is x's guarded by cond itself (which
    reads only the parent)."""
    if not is_stream(x):
        return select(cond, x, Const(sr.zero, "value"))
    g = names.fresh(f"{x.var}_g")
    gv = Var(g)
    at = x.facts.get(Locate) if prelude(x) == imp.SKIP else None
    pieces = x.facts.get(Pieces)
    if pieces is not None and x.valid != lt(Var(pieces.counter), Var(pieces.end)):
        pieces = None
    facts = x.facts.keep(Most, Extent, Choice, Split, Segment, Short).add(
        Prelude.of(If(gv, prelude(x)) if prelude(x) != imp.SKIP else imp.SKIP),
        None if at is None else Locate(lambda t: guard(names, sr, cond, at.at(t))),
        pieces, Flat() if pieces is not None and Flat in x.facts else None)
    if pieces is not None:      # empty: one empty piece, so valid stays counter < end
        empty = seq(Assign(pieces.counter, ZERO), Assign(pieces.end, ZERO))
        return x.derive(facts, state=((g, "bool"),) + x.state,
                        init=seq(Assign(g, cond), If(gv, x.init, empty)),
                        skip=lambda t, r: If(gv, x.skip(t, r)))
    return x.derive(facts, state=((g, "bool"),) + x.state,
                    init=seq(Assign(g, cond), If(gv, x.init)), valid=and_(gv, x.valid),
                    skip=lambda t, r: If(gv, x.skip(t, r)))


def contract(s: Value, var: str) -> Value:
    """Σ over var: its level becomes unit-indexed; evaluation then sums its values.
    The run of every level is unchanged, so each keeps its facts about its run."""
    assert is_stream(s), f"no level {var} to contract"
    if s.var == var:
        return s.derive(s.facts.keep(*RUN_FACTS, *LISTS), contracted=True)
    return s.derive(s.facts.keep(*RUN_FACTS, *LISTS), value=contract(s.value, var))


def map_leaf(f: Callable[[imp.Expr], imp.Expr], s: Value) -> Value:
    """f applied to every innermost value; the runs are unchanged."""
    if not is_stream(s):
        return f(s)
    at = s.facts.get(Locate)
    facts = s.facts.keep(*[k for k in RUN_FACTS if k is not Locate]).add(
        None if at is None else Locate(lambda t: map_leaf(f, at.at(t))))
    return s.derive(facts, value=map_leaf(f, s.value))
