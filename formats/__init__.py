"""Level formats (installed as `etchpy.formats`).

A format is a tuple of per-level kinds plus a mode order, after TACO and Etch.
Storage level k holds logical mode `mode_order[k]`.

    level kinds   dense        every coordinate 0..n-1 is present; position p*n + i
                  compressed   pos[p]..pos[p+1] delimit the children of p; crd holds coordinates
                  singleton    exactly one child per parent position; crd holds its coordinate
                  banded       one band of consecutive coordinates per parent (bfirst, bpos)
                  uniform_band one band shape for every parent, its first coordinate
                               affine in the parent, clipped (ushape)
                  blocks       a segment of blocks of consecutive coordinates per parent
                               (bseg, bfirst, bpos)
                  tiles        parents in groups of R, each a segment of dense R×C
                               tiles (tptr, tcol, tshape): scipy's bsr as it lies
                  runs         runs of equal values covering each fibre (rseg, rend); a
                               last level only
                  sparse_runs  runs of equal values with the fill between them (rseg,
                               rbeg, rend); a last level only
                  bytemap      positions p*n + c as dense, plus the stored coordinates in
                               order (mpos, mcrd): walked sparse, probed in O(1); a last
                               level only
                  hash         per parent an open-addressing table of its stored
                               coordinates (hpos, hcrd), their slots listed in order
                               (spos, hsrt): inserted in any order; a last level only

A compressed or singleton level is *unique* unless it stores repeated
coordinates under one parent (the first level of COO does). A singleton level
sits under another level: a non-unique one, or a unique one each of whose
positions has exactly one child (a key that depends on the keys above it, as
ep.table stores one); a non-unique level must be directly followed by a
singleton level (so it is never the last level): its read stream hands each run
of equal coordinates, a range of positions, to the level below, and only a
singleton level reads such a range.

    named formats  dense (any order), csr = (dense, compressed),
                   csc = csr with mode order (1, 0), dcsr = (compressed, compressed),
                   coo = (compressed non-unique, singleton non-unique..., singleton),
                   csf = all compressed, banded = (dense..., banded) (row bands; scipy's
                   dia binds to it), uniform_band = (dense..., uniform_band) (the same
                   diagonals on every row), blocks = (dense..., blocks) (rows of dense blocks),
                   bsr = (dense..., tiles) (scipy's bsr arrays bound as they are),
                   rle = (dense..., runs) (rows of runs: images, masks),
                   sparse_rle = (dense..., sparse_runs) (rows of runs over a fill),
                   bytemap = (dense..., bytemap) (rows walked sparse, probed in O(1)),
                   hash = (dense..., hash) (rows inserted in any order, no dense workspace)

Each level kind lives in its own module and provides the packing of arrays
(building from sorted coordinates, listing coordinates back, validation), its
array roles, how it is read (a Range or a Segment) and how it is written
(located, or appended in the segment layout), answering the protocol of
formats.level; nothing outside formats/ branches on a level's kind. A new level
kind is a new module here, its class registered by one line, `@kind("name")`
(formats.level; `named=` also names a format of dense levels over it): every
module here is imported below, so _LEVEL_NAMES, the named formats and
etchpy.testing's draws read it off the registration.
"""
from __future__ import annotations

import functools
import importlib
import pkgutil

from dataclasses import dataclass

from ..errors import FormatError
from ..formats.banded import Banded
from ..formats.bins import Bins
from ..formats.blocks import BlockList
from ..formats.bytemap import ByteMap
from ..formats.compressed import Compressed
from ..formats.dense import Dense
from ..formats import level
from ..formats.hashtable import Hash
from ..formats.runs import Runs
from ..formats.singleton import Singleton
from ..formats.sparse_runs import SparseRuns
from ..formats.uniform_band import UniformBand

__all__ = ["Format", "Dense", "Compressed", "Singleton", "Banded", "BlockList",
           "Runs", "SparseRuns", "ByteMap", "Hash", "UniformBand", "NAMED_FORMATS"]

for _module in pkgutil.iter_modules(__path__):   # each registers its kind (level.kind)
    importlib.import_module(f"{__name__}.{_module.name}")

# the registered level kinds by name, and the named formats of dense levels over
# one last level of a kind (format name -> kind name), both from formats.level.kind
_LEVEL_NAMES = level.KINDS
_LAST_LEVEL_FORMATS = level.NAMED
NAMED_FORMATS = ("dense", "csr", "csc", "dcsr", "coo", "csf", *_LAST_LEVEL_FORMATS)
_MADE_AT_CALL = (Bins,)     # level kinds no caller names: a onehot's bins (expr.bins)


