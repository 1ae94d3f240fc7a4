"""Implicit tensors made from shapes alone, in call plans (runtime.call_plans).

A diagonal's identity δ (expr.diagonal, an IdentityVar: runtime.identity), an
index comparison `i < j + d` (expr.compare, a CompareVar of kind "index":
runtime.predicates) and a range `j < 50`, `ep.between(j, "lo", "hi")` (kind
"range", not keyed) are no caller's input, and what the kernel reads of them
depends only on sizes: δ's two on the size n of its source's two repeated
modes (the same n×n identity whatever the values), a comparison's two
dimensions on its indices' sizes (both store nothing), a range's codes and
ones on its index's size n and its bounds (constants, or parameters the call
passes as Python or numpy numbers, kept by type and value). So a call plan
binds them as a step of its own, worked out from the call's other inputs'
shapes: the source's (δ) or the inputs that index each of the comparison's
indices, read by (tensor, mode) found once. The C arguments of one shape are made once (the
general path's tensor, bound as it binds it) and reused for that shape (the
last shape's kept); δ's repeated modes of unequal sizes are a miss (the
general path names the input). Values and anything read per entry stay
outside (value predicates, a range keyed by a column's values: no plan).

    shape_made(tv)                          δ, an index comparison, a range
    shape_step(tv, inputs, modes, positions, sr, lib, types, idx_dtype)
"""
from __future__ import annotations

import numpy as np

from ..expr.compare import CompareVar
from ..expr.nodes import IdentityVar
from . import calling
from .identity import identity
from .plan_steps import Miss
from .predicates import index_pairs, index_range

__all__ = ["shape_made", "shape_step", "ShapeStep", "params_key"]


def shape_made(tv) -> bool:
    """Whether the implicit tensor `tv` is made from sizes (and a range's bounds)
    alone (δ of a diagonal, an index comparison, a range), so that a plan binds it
    from the call's shapes.

        >>> shape_made(kern.tensors["eq_A_0_1"])
        True
    """
    return type(tv) is IdentityVar or type(tv) is CompareVar and (
        tv.kind == "index" or tv.kind == "range" and not tv.keyed)


class ShapeStep:
    """The step of one shape-made tensor (see the module docstring). Called with
    the whole inputs dict (`whole`), it fills the tensor's C arguments into
    `args` and returns its shape; Miss for δ over modes of unequal sizes, and for
    a range's parameter that is not a Python or numpy int or float."""

    whole = True
    __slots__ = ("tv", "sources", "positions", "sr", "lib", "types", "idx_dtype", "made",
                 "params")

    def __init__(self, tv, sources, positions, sr, lib, types, idx_dtype):
        self.tv, self.sources, self.positions, self.sr = tv, sources, positions, sr
        self.lib, self.types, self.idx_dtype = lib, types, idx_dtype
        self.params = tv.params if type(tv) is CompareVar and tv.kind == "range" else ()
        self.made: dict = {}    # the last shape and parameters -> (tensor, C arguments)

    def __call__(self, inputs, args):
        key = tuple([inputs[name].shape[mode] for name, mode in self.sources])
        if self.params:         # by type too: True == 1, but a bool is refused
            key += params_key(inputs, self.params)
        hit = self.made.get(key)
        if hit is None:
            hit = self._make(key, inputs)
        for pos, arg in hit[1]:
            args[pos] = arg
        return hit[0].shape

    def _make(self, key, inputs) -> tuple:
        tv, shape = self.tv, key[:len(self.sources)]
        if type(tv) is IdentityVar:
            if shape[0] != shape[1]:
                raise Miss          # the general path's InputError names the source
            t = identity(tv, inputs[tv.source], self.sr)
        elif tv.kind == "range":
            t = index_range(tv, shape[0], inputs, self.sr)     # InputError: the general path
        else:
            t = index_pairs(tv, shape, self.sr)
        b = calling.bind(t, tv, self.sr)
        hit = (t, calling.input_args(b, self.positions, self.lib, self.types, self.idx_dtype))
        self.made = {key: hit}        # one kept: a range holds arrays of n
        return hit


NUMBERS = frozenset({int, float, np.int64, np.int32, np.float64, np.float32})


def params_key(inputs, params) -> tuple:
    """The call's parameters `params` as a key of made arguments: each (its type, its
    value), by type too (True == 1, but the general path refuses a bool); Miss for a
    value not a Python or numpy int or float (KeyError for a missing one)."""
    return tuple([(type(v), v) if type(v) in NUMBERS else _miss()
                  for v in [inputs[p] for p in params]])


def _miss():
    raise Miss


def shape_step(tv, inputs, modes, positions, sr, lib, types, idx_dtype) -> ShapeStep | None:
    """The step of shape-made `tv` in a plan for calls on inputs like `inputs` (the
    caller's, by name); `modes`: the kernel's (index, tensor, mode) of every access
    (signature.index_modes). None when a comparison's index is in no input the
    caller passes (its size would be unknown: the general path says so)."""
    if type(tv) is IdentityVar:
        sources = tuple((tv.source, m) for m in tv.modes)
    else:
        at = {}
        for ix, name, mode in modes:
            if name in inputs and getattr(inputs[name], "shape", None) is not None:
                at.setdefault(ix, (name, mode))
        ixs = {mode: ix for ix, name, mode in modes if name == tv.name}
        if sorted(ixs) != list(range(tv.order)) or any(ix not in at for ix in ixs.values()):
            return None
        sources = tuple(at[ixs[m]] for m in range(tv.order))
    return ShapeStep(tv, sources, positions, sr, lib, types, idx_dtype)
