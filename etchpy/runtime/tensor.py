"""Tensors in level formats: the `Tensor` container and its structural validation.

A `Tensor` holds a logical `shape`, a `Format`, one dict of index arrays per
storage level, the values `vals` (one per position of the last level) and the
implicit `fill` value (the semiring's zero). Storage level k holds logical mode
`format.mode_order[k]`.

    Dense level        {}                          children of p: p*n + i, i < n
    Compressed level   {"pos": ..., "crd": ...}    children of p: pos[p]..pos[p+1]-1
    Singleton level    {"crd": ...}                child of p: p, coordinate crd[p]

Level -1 has the single position 0; an order-0 tensor has no levels and one
value. Index arrays are int32 or int64: built here, they are int32 whenever every
coordinate and position fits (so kernels load half the index bytes), else int64;
scipy input keeps its own dtype (its values can then be shared without a copy).

The per-level work (packing sorted coordinates, listing children, checking
arrays) lives in the level classes of `etchpy.formats`; the conversions from and
to coordinates, numpy and scipy are in runtime.convert.
"""
from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from . import checks_levels as checks
from . import convert as cv
from . import unwritten
from ..errors import InputError
from ..formats import Format
from ..semiring import semirings


class Tensor:
    """A tensor stored level by level; see the module docstring for the layout.

    A Tensor cannot be made inconsistent from Python: ``name``, ``shape``,
    ``format``, ``levels``, ``vals`` and ``fill`` cannot be rebound, each level is a
    read-only mapping, and the index arrays are the Tensor's own immutable copies
    (read-only, over an immutable buffer, so their flags cannot be set writeable
    again). The values may be written in place. An array whose dtype, shape or
    strides are changed in place is refused (InputError) on the next access, and
    so are values or levels put in place of its own through its ``__dict__``.

    ``validate=True`` checks every structural invariant. A caller that guarantees
    the order of the coordinates may pass ``unsafe_skip_order_check=True``: the
    bounds that the kernels rely on (array lengths, pos monotone from 0 to the
    length of crd, every coordinate inside its dimension, int32/int64 index arrays)
    are still checked, but an unsorted or repeated coordinate then gives an
    unspecified result. ``validate=False`` is the older spelling of the same thing.

    Parameters: shape, the logical shape; format, a format name or ep.Format;
    levels, one dict of index arrays per storage level; vals, the stored values;
    fill, the value of every entry not stored (the semiring's zero); name, the
    name errors use. Most callers use `from_coords`, `from_dense` or `from_scipy`.

        >>> t = ep.Tensor((2, 3), "csr", [{}, {"pos": [0, 1, 2], "crd": [2, 0]}],
        ...               [5.0, 7.0])
        >>> t.to_dense()
        array([[0., 0., 5.],
               [7., 0., 0.]])
    """

    def __init__(self, shape, format, levels, vals, fill=0.0, *, validate=True,
                 name="tensor", unsafe_skip_order_check=False):
        self._init(str(name), shape, format, levels, vals, fill)
        self.validate(order=bool(validate) and not unsafe_skip_order_check)

    def _init(self, name, shape, format, levels, vals, fill):
        shape = cv.as_shape(shape, name)
        levels = tuple(_as_level(lv, name) for lv in levels)
        vals = _as_vals(vals, name)
        attrs = {"name": name, "shape": shape, "format": Format.parse(format, len(shape)),
                 "_levels": levels, "_vals": vals, "fill": _as_fill(fill, vals.dtype, name),
                 **recorded(vals, levels)}
        self.__dict__.update(attrs)

    @classmethod
    def _of(cls, parts: cv.Parts, name) -> "Tensor":
        """A tensor from consistent parts (built by runtime.convert: not validated again)."""
        t = cls.__new__(cls)
        t._init(str(name), *parts)
        return t

    def __setattr__(self, attr, value):
        raise AttributeError(f"tensor {self.name!r}: {attr} cannot be rebound; build a new "
                             f"Tensor (its values may be written in place)")

    def __delattr__(self, attr):
        self.__setattr__(attr, None)

    @property
    def levels(self) -> tuple:
        """One read-only mapping of index arrays per storage level."""
        self.check_layout()
        return self._levels

    @property
    def vals(self) -> np.ndarray:
        """The stored values, one per position of the last level (writeable in place).
        Each access is counted (`unwritten_mark`)."""
        self.check_layout()
        self.__dict__["_handed"] = self.__dict__.get("_handed", 0) + 1
        return self._vals

    def unwritten_mark(self):
        """None when something besides this Tensor holds its values or their memory
        now (a name, a view, a binding), or when this interpreter's reference
        counts cannot tell (runtime.unwritten); else how many times `vals` was
        handed out. A write needs such a reference, each from outside comes from `vals`
        (kernels read inputs): equal marks, not None, mean no write in between.

            >>> t.unwritten_mark() is not None, (v := t.vals) is None, t.unwritten_mark()
            (True, False, None)
        """
        return unwritten.mark(self)

    def __copy__(self):
        """The tensor itself (its parts cannot be rebound): a shallow copy would
        share the values and count their hand-outs apart (unwritten_mark)."""
        return self

    def check_layout(self):
        """Raises InputError when one of the tensor's arrays had its dtype, shape or
        strides changed in place since it was built (its values may change), or
        when its values or levels are not the objects it was built with.

            >>> t.check_layout()          # None: every array as it was built
        """
        vals, levels = self._parts
        if self._vals is not vals or self._levels is not levels:
            raise InputError(f"tensor {self.name!r}: its values or levels were replaced "
                             f"(through its __dict__) since it was built; build a new Tensor")
        for a, dtype, shape, strides in self._layout:
            if a.shape != shape or a.dtype != dtype or a.strides != strides:
                raise InputError(f"tensor {self.name!r}: one of its arrays had its dtype, "
                                 f"shape or strides changed in place (now {a.dtype} "
                                 f"{a.shape}, was {dtype} {shape}); build a new Tensor")

    # -- basic properties ------------------------------------------------------
    @property
    def order(self) -> int:
        """The number of modes (len(shape))."""
        return len(self.shape)

    @property
    def nnz(self) -> int:
        """Number of stored values: for a dense last level, fill included; for a
        last level that lists its stored coordinates apart from its positions (a
        bytemap's cells, a hash's slots), the listed (formats.level `stored`)."""
        stored = getattr(self.format.levels[-1], "stored", None) if self.order else None
        self.check_layout()
        return len(self._vals) if stored is None else stored(self.levels[-1])

    @property
    def dtype(self) -> np.dtype:
        """The values' dtype (fixed at construction: the layout check refuses a change)."""
        return self._vals.dtype

    def __repr__(self):
        fill = "" if self.fill == 0 else f", fill={self.fill}"
        return (f"Tensor({self.name!r}, shape={self.shape}, format={self.format}, "
                f"nnz={self.nnz}, dtype={self.dtype}{fill})")

    # -- construction ----------------------------------------------------------
    @classmethod
    def from_coords(cls, coords, values, shape, format="coo", *, semiring=None,
                    name: str = "tensor") -> "Tensor":
        """Build from coordinates `coords` (an (order, nnz) array) and `values` (nnz,),
        for a tensor of `shape` stored in `format` (default "coo").

        Duplicate coordinates are combined with the semiring's add (`semiring`: a
        Semiring or a built-in name; default real, real32 for float32 values, complex
        for complex ones; its zero is the fill); stored values equal to the fill are kept. `name` is the name errors use.

            >>> t = ep.Tensor.from_coords([[0, 1], [2, 0]], [5.0, 7.0], (2, 3), "csr")
            >>> t.nnz
            2
        """
        sr = _semiring(semiring, values)
        return cls._of(cv.from_coords(coords, values, shape, format, sr, name), name)

    @classmethod
    def from_coords_columns(cls, coords, columns, shape, format="coo", *, semiring=None,
                            name: str = "tensor") -> list["Tensor"]:
        """One tensor per value array in `columns` (each (nnz,)), all over the same
        `coords` (order, nnz), of `shape`, stored in `format`, duplicates combined
        with the add of `semiring`, `name` in errors: what `from_coords` builds
        for each column, with the entries sorted and combined once.

            >>> a, b = ep.Tensor.from_coords_columns([[1, 0]], [[5.0, 7.0], [1.0, 2.0]], (2,))
            >>> a.to_dense(), b.to_dense()
            (array([7., 5.]), array([2., 1.]))
        """
        sr = _semiring(semiring, *columns)
        parts = cv.from_coords_columns(coords, columns, shape, format, sr, name)
        if not parts:
            return []
        first = cls._of(parts[0], name)      # its index arrays made immutable once
        return [first] + [cls._of((p.shape, p.format, first.levels, p.vals, p.fill), name)
                          if p.levels is parts[0].levels else cls._of(p, name)
                          for p in parts[1:]]

    @classmethod
    def from_dense(cls, array, format=None, *, semiring=None,
                   name: str = "tensor") -> "Tensor":
        """Build from a numpy `array`, stored in `format` (a name or ep.Format).

        All-dense formats share the array's memory when its layout allows: with
        `format=None` any axis permutation in which the array is contiguous is
        used as the mode order. Sparse formats store the entries != fill (the
        zero of `semiring`, a Semiring or a built-in name; by default real, real32
        for a float32 array, complex for a complex one). `name` is the name errors use.

            >>> ep.Tensor.from_dense(np.eye(3), "csr").nnz
            3
        """
        sr = _semiring(semiring, array)
        return cls._of(cv.from_dense(array, format, sr, name), name)

    @classmethod
    def from_scipy(cls, m, format=None, *, semiring=None,
                   name: str = "tensor") -> "Tensor":
        """Build from a scipy.sparse matrix or array `m` (csr, csc, coo; others via coo).

        The default `format` follows the input (csr, csc, else coo). Canonical
        csr/csc input read in its own layout shares its values (the index arrays
        are copied, see the class docstring). The input is always validated and
        never modified. `semiring` (a Semiring or a built-in name; by default real,
        real32 for float32 values, complex for complex ones) gives the fill; `name` is the name errors use.

            >>> t = ep.Tensor.from_scipy(scipy.sparse.random(4, 5, 0.3, "csr"))
            >>> t.format.name
            'csr'
        """
        sr = _semiring(semiring, m)
        return cls._of(cv.from_scipy(m, format, sr, name), name)

    def pattern(self, value=1.0) -> "Tensor":
        """This tensor's structure with every stored value `value` (the semiring's
        one: 1.0 for real, 0.0 for min_plus, True for bool), over values that
        nothing can write (unlike a Tensor's own): what an input declared
        `ep.tensor(..., iso=True)` binds with one check of its values, on its
        first call, instead of one per call. The index arrays are shared.

            >>> P = ep.Tensor.from_scipy(M, "csc").pattern()
        """
        one = np.full(len(self.vals), value, dtype=self.dtype)
        vals = np.frombuffer(one.tobytes(), dtype=self.dtype)
        return Tensor._of((self.shape, self.format, self.levels, vals, self.fill), self.name)

    # -- listing and conversion ------------------------------------------------
    def to_coords(self):
        """(coords, values) of every stored position, in storage order.

        coords has shape (order, n), int64, rows in logical mode order.

            >>> coords, values = t.to_coords()
        """
        return cv.to_coords(self)

    def to_dense(self):
        """A new ndarray of `shape` holding the fill where nothing is stored.

            >>> ep.Tensor.from_dense(np.eye(2), "csr").to_dense()
            array([[1., 0.],
                   [0., 1.]])
        """
        return cv.to_dense(self)

    def convert(self, format):
        """This tensor in another format (itself when the format is the same).

        Stored entries are kept; under a dense last level, entries equal to the
        fill count as not stored. `format`: a name or an ep.Format.

            >>> t.convert("csc").format.name
            'csc'
        """
        fmt = Format.parse(format, self.order)
        if fmt == self.format:
            return self
        return Tensor._of(cv.convert(self, fmt), self.name)

    def to_scipy(self, *, keep_fill=False):
        """A scipy csr_array (csc_array when the format is csc); order 2 only.

        scipy reads missing entries as 0, so a tensor whose fill is not 0 (a
        min_plus result, say) is refused unless `keep_fill=True` says the caller
        knows that the missing entries mean `fill`.

            >>> ep.Tensor.from_dense(np.eye(2), "csr").to_scipy().nnz
            2
        """
        if self.order != 2:
            raise InputError(f"tensor {self.name!r}: to_scipy needs order 2, "
                             f"got order {self.order}")
        if self.fill != 0 and not keep_fill:
            raise InputError(f"tensor {self.name!r}: its fill value is {self.fill}, "
                             f"but scipy.sparse reads missing entries as 0")
        return cv.to_scipy(self)

    # -- validation ------------------------------------------------------------
    def validate(self, order=True):
        """Check every structural invariant; raise InputError naming the problem.
        With ``order=False`` only the bounds (see the class docstring).

            >>> t.validate()          # None, or InputError naming the bad level

        The per-level checks also make the stored coordinate tuples strictly
        increase in storage order: dense and compressed levels order each
        segment, every non-unique level is followed by a singleton level (see
        Format), and a singleton level orders each run of its parent
        (runtime.checks_levels).
        """
        checks.validate(self, order)


