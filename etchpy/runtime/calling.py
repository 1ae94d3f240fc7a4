"""A compiled kernel's calling convention: its C arguments in, its outputs out.

    slots(params)                  how each C parameter is fed
    variant(idx_type, bound, ...)  which build a call runs: with fused checks or without
    bind(value, tvar, sr)          one input as the arrays a kernel reads (a Bound)
    checked_inputs(...)            the inputs again, fully checked, after a fused check failed
    input_args(b, slots, ...)      that input's C arguments

(A call's sparse result is read by runtime.outputs.)

Inputs are bound without copies when they already match (C-contiguous numpy
arrays of the carrier dtype, canonical scipy csr/csc of the declared layout);
anything else goes through the Tensor conversions the other backends use.

A scipy csr/csc input is checked before the call in one compiled pass over its
index arrays, unless the kernel checks it itself as it reads it
(lower.schedule.fused_checks; proofs_notes/validation.md): then only what costs O(1) is
checked here (lengths, indptr's first and last entries), and a kernel that
finds a malformed or unsorted segment returns CHECK_FAILED, after which the
call is made again with that input checked in full (`checked_inputs`), which
canonicalises it or raises an InputError naming it. A call whose inputs were
all checked before (ep.Tensors, numpy arrays, scipy inputs checked in full) runs
a second build of the kernel without the fused checks (`variant`), whose C is
the kernel's as it would be with tuning fused_checks=False.
"""
from __future__ import annotations


import numpy as np

from . import coo_inputs, foreign, window_rows
from . import inputs as io_
from .checks import check_once, same as _same, transposed
from .dense_orders import own_values
from ..errors import CHECK_FAILED, InputError  # noqa: F401 - kernel.py reads it here
from .. import pipeline
from .tensor import Tensor, truth_values
from .windows import WindowInput, source_var
from .segment_sort import in_order
from .scipy_arrays import carried
from ..expr.windows import WindowVar

INT32, INT64 = np.dtype(np.int32), np.dtype(np.int64)
IDX_TYPE = {INT32: "int32_t", INT64: "int64_t"}


def slots(params) -> tuple:
    """How each C parameter is fed: (kind, tensor or output name, role, C type)."""
    out = []
    for p in params:
        elem = "idx_t" if p.type == "index" else "val_t"
        match p.kind:
            case "dim":
                tname, mode = p.name.rsplit("_dim", 1)
                out.append(("dim", tname, int(mode), None))
            case "in_array":
                tname, role = _split_array_name(p.name)
                out.append(("in_array", tname, role, f"{elem}[]"))
            case "out_dense":
                out.append(("out_dense", None, None, None))
            case "out_zeroed":
                out.append(("out_zeroed", None, None, None))
            case "out_grown":
                out.append(("out_grown", p.name, None, f"{elem} **"))
            case "out_count":
                out.append(("out_count", p.name, None, "int64_t *"))
    return tuple(out)


def _split_array_name(name: str):
    if name.endswith("_vals"):
        return name[: -len("_vals")], "vals"
    tname, _, role = name.rpartition("_")
    return tname, role


class Bound:
    """One input as a kernel reads it: its shape, its arrays by role ("vals",
    "pos1", "crd1", ...), and idx32: whether all its index arrays are int32
    (None when it has none). A binding reused across calls (a Tensor's) also
    keeps the C arguments made from it, per library (`args`). `unchecked`: its
    index arrays were not checked in full (the kernel's fused checks must);
    `nan_unchecked`: nor its values for NaN (the kernel's walks check them).
    `own`: its arrays are the input's own buffers, not copies made from its
    values (so later writes into the input are read through them)."""

    __slots__ = ("shape", "roles", "idx32", "args", "unchecked", "nan_unchecked", "own",
                 "_nbytes")

    def __init__(self, shape, roles, idx32, reused=False, unchecked=False, own=False,
                 nan_unchecked=False):
        self.shape, self.roles, self.idx32 = shape, roles, idx32
        self.args = {} if reused else None
        self.unchecked, self.own, self._nbytes = unchecked, own or reused, None
        self.nan_unchecked = nan_unchecked

    def nbytes(self) -> int:
        """The bytes its arrays hold (worked out once)."""
        if self._nbytes is None:
            self._nbytes = sum(a.nbytes for a in self.roles.values())
        return self._nbytes


