"""scipy's dia and bsr arrays read into the banded and blocks formats (interop).

Each returns (level dicts, values) for runtime.convert to make its Parts of.

    checked(m, where)            a dia or bsr array whose arrays describe a
                                 matrix (else an InputError naming it), dia
                                 without the diagonals that hold no cell: what
                                 every other step, scipy's conversions
                                 included, may trust
    dia_format(m)                the format a dia_array reads into by default:
                                 uniform_band, or banded when its band is
                                 wider than a row
    from_dia(m, fmt, sr, name)   a dia_array as row bands, format uniform_band
                                 = (dense, uniform_band) or banded = (dense,
                                 banded); None when `fmt` is another format
                                 (the caller goes through coo)
    from_bsr(m, fmt, sr, name)   a bsr_array as a tile level over its own
                                 arrays, format bsr = (dense, tiles), or as rows
                                 of dense blocks, format blocks = (dense,
                                 blocks); blocks out of order put in order; None
                                 when `fmt` is another format or a block row
                                 repeats a block column

Format bsr binds scipy's bsr arrays as they are (formats.tiles reads its
layout). Otherwise neither binds scipy's arrays without a copy in general,
because the layouts differ: dia stores each diagonal contiguously (data[k, j] = A[j - offsets[k],
j]) and a banded or uniform band level each row's band (a uniform band of
column bands, mode order (1, 0), stores each column's band: the transpose of
dia's array too, agreeing only when it holds one diagonal), so the values are
regrouped in one vectorised pass (O(rows · bands)); bsr stores each R×C block contiguously and a
block-list level each row's runs, so the values are regrouped likewise, except
that with one-row blocks (R = 1) the two layouts agree and the values are
shared. Index arrays are always built (a few per row or per block).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..formats import Format
from ..formats.blocks import spread
from ..formats.compressed import (check_pointers, check_range, first_order_violation,
                                  index_array)
from .checks import check_compressed
from .segment_sort import sorted_segments


def checked(m, where: str):
    """`m` (a scipy dia or bsr array) checked: its arrays' dimensions, dtypes and
    lengths agree with its shape and with one another, and bsr's indptr and
    indices are well formed, else an InputError naming the input. Its arrays
    may have been written or rebound since scipy built it, and scipy's own
    conversions trust them (a dia offset beyond int32 wraps in dia_tocsr and
    writes past its output). A dia array comes back without the diagonals that
    hold no cell, as a new array over the same data (the caller's is never
    modified); a bsr array as is. Errors name `where`."""
    data = np.asarray(m.data)
    if data.dtype.kind not in "biufc":
        raise InputError(f"{where}: data must hold numbers, got dtype {data.dtype}")
    if m.format == "dia":
        return _checked_dia(m, data, where)
    if data.ndim != 3 or 0 in data.shape[1:]:
        raise InputError(f"{where}: data must hold blocks (3-d, blocks of at least one "
                         f"cell), got shape {data.shape}")
    (R, C), (nrows, ncols) = data.shape[1:], m.shape
    if nrows % R or ncols % C:
        raise InputError(f"{where}: blocksize {(R, C)} does not divide shape {m.shape}")
    indptr = index_array(np.asarray(m.indptr), f"{where}: indptr")
    indices = index_array(np.asarray(m.indices), f"{where}: indices")
    if len(indices) != len(data):
        raise InputError(f"{where}: indices has {len(indices)} entries but data "
                         f"{len(data)} blocks; they must match")
    fast = (check_compressed(indptr, indices, nrows // R, ncols // C)   # one compiled pass
            if indptr.dtype == indices.dtype else None)
    if fast is None or fast[0] not in (0, 5):      # (5: valid, blocks out of order)
        check_pointers(indptr, nrows // R, len(indices), where, "indptr", "indices",
                       "block rows")
        check_range(indices, ncols // C, f"{where}: indices")
        if fast is not None:    # the compiled check saw a problem the numpy one missed
            raise InputError(f"{where}: malformed indptr/indices (check code {fast[0]} "
                             f"at {fast[1]})")
    return m


def _checked_dia(m, data, where):
    offsets = index_array(np.asarray(m.offsets), f"{where}: offsets")
    if data.ndim != 2 or data.shape[0] != len(offsets):
        raise InputError(f"{where}: data must be 2-d with one row per offset ("
                         f"{len(offsets)}), got shape {data.shape}")
    if len(np.unique(offsets)) != len(offsets):     # scipy checks when built, not after
        raise InputError(f"{where}: offsets must be distinct, got {offsets.tolist()}")
    nrows, ncols = m.shape
    held = (offsets > -nrows) & (offsets < min(ncols, data.shape[1]))
    if held.all():
        return m
    import scipy.sparse as sp

    kept = (data[held], offsets[held].astype(np.int64))
    return (sp.dia_array if isinstance(m, sp.sparray) else sp.dia_matrix)(kept, shape=m.shape)


def dia_format(m) -> str:
    """The default format of the dia array `m`: "uniform_band" (one band shape,
    nothing stored per row), or "banded" when the span of its offsets is wider
    than a row (a uniform band's width is at most the dimension)."""
    offsets = np.asarray(m.offsets, dtype=np.int64)
    span = int(offsets.max() - offsets.min()) + 1 if len(offsets) else 0
    return "uniform_band" if span <= max(m.shape[1], 1) else "banded"


def from_dia(m, fmt, sr, name) -> tuple | None:
    """Row bands of the dia array `m`: row i's band runs from column i + min(offsets)
    to i + max(offsets), clipped to the matrix (offsets of diagonals that hold no
    cell left out); cells of no stored diagonal hold the semiring's zero.
    Format uniform_band stores every row's band at its full width (ushape:
    offset min(offsets), step 1), banded each row's clipped band. None for
    another format, or a uniform band wider than a row. `m` has been `checked`."""
    uniform = fmt == Format.named("uniform_band", 2)
    if not uniform and fmt != Format.named("banded", 2):
        return None
    where = f"tensor {name!r} (scipy dia input)"
    offsets = np.asarray(m.offsets, dtype=np.int64)     # checked: distinct, in one row
    nrows, ncols = m.shape
    data = sr.cast(np.asarray(m.data), what=f"{where} data")
    width = min(ncols, data.shape[1])
    held = (offsets > -nrows) & (offsets < width)      # diagonals holding some cell
    if not held.all():
        offsets, data = offsets[held], data[held]
    lo, hi = (int(offsets.min()), int(offsets.max())) if len(offsets) else (0, -1)
    if uniform and hi - lo + 1 > max(ncols, 1):
        return None
    band = np.empty((nrows, hi - lo + 1), dtype=data.dtype)   # one fresh array: its pages
    held = np.zeros(hi - lo + 1, dtype=bool)                   # are most of the cost
    for k, off in enumerate(offsets):           # rows r with 0 <= r + off < width
        r0, r1 = max(0, -int(off)), max(0, min(nrows, width - int(off)))
        r0 = min(r0, r1)
        column = band[:, off - lo]
        column[:r0], column[r1:] = sr.zero, sr.zero
        column[r0:r1] = data[k, r0 + off:r1 + off]
        held[off - lo] = True
    band[:, ~held] = sr.zero
    if uniform:
        shape = np.array([lo, hi - lo + 1, 1, nrows, ncols], dtype=np.int64)
        return ({}, {"ushape": shape}), band.reshape(-1)
    if not len(offsets):
        return ({}, {"bfirst": np.zeros(nrows, np.int64),
                     "bpos": np.zeros(nrows + 1, np.int64)}), data[:0].reshape(-1)
    rows = np.arange(nrows, dtype=np.int64)
    cols = rows[:, None] + lo + np.arange(hi - lo + 1)[None, :]
    inside = (cols >= 0) & (cols < ncols)
    bpos = np.zeros(nrows + 1, dtype=np.int64)
    np.cumsum(inside.sum(axis=1), out=bpos[1:])
    first = np.clip(rows + lo, 0, ncols)
    return ({}, {"bfirst": first, "bpos": bpos}), band[inside]


def from_bsr(m, fmt, sr, name) -> tuple | None:
    """Rows of dense blocks of the bsr array `m`, its blocks put in order where
    they are not (`_in_order`): format bsr = (dense, tiles), scipy's arrays as
    they are (`_tiles`); format blocks, row i of block row br holds one run of C
    columns per block of br (adjacent blocks stay separate runs). None for
    another format, or where a block row repeats a block column. `m` has been
    `checked` (on every call: its arrays may have been written in place since
    the last)."""
    if fmt == Format.named("bsr", 2):
        return _tiles(m, sr, name)
    if fmt != Format.named("blocks", 2):
        return None
    where = f"tensor {name!r} (scipy bsr input)"
    R, C = m.blocksize
    nrows = m.shape[0]
    got = _in_order(m, sr, where)
    if got is None:
        return None
    indptr, indices, data = (got[0].astype(np.int64, copy=False),
                             got[1].astype(np.int64, copy=False), got[2])
    rows = np.arange(nrows, dtype=np.int64)
    owner, offset, begin = spread(indptr[rows // R], indptr[rows // R + 1])
    block = begin + offset
    bseg = np.zeros(nrows + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner, minlength=nrows), out=bseg[1:])
    level = {"bseg": bseg, "bfirst": indices[block] * C,
             "bpos": np.arange(len(block) + 1, dtype=np.int64) * C}
    fmt.levels[1].check(level, nrows, m.shape[1], f"{where} as blocks")
    vals = data.reshape(-1) if R == 1 else data[block, owner % R, :].reshape(-1)
    return ({}, level), vals


def _tiles(m, sr, name) -> tuple | None:
    """The bsr array `m` as a tile level over its own arrays: indptr, indices and
    data bound without a copy where their dtypes are the kernel's and its block
    columns increase within each block row (`_in_order`); None where a block
    row repeats a block column (the caller combines the repeats through coo)."""
    got = _in_order(m, sr, f"tensor {name!r} (scipy bsr input)")
    if got is None:
        return None
    indptr, indices, data = got
    level = {"tptr": indptr, "tcol": indices,
             "tshape": np.array(m.blocksize, dtype=np.int64)}
    return ({}, level), np.ascontiguousarray(data).reshape(-1)


def _in_order(m, sr, where) -> tuple | None:
    """(indptr, indices, data) of the `checked` bsr array `m`, its blocks in
    order within each block row, whatever its has_canonical_format says
    (checked in one compiled pass where a compiler is available, as a csr
    input's are): its own arrays where they are, else its blocks put in order
    (moved whole, not sorted entry by entry); None where a block row repeats a
    block column."""
    (R, C), (nrows, ncols) = m.blocksize, m.shape
    indptr, indices = np.asarray(m.indptr), np.asarray(m.indices)
    data = sr.cast(np.asarray(m.data), what=f"{where} data")
    fast = (check_compressed(indptr, indices, nrows // R, ncols // C)
            if indptr.dtype == indices.dtype else None)
    if fast is not None and fast[0] == 0:
        return indptr, indices, data
    if fast is None and first_order_violation(indptr, indices, strict=True) < 0:
        return indptr, indices, data
    shape = (nrows // R, ncols // C)
    ok, (indptr, indices, perm) = sorted_segments(shape, "csr", indptr, indices,
                                                  np.arange(len(indices)))
    return (indptr, indices, data[perm]) if ok else None
