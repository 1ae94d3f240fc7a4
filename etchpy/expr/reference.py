"""The dense reference semantics: the specification every backend must meet.

Each subexpression evaluates to a dense numpy array whose axes are its free
indices. `*` and `+` broadcast by index name and apply the semiring's mul and
add elementwise; Σ folds add over one axis starting from zero; a literal is the
carrier value it names; a map applies its numpy form (etchpy.maps) to every
entry of its operand's dense value. Nothing here is clever on purpose.
"""
from __future__ import annotations

import numpy as np

from .. import maps
from .nodes import Access, Add, Expr, Index, Lit, Map, Mul, Sum


def evaluate(e: Expr, semiring, inputs: dict[str, np.ndarray],
             out_indices: tuple[Index, ...]) -> np.ndarray:
    """The value of `e` as a dense array with axes `out_indices` (a 0-d array for scalars)."""
    arr, axes = _eval(e, semiring, inputs)
    return _align(arr, axes, tuple(out_indices), semiring)


def _align(arr, axes, target, semiring):
    """Transpose and broadcast `arr` (axes `axes`) to axes `target` (a superset)."""
    missing = [ix for ix in axes if ix not in target]
    assert not missing, f"axes {missing} are not in {target}"
    perm = [axes.index(ix) for ix in target if ix in axes]
    arr = np.transpose(arr, perm) if perm else arr
    sizes = iter(arr.shape)
    shape = [next(sizes) if ix in axes else 1 for ix in target]
    return np.asarray(arr, dtype=semiring.dtype).reshape(shape)


def _eval(e: Expr, sr, inputs):
    match e:
        case Access(t, idx):
            return np.asarray(inputs[t.name], dtype=sr.dtype), idx
        case Lit(v, _):
            return np.asarray(sr.literal(v), dtype=sr.dtype), ()
        case Mul(a, b):
            return _binary(sr.mul, _eval(a, sr, inputs), _eval(b, sr, inputs), sr)
        case Add(a, b):
            return _binary(sr.add, _eval(a, sr, inputs), _eval(b, sr, inputs), sr)
        case Sum(i, body):
            arr, axes = _eval(body, sr, inputs)
            ax = axes.index(i)
            acc = np.full(arr.shape[:ax] + arr.shape[ax + 1:], sr.zero, dtype=sr.dtype)
            for k in range(arr.shape[ax]):
                acc = np.asarray(sr.add(acc, np.take(arr, k, axis=ax)), dtype=sr.dtype)
            return acc, axes[:ax] + axes[ax + 1:]
        case Map(fn, a, arg):
            arr, axes = _eval(a, sr, inputs)
            return np.asarray(maps.apply(fn, arr, arg), dtype=sr.dtype), axes
    raise TypeError(f"not an expression: {e!r}")


def _binary(op, left, right, sr):
    (a, ax_a), (b, ax_b) = left, right
    axes = ax_a + tuple(ix for ix in ax_b if ix not in ax_a)
    a2, b2 = np.broadcast_arrays(_align(a, ax_a, axes, sr), _align(b, ax_b, axes, sr))
    return np.asarray(op(a2, b2), dtype=sr.dtype), axes
