"""Whether a Tensor's values could have been written since a moment: the mark
behind `Tensor.unwritten_mark` (proofs_notes/unwritten.md).

    mark(t)       None, or how many times `t.vals` was handed out: None when
                  anything besides `t` holds its values or the memory they own
                  now, or when reference counts cannot tell (`calibrated()`)
    calibrated(cls)  this interpreter's reference counts were measured and move
                  by one per holder (else every mark is None: no skip)

The holders that `t` itself accounts for are measured once, on a fresh Tensor,
by the same function that counts them later (`_refs`), at the first mark, instead of being a
constant: an interpreter whose `sys.getrefcount` counts references otherwise
(a later CPython that borrows references on the stack, PyPy without it) gets a
baseline of its own, or no skip when one more holder does not raise the count
by exactly one.
"""
from __future__ import annotations

import sys

import numpy as np

_UNSET = object()
_baseline = _UNSET


def _refs(t) -> tuple | None:
    """(references to t's values view, references to the array owning their
    memory), or None when that array does not own its memory."""
    a = t.__dict__["_vals"]
    o = a.base
    if not isinstance(o, np.ndarray) or o.base is not None:
        return None
    return sys.getrefcount(a), sys.getrefcount(o)


def _measure(cls):
    try:
        t = cls((1,), "dense", [{}], np.zeros(1))
        base = _refs(t)
        held_view = t._vals                 # one more holder of the view ...
        one_view = _refs(t)
        held_owner = held_view.base         # ... and of the owner
        both = _refs(t)
        del held_view, held_owner
        again = _refs(t)
    except (AttributeError, TypeError):     # no sys.getrefcount
        return None
    if base is None or one_view != (base[0] + 1, base[1]) or \
            both != (base[0] + 1, base[1] + 1) or again != base:
        return None
    return base


def calibrated(cls) -> bool:
    """Whether the reference counts of Tensors (of class `cls`) were measured."""
    global _baseline
    if _baseline is _UNSET:
        _baseline = _measure(cls)
    return _baseline is not None


def mark(t):
    if not calibrated(type(t)):
        return None
    refs = _refs(t)
    if refs is None or refs[0] > _baseline[0] or refs[1] > _baseline[1]:
        return None
    return t.__dict__.get("_handed", 0)
