"""Indexed streams, after Etch (Kovach & Kjolstad), staged into Imp.

A stream ranges over one index variable and is a record of staged fields:

    state         the Imp variables it owns, with types (declared on entry)
    init          Imp statement: set up the state (assignments only)
    valid         Imp bool:  not yet exhausted
    index         Imp index: the current coordinate (read only while valid)
    ready         Imp bool:  the current state carries a value
    value         Imp value expression (innermost level) or a nested Stream
    next          Imp statement: advance past the current (index, ready)
    skip(t, r)    Imp statement: advance to the first state whose (index, ready)
                  is lexicographically > (t, r), with False < True; so skip(t, False)
                  reaches index ≥ t and skip(t, True) reaches index > t
    contracted    True once Σ has made the level unit-indexed

A nested value is entered afresh each time its parent is ready: its state is
declared and its init run then, reading the parent's state.

Combinators, each one function building a new record from its operands' fields:
    mul(a, b)        intersection merge (leapfrogs with skip)
    add(a, b)        union merge; values of operands behind the front are guarded off
    contract(s, v)   Σ over the level of variable v
    replicate(v, x)  ↑: x repeated at every coordinate of v's range
    map_leaf(f, s)   f applied to every innermost value

The evaluation ⟦s⟧ (run_stream) sums the ready values into a dictionary from
coordinates to values. With `check=True` it also checks the simple-stream
invariants at every step: bounded (finite), (index, ready) strictly increasing
(monotonic), and ready indices strictly increasing (reduced).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable, Union

from .. import imp
from ..expr.nodes import Access, Add, Lit, Mul
from ..formats import Compressed, Dense, Singleton
from ..tuning import DEFAULT, Tuning
from ..imp import (FALSE, ONE, TRUE, ZERO, Assign, Bin, Const, If, Load, Ring, Var, While,
                  and_, eq, incr, le, lt, max_, not_, or_, select, seq)


@dataclass(frozen=True, eq=False)
class Stream:
    var: str
    state: tuple            # ((name, type), ...)
    init: imp.Stmt
    valid: imp.Expr
    index: imp.Expr
    ready: imp.Expr
    value: "Value"
    next: imp.Stmt
    skip: Callable[[imp.Expr, imp.Expr], imp.Stmt] = field(repr=False)
    contracted: bool = False
    search: str = "linear"   # how skip moves: locate | jump | linear | merge | iterate <side>
    # For a stream holding every coordinate 0..n-1 (dense levels, ↑): its value at
    # coordinate t, with no state of its own. mul and add use it to visit only the
    # other operand and locate into this one.
    locate: Callable[[imp.Expr], "Value"] | None = field(default=None, repr=False)
    # For a plain counted loop (ready always, next = +1, nothing else in the state
    # that its index or value read): (counter, first, end). Threads split it.
    counter: tuple | None = field(default=None, repr=False)
    dense: bool = False      # visits every coordinate 0..n-1 (a range)
    # Statements that must run even when the stream is only located into, never
    # iterated (a marker fill); `init` already includes them.
    prelude: imp.Stmt = field(default=imp.SKIP, repr=False)
    # Number of states left, read right after init (a segment's end - start), or None.
    # Only a heuristic reads it (merge or leapfrog), never correctness.
    extent: imp.Expr | None = field(default=None, repr=False)
    # An upper bound on the number of ready states, read right after init, or None.
    # A sparse output reserves that many appends once before the loop, so unlike
    # extent it must never be below the true count (proofs_notes/lowering.md).
    most: imp.Expr | None = field(default=None, repr=False)
    # A bool state variable that init sets and nothing else changes, on which next
    # branches (If(choice, ...)): lowering may emit one loop per branch.
    choice: str | None = field(default=None, repr=False)
    # (va, vb): the validity tests of two operands that this stream runs until both
    # are exhausted (a union). Once false, each stays false under next and skip, so
    # lowering may run the loop in phases (both valid, only a, only b, neither),
    # each with the tests folded to constants in the records it reads.
    split: tuple = field(default=(), repr=False)
    # Blocks: the data under coordinate t lies contiguously in each block's array
    # (a row of a dense operand; the crd and vals of a compressed row).
    block: tuple = field(default=(), repr=False)
    # (crd, n) for a unique segment level: state q has coordinate crd[q], and while
    # q + d < n, crd[q + d] is the coordinate d states later.
    ahead: tuple | None = field(default=None, repr=False)
    # Blocks of operands located at this level's coordinate. Knowing `ahead`, a
    # loop may prefetch them a few states early; a hint, never read for results.
    prefetch: tuple = field(default=(), repr=False)
    # (q, end, crd, crd length) of a unique segment level: its state is position
    # q in crd[q..end), and crd holds `crd length` entries in all.
    segment: tuple | None = field(default=None, repr=False)
    # For an intersection of two unique segments: (a.segment, b.segment). While
    # it merges, lowering may intersect two short segments at once instead
    # (imp.ShortIntersect), which visits the same ready states in the same order.
    short: tuple | None = field(default=None, repr=False)
    # (arrays, n) for a unique segment level whose successive segments follow
    # one another in memory (its parent's position is a counter, not a gathered
    # coordinate): the arrays it reads at its own position q (its crd, a leaf's
    # values, a child level's pos), each holding at least n entries. Lowering
    # prefetches them ahead at each segment's start; a hint, never read for results.
    runs: tuple | None = field(default=None, repr=False)


Value = Union[Stream, imp.Expr]


@dataclass(frozen=True)
class Block:
    """The data under coordinate t of a level: array[offset(t) : offset(t) + length(t)],
    where the level's blocks together hold `total` values. When offset(t) reads
    an array itself (a compressed row's start, pos[t]), `via` = (that array,
    t ↦ the index it reads), so a prefetch can fetch that first."""
    array: str
    offset: Callable
    length: Callable
    total: imp.Expr
    via: tuple | None = None
    # the loop writes this block (an output's scattered destination) rather than
    # reads it: prefetched for writing, even when it is one value
    written: bool = False


def is_stream(x) -> bool:
    return isinstance(x, Stream)


def levels_of(s: Value) -> list[Stream]:
    out = []
    while is_stream(s):
        out.append(s)
        s = s.value
    return out

# ------------------------------------------------------------------ combinators


def range_stream(names: imp.Names, var: str, size: imp.Expr,
                 value_of: Callable[[imp.Expr], Value], search="locate") -> Stream:
    """Every coordinate 0..size-1 of `var`; skip locates in O(1)."""
    c = names.fresh(f"{var}_c")
    cv = Var(c)

    def skip(t, r):
        return Assign(c, select(r, max_(cv, imp.add(t, ONE)), max_(cv, t)))

    return Stream(var=var, state=((c, "index"),), init=Assign(c, ZERO),
                  valid=lt(cv, size), index=cv, ready=TRUE, value=value_of(cv),
                  next=incr(c), skip=skip, search=search, locate=value_of,
                  counter=(c, ZERO, size), dense=True, most=size)


def replicate(names: imp.Names, var: str, size: imp.Expr, x: Value) -> Stream:
    """↑x: the same value x at every coordinate of var (skip jumps directly)."""
    return range_stream(names, var, size, lambda _: x, search="jump")


def mul(names: imp.Names, sr, a: Value, b: Value, tuning: Tuning = DEFAULT) -> Value:
    """Intersection: ready where both are ready at the same index. `tuning`:
    merge_or_gallop, gallop_ratio, short_intersect, short_segment."""
    if not is_stream(a) and not is_stream(b):
        return Ring("mul", a, b)
    assert is_stream(a) and is_stream(b) and a.var == b.var, "mul needs aligned levels"
    if b.locate is not None and (a.locate is None or b.dense or not a.dense):
        return _iterate_locate(names, sr, a, b, lambda x, y: mul(names, sr, x, y, tuning))
    if a.locate is not None:
        return _iterate_locate(names, sr, b, a, lambda x, y: mul(names, sr, y, x, tuning))
    ready = and_(and_(a.ready, b.ready), eq(a.index, b.index))
    value = mul(names, sr, a.value, b.value, tuning)
    valid = and_(a.valid, b.valid)
    leap = dataclasses.replace(
        _merged(names, a, b, valid, max_(a.index, b.index), ready, value,
                f"intersect [{a.search}] with [{b.search}]"),
        # each ready state is a distinct ready state of both operands (they both
        # move past it), so either operand's bound holds
        most=imp.min_bound(a.most, b.most))
    if (not tuning.merge_or_gallop or a.extent is None or b.extent is None
            or a.ready != TRUE or b.ready != TRUE):
        return leap
    return _merge_or_leapfrog(names, a, b, leap, tuning)


def _merge_or_leapfrog(names, a: Stream, b: Stream, leap: Stream, tuning: Tuning) -> Stream:
    """Intersection of two segments, choosing per segment pair from their lengths:
    a two-finger merge (next advances exactly the operands at the front, one step,
    no branch) when the lengths are comparable, else the leapfrog (next skips the
    operand behind to the other's index, galloping). Both operands are always
    ready (unique segments), so the merge's state (smaller index, equal indices)
    strictly increases. It gallops when one segment is tuning.gallop_ratio
    times longer than the other."""
    g, fa, fb = (names.fresh(f"{a.var}_{n}") for n in ("gallop", "fa", "fb"))
    ratio = Const(tuning.gallop_ratio)
    choose = Assign(g, or_(lt(imp.mul(a.extent, ratio), b.extent),
                           lt(imp.mul(b.extent, ratio), a.extent)))
    merge_next = seq(Assign(fa, le(a.index, b.index)), Assign(fb, le(b.index, a.index)),
                     _advance_if(fa, a), _advance_if(fb, b))
    both = and_(a.valid, b.valid)

    def skip(t, r):
        # Merging, the state is (smaller index, equal indices): with the operands
        # at t and at u > t it is (t, false), and skip(t, false) must move past
        # it, which the operands' own skips (past (t, false)) do not. There is no
        # match at t, so the one at t moves past t.
        settle = seq(If(and_(both, and_(lt(a.index, b.index), eq(a.index, t))), a.skip(t, TRUE)),
                     If(and_(both, and_(lt(b.index, a.index), eq(b.index, t))), b.skip(t, TRUE)))
        return seq(leap.skip(t, r), If(not_(Var(g)), settle))

    # innermost segments only: lowering emits the body once more for the short way
    short = ((a.segment, b.segment) if tuning.short_intersect and a.segment and b.segment
             and not is_stream(leap.value) else None)
    return dataclasses.replace(
        leap, state=leap.state + ((g, "bool"), (fa, "bool"), (fb, "bool")),
        init=seq(leap.init, choose), skip=skip,
        index=select(Var(g), leap.index, select(lt(a.index, b.index), a.index, b.index)),
        next=If(Var(g), leap.next, merge_next), choice=g, short=short,
        search=f"merge [{a.search}] with [{b.search}], leapfrog when one is "
               f"≥{tuning.gallop_ratio}x longer"
               + (f", all pairs at once when both have ≤{tuning.short_segment}" if short
                  else ""))


def _advance_if(flag: str, s: Stream) -> imp.Stmt:
    """s.next when flag holds; a counter step q += flag needs no branch."""
    if isinstance(s.next, Assign) and s.next == incr(s.next.name):
        return Assign(s.next.name, imp.add(Var(s.next.name), Var(flag)))
    return If(Var(flag), s.next)


def _merged(names, a: Stream, b: Stream, valid, index, ready, value, search) -> Stream:
    """The record shared by mul and add: both operands advance past (index, ready)."""
    t, r = names.fresh(f"{a.var}_t"), names.fresh(f"{a.var}_r")

    def skip(tt, rr):
        return seq(a.skip(tt, rr), b.skip(tt, rr))

    nxt = seq(Assign(t, index), Assign(r, ready), skip(Var(t), Var(r)))
    return Stream(var=a.var, state=a.state + b.state + ((t, "index"), (r, "bool")),
                  init=seq(a.init, b.init), prelude=seq(a.prelude, b.prelude), valid=valid,
                  index=index, ready=ready, value=value, next=nxt, skip=skip, search=search)


def _iterate_locate(names, sr, it: Stream, loc: Stream, combine) -> Stream:
    """Walk `it` and read `loc` at each of its coordinates (loc can locate).

    loc's prelude still runs (it may fill a marker); its state is kept for that.
    """
    fetch = loc.block if it.ahead is not None else ()
    return dataclasses.replace(
        it, state=it.state + loc.state, init=seq(it.init, loc.prelude),
        prelude=seq(it.prelude, loc.prelude), block=(), prefetch=it.prefetch + fetch,
        value=combine(it.value, loc.locate(it.index)), search=_located(it.search, loc.search),
        locate=None if it.locate is None else (lambda t: combine(it.locate(t), loc.locate(t))))


def _located(search: str, other: str) -> str:
    return f"{search}; locate into [{other}]"


def order_le(a: Stream, b: Stream) -> imp.Expr:
    """(a.index, a.ready) ≤ (b.index, b.ready), with an exhausted stream at +∞."""
    same = and_(eq(a.index, b.index), or_(not_(a.ready), b.ready))
    return and_(a.valid, or_(not_(b.valid), or_(lt(a.index, b.index), same)))


def add(names: imp.Names, sr, a: Value, b: Value, tuning: Tuning = DEFAULT) -> Value:
    """Union: the front of the two streams; operands behind the front add zero.
    `tuning`: step_fronts."""
    if not is_stream(a) and not is_stream(b):
        zero = Const(sr.zero, "value")
        return a if b == zero else b if a == zero else Ring("add", a, b)
    assert is_stream(a) and is_stream(b) and a.var == b.var, "add needs aligned levels"
    if a.dense and b.dense:       # both hold every coordinate: one range
        return _iterate_locate(names, sr, a, b, lambda x, y: add(names, sr, x, y, tuning))
    a_first, b_first = order_le(a, b), order_le(b, a)
    index = select(a_first, a.index, b.index)
    ready = and_(or_(not_(a_first), a.ready), or_(not_(b_first), b.ready))
    value = add(names, sr, guard(names, sr, a_first, a.value),
                guard(names, sr, b_first, b.value), tuning)
    # each ready state of the union has a ready operand at its front, which then
    # moves past it: no more ready states than both operands together
    union = dataclasses.replace(
        _merged(names, a, b, or_(a.valid, b.valid), index, ready, value,
                f"union [{a.search}] with [{b.search}]"), split=(a.valid, b.valid),
        most=imp.sum_bound(a.most, b.most))
    if not tuning.step_fronts or a.ready != TRUE or b.ready != TRUE:
        return union
    return _step_fronts(names, a, b, union, a_first, b_first)


def _step_fronts(names, a: Stream, b: Stream, union: Stream, a_first, b_first) -> Stream:
    """A union of two always-ready operands advances exactly the operands at its
    front by one next each, instead of skipping both past its index.

    With ready ≡ true, next moves a stream strictly past its index, so an operand
    at the union's index t is past t after one next, and one whose index is
    greater than t is already past it: skip(t, true) is exactly 'next if at the
    front'. A counter step becomes q += flag, with no branch."""
    fa, fb = names.fresh(f"{a.var}_fa"), names.fresh(f"{a.var}_fb")
    return dataclasses.replace(
        union, state=union.state + ((fa, "bool"), (fb, "bool")),
        next=seq(Assign(fa, a_first), Assign(fb, b_first), _advance_if(fa, a),
                 _advance_if(fb, b)))


def guard(names: imp.Names, sr, cond: imp.Expr, x: Value) -> Value:
    """x where cond holds, the empty stream (or zero) elsewhere."""
    if not is_stream(x):
        return select(cond, x, Const(sr.zero, "value"))
    g = names.fresh(f"{x.var}_g")
    gv = Var(g)
    return dataclasses.replace(
        x, state=((g, "bool"),) + x.state, init=seq(Assign(g, cond), If(gv, x.init)),
        valid=and_(gv, x.valid), skip=lambda t, r: If(gv, x.skip(t, r)), locate=None,
        counter=None, dense=False, runs=None, prelude=If(gv, x.prelude) if x.prelude != imp.SKIP
        else imp.SKIP)


def contract(s: Value, var: str) -> Value:
    """Σ over var: its level becomes unit-indexed; evaluation then sums its values."""
    assert is_stream(s), f"no level {var} to contract"
    if s.var == var:
        return dataclasses.replace(s, contracted=True)
    return dataclasses.replace(s, value=contract(s.value, var))


def map_leaf(f: Callable[[imp.Expr], imp.Expr], s: Value) -> Value:
    if not is_stream(s):
        return f(s)
    return dataclasses.replace(s, value=map_leaf(f, s.value),
                               locate=None if s.locate is None else
                               (lambda t: map_leaf(f, s.locate(t))))

# ---------------------------------------------------------------- level streams
# A level stream walks one storage level of a tensor below a parent position
# range (lo, hi); hi is lo + 1 below a unique level.


def dense_level(names, var, size, parent, child) -> Stream:
    lo, _ = parent
    return range_stream(names, var, size,
                        lambda c: child((imp.add(imp.mul(lo, size), c),
                                         imp.add(imp.add(imp.mul(lo, size), c), ONE))))


def segment_level(names, var, crd: str, start: imp.Expr, end: imp.Expr, unique: bool,
                  child, crd_len: imp.Expr | None = None, in_order: bool = False) -> Stream:
    """Positions start..end-1 with coordinates crd[q] (compressed and singleton levels).

    A non-unique level groups each run of equal coordinates into one state and
    hands the whole run [q, q_run) to its child. `in_order`: the parent's
    positions are visited in order, so successive segments follow one another.
    """
    q, e = names.fresh(f"{var}_q"), names.fresh(f"{var}_end")
    qv, ev = Var(q), Var(e)
    crd_q = Load(crd, qv)

    def behind(t, r):      # (crd[q], true) ≤ (t, r)
        return or_(lt(crd_q, t), and_(eq(crd_q, t), r))

    if unique:
        state = ((q, "index"), (e, "index"))
        init = seq(Assign(q, start), Assign(e, end))
        value = child((qv, imp.add(qv, ONE)))
        runs = None
        if in_order and crd_len is not None:
            read = imp.arrays_loaded_at(value.init if is_stream(value) else value, qv)
            runs = ((crd, *[a for a in read if a != crd]), crd_len)
        return Stream(var=var, state=state, init=init, valid=lt(qv, ev), index=crd_q,
                      ready=TRUE, value=value, next=incr(q), runs=runs,
                      skip=lambda t, r: imp.Seek(q, ev, crd, t, r),
                      search="linear, then gallop", counter=(q, start, end),
                      extent=Bin("-", ev, qv), most=Bin("-", ev, qv),
                      ahead=None if crd_len is None else (crd, crd_len),
                      segment=None if crd_len is None else (q, e, crd, crd_len))
    run = names.fresh(f"{var}_run")
    rv = Var(run)
    find_run = seq(Assign(run, imp.add(qv, ONE)),
                   While(and_(lt(rv, ev), eq(Load(crd, rv), crd_q)), incr(run)))
    state = ((q, "index"), (e, "index"), (run, "index"))
    return Stream(var=var, state=state, init=seq(Assign(q, start), Assign(e, end), find_run),
                  valid=lt(qv, ev), index=crd_q, ready=TRUE, value=child((qv, rv)),
                  most=Bin("-", ev, qv),
                  next=seq(Assign(q, rv), find_run),
                  skip=lambda t, r: seq(While(and_(lt(qv, ev), behind(t, r)), incr(q)),
                                        find_run))


def level_stream(names, level, var, size, arrays, parent, child, crd_len=None) -> Stream:
    """The read stream of one storage level (arrays: its pos/crd array names;
    crd_len: the length of its crd array, if known)."""
    lo, hi = parent
    in_order = not imp.arrays_loaded_at(lo, None)     # a counter, not a gathered coordinate
    match level:
        case Dense():
            return dense_level(names, var, size, parent, child)
        case Compressed(unique):
            pos = arrays["pos"]
            return segment_level(names, var, arrays["crd"], Load(pos, lo),
                                 Load(pos, imp.add(lo, ONE)), unique, child, crd_len,
                                 in_order)
        case Singleton(unique):
            return segment_level(names, var, arrays["crd"], lo, hi, unique, child, crd_len,
                                 in_order)
    raise TypeError(f"unknown level {level!r}")

# ---------------------------------------------------------------------- lowering


@dataclass
class Binding:
    """What lowering needs to know about one tensor: format and Imp array names."""

    format: object
    vals: str
    levels: tuple            # per storage level: {"pos": name, "crd": name} or {}
    name: str = ""           # the tensor's name (its dims are <name>_dim<mode>)

    def positions(self, k: int) -> imp.Expr:
        """The number of positions at storage level k (the length of its crd, and
        of vals at the last level), read from the level arrays at run time."""
        n = ONE
        for lev, level in enumerate(self.format.levels[:k + 1]):
            if isinstance(level, Dense):
                n = imp.mul(n, Var(f"{self.name}_dim{self.format.mode_order[lev]}"))
            elif isinstance(level, Compressed):
                n = Load(self.levels[lev]["pos"], n)
        return n


def array_names(tensor_name: str, fmt) -> Binding:
    levels = []
    for k, lv in enumerate(fmt.levels):
        match lv:
            case Dense():
                levels.append({})
            case Compressed():
                levels.append({"pos": f"{tensor_name}_pos{k}", "crd": f"{tensor_name}_crd{k}"})
            case Singleton():
                levels.append({"crd": f"{tensor_name}_crd{k}"})
    return Binding(fmt, f"{tensor_name}_vals", tuple(levels), tensor_name)


def dim_var(var: str) -> imp.Expr:
    return Var(f"dim_{var}")


class Lowerer:
    """Lowers a sum-free expression body over an ordered list of index levels.

    With `markers=True` (and tuning.markers), a last compressed level that sits below levels its
    tensor does not depend on (so it would be walked again for each of their
    coordinates) is scattered once per parent into a marker: `mark[c]` holds a
    stamp of the parent position and `wv[c]` the value. The level then also
    locates in O(1), so an intersection walks the other side and probes. The
    arrays it needs are listed in `scratch` (name, type, size, fill).
    """

    def __init__(self, semiring, bindings: dict[str, Binding], names: imp.Names,
                 markers: bool = False, tuning: Tuning = DEFAULT):
        self.sr = semiring
        self.bindings = bindings
        self.names = names
        self.tuning = tuning
        self.markers = markers and tuning.markers
        self.scratch: list[tuple] = []

    def lower(self, e, levels: tuple[str, ...]) -> Value:
        match e:
            case Access():
                return self.access(e, levels)
            case Lit(v, _):
                return self.replicate_over(levels, Const(self.sr.literal(v), "value"))
            case Mul(a, b):
                return mul(self.names, self.sr, self.lower(a, levels), self.lower(b, levels),
                           self.tuning)
            case Add(a, b):
                return add(self.names, self.sr, self.lower(a, levels), self.lower(b, levels),
                           self.tuning)
        raise TypeError(f"cannot lower {e!r} (sums must be pulled out first)")

    def replicate_over(self, levels, leaf: imp.Expr) -> Value:
        out: Value = leaf
        for v in reversed(levels):
            out = replicate(self.names, v, dim_var(v), out)
        return out

    def access(self, acc: Access, levels) -> Value:
        b = self.bindings[acc.tensor.name]
        names = [ix.name for ix in acc.indices]
        if b.format.is_dense:
            return self.dense_access(b, names, levels)
        storage = [names[m] for m in b.format.mode_order]
        return self.sparse_access(b, storage, levels, 0, 0, (ZERO, ONE))

    def dense_access(self, b: Binding, names, levels) -> Value:
        """A dense tensor locates any coordinate, so it follows any loop order."""
        strides = {}
        stride: imp.Expr = ONE
        order = [names[m] for m in b.format.mode_order]
        for m in reversed(b.format.mode_order):
            strides[names[m]] = stride
            stride = imp.mul(stride, dim_var(names[m]))

        def build(k, coords):
            if k == len(levels):
                flat: imp.Expr = ZERO
                for v, s in strides.items():
                    flat = imp.add(flat, imp.mul(coords[v], s))
                return Load(b.vals, flat)
            v = levels[k]
            if v not in strides:
                return replicate(self.names, v, dim_var(v), build(k + 1, coords))
            row = range_stream(self.names, v, dim_var(v),
                               lambda c: build(k + 1, {**coords, v: c}))
            outer = order[:order.index(v)]
            if not all(u in coords for u in outer):
                return row
            # every mode before v is fixed: the values under v = t are one run
            base: imp.Expr = ZERO
            for u in outer:
                base = imp.add(base, imp.mul(coords[u], strides[u]))
            return dataclasses.replace(row, block=(Block(
                b.vals, lambda t: imp.add(base, imp.mul(t, strides[v])),
                lambda t: strides[v], imp.mul(dim_var(v), strides[v])),))

        return build(0, {})

    def sparse_access(self, b: Binding, storage, levels, k, lev, parent, marker=None) -> Value:
        if k == len(levels):
            assert lev == len(storage), f"levels {levels} do not cover {storage}"
            return Load(b.vals, parent[0])
        v = levels[k]
        if lev < len(storage) and storage[lev] == v:
            s = level_stream(
                self.names, b.format.levels[lev], v, dim_var(v), b.levels[lev], parent,
                lambda child: self.sparse_access(b, storage, levels, k + 1, lev + 1, child),
                b.positions(lev) if b.name else None)
            s = dataclasses.replace(s, block=self._row_blocks(b, storage, levels, k, lev,
                                                              parent))
            if marker is not None:
                mark, wv, stamp = marker
                rest = levels[k + 1:]      # only replicated levels remain below

                def probe(c):
                    hit = select(eq(Load(mark, c), stamp), Load(wv, c),
                                 Const(self.sr.zero, "value"))
                    return self.replicate_over(rest, hit)
                s = dataclasses.replace(s, search=s.search + ", probed via a marker",
                                        locate=probe)
            return s
        assert v not in storage[lev:], f"order {levels} breaks storage order {storage}"
        fill = imp.SKIP
        if marker is None and self._wants_marker(b, storage, lev):
            marker, fill, state = self._marker(b, storage, lev, parent)
        rep = replicate(self.names, v, dim_var(v),
                        self.sparse_access(b, storage, levels, k + 1, lev, parent, marker))
        if fill == imp.SKIP:
            return rep
        return dataclasses.replace(rep, state=rep.state + state, init=seq(fill, rep.init),
                                   prelude=fill)

    @staticmethod
    def _row_blocks(b: Binding, storage, levels, k, lev, parent) -> tuple:
        """A dense level over v whose child, the last level, is compressed and walked
        next (csr's rows, located by the coordinate of a sparse operand in
        Gustavson's product): the row under t is one range of positions, in crd
        and in vals, starting at pos[lo·n + t]."""
        fmt = b.format
        if not (b.name and isinstance(fmt.levels[lev], Dense) and lev + 2 == len(storage)
                and isinstance(fmt.levels[lev + 1], Compressed) and k + 1 < len(levels)
                and levels[k + 1] == storage[lev + 1]):
            return ()
        pos, crd = b.levels[lev + 1]["pos"], b.levels[lev + 1]["crd"]

        def at(t):
            return imp.add(imp.mul(parent[0], dim_var(storage[lev])), t)

        def start(t):
            return Load(pos, at(t))

        def length(t):
            return Bin("-", Load(pos, imp.add(at(t), ONE)), Load(pos, at(t)))

        total = b.positions(lev + 1)
        return tuple(Block(arr, start, length, total, via=(pos, at)) for arr in (crd, b.vals))

    def _wants_marker(self, b, storage, lev) -> bool:
        level = b.format.levels[lev] if lev < len(storage) else None
        return (self.markers and lev == len(storage) - 1 and isinstance(level, Compressed)
                and level.unique)

    def _marker(self, b, storage, lev, parent):
        """Scatter the children of `parent` at level lev into mark/wv, stamped parent+1."""
        var = storage[lev]
        mark, wv = self.names.fresh(f"{var}_mark"), self.names.fresh(f"{var}_wv")
        self.scratch += [(mark, "index", dim_var(var), ZERO),
                         (wv, "value", dim_var(var), Const(self.sr.zero, "value"))]
        stamp = imp.add(parent[0], ONE)
        q = self.names.fresh(f"{var}_fill")
        pos, crd = b.levels[lev]["pos"], b.levels[lev]["crd"]
        c = Load(crd, Var(q))
        fill = seq(Assign(q, Load(pos, parent[0])),
                   While(lt(Var(q), Load(pos, imp.add(parent[0], ONE))),
                         seq(hidden(q, self.tuning), imp.Store(mark, c, stamp),
                             imp.Store(wv, c, Load(b.vals, Var(q))), incr(q))))
        return (mark, wv, stamp), fill, ((q, "index"),)


def hidden(q: str, tuning: Tuning = DEFAULT) -> imp.Stmt:
    """imp.Opaque(q) at the top of a loop over a segment's positions q, so that C
    runs it as scalar code (see imp.Opaque); nothing when
    tuning.hide_segment_counters is off."""
    return imp.Opaque(q) if tuning.hide_segment_counters else imp.SKIP


def lower_step(semiring, bindings, body, order: tuple[str, ...], bound, names=None,
               lowerer=None, tuning: Tuning = DEFAULT) -> Value:
    """The stream of Σ_bound body, with levels in `order` (free and bound indices)."""
    low = lowerer or Lowerer(semiring, bindings, names or imp.Names(), tuning=tuning)
    s = low.lower(body, tuple(order))
    for v in bound:
        s = contract(s, v)
    return s

# -------------------------------------------------------------- evaluation ⟦s⟧


class StreamInvariantError(AssertionError):
    """A stream broke the simple-stream invariants (a compiler bug)."""


def declare(machine: imp.Machine, s: Stream):
    for name, typ in s.state:
        machine.env[name] = False if typ == "bool" else 0


def run_stream(s: Value, machine: imp.Machine, out: dict, prefix=(), check=False,
               max_steps=10**8):
    """⟦s⟧: add every ready value into out[coordinates] (contracted levels drop out)."""
    if not is_stream(s):
        v = machine.eval(s)
        out[prefix] = machine.semiring.add(out[prefix], v) if prefix in out else v
        return
    declare(machine, s)
    machine.exec(s.init)
    last = None
    last_ready = None
    steps = 0
    while machine.eval(s.valid):
        idx, ready = machine.eval(s.index), bool(machine.eval(s.ready))
        if check:
            steps += 1
            if steps > max_steps:
                raise StreamInvariantError(f"stream over {s.var} did not finish")
            if last is not None and (idx, ready) <= last:
                raise StreamInvariantError(f"stream over {s.var} not monotonic: "
                                           f"{(idx, ready)} after {last}")
            if ready and last_ready is not None and idx <= last_ready:
                raise StreamInvariantError(f"stream over {s.var} not reduced: index {idx} "
                                           f"ready twice")
            last = (idx, ready)
        if ready:
            if check:
                last_ready = idx
            key = prefix if s.contracted else prefix + (idx,)
            run_stream(s.value, machine, out, key, check, max_steps)
        machine.exec(s.next)


def describe(s: Value, depth=0) -> list[str]:
    """One line per level: variable, how it moves, contracted or not."""
    out = []
    for lv in levels_of(s):
        out.append(f"{'Σ ' if lv.contracted else ''}{lv.var}: {lv.search}")
    return out
