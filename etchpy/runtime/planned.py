"""Planned conversions at call time: the inputs a plan reads in another format.

The planner may read an input converted to another format (plan.convert). The
conversion runs here, on every call, before the kernel: a planned conversion
gives no PerformanceWarning (the plan chose it; the warning is for an input
whose layout is not the declared one).

    kernel_inputs(plan, tensors)   name -> (user's tensor, TensorVar, planned)
    bind(value, tv, sr)            one planned input as a calling.Bound
    with_conversions(plan, bound)  the Tensors of the streams and Imp backends,
                                   with every converted copy added

Only an `ep.Tensor`'s conversion is kept across calls: its structure cannot be
rebound, and calling.bind keeps the converted binding on the Tensor itself (so
it goes when the Tensor goes). A scipy or numpy input may be changed by its
owner between calls, so it is converted again on every call: a canonical scipy
csr/csc read as the other is transposed by scipy's own compiled conversion,
after the structural check every scipy input gets.
"""
from __future__ import annotations

from . import calling
from .checks import check_compressed
from ..plan.convert import bindings

__all__ = ["kernel_inputs", "bind", "with_conversions"]

_TRANSPOSED = {"csr": "csc", "csc": "csr"}


def kernel_inputs(plan, tensors: dict) -> dict:
    """The kernel's inputs: name -> (the user's tensor it is bound from, its
    TensorVar, whether it is a planned conversion)."""
    return bindings(plan, tensors)


def bind(value, tv, sr) -> calling.Bound:
    """`value` (the user's input) as input `tv`, a planned conversion of it."""
    layout = getattr(value, "format", None)
    if (type(value).__module__.startswith("scipy.sparse") and layout in _TRANSPOSED
            and tv.format.name == _TRANSPOSED[layout] and hasattr(value, "indptr")
            and value.ndim == 2 and value.data.dtype == sr.dtype):
        major, minor = value.shape if layout == "csr" else value.shape[::-1]
        res = check_compressed(value.indptr, value.indices, major, minor)
        if res is not None and res[0] == 0:     # canonical: safe for scipy's own code
            other = value.tocsc() if layout == "csr" else value.tocsr()
            return calling.bind(other, tv, sr)
    return calling.bind(value, tv, sr)


def with_conversions(plan, bound: dict) -> dict:
    """`bound` (Tensors by the expression's tensor names) with every converted
    copy the plan reads added under its own name."""
    convs = getattr(plan, "conversions", ())
    if not convs:
        return bound
    out = dict(bound)
    for c in convs:
        out[c.name] = bound[c.source].convert(c.format)
    return out
