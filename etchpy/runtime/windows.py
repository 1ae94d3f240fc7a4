"""Windows (expr.windows), bound at call time: the operand's own input, never a copy.

A `WindowVar` is no caller's input: `with_windows` binds it to its source's
input as a `WindowInput`, which carries the source value and the window's
numbers as the kernel reads them, its *extended shape* (for an operand of
order n): the window lengths (modes 0..n-1: the sizes of the indices, checked
against every other access of them), the operand's own sizes (n..2n-1, for
its levels' addressing), each lo (2n..3n-1) and each step (3n..4n-1). A
bound that is a parameter is read from the call's inputs; one kernel serves
all its values, and a bound that is a parameter plus a constant
(`"lo+1"`) adds it here. The dense meaning (the reference backend): `dense_window`.
proofs_notes/windows.md.
"""
from __future__ import annotations

import functools
import numbers

import numpy as np

from ..errors import InputError
from ..expr.nodes import TensorVar
from ..expr.windows import WindowVar, split_bound


class WindowInput:
    """The input of a WindowVar: its source's value (bound as the source's own
    arrays) and the extended shape (see the module docstring). `memo`, shared
    by the windows of one call: the source's binding, made once for all of
    them (runtime.calling.bind)."""

    __slots__ = ("source", "shape", "memo")

    def __init__(self, source, shape: tuple, memo: dict | None = None):
        self.source, self.shape, self.memo = source, shape, {} if memo is None else memo


def caller_inputs(declared: dict) -> dict:
    """What a caller passes for the windows of `declared`: each source (a
    TensorVar of the window's order and format) and each parameter."""
    out: dict = {}
    for tv in declared.values():
        if isinstance(tv, WindowVar):
            out.setdefault(tv.source, source_var(tv))
            out.update({p: tv for p in tv.params})
    return out


def source_var(tv: WindowVar) -> TensorVar:
    return tv.source_var


def parameter_names(declared: dict) -> set[str]:
    return {p for tv in declared.values() if isinstance(tv, WindowVar) for p in tv.params}


def with_windows(declared: dict, inputs: dict, keep: bool = False) -> dict:
    """`inputs` plus a WindowInput for every WindowVar of `declared` whose source
    is among them (a missing source is left for check_names to name), less the
    windows' sources and parameters that `declared` does not name itself, unless
    `keep` (a comparison or onehot may read the same source: runtime.predicates
    then keeps only what the expression reads)."""
    memo: dict = {}
    wins = tuple(tv for tv in declared.values() if isinstance(tv, WindowVar))
    extra = {tv.name: WindowInput(inputs[tv.source], extended_shape(tv, inputs), memo)
             for tv in wins if tv.source in inputs}
    if not extra:
        return inputs
    if keep:
        return {**inputs, **extra}
    gone = {x for tv in wins for x in (tv.source, *tv.params)} - declared.keys()
    return {**{k: v for k, v in inputs.items() if k not in gone}, **extra}


class WindowTensor:
    """A window's input as the interpreters read it (api: the reference and stream
    backends): the source's Tensor `source` (its format, levels and values) and
    the extended shape."""

    def __init__(self, source, shape: tuple):
        self.source, self.shape = source, shape
        self.format, self.levels, self.vals = source.format, source.levels, source.vals

    def to_dense(self):
        return self.source.to_dense()


def bound_tensor(value: WindowInput, tv: WindowVar, as_tensor) -> WindowTensor:
    """`value` bound for the interpreters: `as_tensor(value, tensor var)` is
    runtime.inputs.as_tensor (the source's Tensor, no copy where it can)."""
    return WindowTensor(as_tensor(value.source, source_var(tv)), value.shape)


def _shape_of(value) -> tuple:
    shape = getattr(value, "shape", None)
    return tuple(np.shape(value) if shape is None else shape)


def extended_shape(tv: WindowVar, inputs: dict) -> tuple:
    """The window's extended shape for the source input in `inputs`."""
    src = tuple(map(int, _shape_of(inputs[tv.source])))
    if len(src) != tv.order:
        return src            # a wrong order: binding the source names it
    values = tuple([_parameter(tv.source, p, inputs) for p in tv.params])
    return _extended(tv.source, tv.windows, tv.params, src, values)


@functools.lru_cache(maxsize=1024)
def _extended(source: str, windows: tuple, params: tuple, src: tuple, values: tuple) -> tuple:
    """extended_shape for the operand's sizes `src` and the parameters' `values`
    (`params` in order), worked out once per such key."""
    given = dict(zip(params, values))
    lens, los, steps = [], [], []
    for m, n in enumerate(src):
        lo, hi, step = (0, n, 1) if windows[m] is None else windows[m]
        lo, step = _number(source, lo, given), _number(source, step, given)
        hi = n if hi is None else _number(source, hi, given)
        if step <= 0:
            raise InputError(f"window step of {source} (mode {m}) must be positive, "
                             f"got {step}")
        lens.append(max(0, -((lo - hi) // step)))
        los.append(lo)
        steps.append(step)
    return (*lens, *src, *los, *steps)


def _number(source: str, b, inputs) -> int:
    """A bound as an int: itself, or the parameter it names (one integer) plus its
    constant offset (expr.windows.split_bound)."""
    if not isinstance(b, str):
        return int(b)
    b, offset = split_bound(b)
    return _parameter(source, b, inputs) + offset


def _parameter(source: str, b: str, inputs) -> int:
    """The value of parameter `b` (a window bound of `source`) in `inputs`."""
    if b not in inputs:
        raise InputError(f"missing parameter {b} (a window bound of {source})")
    v = inputs[b]
    if type(v) is int and -2**62 < v < 2**62:
        return v
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Integral, np.integer)):
        raise InputError(f"parameter {b} (a window bound of {source}) must be one "
                         f"integer, got {v!r}")
    v = int(v)
    if abs(v) >= 2**62:
        raise InputError(f"parameter {b} (a window bound of {source}) is out of range: {v}")
    return v


def dense_window(tv: WindowVar, dense: np.ndarray, shape: tuple, fill) -> np.ndarray:
    """The dense value of the window: out[w] = dense[lo + w·step] per mode, the
    fill outside the operand (the reference semantics, a copy)."""
    n = tv.order
    lens, los, steps = shape[:n], shape[2 * n:3 * n], shape[3 * n:]
    out = np.full(lens, fill, dtype=dense.dtype)
    coords = [lo + np.arange(ln) * s for ln, lo, s in zip(lens, los, steps)]
    inside = [(c >= 0) & (c < dense.shape[m]) for m, c in enumerate(coords)]
    out[np.ix_(*inside)] = dense[np.ix_(*[c[k] for c, k in zip(coords, inside)])]
    return out
