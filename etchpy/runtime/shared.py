"""Inputs over one structure, walked once: a kernel's calls on value columns of one
table (a mixin of runtime.kernel.Kernel).

When a product's factors are inputs over the same index arrays (the same
objects: the columns of one ep.relation(..., values=[...]) or ep.table), a
kernel compiled from `expr.shared.fused` walks that structure once and reads
every column at the same position, where the kernel as written merges their
identical segments level by level (proofs_notes/shared.md). Which inputs share
a structure is a fact of the call, checked on every call in O(levels) by
identity of the level arrays (with format, shape, fill and stored count), as
predicates._same_structure does for a comparison's columns; the kernel for a
given partition of the inputs into structures is made once and kept. Inputs
that do not share (arrays equal but not the same objects, other Tensors, scipy
or numpy inputs) run the kernel as written, so a call is right either way.

    kernel._one_walk(inputs)   the kernel that runs these inputs with shared
                               structures walked once, or None (run self)
"""
from __future__ import annotations

from dataclasses import replace

from ..errors import EtchpyError
from ..expr import shared
from ..expr.walk import accesses
from .tensor import Tensor

_UNSET = object()


def _structure(t) -> tuple | None:
    """What makes two Tensors store the same entries at the same positions: the
    identities of their level arrays, with their format, shape, fill and number of
    stored values; None for an input that is not an ep.Tensor."""
    if type(t) is not Tensor:
        return None
    return (t.format, t.shape, t.fill, len(t.vals),
            tuple(id(a) for lv in t.levels for a in lv.values()))


def classes(groups: tuple, inputs: dict) -> tuple:
    """((input name, the first name over its structure), ...), sorted, for every
    ep.Tensor input named in `groups`: the partition a fused kernel is made for
    (expr.shared.fused joins only the factors of one product over one structure)."""
    first: dict = {}
    out = {}
    for names in groups:
        for n in names:
            key = _structure(inputs.get(n))
            if key is not None:
                out[n] = first.setdefault(key, n)
    return tuple(sorted(out.items()))


class OneWalk:
    """The half of `ep.Kernel` that runs inputs over one structure by one walk."""

    def _one_walk(self, inputs: dict):
        """(the kernel for `inputs` with each product's factors over one structure
        fused and each Σ over all of one access's indices a flat walk
        (expr.shared), made once per partition; the names it reads as their
        stored values), or None when neither applies to this call."""
        walk = self.__dict__.get("_walk", _UNSET)
        if walk is _UNSET:
            walk = self._walk = _candidates(self.request.expr)
            self._walk_kernels = {}
        if walk is None or inputs.keys() != self._users.keys():
            return None              # (the general path words a missing input)
        groups, flats = walk
        sr = self._semiring_of(inputs)
        key = (classes(groups, inputs), tuple(n for n in flats if type(
            t := inputs.get(n)) is Tensor and t.fill == sr.zero and t.vals.ndim == 1))
        if not any(key):
            return None
        kept = self._walk_kernels
        if key not in kept:
            kept[key] = self._fused_kernel(dict(key[0]), set(key[1]))
        return kept[key]

    def _fused_kernel(self, classes_: dict, flats: set):
        req = self.request
        expr, merged = shared.flat(shared.fused(req.expr, classes_), flats)
        if expr == req.expr:
            return None
        order = req.order
        if order is not None:
            for q, (old, _) in merged.items():
                order = tuple(q if o == old[0] else o for o in order if o not in old[1:])
        kern = type(self).__new__(type(self))
        try:
            kern._setup(replace(req, expr=expr, order=order), infer=self._infer)
        except EtchpyError:          # e.g. a fused column the plan would have converted
            return None
        kern._warned = self._warned
        return kern, {n for _, names in merged.values() for n in names}


def _candidates(expr):
    """(the groups of expr.shared.groups, the names a flat walk may read), or None
    when there are neither."""
    groups = shared.groups(expr)
    names = {a.tensor.name for a in accesses(expr)} | {n for g in groups for n in g}
    _, merged = shared.flat(shared.fused(expr, dict.fromkeys(names, 0)), names)
    flats = tuple(sorted(n for n in names if merged)) if merged else ()
    return (groups, flats) if groups or flats else None


def run_one_walk(kern, flats: set, out, inputs: dict):
    """Call the fused kernel `kern`, the inputs it reads flat as their values."""
    return kern(out=out, **{n: v.vals if n in flats else v for n, v in inputs.items()})
