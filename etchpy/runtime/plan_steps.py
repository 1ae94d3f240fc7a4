"""The steps of a call plan (runtime.call_plans): one per input, made once per
input kind, run on every call. A step takes the input and the call's C argument
list, fills in that input's arguments (sizes and `ffi.from_buffer` of its
arrays) after the checks the general path makes on every call for that kind,
and returns the input's shape; an input not of the step's kind raises `Miss`
(so may a ValueError from `from_buffer` or an InputError: the plan answers
MISS and the general path words the error). What each step checks, and why it
is enough, is in proofs_notes/call_plans.md.

    dense_step(...), dense_lines(...)                    numpy (written into the plan)
    cast_steps.cast_step(...), cast_lines(...)           numpy the plan copies or casts
    sparse_step(...), sparse_lines(...)                  scipy csr/csc or GCXS (likewise)
    tensor_step(...)                                     ep.Tensor
    coo_steps.coo_step(...)                              scipy coo / pydata COO (coo_inputs)
"""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from .calling import refuse_nan
from .checks import check_compressed, checker
from .scipy_arrays import carries, caster
from .segment_sort import in_order
from .tensor import Tensor

class Miss(Exception):
    """Raised by an input's step when the input is not of the plan's kind."""


def class_range(n: int) -> tuple[int, int]:
    """[lo, hi): the sizes with the bit length of `n` (signature.size_class's unit)."""
    b = int(n).bit_length()
    return (0, 1) if b == 0 else (1 << (b - 1), 1 << b)


def dim_slots(positions, shape) -> tuple:
    """(C argument position, mode, lo, hi) of each dim slot: the mode's size, which
    must stay in the size class [lo, hi) of its size `shape[mode]` now."""
    return tuple((pos, mode, *class_range(shape[mode]))
                 for pos, kind, mode, _ in positions if kind == "dim")


class Dense(NamedTuple):
    """A numpy input's step, written into the plan's own text (`dense_lines`) rather
    than called: its dtype, ndim, whether NaN is refused, its dim slots, the C
    argument position and type of its values, the bytes up to which the C
    argument of the last call's array is held for the same array object; `order`:
    None for a C-contiguous array, else the mode order its buffer holds it in
    (runtime.dense_orders: a Fortran-order array, (1, 0)), which the kernel's
    tensor declares."""

    name: str
    dtype: np.dtype
    ndim: int
    nan: bool
    dims: tuple
    at: int
    val_type: object
    max_bytes: int
    order: tuple | None = None


def dense_step(name, value, positions, sr, types, max_bytes, order=None):
    """The step of a numpy input (a Dense), or None when it has not one values slot."""
    vals = [(pos, ctype) for pos, kind, _, ctype in positions if kind == "in_array"]
    if len(vals) != 1:
        return None
    nan = not sr.allows_nan and value.dtype.kind == "f"
    return Dense(name, value.dtype, value.ndim, nan, dim_slots(positions, value.shape),
                 vals[0][0], types[vals[0][1]], int(max_bytes), order)


def permuted(order):
    """A dense mode order other than the modes' own, else None (row-major)."""
    return None if order is None or order == tuple(range(len(order))) else tuple(order)


def numpy_head(k: int, dtype: str, d) -> list[str]:
    """The first lines of numpy input number `k`'s step (a Dense or a DenseCast `d`):
    a miss unless it is a numpy array of dtype `dtype` (a name in the plan's space)
    and d.ndim with elements, its sizes in the plan's classes; its NaN check; its
    dims filled into `args`, its shape in `s{k}`."""
    v = f"v{k}"
    lines = [f"{v} = inputs[name{k}]",
             f"if type({v}) is not ndarray or {v}.dtype != {dtype} or {v}.ndim != {d.ndim}"
             f" or not {v}.size:",
             "    return MISS"]
    if d.nan:
        lines.append(f"refuse_nan({v}, sr, nm{k})")
    lines.append(f"s{k} = {v}.shape")
    if d.dims:
        ranges = " and ".join(f"{lo} <= s{k}[{mode}] < {hi}" for _, mode, lo, hi in d.dims)
        lines += [f"if not ({ranges}):", "    return MISS"]
    return lines + [f"args[{pos}] = s{k}[{mode}]" for pos, mode, _, _ in d.dims]


