"""The implicit 0/1 tensors of comparisons (expr.compare), bound at call time.

A comparison's tensor (a `CompareVar`) is no caller's input: `with_predicates`
makes it from the call's other inputs and its parameters, the numbers passed
under the names its bounds give. The semiring's one is stored where the
comparison holds and nothing elsewhere:

    range   lo <= c < hi on one index: a sparse vector of the codes lo..hi-1,
            (an integer c has c >= b iff c >= ceil(b), c > b iff c >= floor(b)+1;
            a bound past the codes, ±inf or a huge int, is open; NaN is refused)
    index   c0 op c1 on two indices: nothing stored (a dense tensor without
            values; its stream makes the pairs from the coordinates)
    value   v op bound at the entries the source input stores: the source's
            structure restricted to them, in the source's format

The sizes of the indices are read off the inputs that use them.
proofs_notes/predicates.md.
"""
from __future__ import annotations

import functools
import math
import numbers
import operator

import numpy as np

from ..errors import InputError
from ..expr.compare import CompareVar, stores_nothing
from ..expr.nodes import TensorVar
from ..expr.walk import accesses
from ..semiring import Semiring
from .inputs import as_tensor
from .tensor import Tensor

_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def caller_inputs(declared: dict) -> dict:
    """The names a caller passes for the comparisons of `declared`: the source
    of each value comparison (a TensorVar) and each parameter (its CompareVar)."""
    out: dict = {}
    for tv in declared.values():
        if isinstance(tv, CompareVar):
            if tv.kind in ("value", "pair"):
                out.setdefault(tv.source, TensorVar(tv.source, tv.order, tv.format))
            if tv.kind == "pair":
                out.setdefault(tv.other, TensorVar(tv.other, tv.order, tv.format))
            out.update({p: tv for p in tv.params})
    return out


def parameter_names(declared: dict) -> set[str]:
    """The parameters (not tensors) the comparisons of `declared` read."""
    return {p for tv in declared.values() if isinstance(tv, CompareVar) for p in tv.params}


def with_predicates(e, inputs: dict, sr: Semiring) -> dict:
    """`inputs` without the parameters, plus the tensor of every comparison of the
    expression `e` (each input a caller passes must be present: check_names)."""
    preds = {a.tensor.name: a for a in accesses(e) if isinstance(a.tensor, CompareVar)}
    if not preds:
        return inputs
    names = {a.tensor.name for a in accesses(e)}    # not the parameters, nor sources
    out = {k: v for k, v in inputs.items() if k in names}
    sizes = _index_sizes(e, inputs)
    for name, acc in preds.items():
        tv = acc.tensor
        if tv.kind in ("value", "pair"):
            if tv.source not in inputs or tv.kind == "pair" and tv.other not in inputs:
                continue                      # check_names names it
            out[name] = _value(tv, inputs, sr)
            continue
        dims = tuple(_size(sizes, ix.name, name) for ix in acc.indices)
        out[name] = _range(tv, dims[0], inputs, sr) if tv.kind == "range" \
            else _pairs(tv, dims, sr)
    return out


def _index_sizes(e, inputs) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for acc in accesses(e):
        tv = acc.tensor
        valued = isinstance(tv, CompareVar) and tv.kind in ("value", "pair")
        src = tv.source if valued else tv.name
        if isinstance(tv, CompareVar) and not valued or src not in inputs:
            continue
        shape = getattr(inputs[src], "shape", None)
        shape = np.shape(inputs[src]) if shape is None else tuple(shape)
        for ix, n in zip(acc.indices, shape):
            sizes.setdefault(ix.name, int(n))
    return sizes


def _size(sizes, index, name) -> int:
    if index not in sizes:
        raise InputError(f"comparison {name}: index {index} appears in no input, so its "
                         f"size is unknown; multiply the comparison into a product with "
                         f"an input indexed by {index}")
    return sizes[index]


def _bound(tv: CompareVar, b, inputs) -> int | float:
    """The number a bound of tv stands for: an exact int (however large) or a
    float (±inf allowed); InputError for a parameter that is missing, not one
    number, or NaN (which compares with nothing)."""
    if not isinstance(b, str):                     # written in the expression
        return int(b) if isinstance(b, numbers.Integral) else float(b)
    if b not in inputs:
        raise InputError(f"missing parameter {b} (a bound of comparison {tv.name})")
    v = inputs[b]
    if isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)):
        return int(v)                              # (a Python int past int64 too)
    a = np.asarray(v)
    if a.shape != () or a.dtype.kind not in "iuf":
        raise InputError(f"parameter {b} (a bound of comparison {tv.name}) must be one "
                         f"number, got {v!r}")
    x = a.item()
    if isinstance(x, float) and math.isnan(x):
        raise InputError(f"parameter {b} (a bound of comparison {tv.name}) is NaN, which "
                         f"compares with nothing; give a number (±inf: an open bound)")
    return x


def _range(tv: CompareVar, n: int, inputs, sr: Semiring) -> Tensor:
    """The codes c in 0..n-1 that pass every test of tv, a sparse vector. A bound
    is first clamped to -1..n+1, which no code passes or fails differently, so
    ±inf and a huge int are an open (or an empty) bound."""
    lo, hi = 0, n
    for op, b in tv.tests:
        x = min(max(_bound(tv, b, inputs), -1), n + 1)
        if op in (">=", ">"):
            lo = max(lo, math.ceil(x) if op == ">=" else math.floor(x) + 1)
        else:
            hi = min(hi, math.ceil(x) if op == "<" else math.floor(x) + 1)
    lo, hi = min(max(lo, 0), n), min(max(hi, 0), n)
    hi = max(hi, lo)
    idx = np.int32 if n < 2**31 - 1 else np.int64
    crd, ones = _codes(n, np.dtype(idx)), _ones(n, np.dtype(sr.dtype), sr.one)
    levels = ({"pos": np.array([0, hi - lo], dtype=idx), "crd": crd[lo:hi]},)
    # consistent by construction: not checked again (a check would read the range)
    return Tensor._of(((n,), tv.format, levels, ones[:hi - lo], sr.zero), tv.name)


