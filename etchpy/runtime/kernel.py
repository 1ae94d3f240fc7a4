"""Compiled kernels: the pipeline from expression to a callable over numpy/scipy.

    compile(e)  =  plan (index order, temporaries)
                →  streams (per step)          [ETCHPY_DEBUG=1 prints each stage]
                →  Imp program (lower)
                →  C text (c.render)
                →  shared object (build.load, disk-cached)
                →  Kernel

A Kernel validates and marshals its inputs on every call (shapes, dtypes,
structure, through the same Tensor conversions the other backends use), picks
the int32 or int64 variant of the C code from the index arrays it is given,
and returns numpy / scipy.sparse / Tensor results as GUIDE §2 describes.
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np

from .. import __version__
from . import inputs as io_
from . import build
from ..c import render as c
from .. import imp
from ..lower import core as lower
from ..plan import plan as planning
from ..errors import EtchpyError, InputError, OrderError
from ..expr.nodes import as_expr, tensors
from ..formats import Format
from .checks import check_compressed
from .tensor import Tensor


def _debug(stage: str, text):
    """Print text() to stderr under ETCHPY_DEBUG (text is only built then)."""
    if os.environ.get("ETCHPY_DEBUG"):
        print(f"---- etchpy {stage} ----\n{text()}", file=sys.stderr)


class Kernel:
    """A compiled expression. Call it with the inputs by tensor name."""

    def __init__(self, expr, *, semiring=None, output="dense", order=None, out_indices=None,
                 name="etchpy_kernel", threads=None, optimize=None, optimizer_options=None,
                 every_size=False):
        """every_size: build the code for every input size at once (export_c does).
        Otherwise a workspace output is built with its dense kind only, and the
        first call whose dimension needs the hash table builds a second kernel."""
        expr = as_expr(expr)
        self.semiring = io_.prepare_semiring(expr, semiring)
        self.source_expr = expr
        self.out_indices = io_.output_indices(expr, out_indices)
        io_.check_out_indices(expr, self.out_indices)
        self.tensors = tensors(expr)
        self.out_format = None if output in (None, "dense") else (
            output if isinstance(output, Format) else Format.parse(output, len(self.out_indices)))
        self.name = name
        self.threads = default_threads() if threads is None else int(threads)
        if self.threads < 1:
            raise EtchpyError(f"threads must be at least 1, got {threads}")
        # optimize=None: on, unless the caller fixed the loop order by hand
        self._use_optimizer = (order is None) if optimize is None else bool(optimize)
        self._order, self._options = order, dict(optimizer_options or {})
        self._optimize, self._every_size, self._larger = optimize, bool(every_size), None
        self._request = _request_key(expr, self.semiring, self.out_format, order,
                                     self.out_indices, name, self.threads, optimize,
                                     self._options, self._every_size)
        self._texts: dict[str, tuple[str, str]] = {}     # idx type -> (C text, cdef)
        # ETCHPY_DEBUG prints every stage, so it always runs them
        saved = build.read_manifest(name, self._request) \
            if self._request and not os.environ.get("ETCHPY_DEBUG") else None
        if saved is not None and saved.get("source_expr") == expr:
            self.plan, self.program = saved["plan"], saved["program"]
            self.expr, self.plan_costs = saved["expr"], saved["plan_costs"]
            self._optimized = saved["optimized"]
            self._texts = dict(saved["texts"])
            self.from_manifest = True
        else:
            self._plan_and_lower(expr)
            self.from_manifest = False
        self._sources: dict[str, c.CSource] = {}
        self._libs: dict[str, build.Library] = {}
        self._ctypes: dict[str, dict] = {}
        self._signatures: dict[tuple, tuple] = {}       # see _signature
        self._params = self.program.params
        self._slots = self._make_slots()
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
        if os.environ.get("ETCHPY_DEBUG"):
            _debug("c", lambda: self.source("int64_t").c)

    def _plan_and_lower(self, expr):
        if self._use_optimizer:
            self.plan, self._optimized, self.plan_costs = _optimized_plan(
                expr, self.out_indices, self._order, self.semiring, dict(self._options))
            _debug("optimizer", self._optimized.explain)
        else:
            self._optimized, self.plan_costs = None, None
            self.plan = planning.make_plan(expr, self.out_indices, self._order)
        self.expr = self._optimized.expr if self.plan_costs and self.plan_costs[2] else expr
        _debug("plan", self.plan.explain)
        self.program = lower.lower_plan(self.plan, self.semiring, self.tensors, self.out_format,
                                        threads=self.threads,
                                        hash_workspace=self._every_size)
        _debug("streams", lambda: "\n".join(self.program.streams_text))
        _debug("imp", lambda: imp.show(self.program.body))

    @property
    def optimized(self):
        """The optimizer's result (None when it did not run); a kernel restored from a
        manifest runs the optimizer again on first access."""
        if isinstance(self._optimized, str):      # "rerun"
            self._optimized = _optimized_plan(self.source_expr, self.out_indices,
                                              self._order, self.semiring,
                                              dict(self._options))[1]
        return self._optimized

    def _save_manifest(self):
        if self._request is None:
            return
        build.write_manifest(self.name, self._request, {
            "source_expr": self.source_expr, "plan": self.plan, "program": self.program,
            "expr": self.expr, "plan_costs": self.plan_costs,
            "optimized": None if self._optimized is None else "rerun",
            "texts": self._texts})

    # ----------------------------------------------------------- C text
    def source(self, idx_type: str = "int64_t", include_header=False) -> c.CSource:
        key = (idx_type, include_header)
        src = self._sources.get(key)
        if src is None:
            src = c.render(self.program, self.semiring, name=self.name, idx_type=idx_type,
                           banner=self.banner(), version=__version__,
                           include_header=include_header)
            self._sources[key] = src
        return src

    @property
    def c_source(self) -> str:
        return self.source("int64_t").c

    @property
    def signature(self) -> str:
        return self.source("int64_t").prototype.render() + ";"

    def banner(self) -> tuple[str, ...]:
        fm = ", ".join(f"{n}: {t.format}" for n, t in sorted(self.tensors.items()))
        lines = [f"expression: {self.expr}", f"semiring:   {self.semiring.name}",
                 f"threads:    {self.threads}",
                 f"formats:    {fm or '(none)'}",
                 f"output:     {self.program.output.mode}"
                 + (f" {self.out_format}" if self.out_format else "")
                 + f" over ({', '.join(ix.name for ix in self.out_indices)})"]
        for step in self.plan.steps:
            lines.append(f"loop order: {step.target} over ({', '.join(step.order)})")
        for var, most in self.program.refuse_above:
            ix = self.plan.origin.get(var, var)
            lines.append(f"workspace:  dense while |{ix}| <= {most}; a larger |{ix}| builds "
                         "a hash-table kernel on first need")
        return tuple(lines)

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
        if out is not None and not self._dense_out:
            raise InputError(f"out= needs a kernel with a dense output; this one returns "
                             f"{self.out_format or 'a sparse output'}")
        if inputs.keys() != self.tensors.keys():
            io_.bind_inputs(self.tensors, inputs, sr)      # raises the precise error
        bound = {name: self._bind(name, inputs[name]) for name in self.tensors}
        sig = tuple([(b.shape, b.idx32) for b in bound.values()])
        known = self._signatures.get(sig)
        out_shape, idx_type, idx_dtype = known or self._signature(sig, bound)
        lib = self.library(idx_type)
        ffi = lib.ffi
        types = self._ctypes[idx_type]
        args = [None] * len(self._slots)
        for name, b in bound.items():
            for pos, value in self._input_args(name, b, lib, idx_dtype):
                args[pos] = value
        grown, out_dense = {}, None
        for pos, kind, tname, ctype in self._out_slots:
            if kind == "out_dense":
                # zeros from calloc cost nothing until touched: the kernel's fill
                # pass is skipped when they already are the semiring's zero
                out_dense = ((np.zeros if self._calloc_zero else np.empty)(out_shape,
                                                                           dtype=sr.dtype)
                             if out is None else io_.checked_out(
                                 out, out_shape, sr,
                                 [a for b in bound.values() for a in b.roles.values()]))
                args[pos] = ffi.from_buffer(types["val_t[]"], out_dense)
            elif kind == "out_zeroed":
                args[pos] = int(self._calloc_zero and out is None)
            else:
                args[pos] = grown[tname] = ffi.new(types[ctype])
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
        return self._sparse_output(lib, grown, out_shape, idx_dtype)

    def _for_every_size(self) -> "Kernel":
        """The same kernel built for every input size (made on first need)."""
        if self._larger is None:
            self._larger = Kernel(self.source_expr, semiring=self.semiring,
                                  output=self.out_format or "dense", order=self._order,
                                  out_indices=self.out_indices, name=self.name,
                                  threads=self.threads, optimize=self._optimize,
                                  optimizer_options=self._options, every_size=True)
        return self._larger

    def _make_slots(self):
        """How each C parameter is fed: (kind, tensor or output name, role, C type)."""
        slots = []
        for p in self._params:
            elem = "idx_t" if p.type == "index" else "val_t"
            match p.kind:
                case "dim":
                    tname, mode = p.name.rsplit("_dim", 1)
                    slots.append(("dim", tname, int(mode), None))
                case "in_array":
                    tname, role = _split_array_name(p.name)
                    slots.append(("in_array", tname, role, f"{elem}[]"))
                case "out_dense":
                    slots.append(("out_dense", None, None, None))
                case "out_zeroed":
                    slots.append(("out_zeroed", None, None, None))
                case "out_grown":
                    slots.append(("out_grown", p.name, None, f"{elem} **"))
                case "out_count":
                    slots.append(("out_count", p.name, None, "int64_t *"))
        return tuple(slots)

    def _bind(self, name, value) -> "_Bound":
        """One input, validated, as the kernel's arrays; the fast paths avoid copies."""
        tv = self.tensors[name]
        if type(value) is Tensor:
            # A Tensor passed again: reuse its binding while its arrays are the same
            # objects (a Tensor's arrays are validated once, when it is built).
            memo = value.__dict__.setdefault("_etchpy_bound", {})
            hit = memo.get((id(tv), id(self.semiring)))
            if (hit is not None and hit[0] is value.levels and hit[1] is value.vals
                    and hit[2] is value.format and hit[3] == value.shape):
                return hit[4]
        fast = _fast_bind(value, tv, self.semiring)
        if fast is not None:
            return fast
        t = io_.as_tensor(value, tv, self.semiring)
        roles = {"vals": t.vals}
        for k, arrays in enumerate(t.levels):
            for key, arr in arrays.items():
                roles[f"{key}{k}"] = arr
        b = _Bound(t.shape, roles, _all_int32(roles), reused=type(value) is Tensor)
        if type(value) is Tensor:
            # the entry holds tv and the semiring, so their ids cannot be reused
            memo[(id(tv), id(self.semiring))] = (value.levels, value.vals, value.format,
                                                 value.shape, b, tv, self.semiring)
        return b

    def _input_args(self, name, b: "_Bound", lib, idx_dtype) -> tuple:
        """(position, C argument) for each of input `name`'s parameters. A reused
        binding keeps them per library, so a Tensor passed again skips the
        conversions; index arrays are copied to the library's index type when
        they differ (a Tensor's arrays are never modified once validated)."""
        if b.args is not None:
            hit = b.args.get(id(lib))
            if hit is not None:
                return hit[1]
        ffi, types = lib.ffi, self._ctypes[_IDX_TYPE[idx_dtype]]
        made = []
        for pos, kind, role, ctype in self._in_slots[name]:
            if kind == "dim":
                made.append((pos, b.shape[role]))
                continue
            arr = b.roles[role]
            if ctype == "idx_t[]" and arr.dtype != idx_dtype:
                arr = arr.astype(idx_dtype)
            if len(arr) == 0:              # from_buffer needs a real buffer
                arr = np.zeros(1, dtype=arr.dtype)
            made.append((pos, ffi.from_buffer(types[ctype], arr)))   # holds arr alive
        made = tuple(made)
        if b.args is not None:
            b.args[id(lib)] = (lib, made)   # holding lib keeps its id from being reused
        return made

    def _signature(self, sig, bound) -> tuple:
        """(output shape, index type name, index dtype) for inputs of these shapes
        and index dtypes, which are checked to agree; remembered by `sig`."""
        sizes = self._sizes(bound)
        # int32 when every index array already is int32 (no copies), else int64
        idx32 = {b.idx32 for b in bound.values()} - {None} == {True}
        found = (tuple(sizes[ix.name] for ix in self.out_indices),
                 "int32_t" if idx32 else "int64_t", _INT32 if idx32 else _INT64)
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

    def _sparse_output(self, lib, grown, shape, idx_dtype):
        """Wrap the kernel's malloc'ed output arrays as numpy arrays (no copies).

        Each array owns its C buffer through cffi's gc hook, which frees it with
        the kernel's own free once numpy lets go of it.
        """
        out = self.program.output
        ffi, sr = lib.ffi, self.semiring
        counts = {role: int(grown[var][0]) for role, var in out.counts.items()}
        free = getattr(lib.lib, f"{self.name}_free")
        owned = {role: ffi.gc(grown[var][0], free) for role, var in out.arrays.items()}

        def take(role, n, dtype):
            if n == 0:
                return np.zeros(0, dtype=dtype)
            return np.frombuffer(ffi.buffer(owned[role], n * np.dtype(dtype).itemsize),
                                 dtype=dtype)

        if out.mode == "coords":
            n = counts["count"]
            coords = np.stack([take(f"crd{m}", n, idx_dtype).astype(np.int64)
                               for m in range(len(shape))]) if shape else \
                np.zeros((0, n), dtype=np.int64)
            t = Tensor.from_coords(coords, take("vals", n, sr.dtype), shape, self.out_format,
                                   semiring=sr, name="output")
        elif self.out_format in io_.scipy_layouts():
            # csr / csc: straight into scipy (sorted and canonical by construction)
            import scipy.sparse as sp      # loaded by then; not at `import etchpy`
            n = counts["count1"]
            build = sp.csc_array if self.out_format.name == "csc" else sp.csr_array
            major = shape[self.out_format.mode_order[0]]
            return build((take("vals", n, sr.dtype), take("crd1", n, idx_dtype),
                          take("pos1", major + 1, idx_dtype)), shape=shape)
        else:
            t = self._assemble(take, counts, shape, idx_dtype)
        return t.to_scipy(keep_fill=True) if self.out_format in io_.scipy_layouts() else t

    def _assemble(self, take, counts, shape, idx_dtype):
        fmt, sr = self.out_format, self.semiring
        storage_sizes = [shape[m] for m in fmt.mode_order]
        levels, parents = [], 1
        for k, lv in enumerate(fmt.levels):
            if lv.__class__.__name__ == "Dense":
                levels.append({})
                parents *= storage_sizes[k]
            else:
                n = counts[f"count{k}"]
                levels.append({"pos": take(f"pos{k}", parents + 1, idx_dtype),
                               "crd": take(f"crd{k}", n, idx_dtype)})
                parents = n
        vals = take("vals", parents, sr.dtype)
        # canonical by construction (sorted, no duplicates); the tests check it
        return Tensor(shape, fmt, tuple(levels), vals, sr.zero, validate=False, name="output")


