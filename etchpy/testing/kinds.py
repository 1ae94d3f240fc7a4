"""Inputs of other kinds than numpy arrays for `check_backends` (etchpy.testing.oracles).

A property that draws its inputs as dense numpy arrays never reaches the runtime
paths that only other inputs take: Tensors bound as they are (the last call
kept, runtime.last_call; inputs over one structure walked once, runtime.shared),
scipy arrays bound without a copy (runtime.call_plans). `check_calls` passes a
problem's inputs as one of `INPUT_KINDS` and calls the compiled kernel

1. twice on them (the second call may take what the first kept),
2. on a second set of the same kind over the same index arrays, other values
   (nothing kept for the first set may answer for it),
3. after writing new values in place into the first set's value arrays (numpy
   arrays, scipy data, a Tensor's `vals`; a scipy array's entries also put out of
   order in place): the right answer or an InputError, never the answer before
   the write;

and checks that the first call's result still holds its answer after them.

The kinds: "numpy" (the arrays copied), "tensor" (ep.Tensor.from_dense in the
tensor's declared format), "shared" (Tensors, those of one declared sparse format
and shape over one structure: the union of their entries, the fill stored where
one has none, from Tensor.from_coords_columns) and "scipy" (csr_array, csc_array
or coo_array for an input declared csr, csc or coo: its entries that are not
the semiring's zero, which scipy's missing entries then mean; numpy otherwise).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..expr.walk import tensors as tensors_of
from ..runtime.predicates import parameter_names
from ..runtime.tensor import Tensor
from .strategies import stored_values

INPUT_KINDS = ("numpy", "tensor", "shared", "scipy")
_SCIPY = {"csr": "csr_array", "csc": "csc_array", "coo": "coo_array"}


def check_calls(kern, expr, inputs: dict, sr, kind: str, reference, same) -> None:
    """Call the compiled kernel `kern` of `expr` over semiring `sr` on `inputs` ({name:
    dense numpy array}) as `kind` (see the module docstring); `reference(values)` is
    the reference value on inputs of any kind, `same(got, want, what)` asserts
    agreement (oracles.assert_same)."""
    declared = tensors_of(expr)
    params = parameter_names(declared)      # (passed as they are)
    want = reference(inputs)
    given = as_kind(inputs, declared, sr, kind)
    first = kern(**given)
    same(first, want, f"{kind} inputs, call 1")
    same(kern(**given), want, f"{kind} inputs, call 2")
    other = {n: v if n in params else _other(v, sr) for n, v in given.items()}
    same(kern(**other), reference(other), f"{kind} inputs, other values")
    same(kern(**given), want, f"{kind} inputs, the first again")
    if any([_write(v, sr) for n, v in given.items() if n not in params]):
        try:
            got = kern(**given)
        except InputError:
            got = None              # (a refusal is sound; a stale answer is not)
        if got is not None:
            same(got, reference(given), f"{kind} inputs, after writing in place")
    same(first, want, f"{kind} inputs, call 1's result after the later calls")


def as_kind(inputs: dict, declared: dict, sr, kind: str) -> dict:
    """`inputs` ({name: dense array}) as `kind`, each a value of its own (copied); the
    parameters of comparisons and windows as they are."""
    params = parameter_names(declared)
    out = {n: v if n in params else np.array(v, dtype=sr.dtype) for n, v in inputs.items()}
    fmts = {n: declared[n].format for n in out
            if n in declared and declared[n].order == out[n].ndim}
    if kind in ("tensor", "shared"):
        for n, f in fmts.items():
            out[n] = Tensor.from_dense(out[n], f, semiring=sr, name=n)
    if kind == "shared":
        _over_one_structure(inputs, fmts, sr, out)
    if kind == "scipy":
        import scipy.sparse as sp
        for n, f in fmts.items():
            if f.order == 2 and f.name in _SCIPY:
                a = out[n]
                r, c = np.nonzero(a != sr.zero)
                m = sp.coo_array((a[r, c], (r, c)), shape=a.shape)
                out[n] = getattr(sp, _SCIPY[f.name])(m) if f.name != "coo" else m
    return out


def _over_one_structure(inputs: dict, fmts: dict, sr, out: dict) -> None:
    """The inputs in `out` of one sparse declared format and shape as Tensors over one
    structure (their entries' union), in place."""
    alike: dict = {}
    for n, f in fmts.items():
        if not f.is_dense:
            alike.setdefault((f, np.shape(inputs[n])), []).append(n)
    for (f, shape), names in alike.items():
        if len(names) < 2:
            continue
        arrays = [np.asarray(inputs[n], dtype=sr.dtype) for n in names]
        coords = np.nonzero(np.any([a != sr.zero for a in arrays], axis=0))
        cols = [a[coords] for a in arrays]
        made = Tensor.from_coords_columns(np.array(coords, dtype=np.int64).reshape(
            len(shape), -1), cols, shape, f, semiring=sr, name=names[0])
        out.update(zip(names, made))


def _shifted(vals: np.ndarray, sr) -> np.ndarray:
    """`vals` with each of the semiring's stored values (strategies.stored_values)
    replaced by the next of them: other values at the same entries (the zero stays)."""
    pool = np.array(stored_values(sr), dtype=sr.dtype)
    out = np.array(vals, copy=True)
    for a, b in zip(pool, np.roll(pool, -1)):
        out[vals == a] = b
    return out


def _other(v, sr):
    """A value of v's kind over the same index arrays, with other values."""
    if isinstance(v, np.ndarray):
        return _shifted(v, sr)
    if isinstance(v, Tensor):
        vals = _shifted(v.vals, sr)
        try:
            return Tensor(v.shape, v.format, v.levels, vals, v.fill, name=v.name)
        except InputError:          # (e.g. runs whose values must differ)
            return Tensor.from_dense(_shifted(v.to_dense(), sr), v.format, semiring=sr,
                                     name=v.name)
    data = _shifted(v.data, sr)     # a scipy array
    if v.format == "coo":
        return type(v)((data, v.coords), shape=v.shape)
    return type(v)((data, v.indices, v.indptr), shape=v.shape)


def _write(v, sr) -> bool:
    """Write other values into v's own value array in place; whether it has one. A
    scipy array's entries are also put in reverse order within each row (column for
    csc; all of them for coo), in place: out of order, which no check may have seen."""
    arr = v if isinstance(v, np.ndarray) else v.vals if isinstance(v, Tensor) else v.data
    if not arr.flags.writeable or not arr.size:
        return False
    arr[...] = _shifted(arr, sr)
    if isinstance(v, (np.ndarray, Tensor)):
        return True
    if v.format == "coo":
        for a in (*v.coords, v.data):
            a[...] = a[::-1].copy()
        return True
    for lo, hi in zip(v.indptr[:-1], v.indptr[1:]):
        for a in (v.indices, v.data):
            a[lo:hi] = a[lo:hi][::-1].copy()
    return True
