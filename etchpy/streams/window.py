"""The window of a level stream: the restriction and the shift (expr.windows).

A level read through the window (lo, n, step) holds at window coordinate w
the level's value at operand coordinate c = lo + w·step, for w in 0..n-1, and
nothing where c falls outside the level (the fill, the semiring's zero):

    window(s, lo, n, step)   any level stream s over c: s searched to lo once
                             (its skip: a gallop on a segment), stopped at
                             lo + (n-1)·step + 1, ready where (c - lo) % step
                             = 0 (the stride guard), index ceil((c - lo)/step)
                             (the mapping back), skip(t) = s.skip(lo + t·step)
    window_walk(...)         a unique segment through a step-1 window: the whole
                             segment walked, the window a test on each coordinate
                             (ready where 0 <= c - lo < n, index c - lo there and
                             c - lo + 1 elsewhere; no search, no stop), segments
                             longer than `long` first narrowed
                             by two searches (`WindowWalk.narrow`)
    window_range(...)        a level that holds every coordinate (a dense
                             range): the w whose c lies inside it, a counted
                             range [wlo, whi) that locates, Inside fact
    intersect_inside(a, b)   the product of two Inside streams: one counted
                             range over the intersection, both read there
                             unchecked (nine shifted windows of an image: one
                             loop with nine loads and no test per operand)

Never a copy: the level's own arrays, read at shifted positions.
proofs_notes/windows.md.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .. import imp
from ..imp import ONE, TRUE, ZERO, Assign, Bin, Const, If, Var, and_, eq, le, lt, select, seq
from .facts import Counter, Fact, Facts, Locate, Most, Prelude, Segment, WindowWalk
from .stream import Stream, Value


@dataclass(frozen=True, eq=False)
class Inside(Fact):
    """The run is every coordinate t in [lo, hi), in order, each ready, and
    nothing else; `at(t)` is the value at t for t in [lo, hi), reading no state
    of the stream (only enclosing state and arrays)."""

    lo: imp.Expr
    hi: imp.Expr
    at: Callable[[imp.Expr], object]


def ceil_div(a: imp.Expr, s: imp.Expr) -> imp.Expr:
    """ceil(a / s) for a ≥ 0, s > 0."""
    return a if s == ONE else Bin("/", imp.add(a, Bin("-", s, ONE)), s)


def window(s: Stream, lo: imp.Expr, n: imp.Expr, step: imp.Expr) -> Stream:
    """The generic window of level stream s (see the module docstring)."""
    off = Bin("-", s.index, lo)
    end = imp.add(imp.add(lo, imp.mul(Bin("-", n, ONE), step)), ONE)
    ready = s.ready if step == ONE else and_(
        s.ready, eq(imp.mul(Bin("/", off, step), step), off))
    index = ceil_div(off, step)
    # past a coordinate, on to the next one on the stride (so no two states are alike)
    nxt = s.next if step == ONE else seq(s.next, If(s.valid, s.skip(
        imp.add(lo, imp.mul(index, step)), imp.FALSE)))
    return s.derive(Facts.of(s.facts.get(Prelude), s.facts.get(Most)),
                    init=seq(s.init, If(s.valid, s.skip(lo, imp.FALSE))),
                    valid=and_(s.valid, lt(s.index, end)), index=index, ready=ready,
                    next=nxt, skip=lambda t, r: s.skip(imp.add(lo, imp.mul(t, step)), r),
                    search=f"{s.search}, through a window from lo")


def window_walk(names: imp.Names, s: Stream, lo: imp.Expr, n: imp.Expr, long: int) -> Stream:
    """The window (lo, n, 1) of unique segment stream s (its Segment fact) as one
    walk of the whole segment (see the module docstring; proofs_notes/windows.md,
    "A window walk")."""
    seg = s.facts.get(Segment)
    qv, ev = Var(seg.q), Var(seg.end)
    off = Bin("-", s.index, lo)
    t = names.fresh(f"{s.var}_wq")
    narrow = If(lt(Const(long), Bin("-", ev, qv)),
                seq(s.skip(lo, imp.FALSE), imp.Decl(t, "index", qv),
                    imp.Seek(t, ev, seg.crd, imp.add(lo, n), imp.FALSE), Assign(seg.end, Var(t))))
    empty = If(le(n, ZERO), Assign(seg.q, ev))
    facts = Facts.of(s.facts.get(Prelude), s.facts.get(Most),
                     WindowWalk(seg, narrow, ZERO, (s.skip(lo, imp.FALSE), off, n))
                     if s.ready == TRUE else WindowWalk(seg, narrow, ZERO))
    ready = and_(s.ready, Bin("<u", off, n))
    # not ready: the next window coordinate it may hold, so that a skip to it moves
    return s.derive(facts, init=seq(s.init, empty, narrow),
                    index=select(ready, off, imp.add(off, ONE)), ready=ready,
                    skip=lambda t_, r: s.skip(imp.add(lo, t_), r),
                    search="a walk of the whole segment through a window")


def window_range(names: imp.Names, var: str, lo: imp.Expr, n: imp.Expr, step: imp.Expr,
                 size: imp.Expr, value_at: Callable[[imp.Expr], Value],
                 guard: Callable) -> Stream:
    """A level holding every coordinate c in 0..size-1, its value at c
    `value_at(c)`, read through the window (lo, n, step): the w in [wlo, whi)
    with lo + w·step inside it, a counted range. `guard(cond, x)` is x where
    cond holds, else nothing (combinators.guard), for Locate at any w."""
    wlo = select(lt(lo, ZERO), ceil_div(Bin("-", ZERO, lo), step), ZERO)
    whi = select(lt(lo, size), imp.min_(n, ceil_div(Bin("-", size, lo), step)), ZERO)
    c, e = names.fresh(f"{var}_w"), names.fresh(f"{var}_wend")
    cv, ev = Var(c), Var(e)

    def at(t):
        return value_at(imp.add(lo, imp.mul(t, step)))

    def located(t):
        return guard(and_(le(wlo, t), lt(t, whi)), at(t))

    def skip(t, r):
        return Assign(c, select(r, imp.max_(cv, imp.add(t, ONE)), imp.max_(cv, t)))

    return Stream(var=var, state=((c, "index"), (e, "index")),
                  init=seq(Assign(c, wlo), Assign(e, whi)), valid=lt(cv, ev), index=cv,
                  ready=TRUE, value=at(cv), next=imp.incr(c), skip=skip,
                  search="a shifted range (a window)",
                  facts=Facts.of(Locate(located), Counter(c, wlo, whi),
                                 Most(imp.max_(Bin("-", ev, cv), ZERO)),
                                 Inside(wlo, whi, at)))


def intersect_inside(names: imp.Names, a: Stream, b: Stream, combine) -> Stream:
    """a · b, both with Inside: every t in the intersection of their ranges,
    value combine(a at t, b at t); an Inside stream itself (so a product of k
    windows is one counted range)."""
    ia, ib = a.facts.get(Inside), b.facts.get(Inside)
    lo, hi = imp.max_(ia.lo, ib.lo), imp.min_(ia.hi, ib.hi)
    c, e = names.fresh(f"{a.var}_w"), names.fresh(f"{a.var}_wend")
    cv, ev = Var(c), Var(e)

    def at(t):
        return combine(ia.at(t), ib.at(t))

    def skip(t, r):
        return Assign(c, select(r, imp.max_(cv, imp.add(t, ONE)), imp.max_(cv, t)))

    la, lb = a.facts.get(Locate), b.facts.get(Locate)
    located = None if la is None or lb is None else Locate(
        lambda t: combine(la.at(t), lb.at(t)))
    return Stream(var=a.var, state=((c, "index"), (e, "index")),
                  init=seq(Assign(c, lo), Assign(e, hi)), valid=lt(cv, ev), index=cv,
                  ready=TRUE, value=at(cv), next=imp.incr(c), skip=skip,
                  search=f"intersect windows [{a.search}] and [{b.search}]",
                  facts=Facts.of(located, Counter(c, lo, hi),
                                 Most(imp.max_(Bin("-", ev, cv), ZERO)), Inside(lo, hi, at)))
