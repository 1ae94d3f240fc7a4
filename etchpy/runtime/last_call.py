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

- a kernel's value predicates (runtime.predicates, `rows`): kept when each
  array bound for them (structure, columns) is a buffer of the kept inputs
  (columns of one structure, a located column passed as it is: not an
  alignment's gathered copy), so written values are read through them; the
  parameters are not matched but read again, each call's bounds worked out
  anew (runtime.kept_rows, which swaps in a new slots array when they differ).

Every other call binds in full: scipy, pydata sparse and python-graphblas
inputs (their arrays can be rebound), bool arrays (their bytes decide truth
values: tensor.truth_values), inputs that binding converts or copies, calls
with `out=`, and kernels with other implicit tensors (identities, ranges,
windows) or iso inputs.
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
        self.state = None   # ((name, value, layout or None, check NaN), ...), made, refresh
        self.sr, self.max_bytes, self.hits = sr, max_bytes if on else None, 0

    def match(self, inputs: dict):
        state = self.state          # one read: another thread may replace it
        if state is None:
            return None
        kept, made, refresh = state
        if len(kept) != len(inputs):
            return None
        for (name, value, _, _), (given, v) in zip(kept, inputs.items()):
            if v is not value and value is not PARAM or given != name:
                return None
        for name, value, layout, nan in kept:
            if value is PARAM:
                continue
            if layout is None:
                value.check_layout()            # InputError naming it, as binding does
            elif (value.shape, value.strides, value.dtype) != layout:
                return None
            elif nan:
                refuse_nan(value, self.sr, name)
        self.hits += 1
        return made if refresh is None else refresh(inputs, made)

    def keep(self, inputs: dict, by_input, bound: dict, made, rows=None) -> None:
        """Keep `made` for `inputs` when each input qualifies; `by_input` maps each
        input's name to the names of the kernel inputs bound from it (None when a
        planned conversion copies one: see inputs_of), `bound` is the call's
        Bound values by those names. `rows` (runtime.kept_rows): (the parameters,
        the names of the bound inputs a refresh remakes, refresh(inputs, made)
        -> made) for a kernel with value predicates, whose other bound inputs
        are made from the caller's (their buffers checked)."""
        self.state = None
        params, remade, refresh = rows or ((), (), None)
        if self.max_bytes is None or by_input is None or (
                not rows and len(by_input) != len(inputs)):
            return
        kept, total, nan, own = [], 0, not self.sr.allows_nan, set()
        for name, value in inputs.items():
            if name in params:
                kept.append((name, PARAM, None, False))
                continue
            names = by_input.get(name, () if rows else None)
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
            if rows:
                own |= _buffers(value)
        if rows:                         # the predicates' inputs: over the kept buffers
            mine = {n for name in inputs for n in by_input.get(name, ())}
            for n, b in bound.items():
                if n not in mine and n not in remade and not _buffers(b.roles.values()) <= own:
                    return
        if total <= self.max_bytes:
            self.state = (tuple(kept), made, refresh)


PARAM = object()     # a kept call's parameter: not matched, read by its refresh


def _buffers(x) -> set:
    """The addresses of the nonempty arrays of x (a Tensor, an array, or arrays)."""
    arrays = (x.vals, *(a for lv in x.levels for a in lv.values())) if type(x) is Tensor \
        else (x,) if type(x) is np.ndarray else x
    return {a.ctypes.data for a in arrays if a.size}


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
