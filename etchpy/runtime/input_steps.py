"""The call-plan step of one kernel input, chosen by the kind of what the caller
passed (runtime.call_plans): a numpy array (as is, or copied as the general path
copies it: cast_steps), a Python or numpy number for a tensor of order 0
(scalar_steps), an ep.Tensor, a scipy csr/csc matrix or pydata GCXS (plan_steps),
a scipy or pydata coo one (coo_steps). A step is made only where the general
call bound the input over its own arrays (or cast its values as a step casts
them); anything else is None, and the kernel's calls of that kind take the
general path. `name` is the caller's input the step reads: the kernel's input of
that name, or the column a value predicate is bound from (runtime.value_steps).

    step = input_step(name, value, bound, positions, sr, idx_dtype, types, ...)
"""
from __future__ import annotations

import numpy as np

from . import coo_inputs, foreign
from .cast_steps import cast_step
from .coo_steps import coo_step, coo_step_n
from .plan_steps import dense_step, permuted, sparse_step, tensor_step, values_cast
from .scalar_steps import SCALARS, scalar_step
from .tensor import Tensor

__all__ = ["input_step"]


def input_step(name, value, bound, positions, sr, idx_dtype, types, max_bytes=0, casts=False,
          order=None):
    """The step for input `name` as the general call bound it, or None when its kind is
    not one a plan covers. `order`: the mode order of the dense tensor the kernel declares
    (None: not dense). `casts`: a numpy input bound as a copy (another dtype, not
    contiguous in `order`) gets a step making that copy in that order (Tuning.plan_casts)."""
    if casts and type(value) is np.ndarray and set(bound.roles) == {"vals"} and not bound.own:
        return cast_step(name, value, positions, sr, types, permuted(order))
    if type(value) in SCALARS:                  # bound as a 0-d Tensor made each call
        return scalar_step(name, value, positions, sr, types)
    if not (bound.own or values_cast(value, bound, sr)):
        return None
    if type(value) is np.ndarray:
        if value.dtype != sr.dtype or value.dtype.kind == "b" or set(bound.roles) != {"vals"}:
            return None
        return dense_step(name, value, positions, sr, types, max_bytes, permuted(order))
    if type(value) is Tensor:
        if value.vals.dtype != sr.dtype or any(
                arr.dtype != idx_dtype for lv in value.levels for arr in lv.values()):
            return None
        return tensor_step(name, value, positions, sr, types, max_bytes)
    if coo_inputs.arrays(value) is not None:      # bound over its own arrays (in order)
        if (bound.roles["vals"] is not value.data and not values_cast(value, bound, sr)
                or sr.dtype.kind == "b" or bound.roles["crd0"].dtype != idx_dtype):
            return None
        if len(coo_inputs.arrays(value)[0]) != 2:
            return coo_step_n(name, value, positions, sr, types, bound.unchecked)
        return coo_step(name, value, positions, sr, types, max_bytes, bound.unchecked)
    layout = getattr(value, "format", None)
    if layout == "gcxs":
        layout = foreign.compressed_layout(value, sr)
    if layout not in ("csr", "csc") or not hasattr(value, "indptr"):
        return None
    if (bound.roles.get("pos1") is not value.indptr or value.indices.dtype != idx_dtype
            or sr.dtype.kind == "b"):
        return None
    return sparse_step(name, value, positions, sr, bound.unchecked, types, max_bytes,
                       bound.nan_unchecked)