TRUSTED = ":trusted"      # appended to the index type: the build without fused checks


def variant(idx_type: str, bound: dict, fused, twins=frozenset()) -> str:
    """The build a call runs (a key of Kernel.library): `idx_type` when some input
    among `fused` was bound without its full check (its kernel must check it),
    else the build without fused checks (idx_type + TRUSTED). A kernel with no
    fused input has one build. An input bound unchecked over the same index
    arrays as one checked in full among `twins` (names: `twin_sources`, empty
    without Tuning.check_twins_once) counts as checked (`twin`)."""
    if not fused or all(not b.unchecked or (twins and twin(b, bound, twins))
                        for b in bound.values()):
        return idx_type + TRUSTED if fused else idx_type
    return idx_type


def twin_sources(kern, tuning) -> frozenset:
    """The names of `kern`'s inputs whose checked binding is a full check of their
    arrays: bound as they are (no planned conversion), not windows (whose binding
    may check only the rows the window reads); none without
    `tuning.check_twins_once`."""
    if not tuning.check_twins_once:
        return frozenset()
    return frozenset(name for name, (_, tv, conv) in kern._inputs.items()
                     if not conv and not isinstance(tv, WindowVar))


def twin(b: Bound, bound: dict, sources) -> bool:
    """Whether unchecked binding `b` reads the index arrays (same buffers, dtypes,
    lengths) of a fully checked binding among `bound` (by a name in `sources`: see
    `twin_sources`), of the same shape, and its
    values were scanned for NaN or are that binding's too: checked in this call
    as that one's are (proofs_notes/validation.md, one check of shared arrays)."""
    ip, ix = b.roles.get("pos1"), b.roles.get("crd1")
    if ip is None or ix is None or len(b.roles) != 3:
        return False
    return any(not o.unchecked and o.shape == b.shape and len(o.roles) == 3
               and _same(ip, o.roles.get("pos1", ip[:0]))
               and _same(ix, o.roles.get("crd1", ix[:0]))
               and (not b.nan_unchecked or _same(b.roles["vals"], o.roles["vals"]))
               for name, o in bound.items() if o is not b and name in sources)


def variant_source(kern, key: str):
    """The C (a CSource) of build `key` of kernel `kern` (see `variant`)."""
    if not key.endswith(TRUSTED):
        return kern.source(key)
    return pipeline.render_c(kern.compiled, key[: -len(TRUSTED)], checked=False)


def checked_inputs(declared: dict, inputs: dict, sr, fused) -> dict:
    """`inputs` (by name, only those in `declared`) with every scipy input among
    `fused` replaced by a fully checked Tensor: what a call passes again after
    its kernel returned CHECK_FAILED. InputError naming the input when it is
    malformed; an unsorted one is canonicalised. With no scipy input among them,
    the refused one is a Tensor whose order was not checked
    (unsafe_skip_order_check): InputError naming them."""
    out, replaced = {}, False
    for name, value in inputs.items():
        if name not in declared:
            continue
        if name in fused and (io_.is_scipy_sparse(value) or foreign.kind(value)):
            if isinstance(getattr(value, "data", None), np.ndarray):
                refuse_nan(value.data, sr, name)    # its walks may have stopped at one
            value, replaced = io_.as_tensor(value, declared[name], sr), True
        out[name] = value
    if not replaced:
        names = ", ".join(n for n in declared if n in fused)
        raise InputError(f"input {names}: the kernel found coordinates out of order (unsorted "
                         f"or repeated) within a segment; a Tensor built with "
                         f"unsafe_skip_order_check=True must still be sorted")
    return out


