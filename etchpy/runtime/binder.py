"""The C binder of call plans: a call on inputs of a planned kind made in C.

A call plan (runtime.call_plans) is Python written out once per kernel and input
kind; what is left of a call's cost is Python's own (attribute reads, cffi's
`from_buffer`, the output's allocation): 2-3 µs. The binder is a CPython
extension module, built once per Python, numpy and etchpy version with the
system compiler (codegen_templates/binder.c.j2) and kept in the kernel cache
directory under the same checks as kernels (runtime.cache: a record holding its
sha256, checked before it is loaded). Given a plan whose steps it covers (numpy
inputs, ep.Tensors, scipy csr/csc inputs (their structure checked in O(1) where
the kernel checks the rest as it reads them, else by runtime.checks' compiled
pass, called by its address) and pydata GCXS inputs read as those, scipy coo and
pydata COO inputs of a coo tensor, Python numbers of order-0 tensors, δs and index comparisons (their sizes those of
other inputs' modes: runtime.shape_steps), windows with int or numpy integer bounds of
a numpy operand, of a scipy csr/csc one or of an ep.Tensor (not bool, and not a
second window of the same Tensor, which the Python plan binds once)), it
makes the same checks in C, calls the kernel through its address (or that of
its build without fused checks where runtime.twins allows, by the same address
compares as the Python plan's) and returns the
output, or MISS for the caller's general path. The output is a dense array, or
one the kernel grows in a csr/csc or rle layout (outputs.grown_kind): its arrays
wrapped as numpy arrays freed with the kernel's own free, the scipy array made
as outputs.compressed makes it, or an ep.Tensor by a finish made once per plan
(its index arrays read-only over the kernel's buffers, kept without a copy).

    binder.plan_for(owner, kern, function, steps, facts, planned, miss)
        -> a callable like the Python plan, or None (not covered, or no binder here)
    binder.in_order(plan) -> the same plan taking its inputs positionally, or None

The binder is used only where it can be built: CPython on x86-64 or AArch64 Linux
with Python's and numpy's headers and a C compiler (else the Python plans run, as
before), and only under `Tuning.call_binder`.
"""
from __future__ import annotations

import functools
import os
import sys

import numpy as np

from . import checks, extension, fingerprint, segment_sort
from .coo_steps import CooFacts
from .cast_steps import DenseCast
from .plan_steps import Dense, Sparse, TensorFacts
from .scalar_steps import Scalar
from .shape_steps import ShapeStep
from .window_steps import DenseWindowStep, RowsWindowStep, TensorWindowStep
from ..expr.nodes import IdentityVar
from ..expr.windows import split_bound
from ..semiring import exact_cast
from ..version import __version__

MODULE = "etchpy_binder"
MAX_ARGS = 40           # kernel parameters a plan may feed (the C call's switch width)


def available() -> bool:
    """Whether this interpreter and machine can run the binder at all."""
    return (sys.implementation.name == "cpython" and sys.platform.startswith("linux")
            and os.uname().machine in ("x86_64", "aarch64", "arm64"))


def module():
    """The binder module, built or found in the cache once per process; None where
    it cannot be (see the module docstring)."""
    return _module()


_TEMPLATES = ("binder.c.j2", "binder_inputs.c.j2", "binder_outputs.c.j2", "binder_lazy.c.j2",
              "binder_apart.c.j2", "binder_nodes.c.j2", "binder_blas.c.j2", "binder_region.c.j2",
              "binder_tape.c.j2")


def _templates_key() -> str:
    """The binder's templates as its key holds them: their (path, size, mtime) as the
    package fingerprint read them (any edit changes them), so a warm load reads no
    template and renders nothing (it never imports jinja2)."""
    folder = fingerprint.template_folder()
    return repr(fingerprint.stats_of([folder / name for name in _TEMPLATES]))


def _source() -> str:
    from ..c.render import templates     # c/: not loaded by `import etchpy`
    return templates().get_template("binder.c.j2").render(
        version=__version__, module=MODULE, max_args=MAX_ARGS)


