"""Prefetching, switched by tuning.prefetch: rows that a segment level gathers
(prefetch_ahead), and the arrays of segments that follow one another in memory
(prefetch_runs). Hints only: they never change a result."""
from __future__ import annotations

import functools
from dataclasses import replace

from ... import host_facts, imp, streams
from . import pieces
from ...imp import ONE, ZERO, Assign, Bin, Const, Decl, If, Load, Var, While, lt, seq


def prefetch_ahead(em, s) -> imp.Stmt:
    """At each state of a segment level that gathers rows of other operands at
    its coordinates (SpMM's X[j,:], SDDMM's V[j,:], Gustavson's B[j,:]):
    prefetch the rows that tuning.prefetch_distance states later will read, up
    to tuning.prefetch_span values each (a line apart, and a compressed row's
    last value too, tuning.prefetch_row_end: steps from an unaligned start miss
    its last line), when that operand holds at least tuning.prefetch_min_bytes
    of values (checked per call: a smaller one stays in cache). A compressed
    row starts at pos[t], which is itself prefetched twice as far ahead, so it
    is in cache when the row's address is computed. crd[q + d] is a hint read
    (imp.Load.hint) only while q + d is inside crd, taken as 0 outside the
    dimension (the row start read through it stays in pos); rows of one value
    (SpMV's x[j]) are left to the hardware. The blocks the target will write at
    that coordinate (scatter_blocks: a counting sort's destinations) are
    prefetched for writing, one value each. With tuning.prefetch_near_share,
    rows are gathered for a segment only when it is far (`near_segment`).

    Returns (the statement for each state, the statement for the segment's
    init: SKIP, or the declaration that `near_segment` makes)."""
    tn = em.tuning
    ahead, fetch, counter = (s.facts.get(k) for k in (streams.Ahead, streams.Prefetch,
                                                      streams.Counter))
    if not (tn.prefetch and ahead and fetch and counter):
        return imp.SKIP, imp.SKIP
    crd, n = ahead.crd, ahead.n
    at = imp.add(Var(counter.name), Const(tn.prefetch_distance))
    at2 = imp.add(Var(counter.name), Const(2 * tn.prefetch_distance))
    t = em.names.fresh(f"{s.var}_ahead")
    # unchecked where the walk checks crd: a row's start pos[t] is read through it
    ahead_crd = Load(crd, at, hint=True)
    inside = imp.select(Bin("<u", ahead_crd, streams.dim_var(s.var)), ahead_crd, ZERO)
    body, early, big = [Decl(t, "index", inside)], [], []
    for blk in fetch.blocks:
        wanted = _gather(em, s, blk, Var(t), body)
        if wanted is not None and wanted not in big:
            big.append(wanted)
        if wanted is not None and blk.via is not None and \
                blk.via[0] not in {e.array for e in early}:
            early.append(imp.Prefetch(blk.via[0], blk.via[1](Load(crd, at2, hint=True))))
    if not big:
        return imp.SKIP, imp.SKIP
    wanted = functools.reduce(imp.or_, big)
    init = near_segment(em, s, ahead, wanted)
    if init != imp.SKIP:          # wanted kept here too: size_switch finds its size test
        wanted = imp.and_(Var(init.name), wanted)
    fetch = If(imp.and_(wanted, lt(at, n)), seq(*body))
    if not early:
        return fetch, init
    return seq(If(imp.and_(wanted, lt(at2, n)), seq(*early)), fetch), init


def near_segment(em, s, ahead, wanted) -> imp.Stmt:
    """`bool far = wanted and the segment is far`, declared at the segment's
    start, or SKIP (tuning.prefetch_near_share 0, or no Segment fact). A segment of two entries
    or more whose coordinates span at most 1/share of the gathered dimension
    (|crd[end-1] - crd[q]| · share <= dim: a banded or stencil operator's row,
    whose gathered rows the previous rows read too, in cache or on a few
    sequential streams the hardware prefetcher follows) is near; others (a
    random row, a row of one entry) are far. The ends are read only when
    0 <= q < end <= n (n: crd's checked length), else the segment is far. A
    hint: either answer gives the same result (its reads are imp.Load hints)."""
    share, seg = em.tuning.prefetch_near_share, s.facts.get(streams.Segment)
    if share <= 0 or seg is None:
        return imp.SKIP
    q, end, crd, dim = Var(seg.q), Var(seg.end), ahead.crd, streams.dim_var(s.var)
    inside = imp.and_(imp.le(imp.ZERO, q), imp.and_(lt(imp.add(q, ONE), end),
                                                   imp.le(end, ahead.n)))
    last = Load(crd, Bin("-", end, ONE), hint=True)
    span = imp.min_(Bin("-", last, Load(crd, q, hint=True)), dim)
    near = imp.and_(inside, imp.le(imp.mul(span, Const(share)), dim))
    return Decl(em.names.fresh(f"{s.var}_far"), "bool", imp.and_(wanted, imp.not_(near)))


