"""The tile level kind ("tiles"): scipy's bsr layout, read where it lies.

A tile level groups its parent positions R at a time (a tile row: parents
g·R .. g·R + R - 1) and stores, per tile row, a segment of R×C tiles, each tile
dense and contiguous (row-major inside the tile):

    tptr    one entry per tile row, plus one: the tiles of tile row g are
            t = tptr[g] .. tptr[g+1]-1
    tcol    one entry per tile: its tile column; the column tcol[t] covers the
            coordinates tcol[t]·C .. tcol[t]·C + C - 1, and the tile columns
            strictly increase within a tile row
    tshape  two entries: R and C (at least 1 each; R divides the number of
            parent positions and C the dimension)

Parent p = g·R + r holds coordinate tcol[t]·C + c at position t·R·C + r·C + c
(c < C), for each tile t of its tile row. These are the arrays of a scipy
bsr matrix (indptr, indices, blocksize) and its data in the order scipy keeps
it, so such a matrix is bound without copying (runtime.structured_inputs). A
parent's positions are not contiguous (the rows of a tile interleave), so
`children` gives the span of the tile rows they lie in. It is read as a
formats.level Blocks shape of tiles (one width, positions at a stride): no
coordinate is loaded inside a tile. Packing makes 1×1 tiles (a tile per
stored entry). Never written by a kernel (an output in this format is produced
as coordinate records and packed).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import imp
from ..errors import InputError
from ..formats.blocks import distinct, spread
from ..formats.compressed import (check_pointers, check_range, first_order_violation,
                                  index_array, require_keys)
from ..formats.level import Blocks, kind
from ..imp import Bin, Const, Load

ROWS, COLS = range(2)


@kind("tiles", named="bsr")
@dataclass(frozen=True)
class Tiles:
    """A tile level: parents in groups of R, each group a segment of dense R×C
    tiles (tptr, tcol, tshape; see the module docstring).

        >>> ep.Format(["dense", "tiles"])       # scipy's bsr, any blocksize
    """

    unique = True
    roles = ("tptr", "tcol", "tshape")
    segment_roles = None
    located = False
    appends = False
    one_per_parent = False  # formats.level
    inserts = False         # formats.level: not written in any order

    def __str__(self):
        return "tiles"

    # -- packing ------------------------------------------------------------
    def pack(self, parent_ids, n_parents, coord, size, split=None):
        """1×1 tiles from sorted entries (`parent_ids` nondecreasing, `coord`
        sorted within a parent): one tile per distinct stored coordinate.
        Returns (arrays, positions of the entries, number of positions)."""
        up, uc, positions = distinct(parent_ids, coord)
        tptr = np.zeros(n_parents + 1, dtype=np.int64)
        np.cumsum(np.bincount(up, minlength=n_parents), out=tptr[1:])
        shape = np.ones(2, dtype=np.int64)
        return {"tptr": tptr, "tcol": uc, "tshape": shape}, positions, len(uc)

    def unpack(self, arrays, parents, size):
        """All children of the positions `parents`, in storage order (by
        coordinate within a parent): (owner, coord, positions), child c
        belonging to parents[owner[c]]."""
        R, C = (int(v) for v in arrays["tshape"])
        tptr = np.asarray(arrays["tptr"], dtype=np.int64)
        parents = np.asarray(parents, dtype=np.int64)
        group, r = np.divmod(parents, R)
        owner, offset, begin = spread(tptr[group], tptr[group + 1])
        tile = begin + offset
        inside = np.tile(np.arange(C, dtype=np.int64), len(tile))
        first = np.asarray(arrays["tcol"], dtype=np.int64)[tile] * C
        at = tile * (R * C) + r[owner] * C
        return (np.repeat(owner, C), np.repeat(first, C) + inside,
                np.repeat(at, C) + inside)

    def check(self, arrays, n_parents, size, where, order=True, parent_runs=None,
              coords_above=None):
        """Validate tptr/tcol/tshape under `n_parents` positions (InputError
        naming `where`); return the position count, tiles · R · C. `order=False`
        checks bounds only."""
        require_keys(arrays, self.roles, where)
        shape = index_array(arrays["tshape"], f"{where}: tshape", exact=True)
        if len(shape) != 2 or min(shape) < 1:
            raise InputError(f"{where}: tshape must hold two sizes of at least 1 (the "
                             f"tile's rows and columns), got {shape.tolist()}")
        R, C = (int(v) for v in shape)
        if n_parents % R or size % C:
            raise InputError(f"{where}: tiles of {R}×{C} do not divide {n_parents} "
                             f"parent positions of dimension {size}")
        tptr = index_array(arrays["tptr"], f"{where}: tptr", exact=True)
        tcol = index_array(arrays["tcol"], f"{where}: tcol", exact=True)
        check_pointers(tptr, n_parents // R, len(tcol), where, "tptr", "tcol",
                       parents="tile rows")
        check_range(tcol, size // C, f"{where}: tcol")
        if order:
            q = first_order_violation(tptr, tcol, strict=True)
            if q >= 0:
                raise InputError(f"{where}: tcol[{q}] = {tcol[q]} does not follow "
                                 f"tcol[{q - 1}] = {tcol[q - 1]} in its tile row: tile "
                                 f"columns must increase within a tile row")
        return len(tcol) * R * C

    def fibres(self, arrays):
        """Each parent's positions and its number of runs (one per tile)."""
        R, C = (int(v) for v in arrays["tshape"])
        tiles = np.repeat(np.diff(np.asarray(arrays["tptr"], dtype=np.int64)), R)
        return tiles * C, tiles

    # -- reading (formats.level) -------------------------------------------
    def children(self, lo, hi, size, arrays):
        """The span of the positions of parent positions lo..hi-1: the tiles of
        their tile rows, tptr[lo / R]·R·C .. tptr[(hi + R - 1) / R]·R·C - 1 (all
        of it for lo = 0 and hi the parents' count)."""
        R, area = self._sizes(arrays)
        tptr = arrays["tptr"]
        up = Bin("/", imp.add(hi, Bin("-", R, Const(1))), R)
        return imp.mul(Load(tptr, Bin("/", lo, R)), area), imp.mul(Load(tptr, up), area)

    def read(self, lo, hi, size, arrays) -> Blocks:
        """Parent lo = g·R + r: the tiles tptr[g] .. tptr[g+1] - 1, tile t its
        coordinates tcol[t]·C + c at positions t·R·C + r·C + c."""
        R, area = self._sizes(arrays)
        C = Load(arrays["tshape"], Const(COLS))
        g = Bin("/", lo, R)
        r = Bin("-", lo, imp.mul(g, R))
        tptr = arrays["tptr"]
        return Blocks(arrays["tcol"], None, Load(tptr, g), Load(tptr, imp.add(g, Const(1))),
                      tiles=(C, area, imp.mul(r, C)))

    @staticmethod
    def _sizes(arrays):
        shape = arrays["tshape"]
        R = Load(shape, Const(ROWS))
        return R, imp.mul(R, Load(shape, Const(COLS)))

    def describe(self, k, axis, arrays, parents, size=None, count=None):
        """The header text of level k over `axis` (of dimension `size`, C text;
        default dim_<axis>) below `parents` positions, and its number of
        positions (tptr[parents / R] · R · C). Never an output level."""
        tptr, tcol, shape = arrays["tptr"], arrays["tcol"], arrays["tshape"]
        size = size or f"dim_{axis}"
        count = count or (f"{tptr}[({parents}) / {shape}[0]] * {shape}[0] * {shape}[1]")
        return (f"level {k} (tiles, {axis}): {shape} has 2 entries, R and C (at least 1; "
                f"R divides {parents}, C divides {size}); {tptr} has {parents} / R + 1 "
                f"entries, nondecreasing from {tptr}[0] = 0; position p = g*R + r holds, "
                f"for each tile t = {tptr}[g] .. {tptr}[g+1]-1, coordinate {tcol}[t]*C + c "
                f"at position t*R*C + r*C + c for c < C; {tcol} in [0, {size} / C), "
                f"increasing within each g; {count} positions."), count
