"""The implicit 0/1 tensors of comparisons (expr.compare), bound at call time.

A comparison's tensor (a `CompareVar`) is no caller's input: `with_predicates`
makes it from the call's other inputs and its parameters, the numbers passed
under the names its bounds give. The semiring's one is stored where the
comparison holds and nothing elsewhere:

    range   lo <= c < hi on one index: a sparse vector of the codes lo..hi-1,
            (an integer c has c >= b iff c >= ceil(b), c > b iff c >= floor(b)+1;
            a bound past the codes, ±inf or a huge int, is open; NaN is refused)
    index   c0 op c1 + d on two indices (d an integer, expr.offsets): nothing
            stored (a dense tensor without values; its stream makes the pairs
            from the coordinates)
    codes   a formula of tests of one index (~ and | of ranges): a sparse
            vector of the codes that pass, worked out over the index's codes
    value   a row predicate (expr.formula over value columns of one structure):
            the first column's own Tensor (its structure and values, no copy),
            and its companions: each further column's values, aligned with the
            first's entries (the same arrays when the columns share one
            structure, checked by identity; else gathered, and the structure
            restricted to the entries every column stores: runtime.align,
            found once for the same Tensors; a kernel of `through` columns
            gets their positions instead: no gather), and one slot per
            bound. The kernel tests each entry in its loop (streams.from_expr),
            so values written in place between calls are read as they are.
            A column of `tv.narrow` (runtime.shared's one walk) is passed as
            its packed narrow twin and bound as it is, its slots the integers
            that decide its stored integers as the slots decide its values
            (runtime.narrow; `slot_array`).

The sizes of the indices are read off the inputs that use them.
proofs_notes/predicates.md.
"""
from __future__ import annotations

import collections
import fractions
import functools
import math
import numbers
import operator

import numpy as np

from ..errors import InputError
from ..expr import formula
from ..expr.compare import CompareVar, operand, stores_nothing
from ..expr.nodes import IdentityVar, TensorVar
from ..expr.walk import accesses
from ..semiring import Semiring
from .inputs import as_tensor
from .tensor import Tensor
from ..expr.bins import levels_below
from . import align, bins, keyed, windows
from . import narrow as narrow_

_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
        "==": operator.eq}


def caller_inputs(declared: dict) -> dict:
    """The names a caller passes for the comparisons of `declared`: the source
    of each value comparison (a TensorVar) and each parameter (its CompareVar)."""
    out: dict = {}
    for tv in declared.values():
        if isinstance(tv, CompareVar):
            order = tv.order - (1 if tv.kind == "bins" else levels_below(tv))   # its source
            for col, fmt, at in tv.columns:
                out.setdefault(col, TensorVar(col, order if at is None else len(at), fmt))
            for col, _, fmt in tv.keyed if tv.kind == "range" else ():   # expr.keyed
                out.setdefault(col, TensorVar(col, fmt.order, fmt))
            out.update({p: tv for p in tv.params})
    return out


def parameter_names(declared: dict) -> set[str]:
    """The parameters (not tensors) the comparisons and windows of `declared` read."""
    return {p for tv in declared.values() if isinstance(tv, CompareVar) for p in tv.params} \
        | windows.parameter_names(declared)


def with_predicates(e, inputs: dict, sr: Semiring, reuse: bool = True) -> dict:
    """`inputs` without the parameters, plus the tensor of every comparison of the
    expression `e` (each input a caller passes must be present: check_names);
    `reuse` (Tuning.aligned_once): keep the alignment of columns of different
    structures for the same Tensors (runtime.align), and a formula's codes."""
    preds = {a.tensor.name: a for a in accesses(e) if isinstance(a.tensor, CompareVar)}
    if not preds:
        return inputs
    names = {a.tensor.name for a in accesses(e)}    # not the parameters, nor sources
    out = {k: v for k, v in inputs.items() if k in names}
    sizes = _index_sizes(e, inputs)
    for name, acc in preds.items():
        tv = acc.tensor
        if tv.kind in ("value", "bins"):
            if all(c[0] in inputs for c in tv.columns):    # else check_names names it
                out.update(_row(tv, inputs, sr, reuse) if tv.kind == "value" else
                           {name: bins.view(tv, inputs, sr)})
            continue
        dims = tuple(_size(sizes, ix.name, name) for ix in acc.indices)
        out[name] = index_range(tv, dims[0], inputs, sr) if tv.kind == "range" else index_pairs(
            tv, dims, sr) if tv.kind != "codes" else _code_set(tv, dims[0], inputs, sr, reuse)
    return out


