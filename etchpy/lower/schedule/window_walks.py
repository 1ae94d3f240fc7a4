"""A window walk's loop with no branch (switched by tuning.window_walk): the
walk of a whole segment through a window (streams.window.window_walk) tests
each coordinate against the window; where each ready state only ⊕-adds one
value into a scalar accumulator, the loop computes every state's value and
keeps it where the test holds:

    while (q < e) { ok := ready; at := ok ? index : safe;
                    acc := ok ? acc ⊕ value[index := at] : acc; q := q + 1 }

in place of `if (ready) acc := acc ⊕ value`: a select, not a branch that the
window's edges make unpredictable. At a state that is not ready the value is
read at the window's `safe` index, inside the window (WindowWalk: every state's
value is readable there, and the walk runs no state when the window is
empty), and dropped. proofs_notes/windows.md, "A window walk".

A segment longer than tuning.window_walk_stop (0: none) takes, instead, the
search-and-stop loop (the walk's narrowing, noted on the loop's Walk as such),
then the walk that branches on the test, which then runs no state:

    if (e - q > L) { q := search(lo); while (q < e && c - lo < n) { acc ⊕= v; q++ }; q := e;
                     while (q < e) { if (ready) acc ⊕= v; q++ } }
    else <the branch-free walk>

A kernel that checks the level as it walks (lower.schedule.fused_checks)
drops the narrowing, so there the long segment is walked whole, branching:
the search and the stop rely on an order nobody checked. Either way the
segment's ready states are ⊕-added in order (proofs_notes/windows.md, "A
window walk", the choice per segment).

Every state of these loops also prefetches the operands its value gathers at
the coordinate tuning.window_prefetch states ahead (`_ahead`), when the
gathered dimension holds at least tuning.prefetch_min_bytes of values and the
segment is far (its coordinates span more than 1/tuning.prefetch_near_share of
that dimension: a random row, not a banded operator's): a hint only, read
through crd[q + d] while q + d is inside crd, at the window's safe index
outside the window. Where the rows walked are a strided window's (not
consecutive in storage), d is the offset to the same place of the row
tuning.window_prefetch_rows rows on (`_rows_on`). Such a window's near rows
(the copy that does not prefetch x) prefetch instead, at each row's start, the
lines of crd and of the values holding the first tuning.window_rows_span
entries of the row tuning.window_rows_ahead rows of the window on
(`_rows_ahead`): the hardware prefetcher does not follow rows read one in s.

In those prefetching (far) loops the select is also made truly branch-free
(tuning.window_keep), where the carrier's zero is all-zero bytes (real, int,
boolean sums): `acc := acc ⊕ keep(ok, value[index := at])`, keep (C's
ep_keep) the value's bytes masked by the test, so a miss adds the ⊕ identity.
GCC compiles the select as a branch, mispredicted at about half the states of a
far row through a wide window; the prefetched gathers then stop waiting on it
(proofs_notes/windows.md, "Far terms kept by their bytes").

Under lower.schedule.window_blocks (em.buffer set) a sum of `vals[q] ⊗ x[c]`
is made buffered (`_buffered`): a segment of at most the buffer's size
appends its states to the buffers, the loops above only for longer ones.
"""
from __future__ import annotations

from dataclasses import replace

from ... import imp
from ...imp import (Assign, Bin, Block, Const, Decl, If, Load, Prefetch, Ring, Select, Store, Var,
                    While, and_, le, lt, replaced, seq)
from ...imp.analysis import subterms
from ...streams.facts import Walk, WindowWalk
from ...streams.from_expr import dim_var


