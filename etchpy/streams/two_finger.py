"""Two-finger merges: intersections of two always-ready segments that step
the operands at the front (proofs_notes/mul.md, shape 4 and its plain form;
the match's own branch: proofs_notes/mul.md, "A match stepped by a branch").

    intersect_by_merge_or_leapfrog(a, b, leap)  merge or leapfrog per segment pair
    intersect_by_merge(a, b, leap)              the merge alone (planned)
    advance_if(flag, s)                         s.next where flag holds (q += flag)
"""
from __future__ import annotations

from .. import imp
from ..imp import TRUE, Assign, Const, If, Var, and_, eq, incr, le, lt, not_, or_, select, seq
from ..tuning import Tuning
from .facts import Choice, Extent, Most, Prelude, Segment, Short
from .merged import Met
from .stream import Stream, is_stream


def intersect_by_merge_or_leapfrog(names, tuning: Tuning, a: Stream, b: Stream,
                                   leap: Stream) -> Stream:
    """Intersection of two always-ready segments, choosing per segment pair from
    their extents: a two-finger merge (next advances exactly the operands at the
    front, one step: `_merge_next`) when the lengths are comparable, else the
    leapfrog. The merge's state (smaller index, equal indices) strictly
    increases because an always-ready simple stream's index does."""
    g, fa, fb = (names.fresh(f"{a.var}_{n}") for n in ("gallop", "fa", "fb"))
    ratio, ea, eb = Const(tuning.gallop_ratio), a.facts.get(Extent).n, b.facts.get(Extent).n
    choose = Assign(g, or_(lt(imp.mul(ea, ratio), eb), lt(imp.mul(eb, ratio), ea)))
    merge_next = _merge_next(tuning, fa, fb, a, b)
    short = _short(tuning, a, b, leap)
    search = (f"merge [{a.search}] with [{b.search}], leapfrog when one is "
              f"≥{tuning.gallop_ratio}x longer"
              + (f", all pairs at once when both have ≤{tuning.short_segment}"
                     if short else ""))
    return leap.derive(
        leap.facts.keep(Prelude, Most, Met).add(Choice(g), short),
        state=leap.state + ((g, "bool"), (fa, "bool"), (fb, "bool")),
        init=seq(leap.init, choose), skip=_merge_skip(a, b, leap, g),
        index=select(Var(g), leap.index, select(lt(a.index, b.index), a.index, b.index)),
        next=If(Var(g), leap.next, merge_next), search=search)


def intersect_by_merge(names, a: Stream, b: Stream, leap: Stream, tuning: Tuning) -> Stream:
    """Intersection of two always-ready streams by a two-finger merge alone:
    the merge way of intersect_by_merge_or_leapfrog with no per-segment flag
    (the planner chose it for comparable fibres: plan.algorithms)."""
    fa, fb = (names.fresh(f"{a.var}_{n}") for n in ("fa", "fb"))
    merge_next = _merge_next(tuning, fa, fb, a, b)
    return leap.derive(
        leap.facts.keep(Prelude, Most, Met),
        state=leap.state + ((fa, "bool"), (fb, "bool")), skip=_merge_skip(a, b, leap, None),
        index=select(lt(a.index, b.index), a.index, b.index), next=merge_next,
        search=f"merge [{a.search}] with [{b.search}] (planned)")


def _merge_next(tuning: Tuning, fa: str, fb: str, a: Stream, b: Stream) -> imp.Stmt:
    """A two-finger merge's step: each operand at the front (index ≤ the
    other's) moves on, q += flag with no branch. With tuning.match_step, a
    match (equal indices) moves both by a branch of its own and the rest
    compares strictly: the same moves (where the indices differ, ≤ is <), but
    operands of one pattern, matching at every step, then step by a predicted
    branch instead of waiting for each step's loads to compare
    (proofs_notes/mul.md, "A match stepped by a branch")."""
    cmp = lt if tuning.match_step else le
    step = seq(Assign(fa, cmp(a.index, b.index)), Assign(fb, cmp(b.index, a.index)),
               advance_if(fa, a), advance_if(fb, b))
    return If(eq(a.index, b.index), seq(a.next, b.next), step) if tuning.match_step else step


def _merge_skip(a: Stream, b: Stream, leap: Stream, g: str | None):
    """Merging, the state is (smaller index, equal indices): with the operands
    at t and at u > t it is (t, false), and skip(t, false) must move past it,
    which the operands' own skips (past (t, false)) do not. There is no match at
    t, so the one at t moves past t."""
    both = and_(a.valid, b.valid)

    def skip(t, r):
        settle = seq(If(and_(both, and_(lt(a.index, b.index), eq(a.index, t))), a.skip(t, TRUE)),
                     If(and_(both, and_(lt(b.index, a.index), eq(b.index, t))), b.skip(t, TRUE)))
        return seq(leap.skip(t, r), settle if g is None else If(not_(Var(g)), settle))

    return skip


def _short(tuning: Tuning, a: Stream, b: Stream, leap: Stream) -> Short | None:
    """Short(a, b) for two unique segments at the innermost level (lowering then
    emits the body once more, for two short segments at once)."""
    sa, sb = a.facts.get(Segment), b.facts.get(Segment)
    if not (tuning.short_intersect and sa and sb and not is_stream(leap.value)):
        return None
    return Short(sa, sb)


def advance_if(flag: str, s: Stream) -> imp.Stmt:
    """s.next when flag holds; a counter step q += flag needs no branch."""
    if isinstance(s.next, Assign) and s.next == incr(s.next.name):
        return Assign(s.next.name, imp.add(Var(s.next.name), Var(flag)))
    return If(Var(flag), s.next)
