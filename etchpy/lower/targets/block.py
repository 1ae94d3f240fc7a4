"""A register block: blk[r] ⊕= v, the local block of schedule.blocks."""
from __future__ import annotations

from ...imp import Accum, Bin
from ..target import FlatTarget


class BlockTarget(FlatTarget):
    """blk[r] ⊕= v into the local array `array` over index `var` (blk[r - start]
    for a strip of r from `start`, an Imp expression)."""

    adds_into = True
    in_registers = True

    def __init__(self, array: str, var: str, start=None):
        self.array, self.var, self.start = array, var, start

    def write(self, ctx, v, once=False):
        at = ctx.coord(self.var)
        return Accum(self.array, at if self.start is None else Bin("-", at, self.start), v)
