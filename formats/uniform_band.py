"""The uniform band level kind ("uniform_band").

A uniform band level stores ONE band shape for every parent position: parent p's
band starts at coordinate f(p) = step·p + offset (affine in the parent position)
and holds `width` consecutive coordinates, clipped to [0, size). Its one array:

    ushape  five entries: offset, width, step, parents, size (parents: the
            number of parent positions, size: the level's dimension; both
            checked against the tensor, kept so that the band is measured from
            this array alone)

Parent p owns the `width` positions p·width .. p·width + width - 1, coordinate
f(p) + s at position p·width + s; the slots whose coordinate falls outside
[0, size) hold the fill and are never read. So no per-parent array is stored or
loaded: a row of a tridiagonal matrix costs its three values. It reads as the
formats.level Band shape, the run max(0, f(p)) .. min(size, f(p) + width) - 1 at
the shift p·width - f(p). Packing takes the step among 1, 0 and the size over
the parents' count that gives the narrowest band, the offset and width from the
stored coordinates; cells inside the band that hold no entry get the fill.
Never written by a kernel (an output in this format is produced as coordinate
records and packed).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import imp
from ..errors import InputError
from ..formats.blocks import distinct, spread
from ..formats.compressed import index_array, require_keys
from ..formats.level import Band, Fixed, kind
from ..imp import Bin, Const, Load

OFFSET, WIDTH, STEP, PARENTS, SIZE = range(5)


@kind("uniform_band", named="uniform_band")
@dataclass(frozen=True)
class UniformBand:
    """A uniform band level: parent p holds the coordinates step·p + offset + s,
    s < width, clipped to the dimension (ushape; see the module docstring).

        >>> ep.Format(["dense", "uniform_band"])    # the diagonals -h..h of a matrix
    """

    unique = True
    roles = ("ushape",)
    segment_roles = None
    located = False
    appends = False
    one_per_parent = False  # formats.level
    inserts = False         # formats.level: not written in any order

    def __str__(self):
        return "uniform_band"

    # -- packing ------------------------------------------------------------
    def pack(self, parent_ids, n_parents, coord, size, split=None):
        """One band shape from sorted entries: the step (1, 0 or size // parents,
        whichever spans the fewest coordinates, 1 on ties), then offset = the
        smallest coordinate - step·parent and width = the span. Returns (arrays,
        positions of the entries, number of positions)."""
        up, uc, _ = distinct(parent_ids, coord)
        step, offset, width = _shape(up, uc, n_parents, size)
        parent_ids = np.asarray(parent_ids, dtype=np.int64)
        positions = (parent_ids * (width - step) - offset
                     + np.asarray(coord, dtype=np.int64))
        shape = np.array([offset, width, step, n_parents, size], dtype=np.int64)
        return {"ushape": shape}, positions, n_parents * width

    def unpack(self, arrays, parents, size):
        """The in-range positions of the bands of `parents`, in storage order:
        (owner, coord, positions), child c belonging to parents[owner[c]]."""
        offset, width, step = (int(v) for v in arrays["ushape"][:3])
        parents = np.asarray(parents, dtype=np.int64)
        first = parents * step + offset
        begin, end = np.clip(first, 0, size), np.clip(first + width, 0, size)
        owner, off, start = spread(begin, np.maximum(end, begin))
        coord = start + off
        return owner, coord, parents[owner] * width - first[owner] + coord

    def check(self, arrays, n_parents, size, where, order=True, parent_runs=None,
              coords_above=None):
        """Validate ushape under `n_parents` positions (InputError naming `where`);
        return the position count, parents · width."""
        require_keys(arrays, self.roles, where)
        shape = index_array(arrays["ushape"], f"{where}: ushape", exact=True)
        if len(shape) != 5:
            raise InputError(f"{where}: ushape has length {len(shape)} but needs 5 "
                             f"(offset, width, step, parents, size)")
        offset, width, step, parents, dim = (int(v) for v in shape)
        if (parents, dim) != (n_parents, size):
            raise InputError(f"{where}: ushape records {parents} parents of dimension "
                             f"{dim}, but the tensor has {n_parents} of dimension {size}")
        if not 0 <= width <= max(size, 1) or not 0 <= step <= max(size, 1):
            raise InputError(f"{where}: ushape width {width} and step {step} must lie in "
                             f"[0, {max(size, 1)}]")
        low = -step * max(n_parents - 1, 0) - width
        if not low <= offset <= size:
            raise InputError(f"{where}: ushape offset {offset} must lie in [{low}, {size}] "
                             f"(a band past every row's coordinates)")
        return n_parents * width

    def fibres(self, arrays):
        """Each parent's band length (clipped to the dimension), and its runs: one
        per non-empty band."""
        offset, width, step, parents, size = (int(v) for v in arrays["ushape"])
        first = np.arange(parents, dtype=np.int64) * step + offset
        lengths = np.clip(first + width, 0, size) - np.clip(first, 0, size)
        return lengths, (lengths > 0).astype(np.int64)

    def stored(self, arrays):
        """The cells the bands hold (formats.level: the clipped slots are
        positions, not entries)."""
        return int(self.fibres(arrays)[0].sum())

    # -- reading (formats.level) -------------------------------------------
    def children(self, lo, hi, size, arrays):
        """The children of parent positions lo..hi-1: lo·width .. hi·width - 1."""
        width = Load(arrays["ushape"], Const(WIDTH))
        return imp.mul(lo, width), imp.mul(hi, width)

    def read(self, lo, hi, size, arrays) -> Band:
        """Parent lo's band: f = step·lo + offset, the coordinates max(0, f) ..
        min(size, f + width) - 1 at the shift lo·width - f."""
        shape = arrays["ushape"]
        width = Load(shape, Const(WIDTH))
        first = imp.add(imp.mul(Load(shape, Const(STEP)), lo), Load(shape, Const(OFFSET)))
        return Band(imp.max_(first, Const(0)), imp.min_(imp.add(first, width), size),
                    Bin("-", imp.mul(lo, width), first),
                    Fixed(_unclipped(shape, size), first, width))

    def describe(self, k, axis, arrays, parents, size=None, count=None):
        """The header text of level k over `axis` (of dimension `size`, C text;
        default dim_<axis>) below `parents` positions, and its number of
        positions (parents · ushape[1]). Never an output level."""
        shape = arrays["ushape"]
        size = size or f"dim_{axis}"
        count = count or f"({parents}) * {shape}[1]"
        return (f"level {k} (uniform_band, {axis}): {shape} has 5 entries (offset, "
                f"width, step, {parents}, {size}); position p holds coordinate "
                f"{shape}[2]*p + {shape}[0] + s at position p*{shape}[1] + s for s < "
                f"{shape}[1], where that coordinate lies in [0, {size}) (the other "
                f"slots hold the fill); {count} positions."), count


def _unclipped(shape: str, size) -> tuple:
    """The parents p whose band f(p) .. f(p) + width - 1 lies inside [0, size), an
    interval [a, b) of the parents since f = step·p + offset, step >= 0: a is
    the first p with step·p >= -offset (0 when offset >= 0; none when step = 0
    and offset < 0), b - 1 the last with step·p <= size - width - offset (none
    when that is negative); both at most the parents' count
    (proofs_notes/band.md, "Fixed width")."""
    step, offset, parents = (Load(shape, Const(k)) for k in (STEP, OFFSET, PARENTS))
    one = imp.max_(step, Const(1))
    below = imp.max_(Bin("-", Const(0), offset), Const(0))
    flat = imp.eq(step, Const(0))
    first = imp.select(flat, imp.select(imp.lt(offset, Const(0)), parents, Const(0)),
                       Bin("/", imp.add(below, Bin("-", one, Const(1))), one))
    room = Bin("-", Bin("-", size, Load(shape, Const(WIDTH))), offset)
    last = imp.select(imp.lt(room, Const(0)), Const(0),
                      imp.select(flat, parents, imp.add(Bin("/", room, one), Const(1))))
    return imp.min_(first, parents), imp.min_(last, parents)


def _shape(parents, coords, n_parents, size):
    """(step, offset, width) of the narrowest band covering the distinct entries
    (parents, coords): step 1, 0, or size // n_parents, the first of the
    narrowest; an offset that stays within max(size, n_parents) of 0."""
    if not len(coords):
        return 1, 0, 0
    best = None
    for step in dict.fromkeys((1, 0, max(size // max(n_parents, 1), 1))):
        rel = coords - step * parents
        lo, hi = int(rel.min()), int(rel.max())
        if lo < -max(size, n_parents) or (best is not None and hi - lo + 1 >= best[2]):
            continue
        best = (step, lo, hi - lo + 1)
    return best
