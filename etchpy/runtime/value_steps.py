"""Value predicates in call plans (runtime.call_plans): `[A[i,j] > t]` bound from
the caller's input and the call's bounds.

A value predicate (a CompareVar of kind "value", runtime.predicates) of one
column read at its own entries (no further column, narrow twin, positions read
through, terms, bins or keyed range; weights of that column, as expr.shared joins
a factor A[i,j] into [A[i,j] > t], are its values) is bound by the general path as
that column's input made a Tensor (inputs.as_tensor: the caller's scipy, numpy
or ep.Tensor input, over its own arrays where its layout is the declared one),
and its slots (kind "slots", `{name}__p`) as one number per test worked out from
the bounds, constants or parameters (predicates.slot_array). So a plan binds the
structure by the step of that input's kind (runtime.input_steps) reading the
caller's input under the column's name, with that kind's checks (a scipy one in
full, skipped by twins.sources where a factor is bound over the same arrays in
the same call), and the slots by a SlotStep: the array made by slot_array,
kept for the parameters' types and values (the last ones only), as a range's
bounds are (runtime.shape_steps). A parameter that is missing or not a Python or
numpy int or float is a miss: the general path names it, and refuses a NaN.
The values are never kept: the kernel reads the column's values as it tests each
entry (proofs_notes/call_plans.md, "Value predicates").

    value_read(tv)                 a predicate a plan binds from its column
    column_of(tv)                  the caller's input it is read from
    column_bound(tv, fmt, value, sr)   that input bound as a plan's step binds it
    slots_owner(tensors, tv)       the value_read predicate whose slots tv is
    SlotStep(owner_tv, positions, sr, types)
"""
from __future__ import annotations

from ..errors import InputError
from ..expr.compare import CompareVar
from ..expr.nodes import TensorVar
from . import calling
from .predicates import slot_array
from .shape_steps import params_key

__all__ = ["value_read", "column_of", "column_bound", "slots_owner", "SlotStep"]


def value_read(tv) -> bool:
    """Whether `tv` is a value predicate a plan binds from its one column's input
    (see the module docstring).

        >>> value_read(kern.tensors["cmp_A_gt_p_t"])
        True
    """
    return (type(tv) is CompareVar and tv.kind == "value" and len(tv.columns) == 1
            and tv.columns[0][2] is None and not (tv.narrow or tv.through or tv.terms
                                                  or tv.bins or tv.keyed))


def column_of(tv) -> str:
    """The caller's input value predicate `tv` (value_read) is made from.

        >>> column_of(kern.tensors["cmp_A_gt_p_t"])
        'A'
    """
    return tv.columns[0][0]


def column_bound(tv, fmt, value, sr, fused=False, fused_nan=False):
    """The column `value` of value predicate `tv` (value_read) bound as the general
    path binds an input of format `fmt` (the one the kernel declares for the
    predicate): over its own arrays where its layout is `fmt`'s (the column's
    declared format, which the predicate's stores: None if not), left to the
    kernel's own checks where it checks the predicate's structure as it walks it
    (`fused`, `fused_nan`: then the plan runs the build with those checks,
    twins.builds), else checked in full; None where it is refused. The general
    path's own binding of the predicate is over a Tensor made of it
    (inputs.as_tensor, a copy of a scipy input's arrays, checked) holding the same
    entries, so the kernel reads the same structure and values.

        >>> column_bound(pred, pred.format, scipy_csr, sr).roles["pos1"] is scipy_csr.indptr
        True
    """
    col_fmt = tv.columns[0][1]          # named (csr, csc, ...) as the input declares it
    if col_fmt != fmt:
        return None
    try:
        return calling.bind(value, TensorVar(column_of(tv), tv.order, col_fmt), sr, None,
                            fused, fused_nan)
    except InputError:
        return None


def slots_owner(tensors: dict, tv):
    """The value_read predicate of `tensors` whose slots `tv` is, else None.

        >>> slots_owner(kern.tensors, kern.tensors["cmp_A_gt_p_t__p"]).name
        'cmp_A_gt_p_t'
    """
    if type(tv) is not CompareVar or tv.kind != "slots":
        return None
    pred = tensors.get(tv.name.removesuffix("__p"))
    return pred if value_read(pred) and tv in pred.companions else None


class SlotStep:
    """The step of a value predicate's slots (see the module docstring). Called
    with the whole inputs dict (`whole`), it puts the slots' size and array into
    `args` and returns their shape; Miss for a parameter it does not take."""

    whole = True
    __slots__ = ("tv", "dim", "at", "sr", "vtype", "from_buffer", "made")

    def __init__(self, tv, positions, sr, types):
        self.tv, self.sr = tv, sr
        self.dim = next(pos for pos, kind, _, _ in positions if kind == "dim")
        self.at = next(pos for pos, kind, _, _ in positions if kind == "in_array")
        self.vtype, self.from_buffer = types["val_t[]"], types["ffi"].from_buffer
        self.made: dict = {}        # the last parameters -> (array, its C argument)

    def __call__(self, inputs, args):
        key = params_key(inputs, self.tv.params)
        hit = self.made.get(key)
        if hit is None:
            arr = slot_array(self.tv, inputs, self.sr)   # InputError: the general path's
            hit = (arr, self.from_buffer(self.vtype, arr))
            self.made = {key: hit}
        args[self.dim], args[self.at] = len(hit[0]), hit[1]
        return hit[0].shape
