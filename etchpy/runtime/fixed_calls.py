"""Calls of a kernel on numpy operands of fixed shapes and dtypes (ep.einsum's).

A prepared ep.einsum call (runtime.einsum_calls) is keyed by its operands'
types, dtypes and shapes, so everything a kernel call works out from them is
the same on every call of that key: the semiring inferred from the dtypes,
the kernel planned for their size class and its build, every dim argument,
the sizes that must agree (they did on the first call), the output's shape,
and the C arguments of a diagonal's implicit identity (runtime.identity: an
n×n Tensor made from n alone, whose arrays never change). `make` works that out
once, after a general call of the kernel on such operands returned. Where the
kernel's call plan for them is made in C (runtime.binder; no implicit identity)
the fixed call is that plan taking the operands in order: it makes the plan's
checks and calls C in one extension call. Else `make` writes a function that on
a later call only takes each operand's buffer
(`ffi.from_buffer`, which refuses an array that is not C-contiguous: then the
call is a MISS), checks NaN where the semiring refuses it, allocates the output
and calls C. A nonzero return code is a MISS too; the caller then takes the
kernel's general path, which words errors.

    call = make(kern, names, operands)     # None when the call is not of that kind
    y = call(*operands)                     # the result, or MISS

Covered: every operand exactly a numpy.ndarray of the carrier dtype (not bool),
with elements, C-contiguous; a kernel with a dense output, no parameters, iso
inputs, comparisons or planned conversions (implicit identities allowed).
The caller must pass operands of the shapes and dtypes of `operands`
(einsum_calls keys them so); proofs_notes/call_plans.md says why the rest holds.
"""
from __future__ import annotations

import numpy as np

from ..expr.nodes import IdentityVar
from . import binder, call_plans
from .call_plans import MISS

_CALL = """\
def call({params}):
    try:
{pulls}
    except ValueError:               # not C-contiguous: the general path copies it
        return MISS
{nan}
    out = fresh(out_shape, dtype=dtype)
    if function({args}):
        return MISS
    owner._last = planned
    return {result}
"""


def _eligible(kern, names, operands, sr) -> bool:
    """Whether calls of `kern` (over semiring `sr`) on `operands` can be fixed."""
    if not (kern._dense_out and kern.out_format is None and not kern._iso
            and not kern._params):
        return False
    if any(type(tv) is not IdentityVar for n, tv in kern.tensors.items() if n not in names):
        return False
    if any(src != name or conv for name, (src, _, conv) in kern._inputs.items()):
        return False
    return all(type(v) is np.ndarray and v.dtype == sr.dtype and v.dtype.kind != "b"
               and v.size and v.flags.c_contiguous for v in operands)


def make(owner, names, operands):
    """The fixed call of kernel `owner` on operands of the kind of `operands` (by
    tensor name `names`, in order), right after a general call on them
    returned; None when they are not of a kind covered (module docstring)."""
    names = tuple(names)
    inputs = dict(zip(names, operands))
    sr = owner._semiring_of(inputs)
    kern = owner if sr is owner.semiring else owner._variant(sr)
    if len(names) != len(operands) or not _eligible(kern, names, operands, sr):
        return None
    made = kern._make(inputs, None)
    return _in_c(kern, made, inputs) or _written(kern, made, names, inputs, sr)


def in_c(owner, names, operands):
    """The C binder's call plan of kernel `owner` for inputs of the kind of
    `operands` (by tensor name `names`, in order; any kind call plans cover:
    numpy arrays, scipy csr/csc arrays, ep.Tensors, ...), taking them in order,
    right after a general call on them returned; None where plans or the binder
    do not cover them. Unlike `make`'s fixed call it checks every input's kind
    and sizes on each call, as the plan does (runtime.call_plans)."""
    inputs = dict(zip(names, operands))
    if len(inputs) != len(operands):
        return None
    sr = owner._semiring_of(inputs)
    kern = owner if sr is owner.semiring else owner._variant(sr)
    return _in_c(kern, kern._make(inputs, None), inputs)


def _in_c(kern, made, inputs):
    """The binder's plan for these inputs (runtime.binder), taking them in order;
    None where plans or the binder do not cover them."""
    if not kern.request.tuning.call_plans:
        return None
    plan = call_plans.make_plan(kern, made, inputs)
    return None if plan is None else binder.in_order(plan)


def _written(kern, made, names, inputs, sr):
    """The fixed call written out in Python (see the module docstring)."""
    runner, lib, types, function, in_args, bound, out_shape, _, planned = made
    if not all(bound[n].roles["vals"].base is v or bound[n].roles["vals"] is v
               for n, v in inputs.items()):
        return None
    consts = list(in_args)     # each C argument's text in the call: a constant ...
    texts = [f"c{pos}" for pos in range(len(consts))]
    for pos, kind, _, _ in runner._out_slots:
        if kind == "out_zeroed":
            consts[pos] = int(runner._calloc_zero)
        elif kind == "out_dense":
            consts[pos], texts[pos] = None, "from_buffer(val_type, out)"
        else:
            return None
    pulls = []
    for k, name in enumerate(names):               # ... or an operand's buffer
        (at,) = [pos for pos, kind, role, _ in runner._in_slots[name]
                 if kind == "in_array" and role == "vals"]
        consts[at], texts[at] = None, f"b{k}"      # not holding this call's operands
        pulls.append(f"        b{k} = from_buffer(val_type, op{k})")
    nan = [f"    if isnan(op{k}).any():\n        return MISS" for k in range(len(names))
           if not sr.allows_nan and sr.dtype.kind == "f"]
    space = {"MISS": MISS, "from_buffer": lib.ffi.from_buffer, "val_type": types["val_t[]"],
             "isnan": np.isnan, "fresh": np.zeros if runner._calloc_zero else np.empty,
             "out_shape": tuple(out_shape), "dtype": sr.dtype, "function": function,
             "owner": kern, "planned": planned,
             **{f"c{pos}": c for pos, c in enumerate(consts) if c is not None}}
    text = _CALL.format(params=", ".join(f"op{k}" for k in range(len(names))),
                        pulls="\n".join(pulls), nan="\n".join(nan), args=", ".join(texts),
                        result="out" if len(out_shape) else "out[()]")
    exec(compile(text, f"<fixed call of {runner.name}>", "exec"), space)   # noqa: S102
    return space["call"]
