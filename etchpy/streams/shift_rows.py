"""Shift products of rows kept across the output's rows: a ring of rows of pieces.

A product of windows of one run operand whose rows are read at parent
positions p + k (one base p, constant offsets k, as the row windows of a
k×k stencil give) and whose column shifts of each row group into one
`shift_meet` (streams.shift_runs) reads the same shift product of input row
p + k for several output rows: a 3×3 erosion reads each input row's column
erosion for three output rows. Here each such product is computed once per
input row (its `shift_meet` run to its end, or one plain pass over the
row's runs when the product's value is a constant: `plain_fill`) into a
slot of a ring of K rows of pieces (start, end, value), K = max k − min k +
1, slot = position mod K,
each slot tagged with the parent position it holds; an output row reads a
slot when its tag is the position it needs and otherwise fills it first. The
slot is then read as a plain sparse run list (streams.runs.runs_level), met
with the others by the general meet. The ring's arrays are per call (the
caller allocates `Rings.arrays`; a loop on threads gives each thread its own,
tags invalid at the start), sized by the column window's length n (a row's
pieces are disjoint non-empty intervals of [0, n)). proofs_notes/shifts.md,
"Rows of pieces kept across output rows".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .. import imp
from ..imp import ZERO, Assign, Bin, Const, If, Load, Store, Var, While, and_, eq, lt, \
    max_, min_, not_, seq
from .facts import Most, Pieces
from .shift_runs import run_start
from .stream import Stream


@dataclass
class Rings:
    """The per-call arrays the rings of one lowering need, (name, type, size,
    fill) as Lowerer.scratch: the caller allocates those its loops use, one
    copy per thread where a loop runs on threads (imp.ParallelFor.private)."""

    arrays: list


def offset(e: imp.Expr) -> tuple:
    """(base, k) with e = Σ base + k: e's sum flattened into its terms, k the sum
    of the constant ones, base the others in order (a tuple)."""
    terms = _terms(e)
    k = sum(t.value for t in terms if _constant(t))
    return tuple(t for t in terms if not _constant(t)), k


def _constant(t) -> bool:
    return isinstance(t, Const) and isinstance(t.value, int) and not isinstance(t.value, bool)


def _terms(e: imp.Expr) -> list:
    match e:
        case Bin("+", a, b):
            return _terms(a) + _terms(b)
        case Bin("-", a, Const(k)) if isinstance(k, int):
            return _terms(a) + [Const(-k)]
    return [e]


def ring_classes(groups: dict) -> dict:
    """{group key: (class key, k, K)} for the groups (key (source, mode, level,
    parent) -> (lo, hi)) that share a class (source, mode, level, parent base,
    lo, hi) with at least one other: their parent positions are base + k for
    distinct k, so slots k mod K (K the width of the k's) differ within one
    output row."""
    classes: dict = {}
    for key, (lo, hi) in groups.items():
        base, k = offset(key[3][0])
        classes.setdefault((key[:3], base, lo, hi), []).append((key, k))
    out = {}
    for ck, members in classes.items():
        if len(members) < 2:
            continue
        ks = [k for _, k in members]
        for key, k in members:
            out[key] = (ck, k, max(ks) - min(ks) + 1)
    return out


def keepers(names, rings: Rings, read: Callable, spans: dict) -> dict:
    """{group key: a function of its shift_meet giving the stream through its
    ring slot} for the groups (key -> (lo, hi), streams.shift_runs) that share
    a ring class (`ring_classes`); one ring (its arrays) per class. `read`:
    streams.runs.runs_level, which reads a slot."""
    classes = ring_classes(spans)
    made = {ck: None for ck, _, _ in classes.values()}      # a class's arrays, made once
    return {key: _keeper(names, rings, read, key[3][0], width, made, ck)
            for key, (ck, _, width) in classes.items()}


def _keeper(names, rings, read, pos, width, made, ck):
    def keep(meet: Stream, spec: tuple) -> Stream:
        if made[ck] is None:
            made[ck] = ring_arrays(names, rings, meet.var, meet.facts.get(Most).bound, width)
        fill = plain_fill(names, spec, ck[2], ck[3]) if isinstance(meet.value, Const) \
            else None
        return ring_read(names, meet, pos, width, made[ck], read, fill)
    return keep


def ring_arrays(names, rings: Rings, var: str, n: imp.Expr, width: int) -> tuple:
    """Fresh names of one ring's arrays (starts, ends, values, tags, counts),
    registered with their sizes in `rings`: `width` slots of n pieces each;
    the tags start at -1, which no position is."""
    s, e, v, t, c = (names.fresh(f"{var}_ring{x}") for x in ("s", "e", "v", "tag", "n"))
    size = imp.mul(Const(width), n)
    rings.arrays += [(s, "index", size, None), (e, "index", size, None),
                     (v, "value", size, None), (t, "index", Const(width), Const(-1)),
                     (c, "index", Const(width), None)]
    return s, e, v, t, c


def ring_read(names, meet: Stream, pos: imp.Expr, width: int, arrays: tuple,
              read: Callable, plain=None) -> Stream:
    """The stream of `meet` (a shift_meet of the row at parent position `pos`)
    through its ring slot pos mod width: the slot filled by running `meet` to
    its end, one piece (counter, end, value) at a time, unless its tag is pos;
    then the slot's pieces read as a sparse run list (every piece non-empty,
    in order, with gaps between them where meet has none). A value that is a
    constant (a boolean erosion's true) is not stored. `plain` (plain_fill's):
    the slot filled by that pass instead of meet's steps."""
    s, e, v, t, c = arrays
    p = meet.facts.get(Pieces)
    var, n = meet.var, meet.facts.get(Most).bound
    slot, base, k = (names.fresh(f"{var}_{x}") for x in ("slot", "rb", "rk"))
    sv, bv, kv = Var(slot), Var(base), Var(k)
    fixed = isinstance(meet.value, Const)      # the same value in every piece: not kept
    if plain is not None:
        body, own = plain[0](s, e, k), plain[1]
    else:
        body, own = seq(meet.init, Assign(k, bv), While(meet.valid, seq(
            Store(s, kv, Var(p.counter)), Store(e, kv, Var(p.end)),
            imp.SKIP if fixed else Store(v, kv, meet.value),
            imp.incr(k), Assign(p.counter, Var(p.end)), p.advance))), meet.state
    fill = seq(Assign(k, bv), body, Store(c, sv, Bin("-", kv, bv)), Store(t, sv, pos))
    here = seq(Assign(slot, Bin("-", pos, imp.mul(Bin("/", pos, Const(width)), Const(width)))),
               Assign(base, imp.mul(sv, n)),
               If(Bin("!=", Load(t, sv), pos), fill))
    rows = read(names, var, n, e, bv, imp.add(bv, Load(c, sv)),
                lambda q: meet.value if fixed else Load(v, q[0]), starts=s)
    state = own + ((slot, "index"), (base, "index"), (k, "index")) + rows.state
    return rows.derive(rows.facts, state=state, init=seq(here, rows.init),
                       search=f"{meet.search}, kept for the rows that read it (a ring of "
                              f"{width})")



