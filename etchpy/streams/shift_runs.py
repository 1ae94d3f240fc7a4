"""Shifts of one run list met once: a product of windows of the same run level
that differ only in their shift (lo), read as one run stream.

A product of k windows W_d[w] = A[d + w] (step 1) of the same row of a run
list, for the shifts d of a set D that fills [L, H] (every integer between
the least and the greatest shift is one of them), holds w iff every cell of
[w + L, w + H] lies in one stretch of runs that meet end to start with no gap
(no run of the zero) between them; with an idempotent ⊗ its value is the ⊗
of the runs r..q holding w + L .. w + H, each once. So the k operands are
one stream over the row's runs with two run pointers (r holds w + L, q holds
w + H): one piece per change of r or q, where the general meet (runs.meet_runs)
has an event at every run end of each of the k windows. A 3×3 erosion's nine
windows become three such streams. proofs_notes/shifts.md.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import reduce

import numpy as np

from .. import imp
from ..imp import FALSE, ONE, TRUE, ZERO, Assign, Bin, Const, If, Load, Var, While, and_, \
    eq, le, lt, max_, min_, not_, or_, select, seq
from .facts import Extent, Fact, Facts, Flat, Most, Pieces
from .stream import Stream, built, is_stream, unchanged


@dataclass(frozen=True, eq=False)
class Shifted(Fact):
    """The stream is window_runs over run level `ends`/`starts`, parent runs
    start..end-1, at the constant shift `lo` with step 1; `key` names the
    operand, its mode and the parent position, so two streams with equal keys
    read the same runs (the same operand's row) at different shifts. `spec`:
    (var, ends, start, end, child, starts, n, zero), window_runs' arguments.
    Valid only on the stream it was made for (`made`: its init, valid, value,
    next and skip, as runs.Meets)."""

    key: tuple
    lo: int
    spec: tuple
    made: tuple


def shifted(s: Stream, key, lo: imp.Expr, step: imp.Expr, spec: tuple) -> Stream:
    """s (a window_runs stream) with its Shifted fact, or s itself when it has
    no key, a shift or step given at call time or a step other than 1."""
    if key is None or step != ONE or not isinstance(lo, Const) or \
            not isinstance(lo.value, (int, np.integer)):
        return s
    return s.derive(s.facts.add(Shifted(key, int(lo.value), spec, built(s))))


def _shift(s: Stream) -> Shifted | None:
    """s's Shifted fact when it is s's own and s's value a leaf, else None."""
    f = s.facts.get(Shifted)
    ok = f is not None and not is_stream(s.value) and unchanged(f.made, s)
    return f if ok else None


_CHOICE = re.compile(r"\(\{a\} *(<|>|<=|>=) *\{b\} *\? *\{(a|b)\} *: *\{(a|b)\}\)")


def mul_idempotent(sr) -> bool:
    """x ⊗ x = x for every x of the semiring: ⊗'s C is a choice between its
    operands (`({a} < {b} ? {a} : {b})`, min or max: both branches give x when
    a = b = x), or the carrier is boolean and both values are checked; else
    not assumed."""
    m = _CHOICE.fullmatch(sr.mul.c.strip())
    if m is not None and m.group(2) != m.group(3):
        return True
    if sr.dtype != np.bool_:
        return False
    return all(bool(sr.mul.py(np.bool_(x), np.bool_(x))) == x for x in (False, True))


def group_shifts(names, ops: list, combine, rows=None) -> list:
    """ops (streams met as one product) with each group of two or more Shifted
    streams of one key whose shifts fill [L, H] replaced by one shift_meet;
    the others as they are, in order (a group where its first member was).
    `rows` (None, or a function of {group key: (L, H)} giving {group key: a
    function of its shift_meet and spec}: streams.shift_rows.keepers): the groups it
    names are read through it (a ring of rows kept across output rows)."""
    groups: dict = {}
    for s in ops:
        if (f := _shift(s)) is not None:
            groups.setdefault(f.key, []).append(f.lo)
    spans = {k: (min(v), max(v)) for k, v in groups.items()
             if len(v) >= 2 and set(v) == set(range(min(v), max(v) + 1))}
    keep = rows(spans) if rows is not None else {}
    out, done = [], set()
    for s in ops:
        f = _shift(s)
        if f is None or f.key not in spans:
            out.append(s)
        elif f.key not in done:
            done.add(f.key)
            meet = shift_meet(names, f.spec, *spans[f.key], combine)
            out.append(keep[f.key](meet, f.spec) if f.key in keep else meet)
    return out


def run_start(starts: str | None, ends: str, r0: imp.Expr, p: imp.Expr) -> imp.Expr:
    """Where run p of a row whose first run is r0 starts: starts[p] (a sparse run
    list), else the end of run p − 1 or 0 for the first."""
    return Load(starts, p) if starts is not None else \
        select(lt(r0, p), Load(ends, Bin("-", p, ONE)), ZERO)


def _true(zero) -> Const | None:
    """True (as a value) when the zero is a boolean's false: the carrier is {false,
    true}, so every run met (none a gap) holds true, and their ⊗, idempotent,
    is true; else None (the ⊗ of the runs' values is read)."""
    if zero is not None and isinstance(zero, Const) and isinstance(zero.value, np.bool_) \
            and not zero.value:
        return Const(np.True_, "value")
    return None


def shift_meet(names, spec: tuple, lo: int, hi: int, combine) -> Stream:
    """The product of the windows of one row of a run list at every shift lo..hi
    (step 1), ⊗ idempotent: state r (the run holding w + lo), q (the run holding
    w + hi), re, r0 (the row's first run), c (w), m (the piece's end) and ok; `settle`
    finds the first w ≥ c whose cells w+lo..w+hi lie in runs r..q meeting end to
    start, none a run of the zero (its value: `_true`, or the ⊗ of r..q's)."""
    var, ends, start, end, child, starts, n, zero = spec
    r, q, re, r0, c, m, ok = (names.fresh(f"{var}_s{x}") for x in
                              ("r", "q", "rend", "r0", "c", "m", "ok"))
    rv, qv, rev, r0v, cv, mv, okv = (Var(x) for x in (r, q, re, r0, c, m, ok))
    L, H = Const(lo), Const(hi)

    def begin(p):
        return run_start(starts, ends, r0v, p)

    def val(p):
        return child((p, imp.add(p, ONE)))

    def gap(p):
        return FALSE if zero is None else eq(val(p), zero)

    nxt = imp.add(qv, ONE)
    extend = While(and_(and_(lt(nxt, rev), le(Load(ends, qv), imp.add(cv, H))),
                        and_(eq(begin(nxt), Load(ends, qv)), not_(gap(nxt)))),
                   imp.incr(q))
    found = seq(Assign(c, max_(cv, Bin("-", begin(rv), L))), Assign(q, max_(qv, rv)), extend,
                Assign(ok, lt(imp.add(cv, H), Load(ends, qv))), If(not_(okv), Assign(r, nxt)))
    settle = seq(Assign(ok, FALSE), While(
        and_(and_(not_(okv), lt(rv, rev)), lt(cv, n)),
        seq(While(and_(lt(rv, rev), or_(le(Load(ends, rv), imp.add(cv, L)), gap(rv))),
                  imp.incr(r)),
            If(lt(rv, rev), found))))
    close = seq(Assign(m, ZERO), If(okv, Assign(m, min_(min_(
        Bin("-", Load(ends, rv), L), Bin("-", Load(ends, qv), H)), n))))
    advance = seq(settle, close)
    init = seq(Assign(r, start), Assign(re, end), Assign(r0, start), Assign(q, start),
               Assign(c, ZERO), advance)

    def skip(t, rf):
        return seq(Assign(c, max_(cv, select(rf, imp.add(t, ONE), t))),
                   If(le(mv, cv), advance))

    value = _true(zero) or reduce(combine, [val(min_(imp.add(rv, Const(d)), qv))
                                            for d in range(hi - lo + 1)])
    state = tuple((x, "index") for x in (r, q, re, r0, c, m)) + ((ok, "bool"),)
    return Stream(var=var, state=state, init=init, valid=lt(cv, mv), index=cv, ready=TRUE,
                  value=value, next=seq(imp.incr(c), If(le(mv, cv), advance)), skip=skip,
                  search=f"one run list at shifts {lo}..{hi}: one piece per change of the "
                         f"runs holding w{lo:+d} and w{hi:+d}",
                  facts=Facts.of(Most(n), Extent(n), Pieces(c, m, advance), Flat()))