def run(em, s, parts) -> imp.Stmt | None:
    """The pass: s a window walk whose ready code is `acc := acc ⊕ v` for a
    scalar acc; else None. With a prefetch (`_ahead`), the loops are made twice,
    with and without it: `if (far) <loops, prefetching> else <loops>`."""
    walk = s.facts.get(WindowWalk)
    match parts.on_ready:
        case Assign(acc, Ring("add", Var(acc2), value)) if walk is not None and acc == acc2:
            pass
        case _:
            return None
    hit = s.index.a if isinstance(s.index, Select) and s.index.cond == s.ready else s.index
    far, ahead, fetch = _ahead(em, s, walk, hit, [e.array for e in subterms(value)
                                                  if isinstance(e, Load) and e.index == s.index],
                               _rows_on(em, parts.init, walk))
    init = parts.init
    if em.tuning.window_walk_stop > 0 and walk.stop is not None:
        init = replaced(init, walk.narrow, imp.SKIP)
    plain = _loops(em, s, parts, walk, acc, value, hit, imp.SKIP)
    rows = _rows_ahead(em, s, parts.init, walk, [e.array for e in subterms(value) if isinstance(
        e, Load) and e.index == Var(walk.segment.q)])
    if rows != imp.SKIP:
        plain = seq(rows, plain)
    if fetch != imp.SKIP:
        plain = seq(far, If(Var(far.name),
                            seq(ahead, _loops(em, s, parts, walk, acc, value, hit, fetch)), plain))
    gathered = _gathered(value, walk.segment.q, s.index)
    if em.buffer is None or gathered is None:
        return seq(init, _inside(plain, walk.segment.q))
    return seq(init, _inside(_buffered(em, s, parts, walk, hit, gathered,
                                       parts.step(s, s.next, parts.on_ready)), walk.segment.q))


def _inside(stmt, q: str):
    """stmt with the Walk note of each of its loops over q saying `inside`:
    each form above reads memory at the coordinate only where the window's test
    holds (a select of the safe index on it, a branch on it, or a hit counted
    in the buffers by it: the flush reads x only at those), and through hint
    loads and prefetches, which never fault; so a kernel checking the level
    after the loop may leave its coordinates unclamped (fused_checks,
    proofs_notes/validation.md, "Coordinates checked after a block")."""
    for n in list(imp.statements(stmt)):
        if isinstance(n, While) and isinstance(n.walk, Walk) and n.walk.q == q:
            stmt = replaced(stmt, n, replace(n, walk=replace(n.walk, inside=True)))
    return stmt


def _gathered(value, q: str, index):
    """(vals, x, x first?) when value is vals[q] ⊗ x[index] (either factor
    first), else None."""
    match value:
        case Ring("mul", Load(a, Var(p)), Load(b, at)) if p == q and at == index:
            return a, b, False
        case Ring("mul", Load(b, at), Load(a, Var(p))) if p == q and at == index:
            return a, b, True
    return None


def _buffered(em, s, parts, walk, hit, gathered, plain) -> imp.Stmt:
    """The segment's hits kept in em.buffer (lower.schedule.window_blocks), the
    buffer flushed first when they might not fit; a segment longer than the
    buffer runs `plain`, the walk that branches (one small loop, not a
    second copy of every form above). Records the flush in the buffer."""
    buf, (vals, x, x_first) = em.buffer, gathered
    seg, n = walk.segment, Var(buf.n)
    k = em.names.fresh(f"{s.var}_k")
    cell, a, b = Load(buf.rows, Var(k)), Load(buf.vals, Var(k)), Load(x, Load(buf.at, Var(k)))
    add = Ring("add", Load(buf.out, cell), Ring("mul", b, a) if x_first else Ring("mul", a, b))
    ahead, fetch = em.tuning.window_blocks_ahead, imp.SKIP
    if ahead > 0 and em.tuning.prefetch:     # x of the hit `ahead` on (a hit: inside x)
        on = imp.add(Var(k), Const(ahead))
        fetch = If(lt(on, n), Prefetch(x, Load(buf.at, on)))
    flush = imp.Block(seq(Decl(k, "index", imp.ZERO), While(lt(Var(k), n), seq(
        fetch, Store(buf.out, cell, add), imp.incr(k))), Assign(buf.n, imp.ZERO)))
    buf.flush.append(flush)
    ok, q = em.names.fresh(f"{s.var}_in"), Var(seg.q)
    keep = seq(Decl(ok, "bool", s.ready),         # a miss's slot is written over: no select
               Store(buf.vals, n, Load(vals, q)), Store(buf.at, n, hit),
               Store(buf.rows, n, buf.row), Assign(buf.n, Bin("+", n, Var(ok))))
    fill = parts.step(s.derive(s.facts, ready=imp.TRUE), s.next, keep)
    if fill.walk is not None:           # its order matters to no result (order_free)
        fill = replace(fill, walk=replace(fill.walk, appends=(
            buf.n, (buf.at, buf.rows), (buf.vals,))))
    length = Bin("-", Var(seg.end), q)
    room = Bin("-", Const(buf.size), n)
    return If(lt(Const(buf.size), length), plain,
              seq(If(lt(room, length), flush), fill))


