"""A call plan's step for a scipy coo or pydata COO input of a coo tensor of order
2 (runtime.call_plans; plan_steps has the others), and of any other order
(`coo_step_n`): bound over its own arrays, its
order checked in C on every call (coo_inputs), or not at all where the kernel
checks as it reads, or where a coo input checked in full before it in the same
call has the same arrays (twins.sources; proofs_notes/validation.md, "One full
check of shared arrays").
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import coo_inputs
from .calling import refuse_nan
from .plan_steps import Miss, class_range, dim_slots
from .scipy_arrays import caster


def _coo_slots(value, positions, fused=False):
    """(check function (None when `fused`), its where cell, (position, lo, hi) of mode 0's dim and of mode
    1's, the positions of pos0, crd0, crd1 and vals) of a coo input of order 2 with
    stored entries, else None."""
    got = coo_inputs.arrays(value)
    check = coo_inputs.entry(got[0][0].dtype) if got is not None else None
    at = {role: pos for pos, kind, role, _ in positions if kind == "in_array"}
    slots = sorted(dim_slots(positions, value.shape), key=lambda d: d[1])
    if (check is None or sorted(at) != ["crd0", "crd1", "pos0", "vals"] or len(slots) != 2
            or not len(got[1])):
        return None
    (p0, _, lo0, hi0), (p1, _, lo1, hi1) = slots
    return (None if fused else check[0], check[2], (p0, lo0, hi0), (p1, lo1, hi1),
            (at["pos0"], at["crd0"], at["crd1"], at["vals"]))


def coo_step(name, value, positions, sr, types, max_bytes, fused=False):
    """The step of a scipy coo or pydata COO input of a coo tensor of order 2 over its own
    arrays (calling._coo_bind): type, dtypes, lengths, pydata fill, the order check in C
    (coo_inputs; none if `fused`, or `step.source[0]`'s: _checked_before), NaN, sizes;
    else a miss (a strided array's ValueError too). Arguments held; values cast if need be."""
    slots = _coo_slots(value, positions, fused)
    if slots is None:
        return None
    fn, where, (p0, lo0, hi0), (p1, lo1, hi1), (at_pos, at_row, at_col, at_vals) = slots
    kind, pydata, fill = type(value), hasattr(value, "fill_value"), getattr(value, "fill_value", 0)
    idx, dtype, (lo_n, hi_n) = value.coords[0].dtype, value.data.dtype, class_range(value.nnz)
    idx_type, val_type, from_buffer = types["idx_t[]"], types["val_t[]"], types["ffi"].from_buffer
    nan, held, pos0, src = not sr.allows_nan and dtype.kind == "f", [None], [None], [None]
    cast = caster(dtype, sr)        # values of another dtype: as calling._coo_bind casts

    def step(v, args):
        if type(v) is not kind or (pydata and v.fill_value != fill):
            raise Miss
        coords, data, shape = v.coords, v.data, v.shape
        row, col = coords[0], coords[1]
        n = len(data)
        if (len(coords) != 2 or data.dtype != dtype or row.dtype != idx or col.dtype != idx
                or data.ndim != 1 or row.ndim != 1 or col.ndim != 1
                or len(row) != n or len(col) != n or not lo_n <= n < hi_n
                or not (lo0 <= shape[0] < hi0 and lo1 <= shape[1] < hi1)):
            raise Miss
        data = data if cast is None else cast(data)   # a copy (none held); InputError: a miss
        last = held[0]              # one read: another thread may replace it
        if (last is not None and last[0] is row and last[1] is col and last[2] is data
                and (row.strides, col.strides, data.strides) == last[4]):
            made = last[3]
        else:
            made = (from_buffer(idx_type, row), from_buffer(idx_type, col),
                    from_buffer(val_type, data))
            small = row.nbytes + col.nbytes + data.nbytes <= max_bytes and cast is None
            held[0] = ((row, col, data, made, (row.strides, col.strides, data.strides))
                       if small and not pydata else None)
        seen = _checked_before(src[0], made, args, n, shape)
        if fn is not None and not seen and fn(made[0], made[1], n, shape[0], shape[1], where):
            raise Miss
        if nan and not (seen and src[0].nan and made[2] == args[src[0].at[3]]):
            refuse_nan(data, sr, name)
        (args[at_row], args[at_col], args[at_vals]), (args[p0], args[p1]) = made, shape
        args[at_pos] = _pos0(pos0, n, from_buffer, idx_type, idx)
        return shape
    step.source = src
    step.binder = None if cast else CooFacts(name, kind, pydata, fill, dtype, idx, lo_n,
                                             hi_n, nan, ((p0, 0, lo0, hi0), (p1, 1, lo1, hi1)),
                                             slots[4], fn)
    return step


def coo_step_n(name, value, positions, sr, types, fused=False):
    """coo_step for a coo input of order 1 or 3 and more (pydata COO, a scipy coo_array
    of n axes): its coordinate arrays bound as they are, checked in C on every call
    by coo_inputs' n-mode check (none if `fused`), type, pydata fill, dtypes, lengths,
    the entries' and each mode's size class, NaN; else a miss. Nothing is held
    between calls (pydata's coords hands out new views); the C binder takes it as
    it takes an order-2 one (CooFacts of `order` dims), twins.sources does not."""
    got = _n_slots(value, positions)
    if got is None:
        return None
    order, (fn, idx_type, ptrs_type, ffi), at, slots, idx = got
    crd_at, dims = [at[f"crd{m}"] for m in range(order)], [(p, lo, hi) for p, _, lo, hi in slots]
    kind, pydata, fill = type(value), hasattr(value, "fill_value"), getattr(value, "fill_value", 0)
    dtype, (lo_n, hi_n) = value.data.dtype, class_range(value.nnz)
    val_type, from_buffer = types["val_t[]"], types["ffi"].from_buffer
    nan, pos0, cast = not sr.allows_nan and dtype.kind == "f", [None], caster(dtype, sr)
    fn = None if fused else fn

    def step(v, args):
        if type(v) is not kind or (pydata and v.fill_value != fill):
            raise Miss
        crds, data, shape = v.coords, v.data, v.shape     # pydata: rows of a 2-d array
        n = len(data)
        if (len(crds) != order or data.dtype != dtype or data.ndim != 1 or len(shape) != order
                or not lo_n <= n < hi_n):
            raise Miss
        for c in crds:
            if c.dtype != idx or c.shape != (n,):
                raise Miss
        for (_, lo, hi), size in zip(dims, shape):
            if not lo <= size < hi:
                raise Miss
        data = data if cast is None else cast(data)   # a copy; InputError: a miss
        made = [from_buffer(idx_type, c) for c in crds]     # not contiguous: a ValueError
        if fn is not None and fn(ffi.new(ptrs_type, made), order, n,
                                 ffi.new("int64_t[]", shape), ffi.new("int64_t *")):
            raise Miss
        if nan:
            refuse_nan(data, sr, name)
        for pos, c in (*zip(crd_at, made), *zip([p for p, _, _ in dims], shape)):
            args[pos] = c
        args[at["vals"]] = from_buffer(val_type, data)
        args[at["pos0"]] = _pos0(pos0, n, from_buffer, types["idx_t[]"], idx)
        return shape
    step.source = [None]
    step.binder = None if cast or order > 4 else CooFacts(   # (the binder's MAX_DIMS)
        name, kind, pydata, fill, dtype, idx, lo_n, hi_n, nan, tuple(slots),
        (at["pos0"], *crd_at, at["vals"]), fn)
    return step


def _n_slots(value, positions):
    """(order, coo_inputs.entry_n's check, the array positions by role, the dim slots
    by mode, the index dtype) of a coo input of order 1 or 3 and more with stored
    entries, else None."""
    got = coo_inputs.arrays(value)
    order = len(got[0]) if got is not None else 0
    check = coo_inputs.entry_n(got[0][0].dtype) if order else None
    at = {role: pos for pos, kind, role, _ in positions if kind == "in_array"}
    slots = sorted(dim_slots(positions, value.shape), key=lambda d: d[1])
    roles = ["pos0", "vals"] + [f"crd{m}" for m in range(order)]
    if (check is None or order == 2 or sorted(at) != sorted(roles) or len(slots) != order
            or not len(got[1])):
        return None
    return order, check, at, slots, got[0][0].dtype


def _pos0(cell, n, from_buffer, idx_type, idx):
    """The C argument of pos0 = [0, n], kept in `cell` for the step's next call of n."""
    pos = cell[0]
    if pos is None or pos[0] != n:
        pos = cell[0] = (n, from_buffer(idx_type, np.array([0, n], dtype=idx)))
    return pos[1]


def _checked_before(o, made, args, n, shape) -> bool:
    """Whether coo step `o` (its CooFacts, or None), checked in full before this one
    in this call, has the same coordinate arrays (cffi compares pointers by address),
    length and shape: its order check (and NaN scan, over the same values) stands
    for this one's (proofs_notes/validation.md, "One full check of shared arrays")."""
    return (o is not None and made[0] == args[o.at[1]] and made[1] == args[o.at[2]]
            and args[o.at[0]][1] == n and shape == (args[o.dims[0][0]], args[o.dims[1][0]]))


class CooFacts(NamedTuple):
    """What a coo input's step checks, for the C binder (runtime.binder): its name,
    exact type, pydata?, fill, value and index dtypes, stored entries' class, NaN
    refused, dim slots (one a mode: its order), the positions of pos0, crd0, ...,
    and vals, and the C order check (coo_inputs) it runs: the two-mode one for
    order 2, the n-mode one else (None: the kernel checks as it reads)."""

    name: str
    kind: type
    pydata: bool
    fill: object
    dtype: np.dtype
    idx: np.dtype
    lo_n: int
    hi_n: int
    nan: bool
    dims: tuple
    at: tuple
    check: object