def dense_lines(k: int, d: Dense, space: dict) -> list[str]:
    """The plan's lines for numpy input number `k` (see Dense): a miss unless it is
    exactly a numpy array of the plan's dtype and ndim with elements, its sizes in
    the plan's classes (from_buffer refuses one not C-contiguous: a ValueError, a
    miss too); its NaN check; its dims and values filled into `args`; its shape
    in `s{k}`. The objects it names are put into `space`."""
    space.update({f"dt{k}": d.dtype, f"vt{k}": d.val_type, f"held{k}": [None],
                  f"nm{k}": d.name, "ndarray": np.ndarray, "refuse_nan": refuse_nan,
                  f"ord{k}": d.order})
    v, lines = f"v{k}", numpy_head(k, f"dt{k}", d)
    buffer = v
    if d.order is not None:     # its buffer in that order: C order is the C plan's kind
        lines += [f"if {v}.flags.c_contiguous:", "    return MISS"]
        buffer = f"{v}.transpose(ord{k})"      # from_buffer: C-contiguous, or a miss
    lines += [f"h = held{k}[0]           # one read: another thread may replace it",
              f"if h is not None and h[0] is {v}:",
              f"    args[{d.at}] = h[1]",
              "else:",
              f"    args[{d.at}] = c = from_buffer(vt{k}, {buffer})",
              f"    held{k}[0] = ({v}, c) if {v}.nbytes <= {d.max_bytes} else None"]
    return ["        " + line for line in lines]


def sparse_slots(value, positions):
    """((position, lo, hi) of mode 0's dim and of mode 1's, the positions of pos1, crd1
    and vals) of a scipy csr/csc input's C slots, else None."""
    dims = sorted(dim_slots(positions, value.shape), key=lambda d: d[1])
    at = {role: pos for pos, kind, role, _ in positions if kind == "in_array"}
    if [d[1] for d in dims] != [0, 1] or sorted(at) != ["crd1", "pos1", "vals"]:
        return None
    (p0, _, lo0, hi0), (p1, _, lo1, hi1) = dims
    return (p0, lo0, hi0), (p1, lo1, hi1), (at["pos1"], at["crd1"], at["vals"])


def _sparse_kind(value) -> tuple:
    """(pydata?, fill value, compressed axes, csr?) of a scipy csr/csc input or a
    pydata GCXS (whose type, unlike scipy's, fixes no layout)."""
    pydata, axes = hasattr(value, "fill_value"), getattr(value, "compressed_axes", None)
    csr = (axes == (0,)) if pydata else value.format == "csr"
    return pydata, getattr(value, "fill_value", 0), axes, csr


class Sparse(NamedTuple):
    """A scipy csr/csc input's step (or a pydata GCXS bound as one), written into the
    plan's own text (`sparse_lines`): the facts its kind fixes (see sparse_step)."""

    name: str
    kind: type
    pydata: bool
    fill: object
    axes: object
    csr: bool
    fused: bool
    nan: bool
    dtype: np.dtype
    idx: np.dtype
    n_range: tuple
    dims: tuple
    at: tuple
    types: tuple
    max_bytes: int
    carrier: np.dtype | None = None    # its values cast to this dtype (scipy_arrays.carried)
    checked: object = None             # that cast checked (checked_cast) where it may round


def values_cast(value, bound, sr) -> bool:
    """Whether `bound` is scipy csr/csc or coo `value` over its own index arrays, its
    values cast to `sr`'s carrier (calling._fast_bind, `carried`; coo_inputs.as_is)."""
    roles, data = bound.roles, getattr(value, "data", None)
    ours = ((roles.get("pos1"), roles.get("crd1")) if hasattr(value, "indptr") else
            (roles.get("crd0"), roles.get("crd1")))
    theirs = ((value.indptr, value.indices) if hasattr(value, "indptr") else
              getattr(value, "coords", None))       # scipy coo: (row, col) (pydata: no)
    return (type(theirs) is tuple and len(theirs) == 2 and all(map(operator.is_, ours, theirs))
            and type(data) is np.ndarray and data.dtype != sr.dtype
            and roles["vals"].dtype == sr.dtype and carries(data.dtype, sr))


def sparse_step(name, value, positions, sr, fused, types, max_bytes, fused_nan=False):
    """The step of a scipy csr/csc input, or a pydata GCXS bound as one (its axes and
    fill checked too), as a Sparse; None when its slots are not csr/csc's. With
    `fused_nan` (the kernel checks its values for NaN) NaN is not scanned. The C
    arguments made from the last call's arrays are held (≤ `max_bytes`) for the
    same array objects (proofs_notes/call_plans.md). Values of another dtype than the
    carrier's are cast as the general path binds them (`carried`), none held."""
    slots, dtype = sparse_slots(value, positions), value.data.dtype
    if slots is None or not carries(dtype, sr):
        return None
    (p0, lo0, hi0), (p1, lo1, hi1), at = slots
    pydata, fill, axes, csr = _sparse_kind(value)
    return Sparse(name, type(value), pydata, fill, axes, csr, bool(fused),
                  not (sr.allows_nan or fused_nan) and dtype.kind == "f", dtype,
                  value.indices.dtype, class_range(len(value.data)),
                  ((p0, lo0, hi0), (p1, lo1, hi1)), at,
                  (types["idx_t[]"], types["val_t[]"]), int(max_bytes),
                  None if dtype == sr.dtype else sr.dtype,
                  caster(dtype, sr) if not sr.holds_exactly(dtype) else None)


