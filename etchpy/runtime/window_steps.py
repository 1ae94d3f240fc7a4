"""Windows in call plans (runtime.call_plans): a window's step.

A kernel that reads an operand through a window (expr.windows) takes, for
that WindowVar, the operand's own arrays and the window's extended shape as
plain C sizes (runtime.windows: lengths, the operand's sizes, each lo, each
step). None of that is kept from one call to the next: a window's step works
out the extended shape from the call's operand and parameters (bounds
parameters plus their offsets, checked as the general path checks them),
binds the operand as the general path binds a window's input
(runtime.calling.bind of a WindowInput: the rows a csr/csc window reads
checked, a dense operand's layout and NaN), and misses unless the call is of
the plan's kind: the operand's layout, the window lengths and the stored
entries in the plan's size classes, the same index dtype and the same build
(checked or trusted, as the binding's `unchecked` says).

    windows_only(tensors)                      no implicit tensor but windows
    window_step(name, tv, inputs, bound, positions, sr, fused, lib, types, idx_dtype)
"""
from __future__ import annotations

import numpy as np

from ..expr.compare import CompareVar
from ..expr.nodes import IdentityVar
from ..expr.windows import WindowVar
from . import calling, window_rows
from .calling import refuse_nan
from .plan_steps import Miss, class_range, tensor_step
from .shape_steps import shape_made
from .signature import layout
from .tensor import Tensor
from .value_steps import column_of, slots_owner, value_read
from .windows import WindowInput, extended_shape

__all__ = ["WindowStep", "DenseWindowStep", "RowsWindowStep", "TensorWindowStep",
           "windows_only", "window_step", "share_operands", "caller_names"]


def windows_only(tensors: dict, besides=None) -> bool:
    """Whether the implicit tensors of `tensors` are all windows (no diagonal's
    identity, no comparison), or pass `besides` (a test of one): then the
    parameters are the bounds of the windows and of those (runtime.shape_steps'
    ranges)."""
    return not any(isinstance(tv, (IdentityVar, CompareVar)) and not (besides and besides(tv))
                   for tv in tensors.values())


def caller_names(kern_inputs, tensors: dict, values: bool = True) -> set:
    """The inputs a caller passes for kernel inputs `kern_inputs` (names): a
    window's operand and parameters in place of the window; for a diagonal's δ,
    an index comparison or a range (made from shapes: runtime.shape_steps), its
    parameters alone (a range's bounds); with `values`, for a value predicate of
    one column (runtime.value_steps), that column's input and its parameters, and
    nothing for its slots (else both are inputs passed made)."""
    out = set()
    for name in kern_inputs:
        tv = tensors.get(name)
        if shape_made(tv) or values and slots_owner(tensors, tv):
            out.update(tv.params if isinstance(tv, CompareVar) else ())
            continue
        if values and value_read(tv):
            out.update((column_of(tv), *tv.params))
            continue
        if isinstance(tv, WindowVar):
            out.update((tv.source, *tv.params))
        else:
            out.add(name)
    return out