def bind(value, tv, sr, on_convert=None, fused=False, fused_nan=False, seen=None,
         transpose=False) -> Bound:
    """`value` validated as input `tv` of a kernel over semiring `sr`.

    `on_convert(name, note)` is called when the value's layout is not the declared
    format's, so that binding it converts it (on every call); see
    inputs.conversion_note. `fused`: the kernel checks this input's index arrays
    as it reads them, so a scipy csr/csc input gets only the O(1) checks here;
    `fused_nan`: and its values for NaN, so they are not scanned here either.
    `seen`: this call's record of arrays checked in full (checks.check_once).
    `transpose`: a scipy csr/csc of the other layout transposed by scipy (checks.transposed)."""
    if type(value) is WindowInput:     # the source's own arrays (runtime.windows)
        return _bind_window(value, tv, sr, on_convert, fused)
    reused = type(value) is Tensor
    if reused:
        # A Tensor again: its binding reused (arrays validated once, never rebound)
        memo = value.__dict__.setdefault("_etchpy_bound", {})
        hit = memo.get((id(tv), id(sr)))
        if hit is not None:
            value.check_layout()
            return hit[0]
    fast = _fast_bind(value, tv, sr, fused, fused_nan, seen)
    if fast is not None:
        return fast
    io_.check_order(value, tv)
    if on_convert is not None:
        note = io_.conversion_note(value, tv)
        if note is not None:
            on_convert(tv.name, note)
    if transpose and (other := transposed(value, tv, sr)) is not None:
        value, fast = other, _fast_bind(other, tv, sr, fused, fused_nan, seen)
    elif foreign.kind(value):
        value = foreign.adapt(value, tv, sr)     # GCXS as scipy csr/csc: bound as is
        fast = _fast_bind(value, tv, sr)
    if fast is not None:
        return fast
    t = io_.as_tensor(value, tv, sr)
    if reused and t is not value and not _same_arrays(t, value):   # a converted or cast copy
        b = bind(t, tv, sr)      # (one kept: inputs._recast) bound as its own Tensor, but
        return Bound(b.shape, b.roles, b.idx32)       # not as value's own arrays (last_call)
    # the values as the kernel reads them (Tensor.unwritten_mark); t.levels checks layout
    roles = {"vals": t._vals}
    for k, arrays in enumerate(t.levels):
        for key, arr in arrays.items():
            roles[f"{key}{k}"] = arr
    b = Bound(t.shape, roles, _all_int32(roles), reused=reused)
    if reused:
        # the entry holds tv and the semiring, so their ids cannot be reused
        memo[(id(tv), id(sr))] = (b, tv, sr)
    return b


def _same_arrays(a: Tensor, b: Tensor) -> bool:
    """Whether Tensors a and b read the very same memory as value and level arrays
    (views of one buffer, with one dtype and shape: a write into one is read
    through the other)."""
    return _same(a._vals, b._vals) and len(a.levels) == len(b.levels) and all(
        x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
        for x, y in zip(a.levels, b.levels))


def _bind_window(value, tv, sr, on_convert, fused) -> Bound:
    """A window's input: its source bound once per call for all its windows (the
    WindowInput's memo), or over the rows it reads (`_window_rows`), with the
    window's extended shape."""
    b = value.memo.get(tv.name) or _window_rows(value, tv, sr, fused)
    if b is None:
        b = value.memo.get((tv.source, fused)) or bind(value.source, source_var(tv), sr,
                                                       on_convert, fused)
        value.memo[(tv.source, fused)] = b
    value.memo[tv.name] = b
    return Bound(value.shape, b.roles, b.idx32, unchecked=b.unchecked, own=b.own)