def sparse_lines(k: int, d: Sparse, space: dict, source=None, kept=False) -> list[str]:
    """The plan's lines for scipy input `k` (see Sparse): its type (a GCXS's axes, fill),
    dtypes, 1-d arrays of matching lengths in the plan's class, its structure checks
    (calling._bounds_in_o1 inlined if fused, else checks.checker's, or
    `source`'s), NaN, sizes; its arguments into `args`, its shape in `s{k}`."""
    space.update({f"kind{k}": d.kind, f"fill{k}": d.fill, f"axes{k}": d.axes,
                  f"dt{k}": d.dtype, f"it{k}": d.idx, f"ityp{k}": d.types[0],
                  f"vtyp{k}": d.types[1], f"held{k}": [None], f"nm{k}": d.name,
                  "refuse_nan": refuse_nan, f"check{k}": checker(d.idx) or check_compressed,
                  "in_order": in_order})
    (p0, lo0, hi0), (p1, lo1, hi1) = d.dims
    lo_n, hi_n = d.n_range
    gcxs = f" or v.compressed_axes != axes{k} or v.fill_value != fill{k}" if d.pydata else ""
    major, minor = (f"s{k}[0]", f"s{k}[1]") if d.csr else (f"s{k}[1]", f"s{k}[0]")
    if d.fused:          # calling._bounds_in_o1, inlined
        check = [f"if len(ip) != {major} + 1 or ip.item(0) != 0 or ip.item(-1) != n:"]
    else:
        check = [f"r = check{k}(ip, ix, {major}, {minor})",
                 "if r is not None and r[0] == 5:       # only out of order (segment_sort)",
                 f"    (r, _), (ip, ix, dv) = in_order(v, {not d.pydata}, ip, ix, dv,",
                 "                                    lambda: (r, False))",
                 "if r is None or r[0] != 0:"]
    check, nan = [*check, "    return MISS"], [f"refuse_nan(dv, sr, nm{k})"] if d.nan else []
    if source is not None:           # twins.source_lines (`kept`: a source's arrays kept)
        check, nan = source(major, minor, check, nan)
    return ["        " + line for line in [
        f"v = inputs[name{k}]",
        f"if type(v) is not kind{k}{gcxs}:",
        "    return MISS",
        "ip, ix, dv = v.indptr, v.indices, v.data",
        "n = len(dv)",
        f"if (dv.dtype != dt{k} or ix.dtype != it{k} or ip.dtype != it{k} or dv.ndim != 1",
        f"        or ix.ndim != 1 or ip.ndim != 1 or len(ix) != n or not {lo_n} <= n < {hi_n}):",
        "    return MISS",
        f"s{k} = v.shape", *check, *nan, *[f"ip{k}, ix{k}, dv{k} = ip, ix, dv"] * kept,
        f"if not ({lo0} <= s{k}[0] < {hi0} and {lo1} <= s{k}[1] < {hi1}):",
        "    return MISS",
        f"args[{p0}], args[{p1}] = s{k}", *_array_lines(k, d, space)]]


def _array_lines(k: int, d: Sparse, space: dict) -> list[str]:
    """sparse_lines' lines putting input `k`'s arrays (ip, ix, dv) into `args`: those of
    the last call's same arrays where held, else made and held (≤ d.max_bytes); values
    cast to `d.carrier` are copied each call, none held."""
    a, b, c = d.at
    if d.carrier is not None:         # a value the cast would change: InputError, a miss
        space[f"carrier{k}"], space[f"checked{k}"] = d.carrier, d.checked
        return [f"dv = dv.astype(carrier{k})" if d.checked is None else f"dv = checked{k}(dv)",
                f"args[{a}], args[{b}], args[{c}] = (from_buffer(ityp{k}, ip),",
                f"    from_buffer(ityp{k}, ix), from_buffer(vtyp{k}, dv))"]
    return [f"h = held{k}[0]           # one read: another thread may replace it",
            "if h is not None and h[0] is ip and h[1] is ix and h[2] is dv:",
            f"    args[{a}], args[{b}], args[{c}] = h[3]",
            "else:",
            f"    m = (from_buffer(ityp{k}, ip), from_buffer(ityp{k}, ix), "
            f"from_buffer(vtyp{k}, dv))",
            f"    args[{a}], args[{b}], args[{c}] = m",
            f"    held{k}[0] = ((ip, ix, dv, m) if ip.nbytes + ix.nbytes + dv.nbytes "
            f"<= {d.max_bytes}",
            "                  else None)"]