def _split_array_name(name: str):
    for role in ("_vals",):
        if name.endswith(role):
            return name[: -len(role)], "vals"
    tname, _, role = name.rpartition("_")
    return tname, role


def _fast_bind(value, tv, sr):
    """A matching, already-canonical input bound without any copy, else None.

    Covers C-contiguous numpy arrays of the carrier dtype for dense tensors and
    scipy csr/csc of the declared layout with matching index dtypes; anything
    else goes through Tensor conversion. NaN is still refused where the
    semiring forbids it, and the structure is checked in one compiled pass.
    """
    fmt = tv.format
    if type(value) is np.ndarray:
        if (fmt.is_dense and fmt.mode_order == tuple(range(tv.order)) and value.ndim == tv.order
                and value.dtype == sr.dtype and value.flags.c_contiguous):
            _refuse_nan(value, sr, tv.name)
            return _Bound(value.shape, {"vals": value.reshape(-1)}, None)
        return None
    layout = getattr(value, "format", None)
    if layout not in ("csr", "csc") or fmt.name != layout or not hasattr(value, "indptr"):
        return None
    indptr, indices, data = value.indptr, value.indices, value.data
    if (data.dtype != sr.dtype or indptr.dtype != indices.dtype
            or indptr.dtype not in (np.int32, np.int64) or data.ndim != 1
            or len(data) != len(indices)):
        return None
    major, minor = value.shape if layout == "csr" else value.shape[::-1]
    res = check_compressed(indptr, indices, major, minor)
    if res is None or res[0] != 0:
        return None                 # the general path words errors and canonicalises
    _refuse_nan(data, sr, tv.name)
    return _Bound(value.shape, {"pos1": indptr, "crd1": indices, "vals": data},
                  indptr.dtype == np.int32)


