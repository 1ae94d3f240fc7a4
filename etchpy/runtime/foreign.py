"""Inputs from other sparse array libraries: pydata `sparse` and python-graphblas.

Neither package is imported by etchpy. A value is recognised by the module its
type comes from and read through its public attributes, then handed on as
something the rest of the runtime knows (runtime.inputs):

    sparse.GCXS, 2-d, compressed_axes (0,) / (1,)   bound as csr / csc over its own
                                                    arrays when they are canonical
                                                    (runtime.calling), else a scipy
                                                    csr_array / csc_array over them
                                                    (scipy may narrow the index arrays)
    sparse.COO  where coo is declared               a coo Tensor over its coordinates
    sparse.COO  otherwise                           a Tensor of the declared format
    other pydata formats                            as COO (`asformat("coo")`)
    graphblas.Matrix                                scipy csr_array (a copy: to_csr)
    graphblas.Vector                                a Tensor of the declared format

The implicit entries of a pydata array are its `fill_value`: 0 is read as the
semiring's zero (as for scipy, whose implicit entries are 0), the semiring's
zero is itself, and any other fill value is an InputError. A graphblas object's
missing entries are the semiring's zero.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..formats import Format
from .tensor import Tensor


def kind(value) -> str | None:
    """"pydata" or "graphblas" for a value of those libraries, else None."""
    root = type(value).__module__.partition(".")[0]
    if root == "sparse" and hasattr(value, "fill_value"):
        return "pydata"
    if root == "graphblas" and hasattr(value, "to_coo"):
        return "graphblas"
    return None


def describe(value) -> str:
    """A few words naming what `value` is, for messages."""
    k = kind(value)
    if k == "pydata":
        return f"a sparse.{type(value).__name__} of shape {tuple(value.shape)}"
    if k == "graphblas":
        return f"a graphblas {type(value).__name__} of shape {tuple(value.shape)}"
    return type(value).__name__


def layout(value) -> str | None:
    """The format name a foreign value is stored in ("coo", "csr", "csc"), else None."""
    if kind(value) != "pydata":
        return None
    axes = getattr(value, "compressed_axes", None)
    if value.ndim == 2 and axes in ((0,), (1,)):
        return "csr" if axes == (0,) else "csc"
    return "coo" if value.format == "coo" else None


def compressed_layout(value, sr) -> str | None:
    """"csr" or "csc" when pydata array `value` is a GCXS of 2 modes compressed along
    one axis whose fill_value reads as semiring `sr`'s zero (0 or the zero itself):
    its indptr, indices and data are then the arrays of a scipy array of that
    layout, bound as they are (runtime.calling). Else None."""
    where = layout(value)
    if where not in ("csr", "csc") or value.format != "gcxs":
        return None
    fill = value.fill_value
    return where if (fill == 0 or fill == sr.zero) else None


def adapt(value, tvar, sr):
    """`value` as a scipy sparse array or a Tensor when it is a foreign array, else
    `value` itself. `tvar` is the tensor it is bound to, `sr` the semiring."""
    match kind(value):
        case "pydata":
            return _pydata(value, tvar, sr)
        case "graphblas":
            return _graphblas(value, tvar, sr)
    return value


def as_scipy(value):
    """A 2-d foreign array as a scipy sparse array in its own layout (pydata COO as
    coo_array, GCXS as csr/csc_array, graphblas Matrix as csr_array); anything
    else (and a pydata array whose fill_value is not 0) is returned as it is."""
    k = kind(value)
    if k is None or len(value.shape) != 2 or (k == "pydata" and value.fill_value != 0):
        return value                    # a fill value scipy cannot say: see _pydata
    import scipy.sparse as sp              # lazily: scipy.sparse is heavy to import
    if k == "graphblas":
        indptr, cols, vals = value.to_csr()
        return sp.csr_array((vals, cols.astype(np.int64), indptr.astype(np.int64)),
                            shape=tuple(value.shape))
    where = layout(value)
    if where in ("csr", "csc"):
        make = sp.csr_array if where == "csr" else sp.csc_array
        return make((value.data, value.indices, value.indptr), shape=tuple(value.shape))
    S = value if where == "coo" else value.asformat("coo")
    return sp.coo_array((S.data, (S.coords[0], S.coords[1])), shape=tuple(S.shape))


def _pydata(S, tvar, sr):
    fill = S.fill_value
    if not (fill == 0 or fill == sr.zero):
        raise InputError(f"input {tvar.name}: a pydata sparse array with fill_value "
                         f"{fill}; semiring {sr.name} reads implicit entries as {sr.zero} "
                         f"(a fill_value of 0 or {sr.zero} is accepted)")
    where = layout(S)
    if where in ("csr", "csc"):
        return as_scipy(S) if fill == 0 else _pydata(S.asformat("coo"), tvar, sr)
    if where != "coo":
        return _pydata(S.asformat("coo"), tvar, sr)
    if tvar.format == Format.named("coo", S.ndim) and S.ndim > 0:
        shared = _coo_as_is(S, tvar)
        if shared is not None:
            return shared
    return Tensor.from_coords(S.coords, S.data, tuple(S.shape), tvar.format, semiring=sr,
                              name=tvar.name)


def _coo_as_is(S, tvar):
    """A coo Tensor over S's own coordinates and values when they are sorted and
    without repeats (validated), else None."""
    coords, nnz = S.coords, S.nnz
    levels = [{"pos": np.array([0, nnz], dtype=coords.dtype), "crd": coords[0]}]
    levels += [{"crd": coords[m]} for m in range(1, S.ndim)]
    try:
        return Tensor(tuple(S.shape), tvar.format, levels, S.data, 0, name=tvar.name)
    except InputError:
        return None                     # unsorted or repeated: from_coords sorts and sums


def _graphblas(M, tvar, sr):
    if len(M.shape) == 2:
        return as_scipy(M)
    idx, vals = M.to_coo()
    return Tensor.from_coords(idx.astype(np.int64)[None, :], vals, tuple(M.shape),
                              tvar.format, semiring=sr, name=tvar.name)