# -- helpers: input normalisation ----------------------------------------------
def _as_level(level, name):
    """A read-only mapping of the level's arrays, each an immutable copy (see Tensor)."""
    if not isinstance(level, Mapping):
        raise InputError(f"tensor {name!r}: each level is a dict of arrays, "
                         f"got {type(level).__name__}")
    return MappingProxyType({key: _immutable(np.asarray(a)) for key, a in level.items()})


def recorded(vals, levels) -> dict:
    """A tensor's attributes that check_layout reads: `_layout` (_layout_of) and
    `_parts`, the values and levels objects themselves (so that one put in their
    place through the instance dict is refused, not read)."""
    return {"_layout": _layout_of(vals, levels), "_parts": (vals, levels)}


def _layout_of(vals, levels) -> tuple:
    """(array, dtype, shape, strides) of each array of a tensor (check_layout)."""
    return tuple((a, a.dtype, a.shape, a.strides)
                 for a in (vals, *(a for lv in levels for a in lv.values())))


def frozen(a: np.ndarray) -> bool:
    """Nothing can write the elements of the 1-d array ``a``: it is read-only, C
    contiguous, over an immutable ``bytes`` buffer."""
    base = a
    while isinstance(base, np.ndarray) and not base.flags.writeable:
        base = base.base
    return isinstance(base, bytes) and a.flags.c_contiguous and a.ndim == 1


