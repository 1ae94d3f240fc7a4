"""A dense output (also temporaries and scalars, as 1-element arrays):
out[flat(coordinates)] ⊕= v over a row-major array."""
from __future__ import annotations

from ... import imp
from ...imp import ZERO, Accum, Const, Decl, Store, Var, While, incr, lt, not_, seq
from ... import streams
from ..target import FlatTarget, cells


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
        self.has = has
        self.dense_axes = self.axes
        self.keeps_flags = self.sparse_writes = has is not None
        self.k = names.fresh("out_k") if zeroed else None
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

    def write(self, ctx, v, once=False):
        """out[cell] ⊕= v; a store when every cell is written once (`store`), or
        this cell is (`once`: a fresh block's flush)."""
        flat = ZERO
        for ax in self.axes:
            flat = imp.add(imp.mul(flat, streams.dim_var(ax)), ctx.coord(ax))
        w = Store(self.array, flat, v) if self.store or once else Accum(self.array, flat, v)
        return w if self.has is None else seq(w, Store(self.has, flat, imp.TRUE))