def _build_or_load():
    """The binder from the cache, or built into it (runtime.extension)."""
    return extension.built(MODULE, [_templates_key(), str(MAX_ARGS)], _source)


# numpy type numbers the binder's cast copy reads from and writes (binder_inputs.c.j2;
# a complex one from a complex source only into a complex carrier: the safe casts; a
# boolean into a number, its nonzero bytes 1 as numpy reads them)
_CAST_FROM = frozenset(np.dtype(t).num for t in (
    np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
    np.longlong, np.ulonglong, np.float32, np.float64, np.complex64, np.complex128))
_CAST_TO = frozenset(np.dtype(t).num for t in (np.float64, np.float32, np.int64, np.longlong,
                                               np.complex128, np.complex64))


def _in_c(given, carrier) -> bool:
    """Whether the binder's C copy makes the cast of numpy dtype `given` into `carrier`
    (of the types it reads and writes): one that cannot round (semiring.exact_cast) or
    none (a layout's copy), or a 64-bit integer into float64, each value tested to come
    back as numpy's round trip in `Semiring.cast` tests it (else a miss)."""
    return given.num in _CAST_FROM and carrier.num in _CAST_TO and (
        given == carrier or exact_cast(given, carrier)
        or (given.kind in "iu" and given.itemsize == 8 and carrier == np.float64))


def _input(step, ffi, source=-1, casts=None, at=None):
    """The binder's description of one plan step (kind, name, type, value and index
    type numbers (a DenseCast's: the carrier's, the given one's), ndim, NaN refused,
    csr (a DenseCast's: the most bytes of its kept scratch), stored entries' class, dim
    slots, array positions, a Tensor's fill, format (a numpy input's: the mode order its
    buffer holds, or None for C order) and array slots; a scipy or coo input's check and
    `source`, twins.sources' step or -1; `at`: each step's number by name), or None."""
    if type(step) is Dense:
        if step.ndim > 4:
            return None
        return (0, sys.intern(step.name), None, step.dtype.num, 0, step.ndim, int(step.nan),
                0, 0, 0, tuple(step.dims), (step.at,), None, step.order, (), 0)
    if type(step) is Sparse:
        check = 0 if step.fused else _check_address(step.idx)
        if check is None or step.carrier is not None and (
                casts is None or not _in_c(step.dtype, step.carrier)):
            return None
        dims = tuple((pos, mode, lo, hi) for mode, (pos, lo, hi) in enumerate(step.dims))
        return (1, sys.intern(step.name), step.kind, (step.carrier or step.dtype).num,
                step.idx.num, 2, int(step.nan), int(step.csr), *step.n_range, dims,
                tuple(step.at), step.fill if step.pydata else None,
                step.axes if step.pydata else None, (), check, source,
                None if step.fused or step.pydata else segment_sort.ordered,
                step.dtype.num, int(casts or 0))
    if type(step) is DenseCast:         # a copy in C (`casts`: the most bytes its scratch
        if casts is None or step.ndim > 4 or not _in_c(step.given, step.dtype):  # keeps)
            return None
        return (7, sys.intern(step.name), None, step.dtype.num, step.given.num, step.ndim,
                int(step.nan), int(casts), 0, 0, tuple(step.dims), (step.at,), None,
                step.order, (), 0)
    facts = getattr(step, "binder", None)       # plan_steps.tensor_step's, coo_step's
    if (type(facts) is TensorFacts and len(facts.arrays) <= 12 and len(facts.shape) <= 4
            and facts.dtype.kind != "b"):           # bool: truth_values' check, in Python
        return (2, sys.intern(facts.name), facts.kind, facts.dtype.num,
                0 if facts.idx is None else facts.idx.num, len(facts.shape),
                int(facts.nan), 0, facts.lo_n, facts.hi_n, tuple(facts.dims), (),
                facts.fill, facts.format, tuple(facts.arrays), 0)
    if type(step) in (RowsWindowStep, DenseWindowStep, TensorWindowStep):
        return _window(step)
    if type(step) is Scalar:
        return (8, sys.intern(step.name), step.kind, np.dtype(np.float64).num, 0, 0,
                int(step.nan), 0, 0, 0, (), (step.at,), None, None, (), 0)
    if type(step) is ShapeStep:
        return _shape(step, at or {})
    if type(facts) is CooFacts:
        return (3, sys.intern(facts.name), facts.kind, facts.dtype.num, facts.idx.num, len(facts.dims),
                int(facts.nan), int(facts.pydata), facts.lo_n, facts.hi_n, facts.dims,
                facts.at, facts.fill, None, (),
                0 if facts.check is None else int(ffi.cast("uintptr_t", facts.check)), source)
    return None