def _gather(em, s, blk, t, body: list) -> imp.Expr | None:
    """Append to `body` the prefetches of block blk at coordinate t; the test
    that its operand is large enough, or None when it is not prefetched."""
    tn = em.tuning
    length = blk.length(t)
    entry = em.sr.dtype.itemsize + (tn.prefetch_index_bytes if blk.via is not None else 0)
    least = Const(tn.prefetch_min_bytes // entry)
    block = host_facts.resolved(tn).prefetch_block_from // entry
    if em.target.in_registers and blk.via is None and block > least.value:
        narrow = lt(imp.mul(length, Const(entry)), Const(4 * 64))    # under 4 lines
        least = imp.select(narrow, Const(block), least)
    wide = imp.le(least, blk.total)
    if blk.written and length == ONE:
        body.append(imp.Prefetch(blk.array, blk.offset(t), write=True))
        return wide
    if isinstance(length, Const) and length.value < 2:
        return None
    line = Const(max(1, 64 // em.sr.dtype.itemsize))
    k, m, o = (em.names.fresh(f"{s.var}_{x}") for x in ("pf", "pf_n", "pf_at"))
    body += [Decl(k, "index", ZERO), Decl(o, "index", blk.offset(t)),
             Decl(m, "index", imp.min_(length, Const(tn.prefetch_span))),
             While(lt(Var(k), Var(m)), seq(
                 imp.Prefetch(blk.array, imp.add(Var(o), Var(k))),
                 Assign(k, imp.add(Var(k), line))))]
    if tn.prefetch_row_end and blk.via is not None:    # a compressed row: its last line
        body.append(imp.Prefetch(blk.array, imp.add(Var(o), imp.max_(Bin("-", Var(m), ONE),
                                                                     ZERO))))
    return wide


def runs_wanted(s, least: int, tuning) -> imp.Expr:
    """The level's arrays are large (tuning.run_min_entries entries or more, the
    host's at -1: an operand in cache gains nothing and pays the tests and
    prefetches) and this
    segment has at least `least` entries (least <= 0: every segment, with no
    test of its length: in a row of the checked build that test cost more than
    the prefetches it saves; docs/performance.md, "Prefetching consecutive rows")."""
    large = large_runs(s.facts.get(streams.Runs).n, tuning)
    if least <= 0:
        return large
    return imp.and_(large, imp.le(Const(least), s.facts.get(streams.Extent).n))


def large_runs(n, tuning) -> imp.Expr:
    """`run_min_entries <= n`, the level's entry count n (pos[parents]); with
    the host's tuning.run_mean_below > 0 (host_facts), and n read as
    pos[parents] (or as `_parents` reads it), also n < run_mean_below ·
    parents (rows of a shorter mean), as one unsigned comparison: (uint64) (n - least) < (uint64) (max(mean ·
    parents, least) - least), false when that range is empty; a block list's
    rows at any mean where its mean block is shorter than tuning.short_mean
    (n < short_mean · seg[parents] too: pieces.short_mean). It reads only
    constants, n and parents: size_switch makes it once, before the loops."""
    host = host_facts.resolved(tuning)
    least = Const(host.run_min_entries)
    mean, short = host.run_mean_below, host.short_mean
    parents = _parents(n)
    if mean <= 0 or parents is None:
        return imp.le(least, n)
    most = imp.max_(Bin("*", Const(mean), parents), least)
    match n:       # a block list's (pos[seg[parents]]) of short blocks: any row
        case Load(_, Load() as blocks) if short > 0:
            most = imp.max_(most, Bin("*", Const(short), blocks))
    return Bin("<u", Bin("-", n, least), Bin("-", most, least))


def _parents(n) -> Var | None:
    """The parents whose entries n counts, where n reads as pos[parents] (a
    segment level, a banded level), pos[seg[parents]] (a block list: its runs'
    positions) or parents · w (a uniform band: w entries a row); else None."""
    match n:
        case Load(_, Var() as p) | Load(_, Load(_, Var() as p)) | Bin("*", Var() as p, _):
            return p
    return None


def run_loop(em, s, parts) -> imp.Stmt | None:
    """The pass: a level whose segments follow one another (streams.Runs, kept
    only where the loop adds up a leaf's values) with a small ready code; a long
    segment also prefetches at every step (one prefetch per row cannot keep
    ahead of rows of many lines)."""
    if streams.Runs not in s.facts or not parts.small:
        return None
    tn = em.tuning
    long = seq(prefetch_runs(s, tn), parts.fetch)
    return seq(parts.init, If(runs_wanted(s, tn.run_long, tn),
                              While(s.valid, seq(long, imp.if_(s.ready, parts.on_ready), s.next),
                                    streams.walk_of(s, s.next)),
                              parts.step(s, s.next, parts.on_ready)))


def prefetch_runs(s, tuning, names=None, start=False) -> imp.Stmt:
    """For a level whose segments follow one another (SpMV's rows): prefetch each
    array it reads at its position (crd, values) tuning.run_ahead entries past
    the position (streams.Runs), clamped to one past the end; at a segment's
    `start`, with tuning.prefetch_past, not clamped (the address formed as an
    integer: the clamp cost short rows more than the prefetches). The driver runs it at the start of
    each segment of at least tuning.run_short entries, and at every step of one
    of at least tuning.run_long, when runs_wanted. A level read as counted
    pieces (streams.Pieces: a band, a row of blocks), whose loop no per-step
    prefetch reaches, prefetches with `names` its whole run ahead instead: its
    positions are consecutive, so of the Extent entries from tuning.piece_ahead
    past the position (up to 8 · tuning.run_lines of them) it prefetches the
    first (clamped to one past the end) and, in a run of more than 8, every
    8th after it below the end: one per 64-byte line of 8-byte values (a line
    the last one misses is the next run's first); where its mean piece is short
    (pieces.short_mean: walked flat), one prefetch of each, as a segment's."""
    runs = s.facts.get(streams.Runs)
    if runs is None:
        return imp.SKIP
    here = runs.at if runs.at is not None else Var(s.facts.get(streams.Segment).q)
    arrays, n = runs.arrays, runs.n
    at = imp.min_(imp.add(here, Const(tuning.run_ahead)), n)
    extent = s.facts.get(streams.Extent)
    if tuning.prefetch_past and start:    # not clamped (imp.Prefetch.ahead)
        single = seq(*(imp.Prefetch(a, here, ahead=tuning.run_ahead) for a in arrays))
    else:
        single = seq(*(imp.Prefetch(a, at) for a in arrays))
    if names is None or tuning.run_lines <= 1 or streams.Pieces not in s.facts or extent is None:
        return single
    k, end = names.fresh(f"{s.var}_pf"), names.fresh(f"{s.var}_pf_end")
    at = imp.add(here, Const(tuning.piece_ahead))
    span = imp.min_(extent.n, Const(8 * tuning.run_lines))
    first = seq(*(imp.Prefetch(a, imp.min_(at, n)) for a in arrays))
    rest = seq(Decl(k, "index", imp.add(at, Const(8))),
               Decl(end, "index", imp.min_(imp.add(at, span), n)),
               While(lt(Var(k), Var(end)), seq(*(imp.Prefetch(a, Var(k)) for a in arrays),
                                               Assign(k, imp.add(Var(k), Const(8))))))
    lines = seq(first, If(lt(Const(8), extent.n), rest))
    short = pieces.short_mean(tuning, s.facts.get(streams.Pieces))
    if short is None:
        return lines
    return If(short, single, lines)      # short pieces walked flat: one per row, as csr's


def runs_read(s, on_ready: imp.Stmt, tuning):
    """s with its Runs hint's arrays cut to those its loop reads (in `on_ready`,
    the code of one ready record, or in its valid, ready and next): a prefetch
    of an array no load follows only adds memory traffic (the crd of a summed
    unique level whose coordinate nothing reads: a table's one-line levels
    walked under a run of them, as TPC-H Q15's supplier, ship date and mode);
    the hint dropped when it keeps none. s itself with Tuning.prefetch_read off."""
    runs = s.facts.get(streams.Runs)
    if runs is None or not tuning.prefetch_read:
        return s
    read = set(imp.arrays_loaded_at(seq(on_ready, s.next), None))
    for e in (s.valid, s.ready):
        read.update(imp.arrays_loaded_at(e, None))
    arrays = tuple(a for a in runs.arrays if a in read)
    if arrays == runs.arrays:
        return s
    if not arrays:
        return s.derive(streams.Facts(tuple(f for f in s.facts.items if f is not runs)))
    return s.derive(s.facts.add(replace(runs, arrays=arrays)))