@functools.lru_cache(maxsize=4)
def _codes(n: int, dtype) -> np.ndarray:
    """0..n-1 over an immutable buffer, kept: a range's codes are a slice of it,
    which a Tensor takes without a copy (O(1) per call)."""
    return np.frombuffer(np.arange(n, dtype=dtype).tobytes(), dtype=dtype)


@functools.lru_cache(maxsize=4)
def _ones(n: int, dtype, one) -> np.ndarray:
    return np.frombuffer(np.full(n, one, dtype=dtype).tobytes(), dtype=dtype)


def _pairs(tv: CompareVar, dims, sr: Semiring) -> Tensor:
    """An index comparison's tensor: its shape and nothing stored (a dense tensor
    without values), since its stream reads no array (streams.from_expr
    index_compare). `dense_value` gives its values."""
    levels = tuple({} for _ in dims)
    return Tensor._of((tuple(dims), tv.format, levels, np.empty(0, sr.dtype), sr.zero),
                      tv.name)


def dense_value(tv, t: Tensor, sr: Semiring) -> np.ndarray:
    """The dense value of `t`, bound as the input declared `tv` (None for a
    conversion the plan made): for an index comparison, which stores nothing,
    one where r op c holds at (r, c) and zero elsewhere; else t.to_dense()."""
    if not stores_nothing(tv):
        return t.to_dense()
    n, m = t.shape
    holds = _OPS[tv.tests[0][0]](np.arange(n)[:, None], np.arange(m)[None, :])
    return np.where(holds, sr.one, sr.zero).astype(sr.dtype)


def _value(tv: CompareVar, inputs, sr: Semiring) -> Tensor:
    """The entries of the source whose value passes the test, holding one: the
    source's structure with its last level filtered in storage order (a
    compressed last level: its crd kept where the value passes and its pos
    recounted; a dense one: one or zero in place), O(stored entries)."""
    src = as_tensor(inputs[tv.source], TensorVar(tv.source, tv.order, tv.format), sr)
    op, b = tv.tests[0]
    if tv.kind == "pair":
        other = as_tensor(inputs[tv.other], TensorVar(tv.other, tv.order, tv.format), sr)
        keep = _pair_keep(tv, src, other, _OPS[op])
    else:
        keep = _OPS[op](src.vals, _bound(tv, b, inputs))
    levels, last = list(src.levels), src.format.levels[-1]
    if last.roles == ():                           # dense: every position stays
        vals = np.where(keep, sr.one, sr.zero).astype(sr.dtype)
    elif last.roles == ("pos", "crd") and last.unique:
        kept = np.concatenate([[0], np.cumsum(keep)])
        pos = levels[-1]["pos"]
        levels[-1] = {"pos": kept[pos].astype(pos.dtype), "crd": levels[-1]["crd"][keep]}
        vals = np.full(int(kept[-1]), sr.one, dtype=sr.dtype)
    else:                                          # singleton levels: rebuild
        coords, _ = src.to_coords()
        return Tensor.from_coords(coords[:, keep], np.full(int(keep.sum()), sr.one,
                                                           dtype=sr.dtype),
                                  src.shape, tv.format, semiring=sr, name=tv.name)
    return Tensor._of((src.shape, tv.format, tuple(levels), vals, sr.zero), tv.name)


def _pair_keep(tv: CompareVar, src: Tensor, other: Tensor, op) -> np.ndarray:
    """Per stored entry of src: `other` stores an entry at its coordinates and
    src's value op other's holds. O(stored entries) when both have one
    structure (two value columns of one relation); else by sorting coordinates."""
    if src.shape != other.shape:
        raise InputError(f"comparison {tv.name}: {tv.source} has shape {src.shape} and "
                         f"{tv.other} {other.shape}; they are compared entry by entry")
    same = src.format == other.format and len(src.vals) == len(other.vals) and all(
        all(np.array_equal(x[r], y[r]) for r in x) for x, y in zip(src.levels, other.levels))
    if same:
        return np.asarray(op(src.vals, other.vals), dtype=bool)
    (a, av), (b, bv) = src.to_coords(), other.to_coords()
    ka, kb = _linear(a, src.shape), _linear(b, src.shape)
    order = np.argsort(kb, kind="stable")
    at = np.minimum(np.searchsorted(kb[order], ka), max(len(kb) - 1, 0))
    found = (kb[order][at] == ka) if len(kb) else np.zeros(len(ka), dtype=bool)
    w = bv[order][at] if len(kb) else np.zeros(len(ka), dtype=av.dtype)
    return found & np.asarray(op(av, w), dtype=bool)


def _linear(coords: np.ndarray, shape) -> np.ndarray:
    """Coordinates as sortable keys: row-major positions, or records compared
    lexicographically when the positions would pass int64's range."""
    if math.prod(int(n) for n in shape) < 2**63:
        return np.ravel_multi_index(tuple(coords), tuple(int(n) for n in shape)).astype(np.int64)
    return np.rec.fromarrays(list(coords.astype(np.int64)))
