"""The bins level kind: the values of the level above read as coordinates.

`ep.onehot(b, A[i, j], n)` (expr.bins) is the 0/1 tensor H[i, j, b] that is
one where A stores an entry at (i, j) whose value is b. Its storage is A's
levels plus this one: below each of A's positions p it holds at most one
coordinate, A's value at p when that is an integer in 0..n-1 (none
otherwise), at the same position p. It stores no array of its own: it reads
A's values (the lowering hands it A's `vals` under the role "src"). A Σ over
a run of A (formats.runs) sees one child per run, so a run adds its length to
one bin once (lower/schedule/run_sums.py, proofs_notes/bins.md).

Never packed, converted or written: made at call time over A's own arrays
(runtime.predicates), so it appears in no named format and in no packing.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import imp
from ..formats.level import Spike
from ..imp import Bin, Load


@dataclass(frozen=True)
class Bins:
    """The level of a onehot's bins: one coordinate or none per parent position,
    the parent's value where it is an integer bin (see the module docstring)."""

    unique = True
    roles = ()
    segment_roles = None
    located = False
    appends = False
    one_per_parent = False
    inserts = False
    under_last = True       # may sit below a last_only level: it shares the parent's value
    every_coordinate = False

    def __str__(self):
        return "bins"

    def read(self, lo, hi, size, arrays) -> Spike:
        """The parent position lo's value as a bin of 0..size-1 (-1: none)."""
        return Spike(Bin("bin", Load(arrays["src"], lo), size), lo)

    def children(self, lo, hi, size, arrays):
        """One position per parent position (the parent's own)."""
        return lo, hi

    def fibres(self, arrays):
        raise NotImplementedError("a bins level is made at call time, never stored")

    def check(self, arrays, n_parents, size, where, **_):
        """Nothing stored: the bins are read off the values above."""
        return n_parents

    def describe(self, k, axis, arrays, parents, size=None, count=None):
        """Header text: nothing is stored at this level."""
        return (f"level {k} (bins, {axis}): no arrays; the coordinate below a position "
                f"is the value there when it is an integer bin"), count or parents
