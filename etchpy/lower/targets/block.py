"""A register block: blk[r] ⊕= v, the local block of schedule.blocks."""
from __future__ import annotations

from ...imp import Accum
from ..target import FlatTarget


class BlockTarget(FlatTarget):
    """blk[r] ⊕= v into the local array `array` over index `var`."""

    adds_into = True
    in_registers = True

    def __init__(self, array: str, var: str):
        self.array, self.var = array, var

    def write(self, ctx, v, once=False):
        return Accum(self.array, ctx.coord(self.var), v)
