"""The arrays of scipy inputs checked before anything reads them.

scipy's own conversions and operations trust a matrix's arrays, and a user may
rebind or write them after scipy built it. Every scipy input passes here first:

    checked_scipy(m, where)       m whose arrays describe it (csr, csc, coo, dia,
                                  bsr; a dia without the diagonals that hold no
                                  cell), else an InputError naming `where`
    compressed_arrays(m, where)   (indptr, indices, data, canonical) of a csr or
                                  csc matrix, checked; canonical: every segment
                                  strictly increasing
    coo_coords(m, where)          a coo matrix's coordinates: integers, one array
                                  per mode, each as long as its data
    carried(data, sr)             a csr/csc or coo input's values in sr's carrier
                                  dtype as sr.cast makes them, or None; `carries`
                                  says which dtypes it takes, `checked_cast` is its
                                  cast that may round, `caster` a plan step's choice

runtime.convert builds Tensors from them; ep.lazy wraps them (lazy.wrap).
"""
from __future__ import annotations

import functools

import numpy as np

from .checks import check_compressed
from .structured_inputs import checked
from ..errors import InputError
from ..formats.compressed import (check_pointers, check_range, first_order_violation,
                                  index_array)


def checked_scipy(m, where: str):
    """`m`, a 2-d scipy matrix or array, whose arrays describe it, else an
    InputError naming `where`: csr and csc (`compressed_arrays`), coo (its
    coordinates in range), dia and bsr (structured_inputs.checked, a dia
    without the diagonals that hold no cell); other formats as they are."""
    match m.format:
        case "csr" | "csc":
            compressed_arrays(m, where)
        case "coo":
            for mode, c in enumerate(coo_coords(m, where)):
                check_range(np.asarray(c), m.shape[mode],
                            f"{where}: coordinates of mode {mode}")
        case "dia" | "bsr":
            return checked(m, where)
    return m


def compressed_arrays(m, where: str):
    """(indptr, indices, data, canonical) of the scipy csr or csc matrix `m`,
    whose arrays must describe it (else an InputError naming `where`)."""
    major, minor = m.shape if m.format == "csr" else m.shape[::-1]
    indptr = index_array(m.indptr, f"{where}: indptr")
    indices = index_array(m.indices, f"{where}: indices")
    data = np.asarray(m.data)
    if data.ndim != 1 or len(data) != len(indices):
        raise InputError(f"{where}: data has shape {data.shape} but indices has "
                         f"{len(indices)} entries; they must match")
    return indptr, indices, data, _check_compressed_arrays(indptr, indices, major, minor,
                                                          where, m.format)


def _check_compressed_arrays(indptr, indices, major, minor, where, layout) -> bool:
    """Raise InputError if indptr/indices are malformed; else whether every segment is
    strictly increasing (canonical). One compiled pass when a C compiler is available."""
    fast = check_compressed(indptr, indices, major, minor)
    if fast is None or fast[0] not in (0, 5):
        check_pointers(indptr, major, len(indices), where, pos_name="indptr",
                       crd_name="indices", parents="rows" if layout == "csr" else "columns")
        check_range(indices, minor, f"{where}: indices")
        if fast is not None:   # the compiled check saw a problem the numpy one missed
            raise InputError(f"{where}: malformed indptr/indices (check code "
                             f"{fast[0]} at {fast[1]})")
        return first_order_violation(indptr, indices, strict=True) < 0
    return fast[0] == 0


def coo_coords(m, where):
    """The scipy coo matrix `m`'s coordinates, checked: integer arrays, one per
    mode, each as long as its data."""
    coords = getattr(m, "coords", None)
    if coords is None:
        coords = (m.row, m.col)
    data = np.asarray(m.data)
    for mode, c in enumerate(coords):
        index_array(np.asarray(c), f"{where}: coordinates of mode {mode}")
        if len(c) != len(data):
            raise InputError(f"{where}: mode {mode} has {len(c)} coordinates but "
                             f"data has {len(data)} entries")
    return coords


def carried(data, sr):
    """A scipy input's values `data` in `sr`'s carrier dtype as `sr.cast` makes them:
    `data` itself, its copy where the carrier holds every value of its dtype exactly
    (Semiring.holds_exactly; numpy's cast: a boolean byte other than 0 reads as 1), or
    where a cast may round (int64 into float64) the copy whose every value survives
    the round trip; else None (the general path's, which words the error).

        >>> carried(np.ones(3, np.float32), ep.semirings.real).dtype
        dtype('float64')
    """
    if data.dtype == sr.dtype or sr.holds_exactly(data.dtype):
        return data.astype(sr.dtype, copy=False)
    if not carries(data.dtype, sr):
        return None
    try:
        return checked_cast(data, sr)
    except InputError:
        return None


def checked_cast(data, sr):
    """`sr.cast(data)` for a cast that may round, in fewer passes where it can: integers
    whose extremes lie within ±2**53 (where float64 is exact) cast with no round trip.

        >>> checked_cast(np.arange(3), ep.semirings.real)
        array([0., 1., 2.])
    """
    if data.dtype.kind in "iu" and sr.dtype.kind in "fc" and sr.dtype.itemsize in (8, 16):
        if data.size and -2 ** 53 <= data.min() and data.max() <= 2 ** 53:
            return data.astype(sr.dtype)
    return sr.cast(data)


def carries(dtype, sr) -> bool:
    """Whether `carried` may bind values of numpy `dtype` for semiring `sr` (numbers
    `sr.cast` takes: any into a complex carrier, else all but complex).

        >>> carries(np.dtype(np.complex128), ep.semirings.real)
        False
    """
    return dtype == sr.dtype or dtype.kind in ("biufc" if sr.dtype.kind == "c" else "biuf")


def caster(dtype, sr):
    """None for values of `sr`'s carrier dtype, else the function a call plan makes
    `carried`'s copy of values of numpy `dtype` with: `astype` where the carrier holds
    them exactly, `checked_cast` where the cast may round.

        >>> caster(np.dtype(np.float32), ep.semirings.real)(np.ones(2, np.float32))
        array([1., 1.])
    """
    if dtype == sr.dtype:
        return None
    if sr.holds_exactly(dtype):
        return functools.partial(np.asarray, dtype=sr.dtype)
    return functools.partial(checked_cast, sr=sr)