def _window_rows(value, tv, sr, fused=False):
    """A window's scipy csr/csc source of its declared layout, bound over its own
    arrays with the checks of the rows the kernel reads only: those of the major
    mode's window (O(window), not O(nnz)), every row when only the minor mode is
    windowed, or none when the kernel checks them as it reads them (`fused`: its
    window walks, lower.schedule.fused_checks; bound unchecked); None for any
    other input or when a check fails (the general path checks in full and
    words the error)."""
    src, fmt, n = value.source, tv.format, tv.order
    layout, major_mode = getattr(src, "format", None), fmt.mode_order[0]
    if layout not in ("csr", "csc") or fmt.name != layout or not hasattr(src, "indptr"):
        return None
    indptr, indices, data = src.indptr, src.indices, src.data
    major, minor = (value.shape[n + m] for m in fmt.mode_order)
    if (data.dtype != sr.dtype or indptr.dtype != indices.dtype or data.ndim != 1
            or indptr.dtype not in (INT32, INT64) or len(data) != len(indices)
            or not data.flags.c_contiguous or not _bounds_in_o1(src, indptr, indices, major)):
        return None
    r0, r1 = window_rows.rows(value.shape, n, major_mode, major)
    if not fused and window_rows.check(indptr, indices, r0, r1, minor) != 0:
        return None
    if not sr.allows_nan:
        refuse_nan(data[int(indptr[r0]):int(indptr[r1])], sr, tv.source)
    return Bound(src.shape, {"pos1": indptr, "crd1": indices, "vals": truth_values(data)},
                 indptr.dtype == INT32, unchecked=fused, own=data.dtype.kind != "b")


def _all_int32(roles: dict):
    dtypes = {arr.dtype for role, arr in roles.items() if role != "vals"}
    return (dtypes == {INT32}) if dtypes else None


def _fast_bind(value, tv, sr, fused=False, fused_nan=False, seen=None):
    """A matching, already-canonical input bound over its own arrays, else None.

    Covers numpy arrays of the carrier dtype contiguous in a dense tensor's storage order
    (C order; Fortran order for mode order (1, 0): dense_orders), scipy csr/csc (and pydata
    GCXS of 2 modes, foreign.compressed_layout) of the declared layout with matching index
    dtypes (values of another dtype cast as sr.cast casts: scipy_arrays.carried), scipy coo /
    pydata COO in order for a coo tensor (coo_inputs); else None (Tensor conversion). NaN is
    refused where the semiring forbids it; the structure is checked in one compiled pass, or
    with `fused` (the kernel checks the rest as it reads) only in O(1); with `fused_nan` as
    well, NaN in a csr/csc input's values is left to the kernel.
    """
    fmt = tv.format
    if type(value) is np.ndarray:
        flat = (own_values(value, fmt) if value.ndim == tv.order and value.dtype == sr.dtype
                else None)       # a view of its buffer in fmt's order (runtime.dense_orders)
        if flat is None:
            return None
        refuse_nan(value, sr, tv.name)
        vals = truth_values(flat)
        return Bound(value.shape, {"vals": vals}, None, own=vals is flat)
    layout = getattr(value, "format", None)
    if layout == "coo":
        return _coo_bind(value, tv, sr, fused, seen)
    if layout == "gcxs":             # pydata GCXS: csr / csc over its own arrays
        layout = foreign.compressed_layout(value, sr)
    if layout not in ("csr", "csc") or fmt.name != layout or not hasattr(value, "indptr"):
        return None
    indptr, indices, given = value.indptr, value.indices, value.data
    data = carried(given, sr)       # values of another dtype: sr.cast's copy
    if (data is None or indptr.dtype != indices.dtype
            or indptr.dtype not in (np.int32, np.int64) or data.ndim != 1
            or len(data) != len(indices) or not data.flags.c_contiguous):
        return None
    major, minor = value.shape if layout == "csr" else value.shape[::-1]
    if fused:
        res, nan_seen = (0,) if _bounds_in_o1(value, indptr, indices, major) else None, False
    else:
        (res, nan_seen), (indptr, indices, data) = in_order(   # out of order: sorted (or
            value, layout == value.format, indptr, indices, data,  # an order kept for them)
            lambda: check_once(seen, indptr, indices, data, major, minor))
    if res is None or res[0] != 0:
        return None             # the general path words errors and canonicalises
    nan_left = bool(fused and fused_nan)
    if not (nan_left or nan_seen):
        refuse_nan(data, sr, tv.name)
    vals = truth_values(data)
    return Bound(value.shape, {"pos1": indptr, "crd1": indices, "vals": vals},
                 indptr.dtype == np.int32, unchecked=fused,
                 own=vals is data and given.dtype == sr.dtype, nan_unchecked=nan_left)