class WindowStep:
    """The step of WindowVar `tv` (see the module docstring). Called with the
    whole inputs dict (`whole`), it fills the window's C arguments into `args`
    and returns the extended shape."""

    whole = True
    __slots__ = ("tv", "kind", "ranges", "stored", "idx32", "unchecked", "positions",
                 "sr", "fused", "lib", "types", "idx_dtype", "shapes")

    def __init__(self, tv, kind, ranges, stored, b, positions, sr, fused, lib, types,
                 idx_dtype):
        self.tv, self.kind, self.ranges, self.stored = tv, kind, ranges, stored
        self.idx32, self.unchecked = b.idx32, b.unchecked
        self.positions, self.sr, self.fused = positions, sr, fused
        self.lib, self.types, self.idx_dtype = lib, types, idx_dtype
        self.shapes: dict = {}

    def shape(self, value, inputs) -> tuple:
        """The window's extended shape for operand `value` and the call's bounds
        (runtime.windows.extended_shape; InputError for a bad bound, which the plan
        answers with MISS), remembered by the operand's shape and the bounds'
        values when they are plain ints; Miss outside the plan's size classes."""
        values = tuple([inputs[p] for p in self.tv.params])
        key = (value.shape, values)
        shape = self.shapes.get(key)
        if shape is None:
            shape = extended_shape(self.tv, inputs)
            if all(type(v) is int for v in values):
                if len(self.shapes) >= 64:
                    self.shapes.clear()
                self.shapes[key] = shape
        for m, (lo, hi) in enumerate(self.ranges):
            if not lo <= shape[m] < hi:
                raise Miss
        return shape

    def __call__(self, inputs, args):
        value = inputs[self.tv.source]
        if (type(value), layout(value)) != self.kind:
            raise Miss
        shape = self.shape(value, inputs)
        b = calling.bind(WindowInput(value, shape), self.tv, self.sr, None, self.fused)
        if b.idx32 != self.idx32 or b.unchecked != self.unchecked or not b.own:
            raise Miss
        if self.stored is not None and not self.stored[0] <= len(b.roles["vals"]) < self.stored[1]:
            raise Miss
        for pos, arg in calling.input_args(b, self.positions, self.lib, self.types,
                                           self.idx_dtype):
            args[pos] = arg
        return shape


class DenseWindowStep(WindowStep):
    """A window's step over a numpy operand, bound in place: the checks
    calling.bind makes of a numpy array for a dense tensor (C-contiguous, the
    carrier dtype, its order; NaN where the semiring refuses it; a bool array's
    bytes all 0 or 1, tensor.truth_values, else a miss: the general path copies
    it), then the window's sizes and the operand's buffer as the C arguments.

    Several windows of one operand (a stencil's shifted windows) are bound
    once: the first window's step of an operand checks it and makes its buffer;
    each later one (`lead`, that buffer's argument position, set by
    `share_operands`) takes the buffer from this call's own `args` and only
    works out its sizes."""

    __slots__ = ("dims", "at", "val_type", "nan", "lead")

    def __init__(self, *args):
        super().__init__(*args)
        self.dims = tuple((pos, mode) for pos, kind, mode, _ in self.positions if kind == "dim")
        (self.at, ctype), = [(pos, ct) for pos, kind, _, ct in self.positions
                             if kind == "in_array"]
        self.val_type, self.nan = self.types[ctype], not self.sr.allows_nan
        self.lead = None

    def __call__(self, inputs, args):
        tv = self.tv
        value = inputs[tv.source]
        if self.lead is not None:       # checked by the lead's step, this call
            shape = self.shape(value, inputs)
            args[self.at] = args[self.lead]
        else:
            if (type(value) is not np.ndarray or value.dtype != self.sr.dtype
                    or value.ndim != tv.order or not value.flags.c_contiguous):
                raise Miss
            shape = self.shape(value, inputs)
            kind = value.dtype.kind
            if self.nan and kind == "f":
                refuse_nan(value, self.sr, tv.source)
            elif kind == "b" and value.size and value.view(np.uint8).max() > 1:
                raise Miss
            args[self.at] = self.types["ffi"].from_buffer(self.val_type, value)
        for pos, mode in self.dims:
            args[pos] = shape[mode]
        return shape


def share_operands(steps) -> None:
    """Bind each numpy or ep.Tensor operand read through several windows once (see
    DenseWindowStep, TensorWindowStep): in `steps`, (name, step) pairs in call
    order, every such step after the first of its operand leads to the first's
    arrays, where they are bound as the same C types."""
    first: dict = {}
    for _, step in steps:
        if type(step) not in (DenseWindowStep, TensorWindowStep):
            continue
        lead = first.setdefault((type(step), step.tv.source), step)
        if lead is step:
            continue
        if type(step) is DenseWindowStep and lead.val_type == step.val_type:
            step.lead = lead.at
        elif (type(step) is TensorWindowStep and lead.lead is None
              and [s[1:] for s in lead.slots] == [s[1:] for s in step.slots]):
            step.lead = tuple((s[0], t[0]) for s, t in zip(step.slots, lead.slots))


