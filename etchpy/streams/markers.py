"""Markers: a reused last level scattered into dense scratch, so that it locates.

A last compressed, unique level walked again for every coordinate of loop
levels its tensor does not index (streams.from_expr: Lowerer) may be scattered
into two scratch arrays, `mark` (index) and `wv` (value), and then probed in
O(1) instead of walked. Two shapes (proofs_notes/marker.md):

* per parent (the default): scratch over the level's dimension; each entry
  of the loops above scatters its parent p's fibre, `mark[c] = p + 1`, and a
  probe at c holds where `mark[c] == p + 1`. A fibre is scattered again each
  time the loops enter it, even when they entered it before.
* keyed (`KEYED`, chosen by plan.algorithms when the parents are few, so that
  one cell per (parent position, coordinate) is cheap): scratch over
  positions(lev-1) x dim and a flag per parent (`done`); the fibre of p is
  scattered at its first entry in a call, `mark[p*dim + c] = 1`, and every
  later entry of p finds it scattered. For a fibre entered again after
  others (a supplier-by-nation level probed per order, the orders' nations
  alternating), the fills are at most one per parent instead of one per
  entry.

Where every fill stamps 1 (a level's only fibre, lev 0, or keyed), the cells
only ever go from 0 to 1, so with tuning.bit_markers `mark` is a bit per
cell (a `bits` array, 1/32 of the index array: a filter of the customers
probed at each of 1.5M orders stays in the first-level cache) and a probe
tests that bit (proofs_notes/marker.md, "Bit markers").

    KEYED                   plan.algorithms' decision for a keyed marker
    make(names, sr, tuning, scratch, b, storage, seg, lev, parent, keyed)
        -> (Marker, fill statement, extra loop state)
    Marker.probe(c, zero)   the probed value at coordinate c
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import imp
from ..imp import ONE, ZERO, Assign, Bin, Const, If, Load, Var, While, eq, incr, lt, select, seq
from ..plan.algorithms import KEYED


@dataclass(frozen=True)
class Marker:
    """The scratch arrays of one marker: a probe at c reads cell `base + c` and
    holds where `mark` there equals `stamp` (base None: the cell is c)."""

    mark: str
    wv: str
    stamp: imp.Expr
    base: imp.Expr | None = None
    bits: bool = False           # mark is a bit per cell (the stamp is 1)

    def cell(self, c: imp.Expr) -> imp.Expr:
        return c if self.base is None else imp.add(self.base, c)

    def probe(self, c: imp.Expr, zero) -> imp.Expr:
        at = self.cell(c)
        held = imp.Bit(self.mark, at) if self.bits else eq(Load(self.mark, at), self.stamp)
        return select(held, Load(self.wv, at), Const(zero, "value"))


def _cells(parents: imp.Expr, dim: imp.Expr) -> imp.Expr:
    """parents x dim, or 2**62 (an allocation that fails: the kernel returns
    out of memory) when either is 2**31 or more, so that the product never
    wraps around in int64 to a small size."""
    small = imp.and_(imp.lt(parents, Const(1 << 31)), imp.lt(dim, Const(1 << 31)))
    return select(small, imp.mul(parents, dim), Const(1 << 62))


def make(names, sr, tuning, scratch: list, b, storage, seg, lev: int, parent, keyed: bool):
    """The marker of level `lev` (its segment `seg` under `parent`), its
    scratch appended to `scratch` ((name, type, size, fill), allocated before
    the step's loops): (Marker, the fill, the fill's loop state). `keyed` is
    honoured only below a parent level (lev >= 1)."""
    var = storage[lev]
    dim = Var(f"dim_{var}")                      # from_expr.dim_var
    mark, wv = names.fresh(f"{var}_mark"), names.fresh(f"{var}_wv")
    keyed = keyed and lev >= 1
    bits = tuning.bit_markers and (keyed or lev == 0)
    if keyed:
        parents = b.positions(lev - 1)
        cells = _cells(parents, dim)
        base = imp.mul(parent[0], dim)
        marker = Marker(mark, wv, ONE, base, bits)
    else:
        cells = dim
        marker = Marker(mark, wv, ONE if bits else imp.add(parent[0], ONE), bits=bits)
    scratch += [(mark, "bits", imp.add(Bin("/", cells, Const(64)), ONE), ZERO) if bits
                else (mark, "index", cells, ZERO), (wv, "value", cells, Const(sr.zero, "value"))]
    q = names.fresh(f"{var}_fill")
    c = marker.cell(Load(seg.crd, Var(q)))
    stamp = imp.SetBit(mark, c, True) if bits else imp.Store(mark, c, marker.stamp)
    fill = seq(Assign(q, seg.start),
               While(lt(Var(q), seg.end),
                     seq(imp.Opaque(q) if tuning.hide_segment_counters else imp.SKIP, stamp,
                         imp.Store(wv, c, b.value(sr, Var(q))), incr(q))))
    if keyed:
        done = names.fresh(f"{var}_done")
        scratch.append((done, "index", parents, ZERO))
        fill = If(eq(Load(done, parent[0]), ZERO),
                  seq(fill, imp.Store(done, parent[0], ONE)))
    return marker, fill, ((q, "index"),)