def _immutable(a: np.ndarray) -> np.ndarray:
    """``a`` when nothing can write its elements (read-only over an immutable buffer),
    else a C-contiguous copy that nothing can: an array over a ``bytes`` object."""
    if a.dtype == object:
        return a                   # refused by validate, with its name
    if frozen(a):
        return a
    copy = np.frombuffer(np.ascontiguousarray(a).tobytes(), dtype=a.dtype)
    return copy.reshape(a.shape)


def _as_vals(vals, name):
    """C-contiguous values, booleans as 0 or 1; a view, so that resizing it in
    place is refused."""
    vals = truth_values(np.asarray(vals))
    if not vals.flags.c_contiguous:
        vals = np.ascontiguousarray(vals)
    return vals.view()


def truth_values(vals: np.ndarray) -> np.ndarray:
    """`vals`, with a bool array whose bytes are not all 0 or 1 (a view of other
    bytes) copied so that every nonzero byte is True (1), as C reads it. numpy
    reads such bytes inconsistently (`logical_and.reduce` of 2s is False), so
    every backend binds booleans through this."""
    if vals.dtype == np.bool_ and vals.size and vals.view(np.uint8).max() > 1:
        return vals.view(np.uint8) != 0
    return vals


def _as_fill(fill, dtype, name):
    try:
        return dtype.type(fill)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"tensor {name!r}: fill {fill!r} is not a value of "
                         f"dtype {dtype}") from None


def _semiring(semiring, *values):
    """`semiring` as a Semiring; by default real, or the values' dtype's when it is
    complex or a float narrower than float64 (float32 in, float32 out)."""
    if semiring is None:
        dtype = np.result_type(*(v.dtype if hasattr(v, "dtype") else np.asarray(v).dtype
                                 for v in values))
        if dtype.kind == "c" or dtype.kind == "f" and dtype.itemsize < 8:
            return semirings.for_dtype(dtype)
    return semirings.get(semiring if semiring is not None else semirings.real)
