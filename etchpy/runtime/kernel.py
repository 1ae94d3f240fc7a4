"""Compiled kernels: a callable over numpy/scipy made from the compiler's result.

A `Kernel` turns its arguments into a `pipeline.Request`, gets the compiled
program from `pipeline.compile_request` (or from the manifest a previous
process left on disk, keyed by the request), renders its C for an index type
on first need (`pipeline.render_c`) and loads it as a shared object
(runtime.build, disk-cached). Each call validates and marshals its inputs
(runtime.calling) and picks the int32 or int64 variant from the index arrays.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import replace

import numpy as np

from .. import __version__, pipeline
from .. import tuning as tuning_
from . import build
from . import calling
from . import inputs as io_
from .identity import with_identities
from ..c.render import CSource
from ..errors import EtchpyError, InputError
from ..expr.nodes import as_expr
from ..formats import Format
from ..semiring import semirings


class Kernel:
    """A compiled expression. Call it with the inputs by tensor name."""

    def __init__(self, expr, *, semiring=None, output="dense", order=None, out_indices=None,
                 name="etchpy_kernel", threads=None, optimize=None, optimizer_options=None,
                 every_size=False, tuning=None):
        """optimize=None: the optimizer runs unless `order` fixes the loop order.
        every_size: build the code for every input size at once (export_c does).
        Otherwise a workspace output is built with its dense kind only, and the
        first call whose dimension needs the hash table builds a second kernel.
        tuning: an etchpy.tuning.Tuning, a preset name or a dict of fields (None:
        tuning.DEFAULT)."""
        self._setup(make_request(expr, semiring=semiring, output=output, order=order,
                                 out_indices=out_indices, name=name, threads=threads,
                                 optimize=optimize, optimizer_options=optimizer_options,
                                 every_size=every_size, tuning=tuning))

    @classmethod
    def of_request(cls, req: pipeline.Request) -> "Kernel":
        """The kernel of an already normalised request."""
        kern = cls.__new__(cls)
        kern._setup(req)
        return kern

    def _setup(self, req: pipeline.Request):
        self.request = req
        self._request = request_key(req)
        self._larger = None
        self._texts: dict[str, tuple[str, str]] = {}     # idx type -> (C text, cdef)
        self.compiled = self._restore()
        self.from_manifest = self.compiled is not None
        if self.compiled is None:
            self.compiled = pipeline.compile_request(req)
        self._optimized = self.compiled.optimized
        self._sources: dict[tuple, CSource] = {}
        self._libs: dict[str, build.Library] = {}
        self._ctypes: dict[str, dict] = {}
        self._signatures: dict[tuple, tuple] = {}       # see _signature
        self._setup_slots()

    def _setup_slots(self):
        self._slots = calling.slots(self.program.params)
        # the slots each input fills, and the output's, as (position, kind, name, C type)
        self._in_slots = {name: tuple((pos, kind, role, ctype)
                                      for pos, (kind, tname, role, ctype) in enumerate(self._slots)
                                      if tname == name and kind in ("dim", "in_array"))
                          for name in self.tensors}
        self._out_slots = tuple((pos, kind, tname, ctype)
                                for pos, (kind, tname, _, ctype) in enumerate(self._slots)
                                if kind not in ("dim", "in_array"))
        # a dense output from np.zeros already holds the zero when its bits are all 0
        zero = np.asarray(self.semiring.zero, dtype=self.semiring.dtype)
        self._calloc_zero = (any(k == "out_zeroed" for k, *_ in self._slots)
                             and not zero.tobytes().strip(b"\0"))
        self._dense_out = (self.out_format is None
                           and any(k == "out_dense" for k, *_ in self._slots))

    # ------------------------------------------------------- the request and its result
    semiring = property(lambda self: self.request.semiring)
    source_expr = property(lambda self: self.request.expr)
    out_indices = property(lambda self: self.request.out_indices)
    out_format = property(lambda self: self.request.out_format)
    tensors = property(lambda self: self.request.tensors)
    name = property(lambda self: self.request.name)
    threads = property(lambda self: self.request.threads)
    tuning = property(lambda self: self.request.tuning, doc="The Tuning it was built with.")
    plan = property(lambda self: self.compiled.plan)
    program = property(lambda self: self.compiled.program)
    expr = property(lambda self: self.compiled.expr, doc="The expression compiled.")
    plan_costs = property(lambda self: self.compiled.costs)

    @property
    def optimized(self):
        """The optimizer's result (None when it did not run); a kernel restored from a
        manifest runs the optimizer again on first access."""
        if self._optimized is None and self.request.optimize:
            self._optimized = pipeline.run_optimizer(self.request)
        return self._optimized

    def _restore(self) -> pipeline.Compiled | None:
        """The result a previous compile of this request left on disk, if any
        (ETCHPY_DEBUG prints every stage, so it always runs them)."""
        if self._request is None or os.environ.get("ETCHPY_DEBUG"):
            return None
        saved = build.read_manifest(self.request.name, self._request)
        if saved is None or saved.get("source_expr") != self.request.expr:
            return None
        self._texts = dict(saved["texts"])
        return pipeline.Compiled(self.request, None, saved["plan"], saved["costs"],
                                 saved["expr"], saved["program"])

    def _save_manifest(self):
        if self._request is None:
            return
        c = self.compiled
        build.write_manifest(self.name, self._request, {
            "source_expr": self.source_expr, "plan": c.plan, "program": c.program,
            "expr": c.expr, "costs": c.costs, "texts": self._texts})

    # ----------------------------------------------------------- C text
    def source(self, idx_type: str = "int64_t", include_header=False) -> CSource:
        key = (idx_type, include_header)
        src = self._sources.get(key)
        if src is None:
            src = self._sources[key] = pipeline.render_c(self.compiled, idx_type,
                                                         include_header)
        return src

    @property
    def c_source(self) -> str:
        return self.source("int64_t").c

    @property
    def signature(self) -> str:
        return self.source("int64_t").prototype.render() + ";"

    def banner(self) -> tuple[str, ...]:
        return pipeline.banner(self.compiled)

    def explain(self) -> str:
        out = ["etchpy kernel", *("  " + b for b in self.banner()), "plan:"]
        if self.optimized is not None:
            out.append("optimizer:")
            out += ["  " + ln for ln in self.optimized.explain().splitlines()]
            written, rewritten, used = self.plan_costs
            out.append(f"  plan cost as written {written:.4g}, optimized {rewritten:.4g}: "
                       f"compiling the {'optimized' if used else 'written'} expression")
        out += ["  " + ln for ln in self.plan.explain().splitlines()]
        out.append("streams (level: how skip moves):")
        out += ["  " + t for t in self.program.streams_text]
        return "\n".join(out)

    def __repr__(self):
        return f"Kernel({self.expr}, semiring={self.semiring.name})"

    # ------------------------------------------------------------- calling
    def library(self, idx_type: str) -> build.Library:
        lib = self._libs.get(idx_type)
        if lib is None:
            text = self._texts.get(idx_type)
            if text is None:
                src = self.source(idx_type)
                text = self._texts[idx_type] = (src.c, src.cdef)
                self._save_manifest()
            lib = build.load(text[0], text[1], name=self.name, openmp=self.threads > 1)
            self._libs[idx_type] = lib
            # cffi type objects, resolved once rather than parsed on every call
            self._ctypes[idx_type] = {t: lib.ffi.typeof(t) for t in (
                "idx_t[]", "val_t[]", "idx_t **", "val_t **", "int64_t *")}
        return lib

    def __call__(self, out=None, **inputs):
        """Run the kernel on `inputs` (by tensor name). A dense output may be written
        into `out`, a C-contiguous writeable array of the output's shape and the
        semiring's dtype that shares no memory with the inputs; it is overwritten
        (not accumulated into) and returned. Reusing one buffer across calls
        saves allocating, and first touching, a fresh output each time."""
        sr = self.semiring
        inputs = with_identities(self.tensors, inputs, sr)     # diagonals' δ
        if out is not None and not self._dense_out:
            raise InputError(f"out= needs a kernel with a dense output; this one returns "
                             f"{self.out_format or 'a sparse output'}")
        if inputs.keys() != self.tensors.keys():
            io_.bind_inputs(self.tensors, inputs, sr)      # raises the precise error
        bound = {name: calling.bind(inputs[name], tv, sr) for name, tv in self.tensors.items()}
        sig = tuple([(b.shape, b.idx32) for b in bound.values()])
        known = self._signatures.get(sig)
        out_shape, idx_type, idx_dtype = known or self._signature(sig, bound)
        lib = self.library(idx_type)
        types = self._ctypes[idx_type]
        args = [None] * len(self._slots)
        for name, b in bound.items():
            for pos, value in calling.input_args(b, self._in_slots[name], lib, types,
                                                 idx_dtype):
                args[pos] = value
        out_dense, grown = self._output_args(args, out, out_shape, bound, lib, types)
        rc = getattr(lib.lib, self.name)(*args)
        if rc == 3:                    # a dimension this build refuses: see every_size
            return self._for_every_size()(out=out, **inputs)
        if rc == 1:
            raise MemoryError("etchpy kernel ran out of memory building its output")
        if rc != 0:
            raise InputError(f"kernel rejected its inputs (code {rc}): sizes disagree")
        if out is not None:
            return out
        if out_dense is not None:
            if self.out_format is None:
                return out_dense[()] if out_dense.ndim == 0 else out_dense
            return io_.make_output(out_dense, out_shape, self.out_format, sr)
        return calling.sparse_output(self.program, self.out_format, sr, lib, self.name,
                                     grown, out_shape, idx_dtype)

    def _output_args(self, args, out, out_shape, bound, lib, types):
        """Fill the output's C arguments into `args`; (dense output array or None,
        the cells a sparse output's arrays and counts come back in)."""
        sr = self.semiring
        grown, out_dense = {}, None
        for pos, kind, tname, ctype in self._out_slots:
            if kind == "out_dense":
                # zeros from calloc cost nothing until touched: the kernel's fill
                # pass is skipped when they already are the semiring's zero
                if out is None:
                    fresh = np.zeros if self._calloc_zero else np.empty
                    out_dense = fresh(out_shape, dtype=sr.dtype)
                else:
                    out_dense = io_.checked_out(out, out_shape, sr, [
                        a for b in bound.values() for a in b.roles.values()])
                args[pos] = lib.ffi.from_buffer(types["val_t[]"], out_dense)
            elif kind == "out_zeroed":
                args[pos] = int(self._calloc_zero and out is None)
            else:
                args[pos] = grown[tname] = lib.ffi.new(types[ctype])
        return out_dense, grown

    def _for_every_size(self) -> "Kernel":
        """The same kernel built for every input size (made on first need)."""
        if self._larger is None:
            self._larger = Kernel.of_request(replace(self.request, every_size=True))
        return self._larger

    def _signature(self, sig, bound) -> tuple:
        """(output shape, index type name, index dtype) for inputs of these shapes
        and index dtypes, which are checked to agree; remembered by `sig`."""
        sizes = self._sizes(bound)
        # int32 when every index array already is int32 (no copies), else int64
        idx32 = {b.idx32 for b in bound.values()} - {None} == {True}
        found = (tuple(sizes[ix.name] for ix in self.out_indices),
                 "int32_t" if idx32 else "int64_t",
                 calling.INT32 if idx32 else calling.INT64)
        if len(self._signatures) >= 64:
            self._signatures.clear()
        self._signatures[sig] = found
        return found

    def _sizes(self, bound) -> dict[str, int]:
        sizes: dict[str, int] = {}
        for var, tname, mode in self.program.dims:
            n = int(bound[tname].shape[mode])
            if sizes.setdefault(var, n) != n:
                user = self.plan.origin.get(var, var)
                seen = [f"{t} (mode {m}, size {bound[t].shape[m]})"
                        for v, t, m in self.program.dims if v == var]
                raise InputError(f"index {user} has different sizes in "
                                 + " and ".join(seen))
        return sizes