def _refuse_nan(arr, sr, name):
    if not sr.allows_nan and arr.dtype.kind == "f" and arr.size and np.isnan(arr).any():
        raise InputError(f"input {name} contains NaN, which semiring {sr.name} does not allow")


_INT32, _INT64 = np.dtype(np.int32), np.dtype(np.int64)
_IDX_TYPE = {_INT32: "int32_t", _INT64: "int64_t"}


class _Bound:
    """One input as a kernel reads it: its shape, its arrays by role ("vals",
    "pos1", "crd1", ...), and idx32: whether all its index arrays are int32
    (None when it has none). A binding reused across calls (a Tensor's) also
    keeps the C arguments made from it, per library (`args`)."""

    __slots__ = ("shape", "roles", "idx32", "args")

    def __init__(self, shape, roles, idx32, reused=False):
        self.shape, self.roles, self.idx32 = shape, roles, idx32
        self.args = {} if reused else None


def _all_int32(roles: dict):
    dtypes = {arr.dtype for role, arr in roles.items() if role != "vals"}
    return (dtypes == {_INT32}) if dtypes else None


_kernel_cache: dict = {}


REWRITE_MARGIN = 0.5


def _optimized_plan(expr, out_indices, order, semiring, options):
    """(plan, Optimized, (cost as written, cost optimized, optimized plan used?)).

    The optimizer's expression is planned with its factors kept apart and every
    step's loop order priced (etchpy.cost); the expression as written is planned
    fused, with priced orders too. The rewrite is compiled only when its plan costs
    at most half the written one (the model is coarse and sizes are guesses at
    compile time, so a constant-factor saving such as a factorised MTTKRP, which
    trades one multiplication per nonzero for a large dense temporary, is not
    worth the risk; asymptotic savings such as colSums·rowSums are). The option
    `rewrite_margin` changes the factor (math.inf: always compile the rewrite). The optimized
    expression must use the same tensors (the kernel's signature).
    """
    from ..plan.cost import Stats, plan_cost
    from ..optimizer.optimize import optimize as run_optimizer
    margin = options.pop("rewrite_margin", REWRITE_MARGIN)
    opt = run_optimizer(expr, semiring=semiring, **options)
    stats = Stats(options.get("dims"), options.get("nnz"))
    written = planning.make_plan(expr, out_indices, order, stats=stats)
    cost_written = plan_cost(written, stats)
    if opt.expr == expr or tensors(opt.expr) != tensors(expr):
        return written, opt, (cost_written, cost_written, False)
    try:
        rewritten = planning.make_plan(opt.expr, out_indices, order, keep_factored=True,
                                       stats=stats)
    except OrderError:          # no loop order walks the rewrite's sparse inputs
        return written, opt, (cost_written, math.inf, False)
    cost_rewritten = plan_cost(rewritten, stats)
    if cost_rewritten <= margin * cost_written:
        return rewritten, opt, (cost_written, cost_rewritten, True)
    return written, opt, (cost_written, cost_rewritten, False)