def _shape(step, at):
    """A shape-made tensor's description (kind 9, runtime.shape_steps): its dim slots,
    each mode's (input number, mode) its size is read from in the array slots, and
    the csr slot set for a δ, whose two sizes must agree; None when a slot is not a
    dim or a source is not a step of the plan."""
    if (any(kind != "dim" for _, kind, _, _ in step.positions)
            or any(name not in at for name, _ in step.sources)):
        return None
    dims = tuple((pos, mode, 0, 2 ** 62) for pos, _, mode, _ in step.positions)
    return (9, sys.intern(step.tv.name), None, 0, 0, len(step.sources), 0,
            int(type(step.tv) is IdentityVar), 0, 0, dims, (), None, None,
            tuple((at[name], mode, None) for name, mode in step.sources), 0)


def _check_address(idx):
    """The address of runtime.checks' compiled pass over a compressed level of index
    dtype `idx` (a scipy input whose kernel does not check it as it reads it), or
    None without one."""
    lib = checks._library()
    if lib is None or idx not in (np.int32, np.int64):
        return None
    return int(lib.ffi.cast("uintptr_t", checks._entry(lib, idx)[0]))


def _window(step):
    """The binder's description of a window's step: a csr/csc one's (kind 4) or a
    numpy one's (kind 5): its operand's name and type, dtypes, order, the windowed
    (major) mode in the csr slot, the stored entries' class, every dim slot of the
    extended shape with its class (the window lengths') or none, the array
    positions, the spec of each mode's lo, hi and step in the fill slot
    ((parameter number or -1 for a constant, -2 for the size; value) each), the
    parameters' names in the format slot, and the rows check
    (runtime.window_rows); None for a spec the binder cannot hold."""
    if type(step) is DenseWindowStep:
        return _dense_window(step)
    if type(step) is TensorWindowStep:
        return _tensor_window(step)
    tv, n = step.tv, step.tv.order
    spec, params = _spec(tv)
    if spec is None or n != 2:
        return None
    free = (-(2 ** 62), 2 ** 62)
    dims = tuple((pos, mode, *(step.ranges[mode] if mode < n else free))
                 for pos, mode in step.dims)
    return (4, sys.intern(tv.source), step.kind[0], step.sr.dtype.num, step.idx_dtype.num,
            n, int(step.nan), step.major_mode, *step.stored, dims, step.at, spec,
            params, (), 0 if step.fused else int(step.types["ffi"].cast("uintptr_t", step.check)))


def _dense_window(step):
    """A numpy window's description (kind 5; see _window)."""
    tv, n = step.tv, step.tv.order
    spec, params = _spec(tv)
    if spec is None or n > 4 or step.sr.dtype.kind == "b":    # bool: truth_values' check
        return None
    free = (-(2 ** 62), 2 ** 62)
    dims = tuple((pos, mode, *(step.ranges[mode] if mode < n else free))
                 for pos, mode in step.dims)
    return (5, sys.intern(tv.source), None, step.sr.dtype.num, 0, n, int(step.nan), 0, 0, 0,
            dims, (step.at,), spec, params, (), 0)


