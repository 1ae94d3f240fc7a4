"""A sparse output whose last level takes its children in any order (formats.level
`inserts`: a bytemap, a hash) under located levels: each value is added where the
level places its cell (a bytemap: the cell itself, marked on its first touch; a
hash: its table slot), and after the loops the level lists the touched cells in
order. No records, no sort by the runtime."""
from __future__ import annotations

from types import SimpleNamespace

from ... import imp
from ...formats import Format
from ...imp import Accum, Const, seq
from ... import streams
from ..target import FlatTarget, cells, output


def insertable(fmt: Format) -> bool:
    """Located levels over one last level that inserts in any order."""
    return (bool(fmt.levels) and fmt.levels[-1].inserts
            and all(lv.located for lv in fmt.levels[:-1]))


def first_table(tuning) -> int:
    """An inserted output's first table size (a hash's slots): tuning.hash_output_initial,
    or tuning.hash_initial where that is 0, rounded up to a power of two."""
    first = max(1, tuning.hash_output_initial or tuning.hash_initial)
    return 1 << (first - 1).bit_length()


@output("insert", 50, lambda w: w.step is not None and insertable(w.fmt))
def _insert(w):
    return InsertTarget(w.axes, w.fmt, w.sr, w.names, first_table(w.tuning))


class InsertTarget(FlatTarget):
    """v is added where the last level places the row-major cell of the storage
    coordinates (its `write_at`); `finish` has it list the touched cells and
    their values (its `end`). Any loop order; never on threads (the touched
    list is shared)."""

    sparse_writes = True

    def __init__(self, axes, fmt: Format, sr, names: imp.Names, first: int = 1):
        self.fmt, self.sr, self.first = fmt, sr, first
        self.storage = [axes[m] for m in fmt.mode_order]
        self.k = k = len(fmt.levels) - 1
        self.level = fmt.levels[k]
        self.arrays = {f"{r}{k}": names.fresh(f"out_{r}{k}") for r in self.level.roles}
        self.arrays["vals"] = self.vals = names.fresh("out_vals")
        self.count = names.fresh(f"out_count{k}")
        self.scratch = SimpleNamespace(**{r: names.fresh(f"ins_{r}")
                                          for r in self.level.scratch_roles})
        self.walk, self.r = names.fresh("ins_at"), names.fresh("ins_r")
        self.zero = Const(sr.zero, "value")

    def setup(self):
        return self.level.begin(self.scratch, cells(self.storage), self.vals, self.zero,
                                Const(self.first))

    def write(self, ctx, v, once=False):
        flat = imp.ZERO
        for ax in self.storage:
            flat = imp.add(imp.mul(flat, streams.dim_var(ax)), ctx.coord(ax))
        place, array, at = self.level.write_at(self.scratch, flat, self.vals, self.zero)
        return seq(place, Accum(array, at, v))

    def finish(self):
        size = streams.dim_var(self.storage[-1])
        arrays = {r: self.arrays[f"{r}{self.k}"] for r in self.level.roles}
        return self.level.end(arrays, self.scratch, self.walk, self.r, self.count,
                              cells(self.storage[:-1]), size, self.vals, self.zero)

    def counts(self):
        return {f"count{self.k}": self.count}