def tunables() -> tuple:
    """The module-level knobs that change the generated code. They belong to every
    kernel cache key (in process and on disk), so that setting one (as the tests
    do) never returns a kernel built under another value."""
    from ..plan import cost
    return (imp.SEEK_LINEAR, lower.INITIAL_CAPACITY,
            lower.FIRST_CAPACITY_LIMIT, lower.PREFETCH_DISTANCE, lower.PREFETCH_SPAN,
            lower.PREFETCH_MIN_BYTES, lower.RUN_AHEAD, lower.RUN_SHORT, lower.RUN_MIN_ENTRIES, lower.BLOCK_SIZES,
            lower.RUN_LONG,
            lower.HASH_WORKSPACE_DIM, lower.HASH_INITIAL, lower.UNSWITCH_LIMIT,
            c.CHUNKS_PER_THREAD,
            REWRITE_MARGIN, cost.DEFAULT_DIM, cost.SPARSE_DENSITY, cost.TEMP_WEIGHT)


def _request_key(expr, semiring, out_format, order, out_indices, name, threads, optimize,
                 options, every_size) -> str | None:
    """A stable key of one compile request (for the manifest), or None when some part
    of it has no stable text (a semiring defined at run time)."""
    from ..semiring import semirings
    if getattr(semirings, semiring.name, None) is not semiring:
        return None
    fmts = sorted((n, repr(tv.format), tv.order) for n, tv in tensors(expr).items())
    parts = (__version__, build.compiler_fingerprint(), tunables(), str(expr), repr(expr),
             fmts, semiring.name, repr(out_format),
             None if order is None else [getattr(o, "name", o) for o in order],
             [ix.name for ix in out_indices], name, threads, optimize,
             repr(sorted(options.items())), every_size)
    import hashlib
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def default_threads() -> int:
    """ETCHPY_NUM_THREADS, else 1 (single-threaded unless asked)."""
    value = os.environ.get("ETCHPY_NUM_THREADS", "1")
    try:
        return max(1, int(value))
    except ValueError:
        raise EtchpyError(f"ETCHPY_NUM_THREADS must be an integer, got {value!r}") from None