def _tensor_arrays(positions, types) -> list:
    """(C argument position, key, level or None for vals, cffi type) of each array
    slot of a Tensor input."""
    arrays = []
    for pos, kind, role, ctype in positions:
        if kind == "in_array":
            key = role.rstrip("0123456789")          # "vals", or "pos1": level 1's "pos"
            level = None if role == "vals" else int(role[len(key):])
            arrays.append((pos, key, level, types[ctype]))
    return arrays


def tensor_step(name, value, positions, sr, types, max_bytes):
    """The step of an ep.Tensor input bound as its own arrays: its format, fill and
    dtypes as the plan's, its layout check (Tensor.check_layout: an InputError, so a
    miss), its values' check (`_values_ok`); its index arrays were checked when it
    was built. The C arguments made from the last call's Tensor are held (≤
    `max_bytes`) for the same Tensor object: its arrays cannot be rebound, and
    check_layout has just seen each with its dtype, shape and strides."""
    fmt, fill, dtype = value.format, value.fill, value.vals.dtype
    lo_n, hi_n = class_range(len(value.vals))      # its stored entries' size class
    nan, truth = not sr.allows_nan and dtype.kind == "f", dtype.kind == "b"
    idx = {arr.dtype for lv in value.levels for arr in lv.values()}
    dims, from_buffer = dim_slots(positions, value.shape), types["ffi"].from_buffer
    arrays = _tensor_arrays(positions, types)
    if len(idx) > 1:
        return None
    idx, held = (idx.pop() if idx else None), [None]

    def step(v, args):
        if type(v) is not Tensor:
            raise Miss
        v.check_layout()            # (its vals and levels properties would each run it)
        vals = v._vals
        if (v.fill != fill or vals.dtype != dtype or not lo_n <= len(vals) < hi_n
                or (v.format is not fmt and v.format != fmt)):
            raise Miss
        if (nan or truth) and not _values_ok(vals, nan, sr, name):
            raise Miss
        shape = v.shape
        for pos, mode, lo, hi in dims:
            if not lo <= shape[mode] < hi:
                raise Miss
            args[pos] = shape[mode]
        last = held[0]              # one read: another thread may replace it
        if last is not None and last[0] is v:
            for pos, made in last[1]:
                args[pos] = made
            return shape
        levels, made, size = v._levels, [], 0
        for pos, key, level, ctype in arrays:
            arr = vals if level is None else levels[level][key]
            if level is not None and arr.dtype != idx:
                raise Miss
            args[pos] = from_buffer(ctype, arr)
            made.append((pos, args[pos]))
            size += arr.nbytes
        held[0] = (v, tuple(made)) if size <= max_bytes else None
        return shape
    step.binder = TensorFacts(name, Tensor, fmt, fill, dtype, idx, lo_n, hi_n, nan,
                              value.shape, dims, _slots_by_level(arrays))
    return step


def _values_ok(vals, nan, sr, name) -> bool:
    """`nan`: NaN refused (InputError naming the input), True. Else (booleans) whether
    every value byte is 0 or 1 (tensor.truth_values: values may be written in
    place; a miss then, the general path copies them)."""
    if nan:
        refuse_nan(vals, sr, name)
        return True
    return not (vals.size and vals.view(np.uint8).max() > 1)


def _slots_by_level(arrays) -> tuple:
    """(C argument position, level or -1 for the values, role) of each array slot."""
    return tuple((pos, -1 if level is None else level, key) for pos, key, level, _ in arrays)


class TensorFacts(NamedTuple):
    """What a Tensor input's step checks, for the C binder (runtime.binder): its
    name, exact type, format, fill, value and index dtypes, stored entries' class,
    NaN refused, shape, dim slots and array slots (position, level or -1 for the
    values, role)."""

    name: str
    kind: type
    format: object
    fill: object
    dtype: np.dtype
    idx: object
    lo_n: int
    hi_n: int
    nan: bool
    shape: tuple
    dims: tuple
    arrays: tuple