def _tensor_window(step):
    """A window of an ep.Tensor's description (kind 6; see _window): the Tensor's
    as a Tensor input's (kind 2: its type, format, fill, dtypes, stored entries'
    class, array slots), the extended shape's dim slots with their classes, and
    the window's spec and parameters in two more slots. None for a bool Tensor
    (truth_values' check, in Python), a later window of a Tensor bound by the
    first's step (`lead`: the Python plan shares its arrays), or one the Tensor
    step does not bind."""
    facts = getattr(step.arrays, "binder", None)
    tv, n = step.tv, step.tv.order
    spec, params = _spec(tv)
    if (spec is None or step.lead is not None or type(facts) is not TensorFacts
            or n > 4 or len(facts.arrays) > 12 or facts.dtype.kind == "b"):
        return None
    free = (-(2 ** 62), 2 ** 62)
    dims = tuple((pos, mode, *(step.ranges[mode] if mode < n else free))
                 for pos, mode in step.dims)
    return (6, sys.intern(tv.source), facts.kind, facts.dtype.num,
            0 if facts.idx is None else facts.idx.num, n, int(facts.nan), 0, facts.lo_n,
            facts.hi_n, dims, (), facts.fill, facts.format, tuple(facts.arrays), 0, spec,
            params)


def _spec(tv):
    """(per mode (lo, hi, step) as _bound gives them, flattened; the parameters'
    names), or (None, None) for a constant the binder cannot hold."""
    params = tuple(sys.intern(p) for p in tv.params)
    spec = []
    for m in range(tv.order):
        lo, hi, st = (0, None, 1) if tv.windows[m] is None else tv.windows[m]
        spec.append((*_bound(lo, params), *(_bound(hi, params) if hi is not None
                                            else (-2, 0)), *_bound(st, params)))
    if any(abs(v) >= 2 ** 61 for s in spec for v in s[1::2]):
        return None, None
    return tuple(spec), params


def _bound(b, params) -> tuple:
    """(parameter number or -1, constant) of one window bound (expr.windows)."""
    if not isinstance(b, str):
        return -1, int(b)
    name, offset = split_bound(b)
    return params.index(name), offset


def plan_for(owner, kern, lib, function, steps, facts, planned, miss, n_keys=None,
             grown=None, trusted=None):
    """A callable plan(inputs) -> output or `miss` made by the binder for these
    steps (runtime.call_plans: (name, step) pairs, `facts` the sizes that must
    agree and the output's; `n_keys`: the names a call passes, when windows read
    their operand and bounds by name; `grown`: a grown output's kind as
    outputs.grown_kind gives it, with the index dtype, else a dense output), or
    None when the binder does not cover them. `trusted`: (the build without fused
    checks, its twin pairs and its library (twins.builds) or None, twins.sources);
    a grown output is freed by the library of the build that made it."""
    if not owner.request.tuning.call_binder or len(kern._slots) > MAX_ARGS:
        return None
    mod = module()
    if mod is None:
        return None
    trusted, sources = trusted or (None, {})
    tuning = owner.request.tuning
    casts = tuning.keep_call_bytes if tuning.binder_casts else None
    at = {name: k for k, (name, _) in enumerate(steps)}
    described = [_input(step, lib.ffi, sources.get(k, -1), casts, at)
                 for k, (_, step) in enumerate(steps)]
    if None in described or len(described) > 8:
        return None
    equal, outs = facts
    if len(outs) > 4:
        return None
    if grown is None:
        out_pos = [pos for pos, kind, _, _ in kern._out_slots if kind == "out_dense"][0]
        zeroed = tuple(pos for pos, kind, _, _ in kern._out_slots if kind == "out_zeroed")
        out = ()
    else:
        out = _grown(kern, lib, grown, len(outs))
        if out is None:
            return None
        out_pos, zeroed = 0, ()
    address = 0 if function is None else int(lib.ffi.cast("uintptr_t", function))
    capsule = mod.make_plan(address, len(kern._slots), tuple(described), tuple(equal),
                            tuple(outs), out_pos, kern.semiring.dtype.num,
                            int(kern._calloc_zero), zeroed, not outs, miss, owner, planned,
                            len(steps) if n_keys is None else n_keys, *(out or (None,)),
                            None if trusted is None else _trusted(kern, lib, trusted))
    call = functools.partial(mod.call, capsule)
    # the kernel's libraries live as long as the plan: each build's, beside its function
    call.keeps = (function, lib) + (() if trusted is None else (trusted[0], trusted[2]))
    call.windows = n_keys is not None
    return call