class RowsWindowStep(WindowStep):
    """A window's step over a scipy csr/csc operand of its declared layout (its
    rows windowed, or only its columns: then every row is read), bound over the
    operand's own arrays: the
    checks calling._window_rows makes (dtypes, lengths, calling._bounds_in_o1,
    the rows the window reads checked in one C call, runtime.window_rows; NaN in
    them where the semiring refuses it), the C arguments of the last call's
    arrays held for the same array objects (≤ the plan's byte limit)."""

    __slots__ = ("dims", "at", "arr_types", "nan", "major_mode", "held", "check", "most",
                 "spans")

    def __init__(self, *args, most=0):
        super().__init__(*args)
        self.dims = tuple((pos, mode) for pos, kind, mode, _ in self.positions if kind == "dim")
        at = {role: (pos, ctype) for pos, kind, role, ctype in self.positions
              if kind == "in_array"}
        self.at = tuple(at[r][0] for r in ("pos1", "crd1", "vals"))
        self.arr_types = tuple(self.types[at[r][1]] for r in ("pos1", "crd1", "vals"))
        self.nan, self.major_mode = not self.sr.allows_nan, self.tv.format.mode_order[0]
        self.held, self.check, self.most = [None], window_rows.entry(self.idx_dtype)[0], most
        self.spans: dict = {}       # (operand shape, bounds) -> span's tuple

    def span(self, value, inputs) -> tuple:
        """(the extended shape, the operand's rows and columns, the rows r0..r1-1
        the window reads), remembered by the operand's shape and the bounds'
        values (`shape` checks and remembers them)."""
        key = (value.shape, tuple([inputs[p] for p in self.tv.params]))
        got = self.spans.get(key)
        if got is None:
            n, shape = self.tv.order, self.shape(value, inputs)
            major, minor = shape[n + self.major_mode], shape[n + 1 - self.major_mode]
            got = (shape, major, minor, *window_rows.rows(shape, n, self.major_mode, major))
            if all(type(v) is int for v in key[1]):
                if len(self.spans) >= 64:
                    self.spans.clear()
                self.spans[key] = got
        return got

    def __call__(self, inputs, args):
        value = inputs[self.tv.source]
        if type(value) is not self.kind[0] or value.format != self.kind[1]:
            raise Miss
        shape, major, minor, r0, r1 = self.span(value, inputs)
        ip, ix, dv = value.indptr, value.indices, value.data
        nnz = len(dv)
        if (dv.dtype != self.sr.dtype or ix.dtype != self.idx_dtype or ip.dtype != ix.dtype
                or dv.ndim != 1 or ix.ndim != 1 or ip.ndim != 1 or len(ix) != nnz
                or not self.stored[0] <= nnz < self.stored[1] or len(ip) != major + 1
                or ip.item(0) != 0 or ip.item(-1) != nnz):
            raise Miss
        h = self.held[0]            # one read: another thread may replace it
        if h is not None and h[0] is ip and h[1] is ix and h[2] is dv:
            made = h[3]
        else:
            from_buffer, (it, _, vt) = self.types["ffi"].from_buffer, self.arr_types
            made = (from_buffer(it, ip), from_buffer(it, ix), from_buffer(vt, dv))
            small = ip.nbytes + ix.nbytes + dv.nbytes <= self.most
            self.held[0] = (ip, ix, dv, made) if small else None
        if not self.fused and self.check(made[0], r0, r1, made[1], nnz, minor):
            raise Miss          # (fused: the kernel checks the rows as it reads them)
        if self.nan:
            refuse_nan(dv[ip.item(r0):ip.item(r1)], self.sr, self.tv.source)
        for pos, mode in self.dims:
            args[pos] = shape[mode]
        args[self.at[0]], args[self.at[1]], args[self.at[2]] = made
        return shape


