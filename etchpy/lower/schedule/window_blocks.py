"""Far rows' window hits gathered in blocks, switched by tuning.window_blocks
(the buffer's entries; 0: off) and tuning.window_walk (the pass's switch): a
dense output's rows, each stored once from a Σ over a window walk of a
compressed level whose ready value is `vals[q] ⊗ x[c]` (a windowed SpMV's
row), run in two passes where the call's
far pick (imp.GatherPick with crd: ep_far_pick over the level's segments)
finds the rows far, the window's x holds from half of
tuning.prefetch_min_bytes (smaller, it stays in a 512 KiB L2 and the walk's
gathers hit it: a mesh's rows at a 20% window, x of 210 KB, ran 2x slower in
blocks) to under it (where the walk's own prefetch, window_prefetch, does not
run), and the window keeps at most 1/tuning.window_blocks_share of the
level's columns (so of a far row's entries; the mesh's rows at a 50% window,
x of 526 KB and 45% of the entries kept, ran 1.5-1.8x slower in blocks; a
third since session 46, a quarter before). With tuning.window_blocks_ahead
(0: off) the flush prefetches x at the hit that many on, and x of
prefetch_min_bytes or more runs in blocks too (still at most that share of
the columns: random rows at 20% windows, x of 1.6 MB, ran 1.1-1.3x faster so
than in the prefetching walk), and x of tuning.window_blocks_wide bytes or more
(0: never) runs in blocks whatever share of the columns the window keeps (an x
out of a 2 MiB L2: random rows at 40-80% windows, x of 3-6 MB, ran 1.05-1.35x
faster so than in the prefetching walk; the mesh's x of 526 KB stays under it):

    n := 0
    for each row r:  q, e := its segment;  acc := 0
        if (e − q > K) <the row's walk into acc, as without the pass>
        else { if (K − n < e − q) flush
               while (q < e) { hv[n] := vals[q]; hc[n] := c(q); hr[n] := r;
                               n := n + ok(q); q++ } }
        out[r] := acc
    flush          (flush: for k < n: out[hr[k]] := out[hr[k]] ⊕ hv[k] ⊗ x[hc[k]]; n := 0;
                    with the prefetch of x[hc[k + d]] where k + d < n)

The first pass keeps each row's in-window entries with no branch; the second
gathers x for a block of rows in one flat loop, whose gathers do not wait on
one another (random rows at a 10% window: x out of L2, 90% of the entries
outside the window). Each row's hits are ⊕-added into its cell in their order
in the row, from the zero it was stored with: the same terms in the same order
as the row's accumulator, for every semiring (proofs_notes/windows.md, "Hits
gathered in blocks"). Elsewhere (near rows, a mesh's or a stencil's, and large
x) the call runs the rows as before: `if (pick && small) <two passes> else
<rows>`. The first pass is a walk of the level (its Walk note), so a scipy
operand's checked build checks it as it checks the walk; the second reads only
the buffers and x inside the window.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ... import imp, streams
from ...imp import Const, Decl, GatherPick, If, LocalArray, Store, Var, and_, le, lt, seq
from ...streams.facts import Walk, WindowWalk
from ...streams.from_expr import dim_var


@dataclass
class Buffer:
    """The names of the hits' buffers (values, window indices, rows), their
    count `n` and size, the row's output index `row`, the output array `out`;
    `flush` is set by the window walk that fills them (lower.schedule.window_walks)."""

    vals: str
    at: str
    rows: str
    n: str
    size: int
    row: imp.Expr
    out: str
    flush: list = field(default_factory=list)


def run(em, s) -> imp.Stmt | None:
    """The pass at a step's loop nest (module docstring); None where it does
    not apply: not one free level over a Σ of one window walk, an output not
    stored once per cell of one axis, threads or markers."""
    size = em.tuning.window_blocks
    if (size <= 0 or em.markers or em.threads > 1 or em.buffer is not None
            or not streams.is_stream(s) or s.contracted):
        return None
    v = s.value
    if not streams.is_stream(v) or not v.contracted or streams.is_stream(v.value):
        return None
    walk, seen = v.facts.get(Walk), v.facts.get(WindowWalk)
    if walk is None or seen is None or em.target.dense_axes is None or em.target.keeps_flags:
        return None
    mark = em.names.fresh("cell")
    enter, ctx = em.target.enter(s.var, Var(mark), em.top())
    match em.target.write(ctx, Var("_v")):
        case Store(out, Var(at), Var("_v")) if at == mark and enter == imp.SKIP:
            pass
        case _:
            return None
    names = [em.names.fresh(f"{s.var}_{k}") for k in ("hv", "hc", "hr", "hits")]
    buf = Buffer(*names, size, s.index, out)
    inner = copy.copy(em)
    inner.buffer = buf
    blocked = inner.emit(s, em.top())
    if not buf.flush:
        return None
    plain = em.emit(s, em.top())
    pick, small = em.names.fresh(f"{s.var}_blocks"), _small(em, v, walk)
    two = seq(imp.Comment(f"{s.var}: far rows' window hits gathered in blocks of {size}"),
              LocalArray(buf.vals, size, Const(em.sr.zero, "value")),
              LocalArray(buf.at, size, imp.ZERO, "index"),
              LocalArray(buf.rows, size, imp.ZERO, "index"),
              Decl(buf.n, "index", imp.ZERO), blocked, buf.flush[0])
    share, sampled = max(1, em.tuning.prefetch_near_share), em.names.fresh(f"{s.var}_far")
    return seq(Decl(pick, "bool", imp.FALSE),            # the pick sampled only when small
               If(small, imp.Block(seq(GatherPick(sampled, walk.pos, walk.parents, walk.crd,
                                                  walk.dim, share, 1),
                                       imp.Assign(pick, Var(sampled))))),
               If(Var(pick), imp.Block(two), imp.Block(plain)))


def _small(em, v, walk) -> imp.Expr:
    """The call's size test of the blocks (module docstring): x from half of
    prefetch_min_bytes (to under it without the flush's prefetch), and the
    window keeping at most 1/window_blocks_share of the columns or, with the
    prefetch, x of window_blocks_wide bytes or more."""
    most, ahead = em.tuning.prefetch_min_bytes, em.tuning.window_blocks_ahead > 0
    x = imp.mul(dim_var(v.var), Const(em.sr.dtype.itemsize))
    small = le(Const(most // 2), x) if ahead and em.tuning.prefetch else \
        and_(le(Const(most // 2), x), lt(x, Const(most)))
    share = max(1, em.tuning.window_blocks_share)          # the window keeps <= 1/share
    kept = le(imp.mul(dim_var(v.var), Const(share)), Var(walk.dim))
    wide = em.tuning.window_blocks_wide
    if wide > 0 and ahead and em.tuning.prefetch:
        kept = imp.or_(kept, le(Const(wide), x))            # x out of L2: any share
    return and_(small, kept)