def _index_sizes(e, inputs) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for acc in accesses(e):
        tv = acc.tensor
        valued = isinstance(tv, CompareVar) and tv.kind in ("value", "bins")
        src = tv.source if valued else tv.name
        if isinstance(tv, CompareVar) and not valued or src not in inputs:
            continue
        shape = getattr(inputs[src], "shape", None)
        shape = np.shape(inputs[src]) if shape is None else tuple(shape)
        shape += bins.count(tv, inputs)
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


def index_range(tv: CompareVar, n: int, inputs, sr: Semiring) -> Tensor:
    """The codes c in 0..n-1 that pass every test of tv, a sparse vector. A bound
    is first clamped to -1..n+1, which no code passes or fails differently, so
    ±inf and a huge int are an open (or an empty) bound. A range whose bounds
    are a keyed column's values (expr.keyed): the codes whose value passes
    (runtime.keyed), each bound compared as the column's row test would."""
    lo, hi = 0, n
    if tv.keyed:
        (col, by, fmt), = tv.keyed
        t = inputs[col]             # as given: one read with runs of levels as one too
        if not (isinstance(t, Tensor) and t.dtype == np.dtype(sr.dtype)):
            t = as_tensor(t, TensorVar(col, fmt.order, fmt), sr)
        lo, hi = keyed.code_range(t, by, [(op, _slot(tv, op, b if isinstance(b, tuple)
                                                     else operand(b), inputs, sr))
                                          for op, b in tv.tests], col)
        tests = ()
    else:
        tests = tv.tests
    for op, b in tests:
        x = min(max(_bound(tv, b, inputs), -1), n + 1)
        if op in (">=", ">"):
            lo = max(lo, math.ceil(x) if op == ">=" else math.floor(x) + 1)
        else:
            hi = min(hi, math.ceil(x) if op == "<" else math.floor(x) + 1)
    lo, hi = min(max(lo, 0), n), min(max(hi, 0), n)
    hi = max(hi, lo)
    idx = np.int32 if n < 2**31 - 1 else np.int64
    crd, ones = _codes(n, np.dtype(idx)), _ones(n, np.dtype(sr.dtype), sr.one)
    levels = (_segment(tv.format, np.array([0, hi - lo], dtype=idx), crd[lo:hi]),)
    # consistent by construction: not checked again (a check would read the range)
    return Tensor._of(((n,), tv.format, levels, ones[:hi - lo], sr.zero), tv.name)


def _segment(fmt, starts: np.ndarray, coords: np.ndarray) -> dict:
    """A sparse vector's one level under its level's `segment_roles` (unnamed here)."""
    return dict(zip(fmt.levels[0].segment_roles, (starts, coords)))


@functools.lru_cache(maxsize=4)
def _codes(n: int, dtype) -> np.ndarray:
    """0..n-1 over an immutable buffer, kept: a range's codes are a slice of it,
    which a Tensor takes without a copy (O(1) per call)."""
    return np.frombuffer(np.arange(n, dtype=dtype).tobytes(), dtype=dtype)


@functools.lru_cache(maxsize=4)
def _ones(n: int, dtype, one) -> np.ndarray:
    return np.frombuffer(np.full(n, one, dtype=dtype).tobytes(), dtype=dtype)


