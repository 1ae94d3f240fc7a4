"""ep.einsum over numpy operands stored in another order: their output in theirs
(Tuning.einsum_orders).

A numpy operand in Fortran order, or a transposed view of a C-order array, is a
C-order array of its axes permuted: einsum over it is the same einsum over that
C-order array, the letters of its term permuted alike. A kernel reads such an
operand in place (runtime.dense_orders), but writes its dense output in C order:
where the largest operand holds the output's indices in another order, one of the
two is walked against its storage (`ijk,ijk->ijk` on Fortran-order operands: one
strided stream of three). numpy's einsum lays its output out in its operands'
order instead (order='K'). So does `Reordered`: a call whose largest operand is
stored in another order runs the spec with every operand contiguous in some order
taken as its C-order transpose, the output indices that operand holds placed in
its storage order among their own positions, and returns the result transposed
back (a view: the values of the spec, in the order the operands suggest).

    reordering(call, parts, operands, output, tuning, prepare) -> call or a Reordered
    Reordered(call, names, out, prepare)  call(*ops), or the spec permuted so
    permuted(names, out, orders, sizes) -> (spec, back) or None
"""
from __future__ import annotations

from string import ascii_letters

import numpy as np

from . import matmul
from .call_plans import MISS
from .dense_orders import stored_order
from .einsum_calls import KernelCall
from .. import tuning as tuning_
from ..settings import LIMITS

__all__ = ["Reordered", "permuted", "reordering"]


def reordering(call, parts, operands, output, tuning, prepare):
    """`call` (an ep.einsum call, einsum_calls) as a `Reordered` where it runs a
    compiled kernel (a KernelCall, or a matmul.InOrder's) on numpy operands, one
    of two axes or more and one of at least `Tuning.einsum_orders` cells (0:
    never), into a dense `output`; else `call` itself. `prepare(spec, ops)` gives
    the call of a permuted spec (ep.einsum's, under the call's options).

        >>> from etchpy.expr.einsum import einsum_parts
        >>> a = np.ones((2, 3))
        >>> reordering(np.add, einsum_parts("ij->ij", [a]), [a], "dense", None, None)
        <ufunc 'add'>
    """
    least = tuning_.of(tuning).einsum_orders
    if (least <= 0 or output != "dense" or type(call) not in (KernelCall, matmul.InOrder)
            or not all(type(x) is np.ndarray for x in operands)
            or max(x.ndim for x in operands) < 2 or max(x.size for x in operands) < least):
        return call
    return Reordered(call, parts.names, [ix.name for ix in parts.out], prepare)


class Reordered:
    """`call(*ops)` on operands all in C order (or where no operand leads to
    another output order: `permuted`), else the call `prepare(spec, ops)` gives
    for the spec `permuted` makes, on the operands' C-order transposes, its result
    transposed back to the output's axis order. `names`: each operand's index
    names, `out` the output's (an expr.einsum.Einsum's). The plan and the call of
    each combination of the operands' strides are made once and kept (up to
    `settings.Limits.einsum_layouts`; the original call's key fixes the operands'
    shapes and dtypes, so strides fix their orders and the permuted call's key).

        >>> call = Reordered(np.multiply, (("i", "j"), ("i", "j")), ("i", "j"),
        ...                  lambda s, ops: lambda *a: np.einsum(s, *a))
        >>> a = np.asfortranarray(np.arange(6.0).reshape(2, 3))
        >>> r = call(a, a); r.flags.f_contiguous, bool((r == a * a).all())
        (True, True)
    """

    __slots__ = ("call", "names", "out", "prepare", "plans")

    def __init__(self, call, names, out, prepare):
        self.call, self.names, self.out, self.prepare = call, names, tuple(out), prepare
        self.plans: dict = {}

    def __call__(self, *ops):
        for op in ops:
            if not op.flags.c_contiguous:
                break
        else:
            return self.call(*ops)
        strides = tuple([op.strides for op in ops])     # (shapes, dtypes: the key's)
        if (plan := self.plans.get(strides, MISS)) is MISS:
            if len(self.plans) >= LIMITS.einsum_layouts:
                self.plans.clear()
            plan = self.plans[strides] = self._plan(ops)
        if plan is None:
            return self.call(*ops)
        call, orders, back = plan
        return call(*[op if o is None else op.transpose(o)
                      for op, o in zip(ops, orders)]).transpose(back)

    def _plan(self, ops):
        """(the permuted spec's call, the operands' stored orders, back), or None
        (see `permuted`)."""
        orders = tuple(map(stored_order, ops))
        made = permuted(self.names, self.out, orders, [op.size for op in ops])
        if made is None:
            return None
        spec, back = made
        turned = [op if o is None else op.transpose(o) for op, o in zip(ops, orders)]
        return self.prepare(spec, turned), orders, back


def permuted(names, out, orders, sizes):
    """(spec, back): the einsum spec over operands with index names `names`
    transposed by `orders` (each operand's stored_order, None: as it is) and the
    output `out` with the indices the largest operand (the first of the largest
    `sizes`) holds in that operand's storage order, each among the positions
    they take in `out`; `back` transposes its result to `out`'s order. None where
    the largest operand is in C order (or not contiguous in any order), where the
    output keeps its order, or for more than 52 distinct index names.

        >>> permuted([("i", "j", "k"), ("k",)], ("i", "j"), [(2, 1, 0), None], [8, 2])
        ('cba,c->ba', (1, 0))
    """
    big = max(range(len(sizes)), key=sizes.__getitem__)
    if orders[big] is None:
        return None
    held = [names[big][m] for m in orders[big]]
    slots = [k for k, n in enumerate(out) if n in held]
    new = list(out)
    for k, n in zip(slots, sorted((out[k] for k in slots), key=held.index)):
        new[k] = n
    letters = dict.fromkeys(n for ns in names for n in ns)
    if new == list(out) or len(letters) > len(ascii_letters):
        return None
    letter = dict(zip(letters, ascii_letters))
    terms = ("".join(letter[ns[m]] for m in (o if o is not None else range(len(ns))))
             for ns, o in zip(names, orders))
    spec = ",".join(terms) + "->" + "".join(letter[n] for n in new)
    return spec, tuple(new.index(n) for n in out)