def _loops(em, s, parts, walk, acc, value, hit, fetch) -> imp.Stmt:
    """The branch-free walk, or, with tuning.window_walk_stop, the choice by
    length (`_by_length`); each state runs `fetch` first."""
    ok, at = em.names.fresh(f"{s.var}_in"), em.names.fresh(f"{s.var}_at")
    kept = imp.replaced(value, s.index, Var(at))
    add = Select(Var(ok), Ring("add", Var(acc), kept), Var(acc))
    if fetch != imp.SKIP and em.tuning.window_keep and em.sr.zero_bytes:
        add = Ring("add", Var(acc), Bin("keep", Var(ok), kept))
    record = seq(Decl(ok, "bool", s.ready), Decl(at, "index", Select(Var(ok), hit, walk.safe)),
                 fetch, Assign(acc, add))
    free = parts.step(s.derive(s.facts, ready=imp.TRUE), s.next, record)
    long = em.tuning.window_walk_stop
    if long <= 0 or walk.stop is None:
        return free
    if fetch != imp.SKIP:        # a far segment walks whole up to window_walk_long
        long = max(long, em.tuning.window_walk_long)
    return _by_length(em, s, parts, walk, long, free, fetch)


def _consecutive(init, q: str) -> bool:
    """Whether the segments walked follow one another in storage, so that the
    entry d states ahead is the one d positions on: the segment starts at
    pos[p] or pos[o + p] for a position p (a row window of step 1, a compressed
    parent's counter), not at pos[o + p·s] (a strided row window, whose rows
    between are never read: prefetching there lost, 1.1–1.9× on random rows
    of 10 at 30% and 50% windows of step 2)."""
    starts = [v for n in imp.statements(init) if isinstance(n, (Assign, Decl))
              and n.name == q and isinstance(v := n.value if isinstance(n, Assign) else n.init,
                                               Load)]
    return bool(starts) and all(isinstance(v.index, Var) or (
        isinstance(v.index, Bin) and v.index.op == "+" and isinstance(v.index.a, Var)
        and isinstance(v.index.b, Var)) for v in starts)


def _strided(init, seg):
    """(pos, at, s) where the segment starts at pos[at], at = o + p·s for a
    constant step s > 0 (a strided row window's), and pos[end] is its last
    entry (seg.crd_len = pos[end]); else None."""
    starts = [n.value for n in imp.statements(init) if isinstance(n, Assign)
              and n.name == seg.q and isinstance(n.value, Load)]
    match starts[:1], seg.crd_len:
        case [Load(pos, Bin("+", _, Bin("*", _, Const(step))) as at)], Load(pos2, end) if (
                pos == pos2 and isinstance(step, int) and step > 0):
            return pos, at, step, end
    return None