def index_pairs(tv: CompareVar, dims, sr: Semiring) -> Tensor:
    """An index comparison's tensor (or a diagonal's δ: runtime.identity): its shape
    and nothing stored (a dense tensor without values), since its stream reads no
    array (streams.from_expr index_compare). `dense_value` gives its values."""
    levels = tuple({} for _ in dims)
    return Tensor._of((tuple(dims), tv.format, levels, np.empty(0, sr.dtype), sr.zero),
                      tv.name)


def dense_value(tv, t: Tensor, sr: Semiring, bound: dict | None = None) -> np.ndarray:
    """The dense value of `t`, bound as the input declared `tv` (None for a
    conversion the plan made): for an index comparison, which stores nothing,
    one where r op c holds at (r, c) and zero elsewhere; for a value predicate
    (its companions among `bound`), one at the entries whose test holds; else
    t.to_dense(); for a window, its dense window (runtime.windows). Narrow
    columns and their slots (tv.narrow) are read as their integers, as the C does."""
    if isinstance(t, windows.WindowTensor):
        return windows.dense_window(tv, t.to_dense(), t.shape, sr.zero)
    if isinstance(tv, CompareVar) and tv.kind == "bins":
        return bins.dense(t, sr)
    if isinstance(tv, CompareVar) and tv.kind == "value":
        if tv.terms or tv.through:   # (made by runtime.shared only: never a reference's)
            raise InputError(f"{tv.name}: a one-walk kernel's predicate has no dense value")
        src = bins.source(t, len(tv.bins))
        coords, v0 = src.to_coords()
        comps = {c.name: bound[c.name].vals for c in tv.companions}
        slot_values = narrow_.read_slots(tv, comps.get(f"{tv.name}__p", ()))
        packed = {k: np.dtype(dt) for k, dt, _, _ in tv.narrow}   # read as the C reads them

        def column(k):
            if k == 0:
                return v0
            vals, at = comps[f"{tv.name}__c{k}"], tv.columns[k][2]
            if k in packed:
                return vals.view(packed[k])[:len(v0)]
            if at is None:             # at the structure's positions (a hash's slots too)
                return Tensor._of((src.shape, src.format, src.levels, vals, src.fill),
                                  src.name).to_coords()[1]
            shape = tuple(t.shape[p] for p in at)
            return vals.reshape(shape)[tuple(coords[p] for p in at)]
        out = np.full(t.shape, sr.zero, dtype=sr.dtype)
        keep = np.broadcast_to(formula.evaluate(tv.tests, column, lambda p: coords[p],
                                                slot_values), v0.shape)
        w = functools.reduce(sr.mul, [column(k) for k in tv.weights]) \
            if tv.weights else sr.one
        if tv.bins:                             # its bins: coordinates read off columns
            coords, keep = bins.placed(tv, column, coords, keep, t.shape)
        out[tuple(coords[:, keep])] = np.broadcast_to(w, v0.shape)[keep]
        return out
    if not stores_nothing(tv):
        return t.to_dense()
    n, m = t.shape
    if type(tv) is IdentityVar:                                # a diagonal's δ
        return np.where(np.eye(n, m, dtype=bool), sr.one, sr.zero).astype(sr.dtype)
    holds = _OPS[tv.tests[0][0]](np.arange(n)[:, None],      # x op y + d (expr.offsets)
                                 np.arange(m)[None, :] + (tv.tests[0][1] or 0))
    return np.where(holds, sr.one, sr.zero).astype(sr.dtype)