def plain_fill(names, spec: tuple, lo: int, hi: int) -> tuple:
    """(a function of the slot's start and end arrays and its cursor giving the
    pass, its state): the pieces of the product of one row's windows at shifts
    lo..hi when its value is a constant (`shift_runs._true`: every run met
    holds true), in one pass over the row's runs: each stretch [A, B) of
    joined runs, none a gap, holds w exactly on [A − lo, B − hi) ∩ [0, n)
    (shifts.md's law: w + lo .. w + hi all in the stretch), one piece per
    stretch (its runs merged: the same cells, the same value, as the pieces
    of shift_meet)."""
    var, ends, start, end, child, starts, n, zero = spec
    p, pe, r0, a, b, w0, w1 = (names.fresh(f"{var}_p{x}") for x in
                               ("", "end", "0", "a", "b", "lo", "hi"))
    pv, pev, r0v, av, bv, w0v, w1v = (Var(x) for x in (p, pe, r0, a, b, w0, w1))

    def begin(x):
        return run_start(starts, ends, r0v, x)

    def gap(x):
        return eq(child((x, imp.add(x, Const(1)))), zero)

    def fill(s_arr, e_arr, k):
        kv = Var(k)
        stretch = seq(
            Assign(a, begin(pv)), Assign(b, Load(ends, pv)), imp.incr(p),
            While(and_(and_(lt(pv, pev), eq(begin(pv), bv)), not_(gap(pv))),
                  seq(Assign(b, Load(ends, pv)), imp.incr(p))),
            Assign(w0, max_(Bin("-", av, Const(lo)), ZERO)),
            Assign(w1, min_(Bin("-", bv, Const(hi)), n)),
            If(lt(w0v, w1v), seq(Store(s_arr, kv, w0v), Store(e_arr, kv, w1v), imp.incr(k))))
        return seq(Assign(p, start), Assign(pe, end), Assign(r0, start),
                   While(lt(pv, pev), If(gap(pv), imp.incr(p), stretch)))
    return fill, tuple((x, "index") for x in (p, pe, r0, a, b, w0, w1))
