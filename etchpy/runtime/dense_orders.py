"""Dense numpy inputs read in the order their buffer holds them (Tuning.dense_orders).

A numpy array in Fortran order (`np.asfortranarray(B)`, `A.T` of a C-order array,
any view whose strides are a permutation of a contiguous layout's) would be
copied to C order on every call of a kernel declaring it row-major dense
(runtime.calling.bind). A kernel planned per size class (runtime.signature)
plans instead, for the classes whose inputs come so, the expression with those
tensors declared dense in the mode order their buffers hold (runtime.adopt):
the same value, its buffer read as it is, as a csc scipy input is for a csr
tensor. The class key holds each array's order as given, so a C-order array of
the same kernel keeps the declared kernel; arrays in no such order (strided,
negative strides) are still copied.

    stored_order(arr)           the mode order arr's buffer holds, or None
    given_order(v)              the same for any input (None unless a numpy array)
    readable_in(arr, order)     arr's values in storage order as a flat view, or None
    own_values(arr, fmt)        the same in a dense format's order (calling._fast_bind)
    dense_in(order)             the all-dense Format in that mode order
"""
from __future__ import annotations

import numpy as np

from ..formats import Format


def stored_order(arr) -> tuple | None:
    """The mode order in which numpy array `arr`'s buffer holds its elements
    (storage level k holds mode order[k]) when it is not C-contiguous but is
    contiguous in another order (Fortran order, a transposed view of one), else
    None (C order, or strided, or negative strides, or fewer than 2 modes)."""
    if arr.ndim < 2 or arr.flags.c_contiguous:
        return None
    if arr.ndim == 2:
        return (1, 0) if arr.flags.f_contiguous else None
    strides = arr.strides
    order = tuple(sorted(range(arr.ndim), key=lambda m: -strides[m]))
    return order if arr.transpose(order).flags.c_contiguous else None


def given_order(v) -> tuple | None:
    """stored_order of a numpy input (exactly an ndarray), else None."""
    return stored_order(v) if type(v) is np.ndarray else None


def readable_in(arr, order):
    """`arr`'s elements in the order its storage in `order` holds them, as a flat
    view of its buffer (no copy), or None when its buffer is not contiguous in
    that order."""
    t = arr.transpose(order)
    return t.ravel() if t.flags.c_contiguous else None


def own_values(arr, fmt):
    """The values of numpy array `arr` as a flat view of its buffer in the storage
    order of dense format `fmt` (row-major: a C-contiguous array's; another mode
    order: an array contiguous in it), or None when its buffer does not hold them
    so (a copy is needed)."""
    if not fmt.is_dense:
        return None
    if fmt.is_row_major_dense:
        return arr.ravel() if arr.flags.c_contiguous else None
    return readable_in(arr, fmt.mode_order)


def dense_in(order) -> Format:
    """The format of a dense tensor stored in mode order `order`."""
    return Format(["dense"] * len(order), mode_order=tuple(order))
