"""Run lanes, switched by tuning.run_lanes (< 2: off): a full reduction
Σ_{i,j} over a plain counted level i whose row is the zip of two dense run
lists (streams.runs.zip_runs: one piece per overlap of their runs), summed
into one accumulator, walks the pieces in `run_lanes` lanes in lockstep
instead of row by row.

The rows are cut into `lanes` chunks of consecutive rows. A chunk's runs are
consecutive in each run list (a row's runs end where the next row's begin:
start(i + 1) is end(i)), and every row's runs of both lists end at the row's
width, so a chunk is one walk over its runs with no test of the row: a piece
ends at e = min(end of a's run, end of b's run), adds repeat(value, e − c)
into the lane's own accumulator, steps each list whose run ends at e (both at
a row's end), and the next piece starts at c = e, or at 0 where e is the
width. Each step is branch-free (the steps are 0 or 1, made opaque to the C
compiler so that it does not turn them back into branches): which run ends
first is not predictable on real images, and the loop with a branch a list
paid a misprediction on most pieces. The lanes run in one loop while every
lane has runs left, so their loads and adds overlap; then each lane's rest
alone; then the lanes' sums are added in lane order into the accumulator.
Where the runs are long (the list of fewer runs has a mean run of
tuning.run_lanes_below cells or more, tested once a call) the branches of the
plain loop are predicted and it runs instead.

The sum is the plain loop's, taken in another order (one sum a lane): exact
in a ring of integers or booleans, in floating point within rounding as
sum_lanes' (proofs_notes/runs.md, law 10). docs/performance.md, "The rle
masked sum in lanes".
"""
from __future__ import annotations

from ... import imp, streams
from ...imp import (ONE, ZERO, Assign, Bin, Block, Comment, Const, Decl, Opaque, Ring, Var,
                    While, and_, eq, le, lt, min_, select, seq)
from ...streams.runs import zipped_of
from .threads import plain_counted


def run(em, s) -> imp.Stmt | None:
    """The pass at a step's loop nest: the lanes, or None where the nest is
    not a full reduction over a zip of two dense run lists a row."""
    lanes = em.tuning.run_lanes
    if lanes < 2 or em.markers or not plain_counted(s) or em.sr.repeat is None:
        return None
    if em.target.sparse_writes or em.target.keeps_flags:
        return None
    z = s.value
    if not (streams.is_stream(z) and s.contracted and z.contracted) or streams.is_stream(z.value):
        return None
    lists = zipped_of(z)
    c, first, end = streams.counter_range(s)
    if lists is None or not all(_rows_follow(f, c) for f in lists):
        return None
    runs = [f.run for f in lists]
    state = {name for name, _ in s.state + z.state} | {c}
    if not imp.names_used(z.value) & state <= set(runs):
        return None
    lanes_code = _lanes(em, s, c, first, end, lists, lanes)
    below = em.tuning.run_lanes_below
    if below < 1:
        return lanes_code
    a, b = lists
    cells = imp.mul(imp.Bin("max", Bin("-", end, first), ZERO), a.size)
    fewer = min_(Bin("-", _at(a.start, c, end), _at(a.start, c, first)),
                 Bin("-", _at(b.start, c, end), _at(b.start, c, first)))
    return imp.If(lt(cells, imp.mul(fewer, Const(below))), lanes_code,
                  Block(em.emit(s, em.top())))


def _rows_follow(f, c: str) -> bool:
    """The run list's row bounds read the row c alone (and arrays), and row
    c + 1 starts where row c ends."""
    if imp.replaced(f.start, Var(c), imp.add(Var(c), ONE)) != f.end:
        return False
    return not imp.names_used(f.start) - {c} - set(_arrays(f.start))


def _arrays(e) -> list:
    return [x.array for x in imp.subterms(e) if isinstance(x, imp.Load)]


def _lanes(em, s, c, first, end, lists, lanes: int) -> imp.Stmt:
    fresh = em.names.fresh
    a, b = lists
    acc = fresh("acc")
    n = fresh(f"{s.var}_rows")
    width = a.size
    decls, steps, tails, sums = [], [], [], []
    ranges = []
    for k in range(lanes):
        lo = imp.add(first, Bin("/", imp.mul(Var(n), Const(k)), Const(lanes)))
        hi = imp.add(first, Bin("/", imp.mul(Var(n), Const(k + 1)), Const(lanes)))
        ra, rb, la, lb = (fresh(f"{s.var}_{x}{k}") for x in ("ra", "rb", "la", "lb"))
        cc, sk = fresh(f"{s.var}_at{k}"), fresh(f"{acc}_{k}")
        decls += [Decl(ra, "index", _at(a.start, c, lo)), Decl(la, "index", _at(a.start, c, hi)),
                  Decl(rb, "index", _at(b.start, c, lo)), Decl(lb, "index", _at(b.start, c, hi)),
                  Decl(cc, "index", ZERO), Decl(sk, "value", Const(em.sr.zero, "value"))]
        step = _step(em, s.value.value, a, b, ra, rb, cc, sk, width)
        ranges.append(and_(lt(Var(ra), Var(la)), lt(Var(rb), Var(lb))))
        steps.append(step)
        tails.append(While(ranges[-1], step))
        sums.append(Assign(acc, Ring("add", Var(acc), Var(sk))))
    together = ranges[0]
    for r in ranges[1:]:
        together = and_(together, r)
    body = seq(Comment(f"{s.var}: Σ over runs with runs, the rows in {lanes} lanes in lockstep, "
                       f"each piece a branch-free step"),
               Decl(acc, "value", Const(em.sr.zero, "value")),
               Decl(n, "index", imp.Bin("max", Bin("-", end, first), ZERO)),
               *decls, While(together, seq(*steps)), *tails, *sums,
               em.target.write(em.top(), Var(acc)))
    return Block(body)


def _at(e, c: str, row) -> imp.Expr:
    return imp.replaced(e, Var(c), row)


def _step(em, value, a, b, ra: str, rb: str, cc: str, sk: str, width) -> imp.Stmt:
    """One piece of a lane: its end, its repeat added, each list stepped whose
    run ends there (0 or 1, opaque), the next piece's start."""
    fresh = em.names.fresh
    ea, eb, e, da, db = (fresh(f"{ra}_{x}") for x in ("ea", "eb", "e", "da", "db"))
    v = imp.replaced(imp.replaced(value, Var(a.run), Var(ra)), Var(b.run), Var(rb))
    piece = Ring("repeat", v, Bin("-", Var(e), Var(cc)))
    return Block(seq(
        Decl(ea, "index", imp.Load(a.ends, Var(ra))), Decl(eb, "index", imp.Load(b.ends, Var(rb))),
        Decl(e, "index", min_(Var(ea), Var(eb))),
        Assign(sk, Ring("add", Var(sk), piece)),
        Decl(da, "index", select(le(Var(ea), Var(eb)), ONE, ZERO)),
        Decl(db, "index", select(le(Var(eb), Var(ea)), ONE, ZERO)),
        Opaque(da), Opaque(db),
        Assign(ra, imp.add(Var(ra), Var(da))), Assign(rb, imp.add(Var(rb), Var(db))),
        Assign(cc, select(eq(Var(e), width), ZERO, Var(e)))))
