"""Call plan steps that copy a numpy input (runtime.call_plans, Tuning.plan_casts): an
array of another dtype the carrier holds, or not contiguous in the order the kernel
reads, is copied on every call as the general path's Tensor.from_dense copies it
(`sr.cast`: a cast that may round checked value by value). The C binder makes the
same copy (runtime.binder, binder_inputs.c.j2 `dense_cast`).

    cast_step(...)       the DenseCast of an input bound as a copy, or None
    cast_lines(...)      its lines in the plan's text
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .calling import refuse_nan
from .plan_steps import numpy_head, dim_slots
from .scipy_arrays import caster


class DenseCast(NamedTuple):
    """A numpy input the general path copies (Tuning.plan_casts): of a dtype the
    carrier holds (numpy's safe cast; `checked` where it may round), or not
    C-contiguous. The plan makes the same copy on every call, never held across calls."""

    name: str
    given: np.dtype
    dtype: np.dtype
    ndim: int
    nan: bool
    dims: tuple
    at: int
    val_type: object
    order: tuple | None = None      # the kernel's tensor's mode order (None: row-major)
    checked: object = None          # checked_cast where the cast may round (int64 to float64)


def cast_step(name, value, positions, sr, types, order=None):
    """The step of a numpy input bound as a copy (a DenseCast), or None when the copy
    is not one a plan makes: a cast `sr.cast` refuses or checks by more than the round
    trip (only numbers into numbers; into booleans never), one values slot only. A
    cast that may round (int64 into float64) is `sr.cast`'s, checked every call."""
    vals = [(pos, ctype) for pos, kind, _, ctype in positions if kind == "in_array"]
    given = value.dtype
    if (len(vals) != 1 or given.kind not in "biufc" or sr.dtype.kind not in "iufc"
            or not np.can_cast(given, sr.dtype, "safe")):
        return None
    return DenseCast(name, given, sr.dtype, value.ndim, not sr.allows_nan and given.kind == "f",
                     dim_slots(positions, value.shape), vals[0][0], types[vals[0][1]], order,
                     caster(given, sr) if not sr.holds_exactly(given) else None)


def cast_lines(k: int, d: DenseCast, space: dict) -> list[str]:
    """The plan's lines for numpy input number `k` (see DenseCast): a miss unless it
    is a numpy array of the dtype and ndim the plan was made for, with elements, its
    sizes in the plan's classes (and, of the carrier's dtype, not C-contiguous: that
    kind is a Dense step's plan); its NaN check; a C-contiguous copy in the carrier
    dtype (as the general path's Tensor.from_dense makes), passed to C; for a kernel
    whose tensor is stored in another mode order (`d.order`) a copy in that order,
    and, of the carrier's dtype, an array in that order a miss too (a Dense's kind)."""
    space.update({f"dg{k}": d.given, f"dt{k}": d.dtype, f"vt{k}": d.val_type,
                  f"nm{k}": d.name, "ndarray": np.ndarray, "refuse_nan": refuse_nan,
                  "contiguous": np.ascontiguousarray, f"ord{k}": d.order})
    v, lines = f"v{k}", numpy_head(k, f"dg{k}", d)
    src = v if d.order is None else f"{v}.transpose(ord{k})"
    if d.given == d.dtype:      # made for a layout only: a C-contiguous one is a Dense's
        lines += [f"if {v}.flags.c_contiguous:", "    return MISS"]   # (the binder's)
        if d.order is not None:
            lines += [f"if {src}.flags.c_contiguous:", "    return MISS"]
    if d.checked is not None:        # a value the cast would change: InputError, a miss
        space[f"checked{k}"] = d.checked
        src = f"checked{k}({src})"
    lines.append(f"args[{d.at}] = from_buffer(vt{k}, contiguous({src}, dtype=dt{k}))")
    return ["        " + line for line in lines]