def _row(tv: CompareVar, inputs, sr: Semiring, reuse: bool = True) -> dict:
    """A value predicate's inputs: its structure (under its own name) and its
    companions (see the module docstring). O(1) when the columns share one
    structure (the same index arrays: relations built with values=[...]);
    else aligned by runtime.align (kept for the same Tensors when `reuse`)."""
    narrow = {k: dt for k, dt, _, _ in tv.narrow}   # packed twins (runtime.shared)
    aligned = [k for k, c in enumerate(tv.columns) if c[2] is None and k not in narrow]
    order = tv.order - levels_below(tv)          # its structure's (its bins, terms below)
    ts = {k: _located(inputs[col], col, at, sr) or as_tensor(
        inputs[col], TensorVar(col, order if at is None else len(at), fmt), sr)
        for k, (col, fmt, at) in enumerate(tv.columns) if k not in narrow}
    src = ts[0]
    for k, dt in narrow.items():
        ts[k] = _Dense(src.shape, _packed(inputs[tv.columns[k][0]], dt, len(src.vals), sr))
    full = bins.full_shape(tv, src.shape, ts, inputs)
    for k, (col, _, at) in enumerate(tv.columns):
        want = src.shape if at is None else tuple(full[p] for p in at)
        if ts[k].shape != want:
            raise InputError(f"comparison {tv.name}: {tv.source} has shape {src.shape} and "
                             f"{col} {ts[k].shape}; they are compared entry by entry")
    got, out = {}, {}
    if tv.through:                  # each column read through its positions, not gathered
        structure, ws = align.through(tv, [ts[k] for k in tv.through], sr, reuse)
        out = {f"{tv.name}__w{k}": w for k, w in zip(tv.through, ws)}
        out[f"{tv.name}__c0"] = np.ascontiguousarray(src.vals)
    elif all(align.same_structure(src, ts[k]) for k in aligned[1:]):
        structure, got = src, {k: ts[k].vals for k in aligned[1:]}
    else:
        structure, cols = align.aligned(tv, [ts[k] for k in aligned], sr, reuse, any(
            ts[k] is not inputs[tv.columns[k][0]] for k in aligned))   # made for the call
        got = dict(zip(aligned[1:], cols))
    cols = [got[k] if k in got else ts[k].vals for k in range(1, len(tv.columns))]
    if levels_below(tv):
        structure = bins.extended(tv, structure, full, [structure.vals, *cols], sr)
    out[tv.name] = structure
    out.update({f"{tv.name}__c{k}": np.ascontiguousarray(c) for k, c in enumerate(cols, 1)})
    if formula.slots(tv.every_test):
        out[f"{tv.name}__p"] = slot_array(tv, inputs, sr)
    return out


def slot_array(tv: CompareVar, inputs, sr: Semiring) -> np.ndarray:
    """The slots of value predicate tv (`_slot` each, in the semiring's dtype); a
    slot compared with a column of tv.narrow holds, in the bytes of its element
    (at element slot * step of them read as the narrow type), the integer that
    decides the stored integers as `_slot`'s number decides the values
    (runtime.narrow.Narrow.slot)."""
    slots = formula.slots(tv.every_test)
    out = np.array([_slot(tv, op, b, inputs, sr) for op, b in slots], dtype=sr.dtype)
    if tv.narrow:
        forms = {k: narrow_.Narrow(np.dtype(dt), scale) for k, dt, scale, _ in tv.narrow}
        for s, k in narrow_.slot_columns(tv.every_test, forms):
            op, step = slots[s][0], out.itemsize // forms[k].dtype.itemsize
            out.view(forms[k].dtype)[s * step] = forms[k].slot(op, out[s].item())
    return out


def _packed(x, dt: str, n: int, sr: Semiring) -> np.ndarray:
    """A narrow column as runtime.shared passes it: an array of the semiring's
    dtype packing at least n integers of dt (runtime.narrow.packed)."""
    if type(x) is not np.ndarray or x.dtype != sr.dtype or x.ndim != 1 or \
            not x.flags.c_contiguous or x.nbytes < n * np.dtype(dt).itemsize:
        raise InputError(f"a narrow column ({dt}) of {n} entries was not passed packed")
    return x


