"""A (dense, compressed) output filled by a counting sort (a transpose)."""
from __future__ import annotations

import copy

from ... import imp
from ...formats import Format
from ...imp import (ONE, ZERO, Accum, Alloc, Assign, Const, Decl, If, Load, Reserve, Store,
                    Var, While, eq, incr, lt, not_, seq)
from ... import streams
from ..target import EMPTY, CountThenFill, FlatTarget, fresh_names, output
from .rows import prefix_sums


def bucketable(fmt: Format) -> bool:
    """Two levels, located then appending (csr, csc): filled in the segment
    layout (formats.level) by one counting sort when the loops run over the
    appending level's index first."""
    return (len(fmt.levels) == 2 and fmt.levels[0].located and fmt.levels[1].appends
            and fmt.levels[1].segment_roles is not None)


@output("bucket", 60, lambda w: (w.step is not None and w.tuning.counting_sort
                                  and bucketable(w.fmt)
                                  and tuple(w.step.order[:1]) == (w.storage[1],)))
def _bucket(w):
    order = list(w.step.order)
    return BucketTarget(w.axes, w.fmt, any(v in w.step.bound for v in
                                           order[:order.index(w.storage[0])]), w.names)


class BucketTarget(FlatTarget):
    """A (dense, compressed) output, csr or csc, whose loops run over the compressed
    level's index (col) first: entries arrive in order of col but scattered over
    the dense level's index (row), as when transposing. A counting sort by row,
    done by running the loops twice:

    * the count pass adds each entry to pos1[row + 1], and prefix sums turn the
      counts into row starts (bk_next[row], the row's cursor, starts there);
    * the fill pass writes each entry at its row's cursor. A row receives its
      entries in the loops' order, so sorted by col.

    When a summed index is looped over before row (`repeats`), one coordinate is
    written once per value of that index, always before the loops move to the next
    col. The count pass then counts a coordinate only when it differs from the
    last one counted in its row (bk_last[row]), and the fill pass adds it into the
    entry it wrote last in the row, so pos1 is exact and the rows canonical.

    On threads (schedule.bucket_threads) each block of cols keeps its counts and
    cursors per row in bk_blk (`blocked`)."""

    sparse_writes = True

    def __init__(self, axes, fmt: Format, repeats: bool, names: imp.Names):
        self.row, self.col = (axes[m] for m in fmt.mode_order)
        self.repeats = repeats
        self.counting = True            # which pass this target writes
        self.blocked = False            # threads: per-block counts and cursors in bk_blk
        roles = fmt.levels[1].segment_roles        # its arrays, by formats.level's roles
        self.arrays = {f"{r}1": names.fresh(f"out_{r}1") for r in roles}
        self.arrays["vals"] = self.vals = names.fresh("out_vals")
        self.pos, self.crd = (self.arrays[f"{r}1"] for r in roles)
        self.count = names.fresh("out_count1")
        self.v = fresh_names(names, "bk_last bk_p bk_next bk_r bk_blk bk_lastb bk_b "
                                    "bk_run bk_n")

    def way(self, counting: bool, blocked: bool = False) -> "BucketTarget":
        """This target in the count pass (True) or the fill pass; blocked: in the
        threaded passes."""
        t = copy.copy(self)
        t.counting, t.blocked = counting, blocked
        return t

    def segment(self, k) -> tuple[str, str]:
        """(starts, coords) of its compressed level (k = 1), as AppendTarget.segment."""
        assert k == 1, k
        return self.pos, self.crd

    def passes(self) -> CountThenFill:
        """The count pass, row starts and room, then the fill pass (threaded by
        schedule.bucket_threads where the loops allow)."""
        return CountThenFill(self.way(True), self.between(), self.way(False))

    def setup(self):
        rows = streams.dim_var(self.row)
        return seq(Decl(self.count, "index", ZERO),
                   Alloc(self.pos, "index", imp.add(rows, ONE), ZERO),
                   Alloc(self.crd, "index", ONE, None),
                   Alloc(self.vals, "value", ONE, None),
                   Alloc(self.v.bk_last, "index", rows, EMPTY) if self.repeats else imp.SKIP)

    def write(self, ctx, v, once=False):
        r, c = ctx.coord(self.row), ctx.coord(self.col)
        if self.blocked:
            return self._blocked_write(r, c, v)
        pos, crd, vals = self.pos, self.crd, self.vals
        w, p = self.v, Var(self.v.bk_p)
        if self.counting:
            nxt = imp.add(r, ONE)
            count = Store(pos, nxt, imp.add(Load(pos, nxt), ONE))
            if not self.repeats:
                return count
            return If(not_(eq(Load(w.bk_last, r), c)), seq(Store(w.bk_last, r, c), count))
        place = seq(Store(crd, p, c), Store(vals, p, v), Store(w.bk_next, r, imp.add(p, ONE)))
        if not self.repeats:
            return seq(Assign(w.bk_p, Load(w.bk_next, r)), place)
        last = imp.add(p, Const(-1))
        repeat = imp.and_(lt(Load(pos, r), p), eq(Load(crd, last), c))
        return seq(Assign(w.bk_p, Load(w.bk_next, r)),
                   If(repeat, Accum(vals, last, v), place))

    def _blocked_write(self, r, c, v):
        """Block bk_b's count of row r, then its cursor there."""
        w, p = self.v, Var(self.v.bk_p)
        at = imp.add(imp.mul(Var(w.bk_b), streams.dim_var(self.row)), r)
        if self.counting:
            count = Store(w.bk_blk, at, imp.add(Load(w.bk_blk, at), ONE))
        else:
            count = seq(Decl(w.bk_p, "index", Load(w.bk_blk, at)),
                        Store(self.crd, p, c), Store(self.vals, p, v),
                        Store(w.bk_blk, at, imp.add(p, ONE)))
        if not self.repeats:
            return count
        # the block's last col in row r: a repeat adds into the block's own
        # last entry there, which no other block writes
        fresh = seq(Store(w.bk_lastb, at, c), count)
        if self.counting:
            return If(not_(eq(Load(w.bk_lastb, at), c)), fresh)
        return If(eq(Load(w.bk_lastb, at), c),
                  Accum(self.vals, imp.add(Load(w.bk_blk, at), Const(-1)), v), fresh)

    def scatter_blocks(self, var) -> tuple:
        """In the fill pass, the entry at row coordinate t goes to crd1 and vals
        at its row's cursor, bk_next[t] (block bk_b's, on threads): a loop over
        row knows them ahead (a transpose's scattered writes). The cursor then
        read is at most the one that entry will use, so inside the arrays."""
        if var != self.row or self.counting or self.repeats:
            return ()
        rows, w = streams.dim_var(self.row), self.v
        if self.blocked:
            def cursor(t):
                return Load(w.bk_blk, imp.add(imp.mul(Var(w.bk_b), rows), t))
        else:
            def cursor(t):
                return Load(w.bk_next, t)
        return tuple(streams.Block(a, cursor, lambda t: ONE, Load(self.pos, rows),
                                   written=True)
                     for a in (self.crd, self.vals))

    def between(self):
        """After the count pass: row starts, cursors, and the exact room."""
        rows, w, pos = streams.dim_var(self.row), self.v, self.pos
        r, total = Var(w.bk_r), Load(pos, rows)
        return seq(prefix_sums(pos, rows, w.bk_r), Decl(w.bk_p, "index", ZERO),
                   Alloc(w.bk_next, "index", rows, None),
                   Assign(w.bk_r, ZERO), While(lt(r, rows), seq(
                       Store(w.bk_next, r, Load(pos, r)), incr(w.bk_r))),
                   Reserve(self.crd, "index", total),
                   Reserve(self.vals, "value", total))

    def finish(self):
        return Assign(self.count, Load(self.pos, streams.dim_var(self.row)))

    def counts(self):
        return {"count1": self.count}