def _trusted(kern, lib, trusted) -> tuple:
    """make_plan's description of the trusted build (fn, pairs, its library):
    (its address or 0, the pairs, its free's address or 0, its library or None)."""
    fn, pairs, tlib = trusted
    if fn is None or tlib is None:
        return 0, pairs, 0, None
    return (int(lib.ffi.cast("uintptr_t", fn)), pairs,
            int(tlib.ffi.cast("uintptr_t", getattr(tlib.lib, f"{kern.name}_free"))), tlib)


def _grown(kern, lib, grown, order):
    """make_plan's description of a grown output (`grown`: outputs.grown_kind's and
    the index dtype; `lib` kept by each array it makes, for its free), as a
    1-tuple, or None when its slots are not those four."""
    (names, major, make, fields, finish), idx_dtype = grown
    at = {tname: pos for pos, _, tname, _ in kern._out_slots}
    if order != 2 or at.keys() != set(names) or len(at) != 4:
        return None
    free = int(lib.ffi.cast("uintptr_t", getattr(lib.lib, f"{kern.name}_free")))
    return ((*(at[n] for n in names), major, np.dtype(idx_dtype).num, free, make,
             None if make is None else make.__new__, fields, finish, lib),)


def in_order(plan):
    """`plan` (one plan_for made) as a callable taking its inputs positionally, in
    the order of the inputs' names in the call the plan was made from; None for
    a plan the binder did not make."""
    mod = _module.kept()
    if mod is None or type(plan) is not functools.partial or plan.func is not mod.call:
        return None
    if getattr(plan, "windows", False):
        return None             # a window reads its operand and bounds by name
    call = functools.partial(mod.call_in_order, *plan.args)
    call.keeps = plan.keeps
    return call


def apart_guard(plan, groups: tuple, tensor_type, probe: str, unsure, retry,
                small: tuple = ((), 0), tests_apart: bool = True):
    """`plan` (one plan_for made) behind the apart guard in C (runtime.shared's, made
    the same: binder_apart.c.j2), a callable guard(inputs) -> output or MISS; None
    for a plan the binder did not make. `groups`: tuples of input names; `probe`:
    the name of the probe each `tensor_type` input keeps in its dict; `unsure(inputs)`
    answers a call with a Tensor not probed yet, `retry(inputs)` one the plan missed;
    `small` (names, least): Tensors not apart still run the plan where the distinct
    ones among those names hold fewer than `least` values in all (0: never);
    `tests_apart` False: no Tensors count as apart (the small test alone)."""
    mod = _module.kept()
    if mod is None or type(plan) is not functools.partial or plan.func is not mod.call:
        return None
    groups = tuple(tuple(sys.intern(str(n)) for n in names) for names in groups)
    names = tuple(sys.intern(str(n)) for n in small[0])
    guard = mod.apart_make(plan.args[0], groups, tensor_type, probe, unsure, retry, names,
                           "_vals", int(small[1]), bool(tests_apart))
    call = functools.partial(mod.call_apart, guard)
    call.keeps = plan.keeps
    return call


def out_test():
    """The binder's test of a given output against a call's inputs,
    out_apart(out, inputs, tensor_type) -> 1 apart, 0 not, -1 for a kind it
    leaves to runtime.given_out.out_apart (binder_outputs.c.j2), or None where
    the binder is not loaded (it is never built for this)."""
    mod = _module.kept()
    return None if mod is None else mod.out_apart


def plan_capsule(call):
    """The plan's capsule of a call in_order made (the C lookup of a lazy replay
    runs it: etchpy.lazy.fast_replay), or None for any other callable."""
    mod = _module.kept()
    if (mod is None or type(call) is not functools.partial
            or call.func is not mod.call_in_order or len(call.args) != 1 or call.keywords):
        return None
    return call.args[0]


_module = extension.Once(lambda: _build_or_load() if available() else None)