def _coo_bind(value, tv, sr, fused=False, seen=None):
    """A scipy coo or pydata COO input of a coo tensor bound over its own arrays when
    they are in row-major order without repeats (coo_inputs: one pass in C), or,
    with `fused` (the kernel checks each coordinate's range as it reads it and
    takes any order), whatever their order, unchecked; else None."""
    got = coo_inputs.as_is(value, tv, sr, fused, seen)
    if got is None:
        return None
    coords, data = got
    refuse_nan(data, sr, tv.name)
    vals = truth_values(data)
    return Bound(tuple(value.shape), coo_inputs.roles(coords, data, vals),
                 coords[0].dtype == np.int32, unchecked=fused, own=vals is value.data)


def _bounds_in_o1(value, indptr, indices, major) -> bool:
    """What a kernel with fused checks needs before it runs, each in O(1): C-contiguous
    1-d index arrays, len(indptr) = major + 1, indptr[0] = 0 and indptr[-1] =
    len(indices) (= len(data), checked by the caller). False sends the input to
    the general path (which words the error or canonicalises). scipy's own note
    that its indices are unsorted is not read: the kernel tests the order where
    its walks need it (an order-free walk, an SpMV's, takes any order), and
    returns CHECK_FAILED, after which the general path canonicalises."""
    if (indptr.ndim != 1 or indices.ndim != 1 or len(indptr) != major + 1
            or not (indptr.flags.c_contiguous and indices.flags.c_contiguous)):
        return False
    return int(indptr[0]) == 0 and int(indptr[-1]) == len(indices)


def refuse_nan(arr, sr, name):
    """InputError naming input `name` when `arr` holds NaN and `sr` refuses NaN.
    One pass and no temporary: the minimum of a float array is NaN exactly when
    one of its entries is (numpy's min propagates NaN)."""
    if not sr.allows_nan and arr.dtype.kind == "f" and arr.size and np.isnan(arr.min()):
        raise InputError(f"input {name} contains NaN, which semiring {sr.name} does not allow")


def input_args(b: Bound, in_slots, lib, types, idx_dtype) -> tuple:
    """(position, C argument) for each of one input's slots. A reused binding
    keeps them per library, so a Tensor passed again skips the conversions;
    index arrays are copied to the library's index type when they differ (a
    Tensor's arrays are never modified once validated)."""
    if b.args is not None:
        hit = b.args.get(id(lib))
        if hit is not None:
            return hit[1]
    ffi = lib.ffi
    made = []
    for pos, kind, role, ctype in in_slots:
        if kind == "dim":
            made.append((pos, b.shape[role]))
            continue
        arr = b.roles[role]
        if ctype == "idx_t[]" and arr.dtype != idx_dtype:
            arr = arr.astype(idx_dtype)
        if len(arr) == 0:              # from_buffer needs a real buffer
            arr = np.zeros(1, dtype=arr.dtype)
        made.append((pos, ffi.from_buffer(types[ctype], arr)))   # holds arr alive
    made = tuple(made)
    if b.args is not None:
        b.args[id(lib)] = (lib, made)   # holding lib keeps its id from being reused
    return made
