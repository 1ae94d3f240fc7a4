"""A kernel's last call, kept for the next call on the same inputs.

Each call binds its inputs (runtime.calling: checks, then the C arguments made
from their arrays) and finds the build that runs them (runtime.signature). A
kernel called in a loop on the same arrays does the same work on every call,
and for a short kernel that work takes longer than the kernel. `LastCall` keeps
what a successful call made and hands it back when the next call passes the
same objects, under the same names in the same order, with the same layouts:

- a numpy array: the same object with the same shape, strides and dtype, which
  the call bound as it is (the C argument points into its buffer). Its values
  may have changed since, and are read afresh: numpy does not move the buffer of
  an array that is referenced. Its NaN check runs again when the semiring
  refuses NaN.
- an ep.Tensor: the same object, which the call bound as its own arrays (not
  converted or cast); its layout check (Tensor.check_layout) runs again. A
  onehot of it (expr.bins) is bound over those same buffers (checked by
  address), so it is kept with it.

Every other call binds in full: scipy, pydata sparse and python-graphblas
inputs (their arrays can be rebound), bool arrays (their bytes decide truth
values: tensor.truth_values), parameters, inputs that binding converts or
copies, calls with `out=`, and kernels with implicit identities (onehots of a
Tensor passed as it is aside) or iso inputs.
A kept call references its inputs until the kernel's next call, so a call
whose inputs hold more than `max_bytes` is not kept. The knobs are
Tuning.keep_last_call (off: every call binds in full) and
Tuning.keep_call_bytes (`max_bytes`).
"""
from __future__ import annotations

import numpy as np

from .calling import refuse_nan
from .tensor import Tensor


class LastCall:
    """The last kept call of one kernel over semiring `sr`: `match(inputs)` gives
    what `keep` stored (an opaque tuple) when `inputs` are the kept ones as
    described above, else None; `hits` counts the matches. With `on` false
    nothing is kept."""

    __slots__ = ("state", "sr", "max_bytes", "hits")

    def __init__(self, sr, max_bytes: int, on: bool = True):
        self.state = None           # ((name, value, layout or None, check NaN), ...), made
        self.sr, self.max_bytes, self.hits = sr, max_bytes if on else None, 0

    def match(self, inputs: dict):
        state = self.state          # one read: another thread may replace it
        if state is None:
            return None
        kept, made = state
        if len(kept) != len(inputs):
            return None
        for (name, value, _, _), (given, v) in zip(kept, inputs.items()):
            if v is not value or given != name:
                return None
        for name, value, layout, nan in kept:
            if layout is None:
                value.check_layout()            # InputError naming it, as binding does
            elif (value.shape, value.strides, value.dtype) != layout:
                return None
            elif nan:
                refuse_nan(value, self.sr, name)
        self.hits += 1
        return made

    def keep(self, inputs: dict, by_input, bound: dict, made) -> None:
        """Keep `made` for `inputs` when each input qualifies; `by_input` maps each
        input's name to the names of the kernel inputs bound from it (None when a
        planned conversion copies one: see inputs_of), `bound` is the call's
        Bound values by those names."""
        self.state = None
        if self.max_bytes is None or by_input is None or len(by_input) != len(inputs):
            return
        kept, total, nan = [], 0, not self.sr.allows_nan
        for name, value in inputs.items():
            names = by_input.get(name)
            if names is None:
                return
            kind = type(value)
            if kind is np.ndarray:
                dtype = value.dtype
                if dtype.kind == "b":
                    return
                total += value.nbytes
                kept.append((name, value, (value.shape, value.strides, dtype),
                             nan and dtype.kind == "f"))
            elif kind is Tensor:
                kept.append((name, value, None, False))
            else:
                return
            for n in names:
                b = bound[n]
                if not b.own or n != name and not (kind is Tensor and _over(b, value)):
                    return
                if kind is Tensor:
                    total += b.nbytes()
        if total <= self.max_bytes:
            self.state = (tuple(kept), made)


def inputs_of(kinputs: dict):
    """{the caller's name: the names of the kernel inputs bound from it} from a
    kernel's inputs (name -> (the caller's name, TensorVar, planned conversion)),
    or None when a planned conversion copies one (no call of it is kept). A
    onehot's tensor (expr.bins) is bound from its source's arrays: it counts
    as bound from the source."""
    by_input: dict = {}
    for name, (src, tv, conv) in kinputs.items():
        if conv:
            return None
        src = tv.source if getattr(tv, "kind", None) == "bins" else src
        by_input[src] = by_input.get(src, ()) + (name,)
    return by_input


def _over(b, t: Tensor) -> bool:
    """Are all the arrays bound in `b` the buffers of Tensor t's own arrays (a
    onehot's view of t, not of a conversion or a cast of it)?"""
    own = {a.ctypes.data for a in (t.vals, *(x for lv in t.levels for x in lv.values()))}
    return all(a.ctypes.data in own for a in b.roles.values())