def _level(spec):
    if isinstance(spec, (*_LEVEL_NAMES.values(), *_MADE_AT_CALL)):
        return spec
    if isinstance(spec, str):
        name, _, flag = spec.partition("-")
        if name in _LEVEL_NAMES and flag in ("", "nonunique", "nu"):
            cls = _LEVEL_NAMES[name]
            if "unique" not in cls.__dataclass_fields__:     # always unique
                if flag:
                    raise FormatError(f"a {name} level is always unique")
                return cls()
            return cls(unique=not flag)
    raise FormatError(f"unknown level kind {spec!r}; use one of "
                      f"{', '.join(repr(n) for n in _LEVEL_NAMES)} (append '-nonunique' "
                      f"for repeated coordinates where a kind allows them) or "
                      f"ep.Dense()/ep.Compressed()/ep.Singleton()/ep.Banded()/ep.BlockList()")


def _names(levels):
    return [str(lv) for lv in levels]


@dataclass(frozen=True)
class Format:
    """A storage format: one level kind per mode, plus the order modes are stored in.

    Parameters:
        levels: one ep.Dense(), ep.Compressed(unique=...) or ep.Singleton(...) per
            storage level, or their names ("dense", "compressed", "singleton", with
            "-nonunique" for repeated coordinates).
        mode_order: storage level k holds logical mode mode_order[k] (default: the
            identity, row-major).
        name: a display name (equality ignores it).
    Raises: FormatError for an inconsistent nesting (see the module docstring).
    Named formats come from `Format.named`, or by name wherever a format is taken.

        >>> csc = ep.Format(["dense", "compressed"], mode_order=(1, 0))
        >>> A = ep.tensor("A", 2, format=csc)
        >>> csc == ep.Format.named("csc", 2)
        True
    """

    levels: tuple
    mode_order: tuple[int, ...]
    name: str | None = None

    def __init__(self, levels, mode_order=None, name=None):
        levels = tuple(_level(lv) for lv in levels)
        mode_order = tuple(range(len(levels))) if mode_order is None else tuple(mode_order)
        if sorted(mode_order) != list(range(len(levels))):
            raise FormatError(f"mode order {mode_order} is not a permutation of "
                              f"0..{len(levels) - 1}")
        for k, lv in enumerate(levels):
            if isinstance(lv, Singleton) and k == 0:
                raise FormatError(f"singleton level {k} must sit under another level (a "
                                  f"non-unique one, as in coo), got {_names(levels)}")
            why = getattr(lv, "last_only", None)
            if why and k + 1 < len(levels) and not getattr(levels[k + 1], "under_last", False):
                raise FormatError(f"a {lv} level must be the last level ({why}), "
                                  f"got {_names(levels)}")
            if not lv.unique and k + 1 == len(levels):
                raise FormatError(f"non-unique level {k} ({lv}) cannot be the last level: "
                                  f"a non-unique level must be directly followed by a "
                                  f"singleton level (as in coo), got {_names(levels)}")
            if not lv.unique and not isinstance(levels[k + 1], Singleton):
                raise FormatError(f"non-unique level {k} ({lv}) must be directly followed "
                                  f"by a singleton level (as in coo), but level {k + 1} is "
                                  f"{levels[k + 1]}: got {_names(levels)}")
        object.__setattr__(self, "levels", levels)
        object.__setattr__(self, "mode_order", mode_order)
        object.__setattr__(self, "name", name)

    # Equality ignores the display name.
    def __eq__(self, other):
        return (isinstance(other, Format) and self.levels == other.levels
                and self.mode_order == other.mode_order)

    def __getstate__(self):
        """What pickling keeps: the fields, not the values worked out once (a hash
        is recomputed in the process that reads it)."""
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}

    def _once(self, key: str, work):
        """`work()`, worked out on first need and kept under `key` (not pickled):
        calls read these facts per input."""
        value = self.__dict__.get(key)
        if value is None:
            value = work()
            object.__setattr__(self, key, value)
        return value

    def __hash__(self):
        return self._once("_hash", lambda: hash((self.levels, self.mode_order)))

    @property
    def order(self) -> int:
        """The number of levels (the tensor's order)."""
        return len(self.levels)

    @property
    def writes_runs(self) -> bool:
        """Is the last level written a run at a time, in order (formats.level's
        optional `writes_runs`: lower.targets.runs)?"""
        return bool(self.levels) and getattr(self.levels[-1], "writes_runs", False)

    @property
    def drops_fill(self) -> bool:
        """Does an output in this format leave out the cells whose value is the fill,
        products or not (formats.level's `run_starts`: a sparse run list stores no
        run of the zero), however it is written (as runs, or as coordinate records
        packed after the call)?"""
        return bool(self.levels) and getattr(self.levels[-1], "run_starts", False)

    @property
    def every_cell(self) -> bool:
        """Located levels over one that stores every coordinate of its fibre
        (formats.level's `every_coordinate`): an output stores every cell?"""
        return (bool(self.levels) and getattr(self.levels[-1], "every_coordinate", False)
                and all(lv.located for lv in self.levels[:-1]))

    @property
    def takes_levels_below(self) -> bool:
        """May a level other than an `under_last` one (a dense level, say) be
        stored below this format's last level (formats.level's `last_only`)?"""
        return not (self.levels and getattr(self.levels[-1], "last_only", None))

    @property
    def values_are_entries(self) -> bool:
        """Is every position of the values one stored entry (no last level that lists
        its stored coordinates apart from its positions: formats.level's `stored`,
        a hash's empty slots, a bytemap's absent cells; nor one whose positions are
        runs, formats.level's `writes_runs`, a run's one value standing for each of
        its coordinates)?"""
        last = self.levels[-1] if self.levels else None
        return not (getattr(last, "stored", None) or getattr(last, "writes_runs", False))

    @property
    def is_dense(self) -> bool:
        """True when every level is dense (worked out once)."""
        return self._once("_dense", lambda: all(isinstance(lv, Dense) for lv in self.levels))

    @property
    def is_row_major_dense(self) -> bool:
        """True when every level is dense and the modes are stored in their own order:
        the layout of a C-contiguous numpy array (worked out once)."""
        return self._once("_row_major", lambda: self.is_dense
                          and self.mode_order == tuple(range(self.order)))

    def __repr__(self):
        """`Format(['dense', 'compressed'], mode_order=(1, 0), name='csc')`: the levels,
        the mode order when it is not the identity, the name when there is one."""
        order = ("" if self.mode_order == tuple(range(self.order))
                 else f", mode_order={self.mode_order}")
        name = f", name={self.name!r}" if self.name else ""
        return f"Format({_names(self.levels)}{order}{name})"

    def __str__(self):
        return self.name or repr(self)

    @staticmethod
    @functools.lru_cache(maxsize=256)     # formats are immutable: share them
    def named(name: str, order: int) -> "Format":
        """The named format `name` ("dense", "csr", "csc", "dcsr", "coo", "csf",
        "banded", "uniform_band", "blocks", "rle", "sparse_rle", "bytemap", "hash":
        dense levels over one banded, uniform band, block-list, run-length, sparse run-length, bytemap or hash level) for
        a tensor of `order` modes; FormatError for an unknown name or a wrong order.

            >>> ep.Format.named("coo", 3).levels
            (Compressed(unique=False), Singleton(unique=False), Singleton(unique=True))
        """
        if name == "dense":
            return Format([Dense()] * order, name="dense")
        if name in ("csr", "csc"):
            if order != 2:
                raise FormatError(f"format {name} is for order-2 tensors, not order {order}")
            return Format([Dense(), Compressed()], (0, 1) if name == "csr" else (1, 0),
                          name=name)
        if name == "dcsr":
            if order != 2:
                raise FormatError(f"format dcsr is for order-2 tensors, not order {order}")
            return Format([Compressed(), Compressed()], name="dcsr")
        if name == "csf":
            return Format([Compressed()] * order, name="csf")
        if name in _LAST_LEVEL_FORMATS:
            if order == 0:
                raise FormatError(f"format {name} needs at least one mode")
            last = _LEVEL_NAMES[_LAST_LEVEL_FORMATS[name]]()
            return Format([Dense()] * (order - 1) + [last], name=name)
        if name == "coo":
            if order == 0:
                return Format([], name="coo")
            if order == 1:
                return Format([Compressed()], name="coo")
            levels = [Compressed(unique=False)] + [Singleton(unique=False)] * (order - 2) \
                + [Singleton()]
            return Format(levels, name="coo")
        raise FormatError(f"unknown format {name!r}; named formats are "
                          f"{', '.join(NAMED_FORMATS)}, or use ep.Format(levels, mode_order)")

    @staticmethod
    def dense(order: int, mode_order=None) -> "Format":
        """All `order` levels dense, stored in `mode_order` (default: the modes' order).

            >>> ep.Format.dense(2, (1, 0))         # a column-major dense matrix
        """
        if mode_order is None or tuple(mode_order) == tuple(range(order)):
            return Format.named("dense", order)
        return Format([Dense()] * order, tuple(mode_order))

    @staticmethod
    def parse(spec: "str | Format", order: int) -> "Format":
        """The Format of `spec` (a name or a Format) for a tensor of `order` modes;
        FormatError when it has another number of levels.

            >>> ep.Format.parse("csr", 2)
            Format(['dense', 'compressed'], name='csr')
        """
        fmt = Format.named(spec, order) if isinstance(spec, str) else spec
        if not isinstance(fmt, Format):
            raise FormatError(f"a format is a name or an ep.Format, got {spec!r}")
        if fmt.order != order:
            raise FormatError(f"format {fmt} has {fmt.order} levels but the tensor has "
                              f"order {order}")
        return fmt

    def storage_modes(self):
        """(level index, logical mode, level) in storage order.

            >>> ep.Format.named("csc", 2).storage_modes()
            [(0, 1, Dense()), (1, 0, Compressed(unique=True))]
        """
        return [(k, m, lv) for k, (m, lv) in enumerate(zip(self.mode_order, self.levels))]
