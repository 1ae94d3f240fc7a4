"""Compiled kernels: a callable over numpy/scipy made from the compiler's result.

A `Kernel` turns its arguments into a `pipeline.Request`, gets the compiled
program from `pipeline.compile_request` (or from the manifest a previous
process left on disk, keyed by the request), renders its C for an index type
on first need (`pipeline.render_c`) and loads it as a shared object
(runtime.build, disk-cached, keyed by the C text). Each call validates and
marshals its inputs (runtime.calling) and picks the int32 or int64 variant from
the index arrays.

Plans per input signature: the program made with the kernel uses the caller's
size hints or guesses (c_source, explain(), export_c show it). The first call of
each size class (runtime.signature) plans again from the sizes measured, in a
kernel whose manifest is keyed by the class (this kernel's shared object runs
it when the program is the same). A kernel whose calls may run one walk
(runtime.shared) lowers its written form on first need (runtime.deferred).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import pipeline
from . import blas, build
from . import calling, outputs, planned, segment_sort
from .adopt import Converts, refuse_conversion
from .given_out import checked_out, out_apart as apart
from . import inputs as io_
from . import signature as sig_
from . import kept_rows
from .last_call import LastCall
from .call_plans import MISS, CallPlans
from .window_steps import caller_names
from .shared import OneWalk, walk_inputs
from .walk_plans import WalkPlans
from .deferred import Deferred
from .identity import has_implicit, user_tensors, with_identities
from .predicates import parameter_names
from .kernel_faces import KernelFaces
from .request import make_request, request_key
from ..errors import InputError, warn_performance
from ..expr.walk import uses_negation


def _partitioned(inputs):
    """The first partitioned input (see Kernel._elsewhere), else None."""
    return next((v for v in inputs.values() if hasattr(type(v), "etchpy_distributed_call")),
                None)


class Kernel(KernelFaces, sig_.SignaturePlans, CallPlans, OneWalk, WalkPlans, Deferred):
    """A compiled expression: call it with the inputs by tensor name.

    Made by `ep.compile` (which also caches it in-process). The expression is
    compiled to an Imp program when the kernel is made, from the size hints
    (optimizer_options dims, nnz) or guesses (one whose calls may run one
    walk is planned then and lowered on first need: runtime.deferred); the
    first call of each size class of the inputs (layouts, index dtype, powers
    of two of the sizes and stored entries) plans it again from the sizes
    measured on them (the caller's hints win), and its C is built into a
    shared object on the first call for each input signature (index dtype
    and, with no semiring given, value dtype), or ahead of time by `build`.
    After a call, `plan`, `c_source` and `explain()` describe the plan of the
    last call's size class.

    Parameters: expr, an expression; semiring, a Semiring or a built-in name, or None to
    follow the inputs' dtype on each call (float32 -> real32, float64 -> real, integers
    -> integer (int64), bool -> boolean, complex128 -> complex, complex64 -> complex64);
    output, "dense" or a sparse format; order, a fixed loop order; out_indices, the
    output's index order; name, the C function's name; threads, OpenMP threads (default
    ETCHPY_NUM_THREADS or 1); optimize, whether the optimizer runs (default: unless
    `order` is given); optimizer_options, its keyword arguments; every_size, build a
    workspace output for every size at once (export_c does; else a dimension that needs
    the hash table builds a second kernel on first need); tuning, an
    etchpy.tuning.Tuning, a preset name or a dict of fields (None: tuning.DEFAULT).

    Raises: ExpressionTypeError, SemiringError, OrderError, EtchpyError for a
    request that cannot be compiled; calls raise InputError for bad inputs.

        >>> kern = ep.compile(ep.sum(j, A[i, j] * x[j]))
        >>> y = kern(A=scipy_csr, x=numpy_vector)
    """

    def __init__(self, expr, *, semiring=None, output="dense", order=None, out_indices=None,
                 name="etchpy_kernel", threads=None, optimize=None, optimizer_options=None,
                 every_size=False, tuning=None):
        self._setup(make_request(expr, semiring=semiring, output=output, order=order,
                                 out_indices=out_indices, name=name, threads=threads,
                                 optimize=optimize, optimizer_options=optimizer_options,
                                 every_size=every_size, tuning=tuning),
                    infer=semiring is None, defer=True)

    @classmethod
    def of_request(cls, req: pipeline.Request, *, key: str | None = None,
                   per_signature: bool = True, defer: bool = False) -> "Kernel":
        """The kernel of an already normalised request `req` (a pipeline.Request,
        made by runtime.request.make_request); `key`, its manifest's key (default
        request_key(req)); `per_signature`, plan again per size class of the inputs;
        `defer`, lower the written form on first need where runtime.deferred allows.

            >>> kern = ep.Kernel.of_request(make_request(expr, semiring="min_plus"))
        """
        kern = cls.__new__(cls)
        kern._setup(req, key=key, per_signature=per_signature, defer=defer)
        return kern

    def _setup(self, req: pipeline.Request, infer=False, key=None, per_signature=True,
               defer=False):
        self.request = req
        self._per_signature = per_signature
        self._planned: dict[tuple, tuple] = {}          # size class -> (shown, runner)
        self._last = None                   # the kernel planned for the last call
        self._walked = None                 # the last one-walk call's kernel (explain)
        self._runner = None                 # the kernel that ran it, if not self
        self._modes = sig_.index_modes(req.expr)
        self._infer = infer                 # the semiring follows the inputs' dtype
        self._literals = io_.literal_values(req.expr) if infer else ()
        self._negation = uses_negation(req.expr)
        self._inferred: dict[tuple, object] = {}        # input dtypes -> semiring
        self._variants: dict[str, Kernel] = {}          # semiring name -> kernel
        self._warned: set[str] = set()      # inputs already warned about (see _bind)
        self._request = request_key(req) if key is None else key
        self._larger = None
        self._texts: dict[str, tuple[str, str]] = {}     # idx type -> (C text, cdef)
        self._sources: dict[tuple, pipeline.CSource] = {}
        self._libs: dict[str, build.Library] = {}
        self._entries: dict[str, tuple] = {}     # idx type -> (library, C types, function)
        self._signatures: dict[tuple, tuple] = {}       # see _signature
        self._plans: dict[tuple, tuple] = {}            # input kind -> its call plans
        self._plan, self._plan_first = None, False   # the last one learnt or used; _use
        self._unplanned: set = set()                    # kinds no plan covers
        self._presort = frozenset()         # inputs the last refused call sorted (segment_sort)
        self._users = user_tensors(self.tensors)    # the inputs a caller passes
        self._iso = frozenset(n for n, tv in self.tensors.items() if tv.iso)
        self._identities = has_implicit(self.tensors)   # diagonals' δ, comparisons
        self._params = parameter_names(self.tensors)    # comparisons' bounds, not tensors
        self._kept = LastCall(req.semiring, req.tuning.keep_call_bytes, on=(
            req.tuning.keep_last_call and not (self._identities and not kept_rows.eligible(
                self.tensors) or self._iso)))   # a onehot, a row test read their sources
        restored = self._restore()
        self.from_manifest = restored is not None
        if restored is None and defer and self._deferred(req):    # lowered on first need
            return
        self._set_compiled(restored if restored is not None else pipeline.compile_request(req))

    @property
    def optimized(self):
        """The optimizer's result (None when it did not run); a kernel restored from a
        manifest runs the optimizer again on first access."""
        if self._optimized is None and self.request.optimize:
            self._optimized = pipeline.run_optimizer(self.request)
        return self._optimized

    # ------------------------------------------------------------- calling
    def library(self, idx_type: str) -> build.Library:
        """The loaded shared object for index type `idx_type` ("int32_t" or "int64_t";
        with calling.TRUSTED appended, the build without fused input checks),
        built (or read from the disk cache) on first need.

            >>> kern.library("int64_t").path        # the .so file
        """
        lib = self._libs.get(idx_type)
        if lib is None:
            text = self._texts.get(idx_type)
            if text is None:
                src = calling.variant_source(self, idx_type)
                text = self._texts[idx_type] = src.c, src.cdef
                self._save_manifest()
            lib = build.load(text[0], text[1], name=self.name, openmp=self.threads > 1)
            blas.bind(lib, text[0], self.request.tuning.blas_numpy_first)
            self._libs[idx_type] = lib
        return lib

    def _entry(self, idx_type: str) -> tuple:
        """(library, cffi types, the C function) of build `idx_type`, resolved once."""
        lib = self.library(idx_type)
        types = {t: lib.ffi.typeof(t) for t in (
            "idx_t[]", "val_t[]", "idx_t **", "val_t **", "int64_t *")}
        entry = self._entries[idx_type] = (lib, types, getattr(lib.lib, self.name))
        return entry

    def __call__(self, /, *args, out=None, **inputs):
        """Run the kernel on `inputs`, given by tensor name.

        Parameters: each input a numpy array, scipy.sparse array or matrix, ep.Tensor, pydata
        sparse or python-graphblas array of the declared order; `out`, for a dense output, a
        C-contiguous writeable array of its shape and dtype sharing no memory with the inputs.
        Returns: a numpy array (a numpy scalar for no free indices; `out` when given); a
        sparse output as a scipy csr/csc array when the zero is 0, else an ep.Tensor.
        Raises: TypeError for positional inputs; InputError naming the input for unknown or
        missing names, wrong orders, sizes that disagree, values the semiring cannot hold.
        Warns (PerformanceWarning, once an input) of a layout not the declared one's.

            >>> y = kern(A=scipy_csr, x=numpy_vector)
        """
        if self._presort and not args:  # sorted before: up front (segment_sort)
            inputs, self._presort = segment_sort.presorted(self._presort, inputs)
        first = self._first    # no shared walk competes, or guarded (_use, shared.apart_first)
        if first is not None and not args and (out is None or self._plan_first
                                               and apart(out, inputs)):   # out= by the plan
            if (res := first(inputs) if out is None else first(inputs, out)) is not MISS:
                return res
        if not args and (one := self._one_walk(inputs)):   # one structure (runtime.shared)
            return self._run_walk(one, out, inputs)
        made = None
        if not args and (out is not None or (res := self._by_plan(inputs, first)) is MISS):
            made = self._kept.match(inputs)                 # (call_plans, then last_call)
        elif not args:
            return res
        if made is None:
            if args or _partitioned(inputs):  # an error, or a call for etchpy.distributed
                return self._elsewhere(args, out, inputs)
            if inputs.keys() != self._users.keys():
                io_.check_names(self._users, inputs)       # raises the precise error
            sr = self._semiring_of(inputs)
            if sr is not self.semiring:
                return self._in_variant(sr, out, inputs)
            made, fresh = self._make(inputs, out), True
        else:                                 # the last call's inputs again (last_call)
            self._last, fresh = made[-1], False
        kern, lib, types, function, in_args, bound, out_shape, idx_dtype, _ = made
        args = list(in_args)
        out_dense, grown = kern._output_args(args, out, out_shape, bound, lib, types)
        if (rc := function(*args)) != 0:
            return self._after(rc, out, inputs, kern)
        if fresh:
            self._kept.keep(inputs, kern._by_input, bound, made, self._identities and
                            kept_rows.rows(self, kern, bound, self.semiring))
            self._learn(inputs, made)
        return out if out is not None else kern._result(out_dense, out_shape, self.semiring, lib,
                                                         grown, idx_dtype)

    def _make(self, inputs, out) -> tuple:
        """A call's binding: (the kernel that runs it, its library, cffi types, C function,
        C arguments (inputs' filled in), bound inputs, out shape, index dtype, plan's kernel)."""
        if self._identities:
            inputs = with_identities(self.tensors, inputs, self.semiring, self.request.expr,
                                     self.request.tuning.aligned_once)
        if out is not None and not self._dense_out:
            raise InputError(f"out= needs a kernel with a dense output; this one returns "
                             f"{self.out_format or 'a sparse output'}")
        bound, (out_shape, idx_type, idx_dtype, kern, _) = self._bind(inputs)
        idx_type = calling.variant(idx_type, bound, kern._fused,
                                   calling.twin_sources(kern, self.request.tuning))
        lib, types, function = kern._entries.get(idx_type) or kern._entry(idx_type)
        args = [None] * len(kern._slots)
        for name, b in bound.items():
            for pos, value in calling.input_args(b, kern._in_slots[name], lib, types,
                                                 idx_dtype):
                args[pos] = value
        return kern, lib, types, function, args, bound, out_shape, idx_dtype, self._last

    def _after(self, rc, out, inputs, kern):
        """A call whose kernel returned rc != 0: made again with the inputs its fused
        checks refused checked in full, or with the build for every size; else the
        error rc stands for."""
        if rc == calling.CHECK_FAILED:     # an input malformed, or unsorted: sorted (and next
            fused = caller_names(kern._fused, self.tensors)     # time up front: _presort)
            res = self(out=out, **calling.checked_inputs(self._users, inputs, self.semiring,
                                                         fused))
            self._presort = segment_sort.held_names(fused, inputs)    # (after its own call)
            return res
        if rc == 3:                    # a dimension this build refuses: see every_size
            return kern._for_every_size()(out=out, **inputs)
        if rc == 1:
            raise MemoryError("etchpy kernel ran out of memory building its output")
        raise InputError(f"kernel rejected its inputs (code {rc}): sizes disagree")

    def _elsewhere(self, args, out, inputs):
        """Positional inputs: an error; a partitioned input runs on its cluster (distributed)."""
        if args:
            raise io_.positional_error(self._users)
        return _partitioned(inputs).etchpy_distributed_call(self, out, inputs)

    def _result(self, out_dense, out_shape, sr, lib, grown, idx_dtype):
        """The dense output array (or scalar), else the sparse one read back."""
        if out_dense is not None:
            if self.out_format is None:
                return out_dense[()] if out_dense.ndim == 0 else out_dense
            return io_.make_output(out_dense, out_shape, self.out_format, sr)
        return outputs.sparse_output(self._face.output, self.out_format, sr, lib, self.name,
                                     grown, out_shape, idx_dtype)

    def build(self, /, *args, **inputs) -> "Kernel":
        """Build the shared object for the signature of `inputs` now, without running.

        A kernel is built per input signature: the index dtype of the sparse
        inputs (int32 or int64) and, when no semiring was given, the value dtype.
        `ep.compile` is lazy, so the C compiler otherwise runs on the first call
        of each signature; `build` moves that cost ahead (at start-up, say).

        Parameters: example inputs by tensor name, as for a call (only their
        types, dtypes and index dtypes matter; sizes are checked to agree).
        Inputs a call would run by one walk (runtime.shared) build that kernel.
        Returns: this kernel, so that `kern = ep.compile(e).build(A=M, x=v)` works.
        Raises: as a call does for bad inputs; CompileError if the C compiler fails.

            >>> kern = ep.compile(ep.sum(j, A[i, j] * x[j])).build(A=M, x=v)
        """
        if args:
            raise io_.positional_error(self._users, "Kernel.build")
        io_.check_names(self._users, inputs)
        sr = self._semiring_of(inputs)
        kern = self if sr is self.semiring else self._variant(sr)
        if one := kern._one_walk(inputs):        # what a call on them runs (runtime.shared)
            one[0].build(**walk_inputs(one[1], inputs, one[0]))
            return self
        bound, (_, idx_type, _, runner, _) = kern._bind(with_identities(
            self.tensors, inputs, sr, self.request.expr, self.request.tuning.aligned_once))
        runner.library(calling.variant(idx_type, bound, runner._fused,
                                       calling.twin_sources(runner, self.request.tuning)))
        return self

    def _variant(self, sr) -> "Kernel":
        """This kernel over semiring `sr` (made on first need)."""
        kern = self._variants.get(sr.name)
        if kern is None:
            io_.prepare_semiring(self.request.expr, sr)     # its maps and comparisons
            kern = Kernel.of_request(replace(self.request, semiring=sr), defer=True)
            kern._warned = self._warned
            self._variants[sr.name] = kern
        return kern

    def _bind(self, inputs):
        """(the bound inputs by name, (output shape, index type, index dtype, the
        kernel that runs them, the kernel planned for them or None)). The signature read
        per call is O(1) an input: shape, index dtype, log2 of its entries, layout."""
        last = self._runner      # the last call's runner: its binding is reused when
        if last is not None:     # these inputs' class under it is known, and it reads
            try:                 # them as they are (else they go to this kernel's binding)
                bound = self._bind_for(last, inputs, refuse_conversion)
            except Converts:
                bound = None
            found = bound and self._signatures.get(
                (last, sig_.call_class(last._inputs, bound, inputs)))
            if found is not None:
                self._last = found[4]
                return bound, found
        notes = []                  # conversions: warned of unless the runner reads as given
        bound = self._bind_for(self, inputs, lambda *note: notes.append(note))
        sig = sig_.call_class(self._inputs, bound, inputs)
        found = self._signatures.get(sig) or self._signature(sig, bound, self._as_declared(
            bound, inputs), inputs)
        self._last, runner = found[4], found[3]
        for name, note in notes:    # not when it declares the input's layout (runtime.adopt)
            if runner is self or sig_.layout(inputs.get(name)) != getattr(
                    getattr(runner.tensors.get(name), "format", None), "name", None):
                self._warn_conversion(name, note)
        if runner is not self and (runner._inputs != self._inputs
                                   or runner._fused != self._fused):
            bound = self._bind_for(runner, inputs)
            if all(not conv or sig_.reordered(tv) for _, tv, conv in runner._inputs.values()):
                self._runner = runner        # its binding: the inputs' own, or reordered
                self._signatures[(runner, sig_.call_class(runner._inputs, bound, inputs))] = found
        return bound, found

    def _bind_for(self, kern, inputs, warn=None) -> dict:
        """The inputs bound as kernel `kern` reads them: its planned conversions, and
        fused (left to the kernel's own checks) where `kern` checks them itself;
        `warn(name, note)` told of each conversion (default: _warn_conversion)."""
        tuned, warn = self.request.tuning, warn or self._warn_conversion
        sr, seen = self.semiring, {} if tuned.check_twins_once else None
        bound = {name: planned.bind(inputs[src], tv, sr) if conv else calling.bind(
                     inputs[src], tv, sr, warn, name in kern._fused,
                     name in kern._fused_nan, seen, tuned.scipy_transpose)
                 for name, (src, tv, conv) in kern._inputs.items()}
        if self._iso:                 # ep.tensor(..., iso=True): only the semiring's one
            for name, (src, _, _) in kern._inputs.items():
                if src in self._iso:
                    roles = bound[name].roles
                    io_.check_iso(inputs[src], roles["vals"], src, sr,
                                  next((a for r, a in roles.items() if r.startswith("hsrt")), None))
        return bound

    def _warn_conversion(self, name, note):
        if name not in self._warned:
            self._warned.add(name)
            warn_performance(note)

    def _output_args(self, args, out, out_shape, bound, lib, types):
        """Fill the output's C arguments into `args`; (dense output array or None,
        the cells a sparse output's arrays and counts come back in)."""
        sr = self.semiring
        grown, out_dense = {}, None
        for pos, kind, tname, ctype in self._out_slots:
            if kind == "out_dense":
                # calloc's zeros cost nothing till touched: the kernel skips its fill
                if out is None:
                    out_dense = (np.zeros if self._calloc_zero else np.empty)(out_shape, sr.dtype)
                else:
                    out_dense = checked_out(out, out_shape, sr, [
                        a for b in bound.values() for a in b.roles.values()])
                args[pos] = lib.ffi.from_buffer(types["val_t[]"], out_dense)
            elif kind == "out_zeroed":
                args[pos] = int(self._calloc_zero and out is None)
            else:
                args[pos] = grown[tname] = lib.ffi.new(types[ctype])
        return out_dense, grown
