"""Inputs read in their own compressed layout (Tuning.adopt_layouts).

A scipy csr input of a tensor declared csc (or a csc one of a csr tensor: `A.T` of
a csr matrix is one; or a coo one of either) would be converted on every call
(runtime.calling.bind; a coo input by a sort). A
kernel planned per size class (runtime.signature) plans instead, for the classes
whose inputs come so, the expression with those tensors declared in the layout
they come in: the same value, read without a conversion. The class key holds
each input's layout as given, so inputs of the declared layout keep the declared
kernel. A coo input is read by a coo kernel in any order (runtime.coo_inputs
checks its order per call and canonicalises one out of order). Only plain 2-d
csr/csc declarations of tensors read as they are adopt
(no windows, no iso values, no fixed loop order); a kernel that does not compile
so keeps the conversion (signature.planned_for_class). A numpy array whose buffer
is contiguous in another mode order (Fortran order, a transposed view) of a
tensor declared row-major dense is read likewise, its tensor declared dense in
that order (Tuning.dense_orders, runtime.dense_orders), unless that order puts
innermost a mode read at a sparse operand's coordinates (`_gathered`): copied to
row-major, an SpMM's Fortran-ordered X is read a row per coordinate.

    adopted(tensors, inputs, tuning, modes)   {name: layout or Format} of the inputs
                                              to read as given
    redeclared(expr, layouts)                 expr with those tensors in those layouts
    refuse_conversion, Converts               a binding's `on_convert` stopping it
                                              before a conversion (Kernel._bind: the
                                              last call's runner is tried only on
                                              inputs it reads as they are)
"""
from __future__ import annotations

from dataclasses import replace

from ..expr.nodes import Access, TensorVar
from ..expr.walk import map_operands
from ..formats import Format
from .dense_orders import dense_in, given_order

_OTHER = {"csr": "csc", "csc": "csr"}
_GIVEN = ("csr", "csc", "coo")


def adopted(tensors: dict, inputs: dict, tuning, modes=()) -> dict:
    """{tensor name: "csr", "csc" or "coo"} for each scipy csr, csc or coo input whose
    tensor is a plain TensorVar declared csr or csc, not in the input's layout;
    {tensor name: the dense Format in its order} for each numpy array stored in
    another mode order (dense_orders.stored_order) whose tensor is a plain
    TensorVar declared row-major dense (none without tuning.adopt_layouts, the
    latter none without tuning.dense_orders), unless its innermost stored mode is
    read at a sparse operand's coordinates and its last mode is not (`modes`: the
    kernel's (index, tensor, mode) triples; see `_gathered`)."""
    if not tuning.adopt_layouts:
        return {}
    out, gathered = {}, _gathered(tensors, modes)
    for name, tv in tensors.items():
        value = inputs.get(name)
        if tuning.dense_orders and (order := given_order(value)) is not None:
            at = {m: ix for ix, t, m in modes if t == name}
            if (type(tv) is TensorVar and not tv.iso and tv.order == len(order)
                    and tv.format.is_row_major_dense
                    and not (at.get(order[-1]) in gathered
                             and at.get(tv.order - 1) not in gathered)):
                out[name] = dense_in(order)
            continue
        layout = getattr(value, "format", None)
        if (layout in _GIVEN and type(tv) is TensorVar and not tv.iso and tv.order == 2
                and tv.format.name in _OTHER and tv.format.name != layout
                and tv.format == Format.named(tv.format.name, 2)
                and type(value).__module__.startswith("scipy.sparse")
                and getattr(value, "ndim", 0) == 2):
            out[name] = layout
    return out


def _gathered(tensors: dict, modes) -> set:
    """The indices some sparse operand binds from a level that is neither located nor
    locates (its stored coordinates, walked): a dense operand stored with such an
    index innermost is read a cache line per element at those coordinates (an SpMM's
    X[j, k] in Fortran order), where stored with it outermost a row per coordinate
    is one line; such an operand is copied to the declared order instead."""
    out = set()
    for ix, name, mode in modes:
        fmt = getattr(tensors.get(name), "format", None)
        if fmt is not None and not fmt.is_dense and mode in fmt.mode_order:
            level = fmt.levels[fmt.mode_order.index(mode)]
            if not (level.located or getattr(level, "locates", False)):
                out.add(ix)
    return out


def redeclared(e, layouts: dict):
    """`e` with each access of a tensor named in `layouts` declared in that layout
    (a layout's name or a Format; its other fields kept); None when such a tensor
    is read through a window or a diagonal (those keep their declared format)."""
    if type(e) is Access and e.tensor.name in layouts:
        t = e.tensor
        if type(t) is not TensorVar:        # a window's (expr.windows.WindowVar)
            return None
        fmt = layouts[t.name]
        fmt = fmt if isinstance(fmt, Format) else Format.named(fmt, 2)
        return Access(replace(t, format=fmt), e.indices)
    parts = []

    def each(x):
        got = redeclared(x, layouts)
        parts.append(got)
        return x if got is None else got
    out = map_operands(e, each)
    return None if any(p is None for p in parts) else out


class Converts(Exception):
    """Raised by `refuse_conversion`: an input the binding would convert."""


def refuse_conversion(name, note):
    """A binding's `on_convert` (calling.bind) refusing any conversion."""
    raise Converts(name)
