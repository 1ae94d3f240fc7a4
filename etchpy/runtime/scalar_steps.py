"""The call-plan step of a scalar passed as a Python or numpy number (runtime.call_plans):
`kern(A=..., x=..., c=0.5)` for a tensor of order 0. The general path binds such a
value as np.asarray(value) cast to the carrier (inputs.as_tensor: a 0-d Tensor made
every call, tens of µs); the step passes the one C value the kernel reads instead.

It covers what the general path turns into the same number without any question:
a float or a numpy float64 for a float64 carrier, and an int of magnitude at most
2**53 (converted exactly), and misses (the general path words it) on anything
else: another type, a NaN where the semiring refuses it, a larger int.

    step = scalar_step(name, value, positions, sr, types)    # None: not covered
    shape = step(value, args)                                # () or raises Miss
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .plan_steps import Miss

SCALARS = (float, np.float64, int)
"""The types a scalar step takes (exactly: bool and other numpy scalars are the
general path's)."""


class Scalar(NamedTuple):
    """A scalar input's step: its name, type, the C argument position of its one
    value, whether NaN is refused, and the ffi's `new` making the C value (the C
    binder, runtime.binder, makes the same checks and passes a double of its own)."""

    name: str
    kind: type
    at: int
    nan: bool
    new: object

    def __call__(self, value, args) -> tuple:
        if type(value) is not self.kind:
            raise Miss
        if self.kind is int and not -(2**53) <= value <= 2**53:
            raise Miss
        v = float(value)
        if self.nan and v != v:
            raise Miss
        args[self.at] = self.new("double[1]", (v,))
        return ()


def scalar_step(name, value, positions, sr, types):
    """The step of scalar input `value` of a kernel over a float64 carrier whose tensor
    `name` is of order 0 (one values slot, no size), or None."""
    vals = [pos for pos, kind, _, _ in positions if kind == "in_array"]
    if (type(value) not in SCALARS or sr.dtype != np.float64 or len(vals) != 1
            or len(positions) != 1):
        return None
    return Scalar(name, type(value), vals[0], not sr.allows_nan, types["ffi"].new)