# A located column passed as a numpy array: its shape and its values in row-major
# order (what `_row` reads of a Tensor).
_Dense = collections.namedtuple("_Dense", "shape vals")


def _located(x, col: str, at, sr: Semiring):
    """A located column (`at` not None) given as a C-contiguous numpy array of the
    semiring's dtype and of one axis per index, read as it is (the semiring's
    checks of its values made, as as_tensor makes them); else None (as_tensor)."""
    if at is None or type(x) is not np.ndarray or x.dtype != sr.dtype or \
            x.ndim != len(at) or not x.flags.c_contiguous or x.dtype.kind not in "fiu":
        return None
    vals = sr.cast(x, what=f"input {col}")
    return _Dense(vals.shape, vals.reshape(-1)) if vals is x else None


def _slot(tv: CompareVar, op: str, b, inputs, sr: Semiring):
    """The number a kernel compares a value with for bound b under `op`: for
    integer values, the integer threshold that decides the test alike (v < 2.5
    iff v < 3; v < w + 2.5 iff v < w + 3), held in the values' dtype (clamped to
    its range); op "*" (a scale): an integer, for integer values (InputError)."""
    x = _bound(tv, b[1], inputs) if b[0] == "par" else _lin(tv, b, inputs) \
        if b[0] == "lin" else b[1]
    dt = np.dtype(sr.dtype)
    if dt.kind == "f":
        return float(x)
    inf = isinstance(x, float) and math.isinf(x)
    if op == "*" and (inf or x != int(x)):
        raise InputError(f"parameter {formula.bound_params(b)[0]} scales a value of "
                         f"{tv.name}, whose values are integers ({dt}); give an integer, "
                         f"not {x!r}")
    if not (isinstance(x, int) or inf):
        x = math.ceil(x) if op in ("<", ">=") else math.floor(x)
    info = np.iinfo(dt) if dt.kind in "iu" else np.iinfo(np.int8)
    return min(max(x, info.min), info.max) if dt.kind in "iu" else min(max(x, 0), 1)


def _lin(tv: CompareVar, b, inputs):
    """The number of bound ("lin", c, ((name, k), ...)) (expr.formula): exact (a
    fraction) when its parts are finite."""
    parts = [b[1]] + [k * _bound(tv, n, inputs) for n, k in b[2]]
    if any(isinstance(x, float) and math.isinf(x) for x in parts):
        total = sum(x for x in parts if isinstance(x, float) and math.isinf(x))
        if math.isnan(total):
            raise InputError(f"comparison {tv.name}: its bound {b} is inf - inf")
        return total
    return sum((fractions.Fraction(x) for x in parts), fractions.Fraction(0))


def _code_set(tv: CompareVar, n: int, inputs, sr: Semiring, reuse: bool = True) -> Tensor:
    """The codes 0..n-1 where tv's formula of tests holds, a sparse vector: each
    bound first clamped to -1..n+1, as for a range; kept for the same formula,
    size, bounds and semiring when `reuse` (nothing a kernel is given is written)."""
    slots = tuple(min(max(_bound(tv, b[1], inputs) if b[0] == "par" else b[1], -1), n + 1)
                  for _, b in formula.slots(tv.tests))
    made = _codes_passing if reuse else _codes_passing.__wrapped__
    return made(tv, n, slots, np.dtype(sr.dtype), sr.one, sr.zero)


@functools.lru_cache(maxsize=8)       # (at most 8 sets of codes held)
def _codes_passing(tv: CompareVar, n: int, slots: tuple, dtype, one, zero) -> Tensor:
    codes = np.arange(n)
    on = np.flatnonzero(formula.evaluate(tv.tests, None, lambda p: codes, slots))
    idx = np.int32 if n < 2**31 - 1 else np.int64
    levels = (_segment(tv.format, np.array([0, len(on)], dtype=idx), on.astype(idx)),)
    return Tensor._of(((n,), tv.format, levels, _ones(n, dtype, one)[:len(on)], zero), tv.name)