def _rows_ahead(em, s, init, walk, arrays) -> imp.Stmt:
    """A strided row window's near rows (not consecutive in storage, so the
    hardware prefetcher does not follow them): at each row's start, the lines of
    crd and of `arrays` (the values read at q) holding the first
    tuning.window_rows_span entries of the row tuning.window_rows_ahead rows of
    the window on, t := pos[min(o + p·s + r·s, rows)], prefetched where t is
    inside crd (a hint: pos unchecked may hold anything) and the window's x holds
    1/8 of tuning.prefetch_min_bytes or more (a smaller window's rows stay in
    cache from call to call: the prefetches only cost); SKIP where off or the
    rows follow one another."""
    tn, seg = em.tuning, walk.segment
    got = None if _consecutive(init, seg.q) else _strided(init, seg)
    if not (tn.prefetch and tn.window_rows_ahead > 0 and tn.window_rows_span > 0 and got):
        return imp.SKIP
    pos, at, step, end = got
    t = em.names.fresh(f"{s.var}_next")
    lines = [(seg.crd, 16)] + [(a, max(1, 64 // em.sr.dtype.itemsize))
                               for a in dict.fromkeys(arrays) if a != seg.crd]
    fetch = [Prefetch(a, Var(t), ahead=k) for a, line in lines
             for k in range(0, tn.window_rows_span, line)]
    body = seq(Decl(t, "index", Load(pos, imp.min_(imp.add(at, Const(tn.window_rows_ahead * step)),
                                                   end), hint=True)),
               If(and_(le(imp.ZERO, Var(t)), le(Var(t), seg.crd_len)), seq(*fetch)))
    least = max(1, tn.prefetch_min_bytes // 8 // em.sr.dtype.itemsize)
    return If(le(Const(least), dim_var(s.var)), body)


def _rows_on(em, init, walk):
    """How far ahead in storage the entry d states on is read: None where the
    segments walked follow one another (`_consecutive`: the entry window_prefetch
    positions on); for a row window of a constant step s, whose segment starts at
    pos[o + p·s], the offset to the same place of the segment
    tuning.window_prefetch_rows rows on, `pos[min(o + p·s + r·s, rows)] − pos[o + p·s]`
    (an index expression), where `rows` indexes pos's last entry; else False."""
    seg = walk.segment
    if _consecutive(init, seg.q):
        return None
    rows, got = em.tuning.window_prefetch_rows, _strided(init, seg)
    if rows <= 0 or got is None:
        return False
    pos, at, step, end = got
    there = Load(pos, imp.min_(imp.add(at, Const(rows * step)), end), hint=True)
    return Bin("-", there, Load(pos, at, hint=True))


def _ahead(em, s, walk, hit, arrays, rows_on) -> tuple:
    """(the segment's `far` flag's declaration, what its far copy declares
    first, the prefetch each state makes) of the `arrays` the value reads at
    the window's index (module docstring), or SKIPs when tuning.prefetch or
    tuning.window_prefetch is off:

        far := [k <= dim] && !(0 <= q && q + 1 < e && e <= len &&
                               min(crd[e-1] - crd[q], dim)·share <= dim)
        if (far && q + d < len) prefetch a[ready(q + d) ? hit(q + d) : safe]

    where d is tuning.window_prefetch, or, for a strided row window, the offset
    to the same place tuning.window_prefetch_rows rows on (`_rows_on`, declared
    in the far copy only; the test is then 0 <= q + d < len)."""
    tn, seg = em.tuning, walk.segment
    if not (tn.prefetch and tn.window_prefetch > 0 and arrays) or rows_on is False:
        return imp.SKIP, imp.SKIP, imp.SKIP
    q, e, n, dim = Var(seg.q), Var(seg.end), seg.crd_len, dim_var(s.var)
    far = le(Const(max(1, tn.prefetch_min_bytes // em.sr.dtype.itemsize)), dim)
    if tn.prefetch_near_share > 0:
        last, first = Load(seg.crd, Bin("-", e, imp.ONE), hint=True), Load(seg.crd, q, hint=True)
        span = imp.min_(Bin("-", last, first), dim)
        inside = and_(le(imp.ZERO, q), and_(lt(imp.add(q, imp.ONE), e), le(e, n)))
        far = and_(far, imp.not_(and_(inside, le(imp.mul(span, Const(tn.prefetch_near_share)),
                                                  dim))))
    flag = em.names.fresh(f"{s.var}_far")
    pre, ahead = imp.SKIP, imp.add(q, Const(tn.window_prefetch))
    guard = lt(ahead, n)
    if rows_on is not None:
        delta = em.names.fresh(f"{s.var}_ahead")
        pre, ahead = Decl(delta, "index", rows_on), imp.add(q, Var(delta))
        guard = and_(le(imp.ZERO, ahead), lt(ahead, n))
    there = Load(seg.crd, ahead, hint=True)
    index = Select(replaced(s.ready, Load(seg.crd, q), there), replaced(hit, Load(seg.crd, q), there),
                   walk.safe)
    fetch = If(and_(Var(flag), guard), seq(*(Prefetch(a, index) for a in arrays)))
    return Decl(flag, "bool", far), pre, fetch


def _by_length(em, s, parts, walk, long: int, free, fetch) -> imp.Stmt:
    """`if (e - q > long) <search and stop; the branching walk> else free`."""
    seg, (seek, off, n) = walk.segment, walk.stop
    qv, ev = Var(seg.q), Var(seg.end)
    at = em.names.fresh(f"{s.var}_off")
    inside = seq(Decl(at, "index", off), fetch, replaced(parts.on_ready, s.index, Var(at)))
    stop = Block(seq(seek, While(and_(lt(qv, ev), lt(off, n)), seq(inside, imp.incr(seg.q))),
                     Assign(seg.q, ev)))
    w = s.facts.get(Walk)        # a loop the fused checks may take: the stop is its narrowing
    noted = s if w is None else s.derive(s.facts.add(replace(w, narrow=stop)))
    branching = parts.step(noted, s.next, parts.on_ready) if fetch == imp.SKIP else \
        parts.step(noted.derive(noted.facts, ready=imp.TRUE), s.next,
                   seq(fetch, imp.if_(s.ready, parts.on_ready)))
    return If(lt(Const(long), Bin("-", ev, qv)), seq(stop, branching), free)
