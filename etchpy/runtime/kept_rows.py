"""A kernel's last call kept when it reads value predicates (runtime.last_call).

A value predicate (expr.compare, kind "value") is bound per call by
runtime.predicates: its structure and columns are the caller's own arrays
(columns of one structure, located columns passed as they are) and its
bounds one slots array worked out from the parameters. For a call on the same
inputs, only that array can differ: `rows` gives LastCall what it needs to
keep such a call (the parameters, not matched by identity; the slots arrays,
made again) and the refresh that works the bounds out for each call as
binding does (predicates._slot: the same numbers, roundings and errors),
handing back the kept call as it is when they are unchanged, else with a new
slots array in its C arguments (the kept one is never written: another thread
may be running it). A kernel with other implicit tensors (identities, ranges
of codes, windows) is not kept, nor one whose value predicates hold onehots
while it takes parameters (a number of bins per call shapes their binding and
the output).
"""
from __future__ import annotations

import numpy as np

from ..expr import formula
from ..expr.compare import CompareVar
from ..expr.nodes import IdentityVar
from ..expr.windows import WindowVar
from . import calling
from .predicates import slot_array

_NUMBERS = (int, float, np.integer, np.floating)


def eligible(declared: dict) -> bool:
    """Is every implicit tensor of `declared` a onehot's or a value predicate's
    (its structure, its columns, its slots)?"""
    return all(getattr(tv, "kind", None) in ("bins", "value", "column", "slots", "positions")
               for tv in declared.values()
               if isinstance(tv, (IdentityVar, CompareVar, WindowVar)))


def rows(kernel, kern, bound: dict, sr):
    """LastCall.keep's `rows` for a call of `kernel` run by `kern` (its
    runner) with inputs `bound`, or None when it reads no value predicate."""
    preds = [tv for tv in kernel.tensors.values()
             if isinstance(tv, CompareVar) and tv.kind == "value"]
    if not preds or kernel._params and any(tv.bins for tv in preds):
        return None          # (a number of bins given per call shapes the binding: not kept)
    slots = tuple((f"{tv.name}__p", tv, formula.slots(tv.every_test)) for tv in preds
                  if f"{tv.name}__p" in bound)
    kept = {n: bound[n].roles["vals"] for n, _, _ in slots}
    in_slots, params = kern._in_slots, tuple(kernel._params)
    last = [None]            # the parameters of the last call that kept its slots

    def refresh(inputs: dict, made: tuple) -> tuple:
        key = tuple((type(v), v) for v in map(inputs.get, params))
        if key == last[0]:   # (numbers only: a 0-d array could be written in place)
            return made
        new = {}
        for n, tv, sl in slots:
            vals = slot_array(tv, inputs, sr)
            if vals.tobytes() != kept[n].tobytes():     # (packed bytes: runtime.narrow)
                new[n] = vals
        if not new:
            if all(isinstance(v, _NUMBERS) for _, v in key):
                last[0] = key
            return made
        _, lib, types, _, in_args, bound_, _, idx_dtype, _ = made
        args = list(in_args)
        for n, vals in new.items():
            b = calling.Bound(bound_[n].shape, {"vals": vals}, None, own=True)
            for pos, arg in calling.input_args(b, in_slots[n], lib, types, idx_dtype):
                args[pos] = arg
        return made[:4] + (args,) + made[5:]
    return kernel._params, frozenset(kept), refresh