def compile(expr, *, semiring=None, output="dense", order=None, out_indices=None,
            formats=None, name="etchpy_kernel", threads=None, optimize=None,
            optimizer_options=None) -> Kernel:   # noqa: A001
    """Compile an expression (or an 'y[i] = ...' string) into a Kernel (cached in-process)."""
    if isinstance(expr, str):
        from ..expr.parse import parse
        st = parse(expr, formats)
        expr, out_indices = st.expr, st.indices
        if output == "dense" and st.output_format is not None:
            output = st.output_format
    elif formats:
        raise EtchpyError("formats= is for the string front end; declare formats with "
                          "ep.tensor(name, order, format=...)")
    key = (as_expr(expr), semiring if semiring is None else id(semiring), str(output),
           None if order is None else tuple(getattr(o, "name", o) for o in order),
           None if out_indices is None else tuple(out_indices), name,
           default_threads() if threads is None else threads, optimize,
           None if optimizer_options is None else repr(sorted(optimizer_options.items())),
           tunables())
    kern = _kernel_cache.get(key)
    if kern is None:
        kern = Kernel(expr, semiring=semiring, output=output, order=order,
                      out_indices=out_indices, name=name, threads=threads,
                      optimize=optimize, optimizer_options=optimizer_options)
        _kernel_cache[key] = kern
    return kern