def make_request(expr, *, semiring=None, output="dense", order=None, out_indices=None,
                 name="etchpy_kernel", threads=None, optimize=None, optimizer_options=None,
                 every_size=False, tuning=None) -> pipeline.Request:
    """A compile request from Kernel's arguments, checked and normalised. The
    optimizer option `rewrite_margin` sets the Tuning field of that name."""
    expr = as_expr(expr)
    sr = io_.prepare_semiring(expr, semiring)
    out_ix = io_.output_indices(expr, out_indices)
    io_.check_out_indices(expr, out_ix)
    out_format = None if output in (None, "dense") else (
        output if isinstance(output, Format) else Format.parse(output, len(out_ix)))
    n_threads = default_threads() if threads is None else int(threads)
    if n_threads < 1:
        raise EtchpyError(f"threads must be at least 1, got {threads}")
    options = dict(optimizer_options or {})
    tuned = tuning_.of(tuning)
    if "rewrite_margin" in options:
        tuned = tuned.with_(rewrite_margin=options.pop("rewrite_margin"))
    return pipeline.Request(
        expr, sr, out_ix, out_format,
        None if order is None else tuple(getattr(o, "name", o) for o in order),
        name, n_threads, (order is None) if optimize is None else bool(optimize),
        options, bool(every_size), tuned)


def request_key(req: pipeline.Request) -> str | None:
    """A stable key of one compile request (for the manifest on disk), or None when
    some part of it has no stable text (a semiring defined at run time)."""
    if getattr(semirings, req.semiring.name, None) is not req.semiring:
        return None
    fmts = sorted((n, repr(tv.format), tv.order) for n, tv in req.tensors.items())
    parts = (__version__, build.compiler_fingerprint(), req.tuning.key(), str(req.expr),
             repr(req.expr), fmts, req.semiring.name, repr(req.out_format), req.order,
             [ix.name for ix in req.out_indices], req.name, req.threads, req.optimize,
             repr(sorted(req.options.items())), req.every_size)
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def default_threads() -> int:
    """ETCHPY_NUM_THREADS, else 1 (single-threaded unless asked)."""
    value = os.environ.get("ETCHPY_NUM_THREADS", "1")
    try:
        return max(1, int(value))
    except ValueError:
        raise EtchpyError(f"ETCHPY_NUM_THREADS must be an integer, got {value!r}") from None
