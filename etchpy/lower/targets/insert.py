"""A sparse output whose last level takes its children in any order (formats.level
`inserts`: a bytemap) under located levels: each value goes to its cell at once,
the level marks the cell's first touch, and after the loops it lists the touched
cells in order. No records, no sort by the runtime."""
from __future__ import annotations

from types import SimpleNamespace

from ... import imp
from ...formats import Format
from ...imp import Accum, Alloc, Const, seq
from ... import streams
from ..target import FlatTarget, cells, fresh_names


def insertable(fmt: Format) -> bool:
    """Located levels over one last level that inserts in any order."""
    return (bool(fmt.levels) and fmt.levels[-1].inserts
            and all(lv.located for lv in fmt.levels[:-1]))


class InsertTarget(FlatTarget):
    """vals[cell] ⊕= v at the row-major cell of the storage coordinates, the last
    level told of each touch (its `touch`); `finish` has it list the touched
    cells (its `end`). Any loop order; never on threads (the touched list is
    shared)."""

    sparse_writes = True

    def __init__(self, axes, fmt: Format, sr, names: imp.Names):
        self.fmt, self.sr = fmt, sr
        self.storage = [axes[m] for m in fmt.mode_order]
        self.k = k = len(fmt.levels) - 1
        self.level = fmt.levels[k]
        self.arrays = {f"{r}{k}": names.fresh(f"out_{r}{k}") for r in self.level.roles}
        self.arrays["vals"] = self.vals = names.fresh("out_vals")
        self.count = names.fresh(f"out_count{k}")
        v = fresh_names(names, "ins_n ins_bits ins_list ins_t ins_r")
        self.scratch = SimpleNamespace(n=v.ins_n, bits=v.ins_bits, list=v.ins_list)
        self.walk, self.r = v.ins_t, v.ins_r

    def setup(self):
        total = cells(self.storage)
        return seq(Alloc(self.vals, "value", total, Const(self.sr.zero, "value")),
                   self.level.begin(self.scratch, total))

    def write(self, ctx, v, once=False):
        flat = imp.ZERO
        for ax in self.storage:
            flat = imp.add(imp.mul(flat, streams.dim_var(ax)), ctx.coord(ax))
        return seq(self.level.touch(self.scratch, flat), Accum(self.vals, flat, v))

    def finish(self):
        size = streams.dim_var(self.storage[-1])
        arrays = {r: self.arrays[f"{r}{self.k}"] for r in self.level.roles}
        return self.level.end(arrays, self.scratch, self.walk, self.r, self.count,
                              cells(self.storage[:-1]), size)

    def counts(self):
        return {f"count{self.k}": self.count}
