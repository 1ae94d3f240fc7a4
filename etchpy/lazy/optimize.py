"""`ep.optimize` on a lazy array: its whole program as one index expression.

    optimize(expr_or_lazy, **options) -> Optimized

A lazy array is translated by `lazy.ra.to_expr` (every node fused, leaves as
tensors X0, X1, ... in their stored formats), with the index sizes of its
leaves and the nonzero counts of its sparse leaves as `dims` and `nnz` (given
ones win); `Optimized.inputs` is not kept: `leaf_inputs(a)` gives the leaves'
values by tensor name, to compile or evaluate the result. Anything else goes to
etchpy.optimizer.optimize unchanged (sketch=, sketches=, limits=, ...).
"""
from __future__ import annotations

import functools

from ..expr.walk import accesses
from ..optimizer.optimize import Optimized
from ..optimizer.optimize import optimize as optimize_expr
from .nodes import LazyArray, Leaf
from .ra import to_expr


def _leaves(a: LazyArray, out: dict) -> dict:
    if isinstance(a, Leaf):
        out.setdefault(a.key, a.value)
    for x in a.args:
        _leaves(x, out)
    return out


def leaf_inputs(a: LazyArray, names: dict | None = None) -> dict:
    """{tensor name: value} for the leaves of `a`, named as `to_expr(a, names)`
    names them (axes of size one dropped)."""
    names = {} if names is None else names
    if not names:
        to_expr(a, names)
    values = _leaves(a, {})
    out = {}
    for key, name in names.items():
        v = values[key]
        if any(n == 1 for n in v.shape):
            dense = v.toarray() if hasattr(v, "toarray") else v
            v = dense.reshape(tuple(n for n in v.shape if n != 1))
        out[name] = v
    return out


@functools.wraps(optimize_expr)
def optimize(expr, **options) -> Optimized:
    """etchpy.optimizer.optimize, also for a lazy array (the module docstring);
    its docstring and signature are optimize's."""
    if not isinstance(expr, LazyArray):
        return optimize_expr(expr, **options)
    names: dict = {}
    e, _ = to_expr(expr, names)
    dims: dict = {}
    nnz: dict = {}
    ins = leaf_inputs(expr, names)
    for acc in accesses(e):
        v = ins[acc.tensor.name]
        dims.update({ix.name: n for ix, n in zip(acc.indices, v.shape)})
        if hasattr(v, "nnz"):
            nnz[acc.tensor.name] = int(v.nnz)
    options["dims"] = {**dims, **(options.get("dims") or {})}
    options["nnz"] = {**nnz, **(options.get("nnz") or {})}
    return optimize_expr(e, **options)
