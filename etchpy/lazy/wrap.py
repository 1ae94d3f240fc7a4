"""What ep.lazy accepts: the value a leaf holds (a numpy array, or a scipy csr or
csc array sharing the wrapped object's arrays, or a canonical copy of one whose
entries are not canonical) and its dtype check."""
from __future__ import annotations

import numbers
import weakref

import numpy as np

from ..errors import InputError
from ..runtime.scipy_arrays import checked_scipy, compressed_arrays
from ..runtime.tensor import Tensor
from .fits import fits


def _dense_of_tensor(t: Tensor):
    import scipy.sparse as sps
    dense = t.to_dense()
    return sps.csr_array(dense) if len(t.shape) == 2 and t.format.name != "dense" else dense


def leaf_value(x):
    """The value a leaf holds: a numpy array or a scipy csr/csc array (2-d)."""
    import scipy.sparse as sps
    if isinstance(x, Tensor):
        x = _dense_of_tensor(x)
    if sps.issparse(x):
        if x.ndim != 2:
            raise InputError(f"ep.lazy takes 1-d or 2-d arrays, got a sparse array of "
                             f"shape {x.shape}")
        x = checked(x)
        if isinstance(x, sps.sparray) and x.format in ("csr", "csc"):
            return x
        return _array_view(x, sps)
    if isinstance(x, (np.ndarray, np.generic, numbers.Number)):
        arr = np.asarray(x)
        if arr.ndim > 2:
            raise InputError(f"ep.lazy takes arrays of at most 2 dimensions, got shape "
                             f"{arr.shape}")
        return arr
    raise InputError(f"ep.lazy takes a numpy array, a scipy.sparse array or matrix or an "
                     f"ep.Tensor, got {type(x).__name__}")


def checked(x):
    """The scipy matrix `x` when its arrays describe it, else an InputError: every
    step of a program hands it to scipy or to a kernel, and scipy's code trusts
    them (it reads past them, or crashes). Checked in full by
    runtime.scipy_arrays the first time a matrix is wrapped with its arrays and
    shape, and again whenever an array is rebound or the shape changes; arrays
    written in place after that are not seen (as scipy's cached flags do not
    see them). A csr or csc matrix gets its canonical flag from the check
    (scipy's own pass over its arrays is then not made)."""
    arrays = _arrays(x)
    ids = (*map(id, arrays), x.shape)
    hit = _CHECKED.get(id(x))
    if hit is not None and hit[1] == ids and hit[0]() is x:
        return x if hit[3] is None else hit[3]
    where = f"ep.lazy's operand (a scipy {x.format} matrix of shape {x.shape})"
    if x.format in ("csr", "csc"):
        x.has_canonical_format, value = compressed_arrays(x, where)[3], x
    else:
        value = checked_scipy(x, where)
    key, kept = id(x), None if value is x else value        # never x itself: a cycle
    _CHECKED[key] = (weakref.ref(x, lambda _, k=key, d=_CHECKED: d.pop(k, None)), ids,
                     arrays, kept)       # the arrays kept alive: their ids stay theirs
    return value


def trusted(x):
    """The scipy csr or csc array `x` when its index arrays describe it now (an
    index in range, pointers nondecreasing from 0 to the entries), else an
    InputError naming ep.lazy's operand: called before each step hands a
    sparse value to code that trusts its arrays (scipy's loops, conversions and
    indexing), as arrays written in place since `checked` are not seen there.
    One compiled pass over the index arrays (etchpy.lazy.fits); unsorted or
    duplicate entries pass (those steps sum them)."""
    indptr, indices = x.indptr, x.indices
    major, minor = x.shape if x.format == "csr" else x.shape[::-1]
    if not fits(indptr, indices, major, minor) or len(x.data) != len(indices):
        compressed_arrays(x, f"ep.lazy's operand (a scipy {x.format} matrix of shape "
                             f"{x.shape})")
    return x


def reworded(err, values):
    """The InputError naming ep.lazy's operand for the first sparse value of
    `values` (a program's leaves) whose arrays no longer describe it, else
    err: a kernel step's check of those arrays names its own tensor."""
    for v in values:
        if type(v) is not np.ndarray and getattr(v, "format", None) in ("csr", "csc"):
            try:
                trusted(v)
            except InputError as e:
                e.__cause__ = err
                return e
    return err


def _arrays(x) -> tuple:
    """The arrays of the scipy matrix `x` (those of csr and csc first, fast)."""
    try:
        return x.data, x.indices, x.indptr
    except AttributeError:
        return tuple(getattr(x, a, None) for a in ("data", "offsets", "row", "col"))


# id of a checked scipy matrix -> (a weak reference to it, its arrays' ids, its
# arrays, what checked gave when it is not the matrix itself)
_CHECKED: dict = {}
# id of a wrapped scipy matrix -> (a weak reference to it, its arrays, its array view)
_VIEWS: dict = {}


def _array_view(x, sps):
    """The csr/csc array (numpy semantics) of the scipy matrix `x`, sharing its
    arrays; the same object while x holds the same arrays, so that what is kept
    per array across calls (its sortedness, its transpose) is kept for x too."""
    arrays = tuple(getattr(x, a, None) for a in ("data", "indices", "indptr")) + (x.shape,)
    hit = _VIEWS.get(id(x))
    if hit is not None and hit[0]() is x and all(
            a is b for a, b in zip(hit[1][:3], arrays[:3])) and hit[1][3] == arrays[3]:
        return hit[2]
    y = sps.csc_array(x) if x.format == "csc" else sps.csr_array(x)
    if y.format == x.format:    # shares x's arrays: keep x's cached sortedness (O(nnz))
        y.has_sorted_indices = x.has_sorted_indices
        key = id(x)
        _VIEWS[key] = (weakref.ref(x, lambda _, k=key: _VIEWS.pop(k, None)), arrays, y)
    return y


def canonical(x):
    """x itself when its stored entries are canonical (sorted within each row or
    column, no duplicates: scipy caches the answer), else a canonical copy
    (duplicates summed, sorted); the caller's object is never modified. Every
    step of a lazy program reads a sparse leaf's pattern and stored values
    as its entries (a sampled pattern, a map of stored values), as the compiled
    kernels' input path canonicalises its scipy inputs."""
    if x.has_canonical_format:
        return x
    y = x.copy()
    y.sum_duplicates()
    return y


# read-only arrays of ones by (shape, dtype): the leaves of a ** 0 (one per kind,
# so equal programs share the leaf)
_ONES: dict = {}


def ones(shape: tuple, dtype):
    """A read-only array of ones of this shape and dtype (kept for the next call)."""
    k = (shape, dtype)
    if k not in _ONES:
        if len(_ONES) >= 64:
            _ONES.clear()
        _ONES[k] = np.ones(shape, dtype)
        _ONES[k].flags.writeable = False
    return _ONES[k]


def check_dtype(dtype, what):
    if dtype.kind == "c":
        raise InputError(f"{what}: lazy arrays hold integers or floats, not {dtype}; "
                         f"complex arrays compute through ep.evaluate, ep.compile or "
                         f"ep.einsum (the complex semiring)")
    if dtype.kind not in "iuf":
        raise InputError(f"{what}: lazy arrays hold integers or floats, not {dtype}; "
                         f"cast it with .astype(np.float64)")
    return dtype
