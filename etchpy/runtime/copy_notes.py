"""explain()'s lines for the copies a call makes of its numpy inputs on every call
(issue 39): a call plan's DenseCast steps (runtime.plan_steps; made in C by the
binder or by the plan's Python), and the general path's copies (runtime.calling.bind
through Tensor conversion) of the calls no plan runs: every call when
Tuning.call_plans is off, or of a kind of inputs no plan covers. One wording for
both: `input x: strided, copied per call (400 bytes)`, `input x: strided, int32
cast to float64, ...`, `input M: not in the kernel's order, ...`; the bytes those
of the copy at the call the note was made from.

    copy_note(name, v, dtype, order)   one numpy input's line, or None (read as it is)
    plan_notes(steps, inputs)          a call plan's lines
    note_general(owner, made, inputs)  the general call `made`'s lines, kept on the
                                       kernel `owner` for explain() (`_general_copies`)
"""
from __future__ import annotations

import numpy as np

from .cast_steps import DenseCast


def copy_note(name: str, v: np.ndarray, dtype, order=None) -> str | None:
    """The line for numpy input `name` (array `v`) copied into a C-contiguous array
    of `dtype` in mode order `order` (None: row-major), or None when the copy has no
    reason this names (then it is no copy of these)."""
    src = v if order is None else v.transpose(order)
    why = ([] if src.flags.c_contiguous else ["strided"] if not (
        v.flags.c_contiguous or v.flags.f_contiguous) else ["not in the kernel's order"])
    why += [f"{v.dtype} cast to {np.dtype(dtype)}"] if v.dtype != dtype else []
    if not why:
        return None
    nbytes = v.size * np.dtype(dtype).itemsize
    return f"input {name}: {', '.join(why)}, copied per call ({nbytes} bytes)"


def plan_notes(steps, inputs: dict) -> list[str]:
    """The lines for the copies a plan of `steps` makes on every call: each
    DenseCast's input at `inputs`, under the name the step reads (a value
    predicate's step reads its column's input: runtime.value_steps)."""
    notes = [copy_note(d.name, inputs[d.name], d.dtype, d.order)
             for _, d in steps if type(d) is DenseCast]
    return [n for n in notes if n is not None]


def note_general(owner, made, inputs: dict, key) -> None:
    """Keep on kernel `owner`, under `key` (the kind of call: call_plans.plan_key),
    the lines for the numpy inputs the general call `made` (Kernel._make's tuple:
    the kernel that ran, ..., its bound inputs at 5) bound as copies: of a dense
    tensor, not bound over the array's own buffer."""
    if made is None:
        return
    kern, bound = made[0], made[5]
    notes = [n for name, (src, tv, _) in kern._inputs.items()
             if type(v := inputs.get(src)) is np.ndarray and not bound[name].own
             and (n := _general_note(src, v, tv, kern.semiring.dtype)) is not None]
    kept = owner.__dict__.setdefault("_general_copies", {})
    if len(kept) >= 64:             # as many kinds as a kernel keeps plans of
        kept.clear()
    kept[key] = notes


def _general_note(name, v, tv, dtype) -> str | None:
    """copy_note of numpy input `v` of tensor `tv` (None unless tv is dense)."""
    fmt = tv.format
    order = fmt.mode_order
    if not fmt.is_dense or len(order) != v.ndim:
        return None
    return copy_note(name, v, dtype, None if order == tuple(range(v.ndim)) else order)