class TensorWindowStep(WindowStep):
    """A window's step over an ep.Tensor operand, bound over its own arrays as a
    Tensor input's step binds them (plan_steps.tensor_step: its format, fill,
    dtypes, layout, NaN and truth-value checks; its index arrays were checked
    when it was built), with the window's extended shape as the sizes.

    Several windows of one Tensor (a stencil's shifted windows) are bound once,
    as DenseWindowStep's are: a later window's step (`lead`: the first's array
    positions and its own, set by `share_operands`) checks that the call's
    operand is the lead's Tensor and takes the lead's arrays from `args`."""

    __slots__ = ("dims", "arrays", "slots", "lead")

    def __init__(self, *args, value=None, most=0):
        super().__init__(*args)
        self.dims = tuple((pos, mode) for pos, kind, mode, _ in self.positions if kind == "dim")
        arrays = tuple(p for p in self.positions if p[1] == "in_array")
        self.slots = tuple((pos, role, ctype) for pos, _, role, ctype in arrays)
        self.arrays = tensor_step(self.tv.source, value, arrays, self.sr, self.types, most)
        self.lead = None

    def __call__(self, inputs, args):
        value = inputs[self.tv.source]
        if type(value) is not Tensor:
            raise Miss
        shape = self.shape(value, inputs)
        if self.lead is None:
            self.arrays(value, args)
        else:                           # checked by the lead's step, this call
            for pos, at in self.lead:
                args[pos] = args[at]
        for pos, mode in self.dims:
            args[pos] = shape[mode]
        return shape


def window_step(name, tv, inputs, b, positions, sr, fused, lib, types, idx_dtype,
                max_bytes=0):
    """The step of window input `name` (WindowVar `tv`) as the general call bound it
    (`b`, a calling.Bound), or None when its binding is not the operand's own
    arrays (a cast or a conversion: the general path)."""
    if not b.own:
        return None
    value = inputs[tv.source]
    ranges = tuple(class_range(b.shape[m]) for m in range(tv.order))
    stored = None if b.idx32 is None else class_range(len(b.roles["vals"]))
    dense = (type(value) is np.ndarray and b.roles.keys() == {"vals"} and b.idx32 is None
             and value.dtype == sr.dtype
             and sum(kind == "in_array" for _, kind, _, _ in positions) == 1)
    step = DenseWindowStep if dense else RowsWindowStep if _rows_bound(value, tv, b, sr, fused) \
        else TensorWindowStep if _tensor_bound(value, sr, idx_dtype) else WindowStep
    extra = {"most": max_bytes} if step is RowsWindowStep else \
        {"most": max_bytes, "value": value} if step is TensorWindowStep else {}
    return step(tv, (type(value), layout(value)), ranges, stored, b, positions, sr, fused,
                lib, types, idx_dtype, **extra)


def _rows_bound(value, tv, b, sr, fused) -> bool:
    """Whether `b` is a scipy csr/csc operand bound over its own arrays with only the
    rows its window reads checked (calling._window_rows: all of them when its major
    mode is not windowed; none, unchecked, when `fused`: the kernel checks them)
    and a C check to run."""
    fmt = tv.format
    return (getattr(value, "format", None) == fmt.name and fmt.name in ("csr", "csc")
            and type(value).__module__.startswith("scipy") and b.unchecked == fused
            and b.roles.get("pos1") is value.indptr and b.roles["vals"] is value.data
            and value.data.dtype == sr.dtype and value.data.dtype.kind != "b"
            and window_rows.entry(value.indptr.dtype) is not None)


def _tensor_bound(value, sr, idx_dtype) -> bool:
    """Whether `value` is an ep.Tensor a Tensor input's step binds (call_plans._step's
    conditions: the carrier dtype, index arrays of the kernel's dtype)."""
    return (type(value) is Tensor and value.vals.dtype == sr.dtype
            and all(arr.dtype == idx_dtype for lv in value.levels for arr in lv.values()))
