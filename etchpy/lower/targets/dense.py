"""A dense output (also temporaries and scalars, as 1-element arrays):
out[flat(coordinates)] ⊕= v over a row-major array."""
from __future__ import annotations

from ... import imp
from ...imp import ZERO, Accum, Const, Decl, Param, Store, Var, While, incr, lt, not_, seq
from ...imp import add, max_, min_, mul
from ... import streams
from ..target import FlatTarget, cells, output


@output("dense", 0, lambda w: w.fmt is None or w.fmt.is_dense)
@output("dense", 40, lambda w: w.fmt.every_cell)
def _dense(w):
    """A dense output; also one that stores every cell (rle) not written as spans:
    computed dense, in place, and packed after the call (runtime make_output,
    `Tensor.from_dense`), its stored size the dense size, where records would be
    one per product, sorted."""
    array, zeroed = w.names.fresh("out"), w.names.fresh("out_zeroed")
    return DenseTarget(array, w.axes, w.sr, w.names, zeroed=zeroed)


class DenseTarget(FlatTarget):
    """out[flat(coordinates)] ⊕= v over a row-major array with axes `axes`.

    `zeroed`: the name of the flag by which a caller passes an output already
    holding zeros (setup then skips the fill); None for a temporary, which its
    step allocates zeroed.

    `has`: a temporary's flag array (lower.produced), allocated false by its
    step: each write sets its cell's flag, and the driver writes only products
    (sparse_writes), so a flag says that a product was written there."""

    def __init__(self, array: str, axes, sr, names: imp.Names, zeroed: str | None = None,
                 has: str | None = None):
        self.array, self.axes, self.sr, self.zeroed = array, tuple(axes), sr, zeroed
        self.has, self.arrays = has, {"vals": array}
        self.dense_axes = self.axes
        self.keeps_flags = self.sparse_writes = has is not None
        self.k = names.fresh("out_k") if zeroed else None
        self.names = names
        self.store = False       # True: each cell is written exactly once (no fill)
        self.fresh = False       # True: zero on entry, and the one step writing it

    def own(self, every_cell_once: bool, at_most_once: bool = False) -> bool:
        """Declares this output zero on entry and written by one step alone
        (fresh); with `every_cell_once` (its loops store each cell once) its
        writes are stores and it needs no zero fill; with `at_most_once` (its
        loops write a cell once at most) its writes are stores after the zero
        fill (0 ⊕ v = v). Returns every_cell_once."""
        self.fresh, self.store = True, every_cell_once or at_most_once
        return every_cell_once

    def setup(self):
        """The zero fill, skipped when the caller says the output holds zeros."""
        if self.zeroed is None:
            return imp.SKIP
        return imp.if_(not_(Var(self.zeroed)), self.clear(self.k))

    def clear(self, k: str) -> imp.Stmt:
        """Every cell set to the semiring's zero, counted by a fresh index `k`."""
        size = cells(self.axes)
        return seq(Decl(k, "index", ZERO),
                   While(lt(Var(k), size),
                         seq(Store(self.array, Var(k), Const(self.sr.zero, "value")), incr(k))))

    def clear_outside(self, box) -> imp.Stmt:
        """Every cell outside `box` ((lo, hi) by axis, as the loops that store each
        cell inside it once count them: schedule.fused_rows.written_box) set to
        the zero, the box left as it is: per axis, the cells before lo and from
        hi on are contiguous runs of the row-major array, and the box's own rows
        recurse. Each bound is clamped into 0..size, so an empty box clears all."""
        decls, bounds = [], []
        for ax in self.axes:
            size = streams.dim_var(ax)
            lo, hi = self.names.fresh(f"{ax}_box_lo"), self.names.fresh(f"{ax}_box_hi")
            decls += [Decl(lo, "index", min_(max_(box[ax][0], ZERO), size)),
                      Decl(hi, "index", max_(min_(box[ax][1], size), Var(lo)))]
            bounds.append((Var(lo), Var(hi)))
        return seq(*decls, self._clear_from(bounds, 0, ZERO))

    def _clear_from(self, bounds, m, base) -> imp.Stmt:
        size, rest = streams.dim_var(self.axes[m]), cells(self.axes[m + 1:])
        (lo, hi), start = bounds[m], mul(base, size)
        stmts = [self._clear_run(mul(start, rest), mul(add(start, lo), rest)),
                 self._clear_run(mul(add(start, hi), rest), mul(add(start, size), rest))]
        if m + 1 < len(self.axes):
            c = self.names.fresh(f"{self.axes[m]}_gap")
            stmts.append(seq(Decl(c, "index", lo), While(lt(Var(c), hi), seq(
                self._clear_from(bounds, m + 1, add(start, Var(c))), incr(c)))))
        return seq(*stmts)

    def _clear_run(self, a, b) -> imp.Stmt:
        """Cells a..b-1 set to the zero."""
        k = self.names.fresh("out_gap")
        return seq(Decl(k, "index", a), While(lt(Var(k), b), seq(
            Store(self.array, Var(k), Const(self.sr.zero, "value")), incr(k))))

    def params(self) -> list:
        """A kernel's dense output: the array and its zeroed flag."""
        return [Param(self.array, "out_dense", "value",
                      "output, row-major over (" + ", ".join(self.axes) + "); filled by the kernel"),
                Param(self.zeroed, "out_zeroed", "index",
                      "nonzero if out already holds the semiring's zero in every cell "
                      "(the kernel then skips its fill), else 0")]

    @property
    def adds_into(self) -> bool:
        """Added into, not stored once per cell, and no flags (Target)."""
        return not self.store and self.has is None

    def write(self, ctx, v, once=False):
        """out[cell] ⊕= v; a store when every cell is written once (`store`), or
        this cell is (`once`: a fresh block's flush)."""
        flat = ZERO
        for ax in self.axes:
            flat = imp.add(imp.mul(flat, streams.dim_var(ax)), ctx.coord(ax))
        w = Store(self.array, flat, v) if self.store or once else Accum(self.array, flat, v)
        return w if self.has is None else seq(w, Store(self.has, flat, imp.TRUE))
