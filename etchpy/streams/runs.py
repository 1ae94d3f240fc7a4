"""The read stream of a run list (formats.level RunList), and the product of two.

A run r covers the coordinates [lo, hi) with one value. In the Etch model a
state is one coordinate, so the run stream's state is (r, c, hi): the run, the
coordinate inside it and the run's end. Its states are all the coordinates in
order, each ready, and the value reads r alone, so it has Pieces (each run one
counted piece) and Flat (the value is the same across a piece): a Σ over the
run's coordinates is taken once per run by the schedule pass run_sums, as
repeat(value, hi − c) (Semiring.repeat). A product with a located operand
(dense) keeps Pieces and walks the run's cells, the other side varying; a
product or sum of two run streams (`zip_runs`) is again a run stream whose
pieces are the overlaps of the two run lists. A product of run streams that
may have gaps (a sparse run list, `meet_runs`) is a run stream too: one piece
per overlap of a run of each, the gaps between them skipped whole; so is their
sum (`join_runs`): one piece per stretch held by the same runs, a gap of both
skipped whole. proofs_notes/runs.md.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial, reduce

from .. import imp
from ..imp import (FALSE, ONE, TRUE, ZERO, Assign, If, Load, Var, While, and_, eq, le, lt,
                   max_, min_, not_, select, seq)
from .facts import Covers, Extent, Fact, Facts, Flat, Most, Pieces
from .shift_rows import keepers
from .shift_runs import group_shifts
from .stream import Stream, built, unchanged


def runs_level(names, var, size: imp.Expr, ends: str, start: imp.Expr, end: imp.Expr,
               child, starts: str | None = None) -> Stream:
    """The runs start..end-1 (run r ends at ends[r], holds its value at position
    r): one state per coordinate of a run, one piece per run. `starts` None:
    the runs cover 0..size-1, each starting where the previous ends (Covers);
    else run r starts at starts[r] and the coordinates between runs are
    absent (a sparse run list). `skip` moves over whole runs to the first run
    ending past its target, then within it."""
    r, re, c, e = (names.fresh(f"{var}_{x}") for x in ("r", "rend", "c", "hi"))
    rv, rev, cv, ev = (Var(x) for x in (r, re, c, e))
    enter = Assign(e, Load(ends, rv))
    if starts is not None:
        enter = seq(Assign(c, Load(starts, rv)), enter)
    advance = seq(imp.incr(r), If(lt(rv, rev), enter))
    init = seq(Assign(r, start), Assign(re, end), Assign(c, ZERO), Assign(e, ZERO),
               If(lt(rv, rev), enter))

    def skip(t, rf):
        target = select(rf, imp.add(t, ONE), t)
        return seq(imp.While(and_(lt(cv, ev), le(ev, target)), seq(Assign(c, ev), advance)),
                   Assign(c, max_(cv, target)))

    s = Stream(var=var, state=tuple((x, "index") for x in (r, re, c, e)), init=init,
               valid=lt(cv, ev), index=cv, ready=imp.TRUE, value=child((rv, imp.add(rv, ONE))),
               next=seq(imp.incr(c), If(le(ev, cv), advance)), skip=skip,
               search="runs: jump over whole runs, then within one",
               facts=Facts.of(Most(size), Extent(size), Pieces(c, e, advance), Flat(),
                              Covers() if starts is None else None))
    if starts is not None:
        return s
    return s.derive(s.facts.add(DenseRuns(ends, start, end, r, size, built(s))))


@dataclass(frozen=True, eq=False)
class DenseRuns(Fact):
    """The stream is runs_level's over a dense run list, as built (`made`): the
    runs start..end-1 cover 0..size-1, run r ends at ends[r] and the state `run`
    holds r. A pass that walks the runs itself (lower/schedule/run_lanes.py)
    reads them here. Valid only on the very stream it was made for."""

    ends: str
    start: imp.Expr
    end: imp.Expr
    run: str
    size: imp.Expr
    made: tuple


@dataclass(frozen=True, eq=False)
class Zipped(Fact):
    """The stream is zip_runs of `operands`, as built (`made`). Valid only on
    the very stream it was made for (`zipped_of`)."""

    operands: tuple
    made: tuple


LISTS = (DenseRuns, Zipped)     # kept by a Σ (combinators.contract), as facts.RUN_FACTS


def zipped_of(s: Stream) -> tuple | None:
    """The DenseRuns facts of the two operands of s when s is a zip of two dense
    run lists as built, none of them changed since; else None."""
    z = s.facts.get(Zipped)
    if z is None or not unchanged(z.made, s):
        return None
    lists = [o.facts.get(DenseRuns) for o in z.operands]
    if any(f is None or not unchanged(f.made, o) for f, o in zip(lists, z.operands)):
        return None
    return tuple(lists)


def is_runs(s) -> bool:
    """Does s read as a dense run list (Pieces, Flat and Covers: every
    coordinate once, one value per piece)?"""
    return Pieces in s.facts and Flat in s.facts and Covers in s.facts


def zip_runs(names, a: Stream, b: Stream, combine) -> Stream:
    """Two run streams over one fibre walked together (both `is_runs`, so both
    hold every coordinate 0..n-1): the product (combine is ⊗) and the union
    (combine is ⊕: every coordinate is in both) of two run lists. Its pieces
    are the overlaps of a's runs and b's runs, value combine(a.value, b.value),
    the same across an overlap. State: both streams',
    kept on one coordinate (a's counter is the product's; b's follows it), and
    the overlap's end m = min(a's end, b's end)."""
    pa, pb = a.facts.get(Pieces), b.facts.get(Pieces)
    m = names.fresh(f"{a.var}_m")
    mv, ca = Var(m), Var(pa.counter)
    close = Assign(m, min_(Var(pa.end), Var(pb.end)))
    advance = seq(Assign(pb.counter, ca),
                  If(le(Var(pa.end), ca), pa.advance), If(le(Var(pb.end), ca), pb.advance),
                  close)

    def skip(t, rf):
        return seq(a.skip(t, rf), b.skip(t, rf), Assign(pa.counter, max_(ca, Var(pb.counter))),
                   Assign(pb.counter, ca), close)

    z = Stream(var=a.var, state=a.state + b.state + ((m, "index"),),
               init=seq(a.init, b.init, close), valid=lt(ca, mv), index=ca, ready=imp.TRUE,
               value=combine(a.value, b.value),
               next=seq(imp.incr(pa.counter), If(le(mv, ca), advance)), skip=skip,
               search="runs with runs: one piece per overlap of their runs",
               facts=a.facts.keep(Most, Extent).add(Pieces(pa.counter, m, advance),
                                                    Flat(), Covers()))
    return z.derive(z.facts.add(Zipped((a, b), built(z))))


def runs_product(names, a: Stream, b: Stream, combine, shifts: bool = False,
                 rings=None) -> Stream | None:
    """The product of two run streams, one piece per overlap of their runs:
    zip_runs when both hold every coordinate (is_runs), meet_runs when either
    may have gaps (has_runs; `shifts`, `rings`: meet_runs'); None when one is
    not read as runs."""
    if is_runs(a) and is_runs(b):
        return zip_runs(names, a, b, combine)
    if has_runs(a) and has_runs(b):
        return meet_runs(names, a, b, combine, shifts, rings)
    return None


def has_runs(s) -> bool:
    """Does s read as runs with possible gaps (Pieces and Flat, every state
    ready, indexed by its piece counter): a dense or sparse run list, or a
    product of such?"""
    p = s.facts.get(Pieces)
    return (p is not None and Flat in s.facts and s.ready == TRUE
            and s.index == Var(p.counter))


@dataclass(frozen=True, eq=False)
class Meets(Fact):
    """The stream is meet_runs of `operands` (each `has_runs`), as built (`made`:
    its init, valid, value, next and skip): a product with one more run stream
    is the meet of all of them (one align and one close over k operands), not
    a meet nested in a meet. Valid only on the very stream it was made for
    (`meet_of`)."""

    operands: tuple
    made: tuple


def meet_of(s: Stream) -> tuple:
    """The operands of s when s is a meet as built (its Meets fact is its own:
    no combinator has changed its init, test, value, step or skip since),
    else (s,)."""
    f = s.facts.get(Meets)
    same = f is not None and unchanged(f.made, s)
    return f.operands if same else (s,)


def meet_runs(names, a: Stream, b: Stream, combine, shifts: bool = False,
              rings=None) -> Stream:
    """The product (combine is ⊗) of two streams that `has_runs`, either
    possibly with gaps between its runs, each possibly a meet itself (its
    operands are taken, `meet_of`, so a product of k run streams is one meet
    of k). One piece per overlap of a run of each operand, value
    combine(a.value, b.value); coordinates outside any operand's runs are
    skipped whole (`align`: every operand behind the furthest skips to it,
    which moves over whole runs) and never visited. State: the operands' and
    the overlap's end m (and the align's target t); the first operand's
    counter is the product's, the others are brought to it at each advance.
    `shifts` (⊗ idempotent, Tuning.shift_runs): the windows of one row at
    shifts that fill an interval are met first as one stream
    (streams.shift_runs, proofs_notes/shifts.md); with `rings` (a
    shift_rows.Rings, Tuning.shift_rows) those of rows read at offsets of one
    parent position through a ring of rows kept across the output's rows
    (streams.shift_rows). proofs_notes/runs.md, law 6."""
    made = meet_of(a) + meet_of(b)
    rows = None if rings is None else partial(keepers, names, rings, runs_level)
    ops = group_shifts(names, list(made), combine, rows) if shifts else list(made)
    value = combine(a.value, b.value) if len(ops) == len(made) else \
        reduce(combine, [s.value for s in ops])
    ps = [s.facts.get(Pieces) for s in ops]
    m, t = names.fresh(f"{a.var}_m"), names.fresh(f"{a.var}_t")
    mv, tv, c0 = Var(m), Var(t), Var(ps[0].counter)
    cs = [Var(p.counter) for p in ps]
    valid = reduce(and_, [s.valid for s in ops])
    same = reduce(and_, [eq(c0, c) for c in cs[1:]], TRUE)
    align = While(and_(valid, not_(same)), seq(
        Assign(t, reduce(max_, cs)),
        *[If(lt(c, tv), s.skip(tv, FALSE)) for s, c in zip(ops, cs)]))
    close = Assign(m, select(same, reduce(min_, [Var(p.end) for p in ps]), ZERO))
    follow = seq(*[Assign(p.counter, c0) for p in ps[1:]])
    advance = seq(follow, *[If(le(Var(p.end), c0), p.advance) for p in ps], align, close)

    def skip(to, rf):
        return seq(follow, *[s.skip(to, rf) for s in ops], align, close)

    state = sum((s.state for s in ops), ()) + ((m, "index"), (t, "index"))
    meet = Stream(var=a.var, state=state, init=seq(*[s.init for s in ops], align, close),
                  valid=lt(c0, mv), index=c0, ready=TRUE, value=value,
                  next=seq(imp.incr(ps[0].counter), If(le(mv, c0), advance)), skip=skip,
                  search=f"runs with runs ({len(ops)}): one piece per overlap, gaps "
                         f"skipped whole",
                  facts=ops[0].facts.keep(Most, Extent).add(
                      Pieces(ps[0].counter, m, advance), Flat()))
    return meet.derive(meet.facts.add(Meets(made, built(meet))))


def join_runs(names, a: Stream, b: Stream, value, most=None) -> Stream:
    """The union (the sum) of two streams that `has_runs`, either possibly with
    gaps: its states are the coordinates held by either, one piece per stretch
    held by the same runs (from the least coordinate held, u, to the first end
    of a run holding u or start of one that does not), value(ina, inb) with
    ina, inb whether a and b hold the piece (the caller's sum of the guarded
    values); coordinates held by neither are never states. State: both
    streams', u (the counter), the piece's end m and ina, inb, all set by
    `close` from the two streams' positions. proofs_notes/runs.md, law 7."""
    pa, pb = a.facts.get(Pieces), b.facts.get(Pieces)
    u, m, ia, ib = (names.fresh(f"{a.var}_{x}") for x in ("u", "m", "ina", "inb"))
    uv, mv, iav, ibv = Var(u), Var(m), Var(ia), Var(ib)
    ca, cb, ea, eb = Var(pa.counter), Var(pb.counter), Var(pa.end), Var(pb.end)
    close = seq(
        Assign(u, select(a.valid, select(b.valid, min_(ca, cb), ca), cb)),
        Assign(ia, and_(a.valid, eq(ca, uv))), Assign(ib, and_(b.valid, eq(cb, uv))),
        Assign(m, select(iav, select(ibv, min_(ea, eb), select(b.valid, min_(ea, cb), ea)),
                         select(ibv, select(a.valid, min_(eb, ca), eb), uv))))
    advance = seq(a.skip(uv, FALSE), b.skip(uv, FALSE), close)

    def skip(t, rf):        # never behind the piece's counter: states are not revisited
        to = max_(select(rf, imp.add(t, ONE), t), uv)
        return seq(a.skip(to, FALSE), b.skip(to, FALSE), close)

    covers = Covers() if Covers in a.facts or Covers in b.facts else None
    state = a.state + b.state + ((u, "index"), (m, "index"), (ia, "bool"), (ib, "bool"))
    return Stream(var=a.var, state=state, init=seq(a.init, b.init, close), valid=lt(uv, mv),
                  index=uv, ready=TRUE, value=value(iav, ibv),
                  next=seq(imp.incr(u), If(le(mv, uv), advance)), skip=skip,
                  search="runs or runs: one piece per stretch held by the same runs",
                  facts=Facts.of(Pieces(u, m, advance), Flat(), covers,
                                 None if most is None else Most(most)))
