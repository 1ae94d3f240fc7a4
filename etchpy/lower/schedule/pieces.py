"""Pieces, switched by tuning.pieces: the loop of a level read as dense runs
(streams.Pieces: a band, or a segment of blocks) as one counted loop per run,
inside a loop over the runs. The inner loop loads no coordinate and tests
nothing but its counter. When it only adds up a leaf's values into one
accumulator (an SpMV row), its sum is split over tuning.sum_lanes accumulators
(-1: the host's, etchpy.host_facts)
added together after, then what is left over a quarter as many, so that the
adds do not wait on one another
(floats: the sum is reassociated, so it may round differently;
proofs_notes/levels.md). A piece of exactly tuning.short_pieces states is
added straight-line instead, after one test of its length (the loop
unrolled: the same result bit for bit). A block list whose mean block is
shorter than tuning.short_mean is walked flat instead (`short_mean`)."""
from __future__ import annotations

from ... import host_facts, imp, streams
from ...imp import Assign, Bin, Const, Decl, Ring, Var, While, incr, lt, seq


def run(em, s, parts) -> imp.Stmt | None:
    """The pass: a level whose run is counted pieces (streams.Pieces) loops per
    piece. The two loops visit the states of `while valid: …` in its order:
    within a piece, next is counter + 1; at its end, next is the advance."""
    pieces = s.facts.get(streams.Pieces)
    if pieces is None:
        return None
    lanes = host_facts.resolved(em.tuning).sum_lanes
    stages = [lanes] + ([lanes // 4] if lanes // 4 >= 2 else [])
    split = [split_sum(em, s, parts, pieces.counter, Var(pieces.end), n) for n in stages]
    plain = While(s.valid, seq(parts.fetch, imp.if_(s.ready, parts.on_ready),
                               incr(pieces.counter)))
    inner = short_sum(em, s, parts, pieces, seq(*split, plain))
    if pieces.advance == imp.SKIP:          # one piece
        return seq(parts.init, inner)
    inner = While(s.valid, seq(inner, pieces.advance))
    short = short_mean(em.tuning, pieces)
    if short is None or all(x == imp.SKIP for x in split):
        return seq(parts.init, inner)
    return seq(parts.init, imp.If(short, parts.step(s, s.next, parts.on_ready), inner))


def short_mean(tuning, pieces) -> imp.Expr | None:
    """`total < short_mean · count` (Pieces.sizes, several pieces a parent: a
    block list): the level's mean piece is shorter than tuning.short_mean
    states. Its rows are then walked as the stream's own flat loop (a test of
    the piece's end at each state), with no loop a piece and no lanes: on
    pieces of a few states (a block list of 2×2 blocks, runs of 6) their tests
    and sums cost more than the adds they overlap, and a row's values are
    prefetched once (prefetch.prefetch_runs) as a csr row's are
    (docs/performance.md, "Short blocks walked flat"). A band (one piece a row)
    keeps its lanes: its plain loop measured slower on short rows. The test
    reads only the level's counts: size_switch makes it once, before the
    loops. None when tuning.short_mean (the host's at -1) is 0 or the sizes
    are unknown."""
    mean = host_facts.resolved(tuning).short_mean
    if mean <= 0 or not pieces.sizes:
        return None
    total, count = pieces.sizes
    return lt(total, Bin("*", Const(mean), count))


def split_sum(em, s, parts, c: str, end: imp.Expr, lanes: int) -> imp.Stmt:
    """The first states of a piece (counter c up to `end`), `lanes` at a time into as many accumulators,
    added into the accumulator after (all of it skipped when the piece has
    fewer states left: a short band pays one test); the rest of the piece is left to the
    next stage (a quarter as many lanes) and the plain loop. SKIP unless the
    ready code is `acc := acc ⊕ v` (v not reading acc) and nothing else runs
    per state."""
    found = _summed(parts.on_ready)
    if lanes < 2 or found is None or parts.fetch != imp.SKIP or s.ready != imp.TRUE:
        return imp.SKIP
    acc, v = found
    names = [em.names.fresh(f"{acc}_lane") for _ in range(lanes)]
    adds = [Assign(a, Ring("add", Var(a), imp.substitute(v, c, imp.add(Var(c), Const(k)))))
            for k, a in enumerate(names)]
    total = [Var(a) for a in names]
    while len(total) > 1:                  # a balanced tree of adds
        total = [Ring("add", total[k], total[k + 1]) if k + 1 < len(total) else total[k]
                 for k in range(0, len(total), 2)]
    zero = Const(em.sr.zero, "value")
    fits = lt(imp.add(Var(c), Const(lanes - 1)), end)
    return imp.If(fits, seq(*[Decl(a, "value", zero) for a in names],
                            While(fits, seq(*adds, Assign(c, imp.add(Var(c), Const(lanes))))),
                            Assign(acc, Ring("add", Var(acc), total[0]))))


def short_sum(em, s, parts, pieces, rest: imp.Stmt) -> imp.Stmt:
    """A piece of exactly tuning.short_pieces states (a band of 3: the narrowest
    band, a P1 operator's rows) added straight-line: one test of its length,
    then its states with no test between them, in the plain loop's order (so it
    rounds as the loop does), the counter left at the piece's end as the loop
    leaves it; `rest` (the lane stages and the loop) for any other piece.
    `rest` unchanged under the conditions of split_sum, or short_pieces below 1."""
    n = em.tuning.short_pieces
    found = _summed(parts.on_ready)
    if n < 1 or found is None or parts.fetch != imp.SKIP or s.ready != imp.TRUE:
        return rest
    acc, v = found
    c, end = pieces.counter, Var(pieces.end)
    at = lambda k: imp.add(Var(c), Const(k)) if k else Var(c)
    adds = [Assign(acc, Ring("add", Var(acc), imp.substitute(v, c, at(k)))) for k in range(n)]
    return imp.If(imp.eq(end, at(n)), seq(*adds, Assign(c, end)), rest)


def _summed(stmt):
    """(acc, v) when stmt is `acc := acc ⊕ v` and v does not read acc, else None."""
    match stmt:
        case Assign(acc, Ring("add", Var(a), v)) if a == acc and acc not in imp.names_used(v):
            return acc, v
    return None