def export_c(expr, name: str, directory, *, formats=None, semiring=None, output="dense",
             order=None, out_indices=None, index_type="int64_t", threads=None):
    """Write `name.c` and `name.h`: a standalone kernel needing neither Python nor etchpy.

    The header documents the ABI (every parameter, how sparse outputs are returned
    and freed, the return codes). Returns the two paths. With threads > 1
    (default: 1, or ETCHPY_NUM_THREADS) the kernel uses OpenMP when built with
    it (-fopenmp) and runs serially otherwise.
    """
    import pathlib
    if not name.isidentifier():
        raise EtchpyError(f"export name must be a C identifier, got {name!r}")
    if index_type not in ("int32_t", "int64_t"):
        raise EtchpyError("index_type is 'int32_t' or 'int64_t'")
    if isinstance(expr, str):
        from ..expr.parse import parse
        st = parse(expr, formats)
        expr, out_indices = st.expr, st.indices
        if output == "dense" and st.output_format is not None:
            output = st.output_format
    kern = Kernel(expr, semiring=semiring, output=output, order=order,
                  out_indices=out_indices, name=name, threads=threads, every_size=True)
    src = kern.source(index_type, include_header=True)
    out = pathlib.Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    c_path, h_path = out / f"{name}.c", out / f"{name}.h"
    c_path.write_text(src.c)
    h_path.write_text(src.header)
    return c_path, h_path
