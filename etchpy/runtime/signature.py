"""Planning per input signature: what a call's inputs say about the plan to use.

A kernel plans again for each size class of its inputs (runtime.kernel). The
class is read from facts that cost O(1) per input: its layout as given, the
index dtype, and the power of two of every index's size and of every sparse
input's stored entries (`size_class`). When a class is first seen, `measure`
reads the statistics the planner is given (exact sizes and stored entries, and
per level that has fibres (formats.level `fibres`) its non-empty fibers,
longest and mean fiber, and the dense runs of a level read as runs (bands,
blocks): one pass over each positions array), and `request_for` makes the compile request of the
class: the measured sizes become the optimizer options `dims` and `nnz`, under
any the caller gave (which win), and the statistics ride along as
`Request.measured` (pipeline.Measured), which explain() reports.

    index_modes(expr)                        (index, tensor, mode) of every access mode
    size_class(modes, bound, inputs, idx32)  the class key of one call (hashable data)
    measure(modes, bound, inputs, cls, formats)   a pipeline.Measured
    request_for(req, measured)               the Request planned for that class
    class_key(request_key, cls)              its manifest's key on disk
    SignaturePlans                           the Kernel's half that keeps them
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import replace

import numpy as np

from .. import pipeline
from . import build, calling
from ..errors import EtchpyError, InputError
from ..expr.walk import accesses
from ..expr.windows import label
from .adopt import adopted, redeclared
from .dense_orders import stored_order
from .planned import stored_formats
from .restored import DEFERRED, CallFace, Restored, materialized, same_program, stored_parts


def index_modes(expr) -> tuple:
    """(index name, tensor name, mode) for every mode of every access of `expr`."""
    seen = {}
    for acc in accesses(expr):
        for mode, ix in enumerate(acc.indices):
            seen.setdefault((ix.name, acc.tensor.name, mode), None)
    return tuple(seen)


def layout(value) -> str:
    """How an input was given: a scipy or pydata layout ("csr", "coo", ...), "dense"
    for a numpy array ("dense(1, 0)" for one whose buffer holds it in that mode
    order: runtime.dense_orders), a Tensor's format, else its type's name."""
    if type(value) is np.ndarray:
        order = stored_order(value)
        return "dense" if order is None else f"dense{order}"
    fmt = getattr(value, "format", None)
    if fmt is not None:
        return str(fmt)
    return type(value).__name__


def call_class(kinputs, bound, inputs) -> tuple:
    """A call's size class: per input its shape, index dtype, power of two of its
    stored entries and layout as given (a numpy array's: the mode order its
    buffer holds it in, dense_orders.stored_order; O(1) per input)."""
    return tuple([(b.shape, b.idx32, len(b.roles["vals"]).bit_length(),
                   getattr(v, "format", None) if type(v) is not np.ndarray
                   else None if v.flags.c_contiguous else stored_order(v))
                  for name, (src, _, _) in kinputs.items()
                  for b, v in ((bound[name], inputs[src]),)])


def reordered(tv) -> bool:
    """Whether a planned conversion `tv` (plan.convert) reads its input in a sparse
    format (another mode order: csr as csc, a permuted coo): its bound copy keeps
    the input's shape, index dtype and stored entries, so its call class under
    the converting kernel is the input's own (a dense conversion's is not).

        >>> reordered(ep.tensor("B", 2, format="csc")), reordered(ep.tensor("B", 2))
        (True, False)
    """
    return not tv.format.is_dense


def _stored(b) -> int | None:
    """Stored entries of a bound input with index arrays (None for a dense one)."""
    return None if b.idx32 is None else len(b.roles["vals"])


def _entries(b, fmt) -> int | None:
    """_stored(b), or the count its last level reports when its positions are not
    its entries (formats.level `stored`: a bytemap's positions count every cell)."""
    n = _stored(b)
    stored = getattr(fmt.levels[-1], "stored", None) if n is not None and fmt else None
    if stored is None:
        return n
    k = len(fmt.levels) - 1
    return stored({r: b.roles[f"{r}{k}"] for r in fmt.levels[-1].roles})


def size_class(modes, bound: dict, inputs: dict, idx32: bool) -> tuple:
    """The size class of one call: powers of two of every index's size and every
    sparse input's stored entries, the index dtype and the inputs' layouts."""
    dims = {}
    for ix, tname, mode in modes:
        dims.setdefault(ix, int(bound[tname].shape[mode]).bit_length())
    stored = tuple((name, n.bit_length()) for name, b in bound.items()
                   for n in [_stored(b)] if n is not None)
    layouts = tuple((name, layout(inputs[name])) for name in bound)
    return (tuple(sorted(dims.items())), stored, bool(idx32), layouts)


def _fibres(b, fmt):
    """(level, fibre lengths, runs per fibre or None) of each level of bound input
    b that measures them (formats.level `fibres`), by its format `fmt`; a level
    of one child per parent position under a unique level (a singleton under a
    key it depends on) has fibres of one entry each."""
    levels = fmt.levels if fmt is not None else ()
    for k, level in enumerate(levels):
        arrays = {r: b.roles.get(f"{r}{k}") for r in level.roles}
        if arrays and all(a is not None for a in arrays.values()):
            got = level.fibres(arrays)
            if got is None and k and level.one_per_parent and levels[k - 1].unique:
                got = np.ones(len(next(iter(arrays.values()))), dtype=np.int64), None
            if got is not None:
                yield k, *got


def measure(modes, bound: dict, inputs: dict, cls: tuple, formats: dict) -> pipeline.Measured:
    """The statistics of one call's inputs (see the module docstring); `formats`
    holds each bound input's format by name."""
    dims = {}
    for ix, tname, mode in modes:
        dims.setdefault(ix, int(bound[tname].shape[mode]))
    nnz, fibers, runs = [], [], []
    for name, b in bound.items():
        n = _entries(b, formats.get(name))
        if n is None:
            continue
        nnz.append((name, n))
        for k, counts, pieces in _fibres(b, formats.get(name)):
            if len(counts):
                nonempty = int(np.count_nonzero(counts))
                fibers.append((name, k, len(counts), nonempty,
                               int(counts.max()), float(counts.sum()) / max(1, nonempty)))
            if pieces is not None:
                runs.append((name, k, int(pieces.sum())))
    stored = tuple((name, fmt) for name in bound for fmt in stored_formats(inputs.get(name)))
    return pipeline.Measured(tuple(sorted(dims.items())), tuple(nnz), tuple(fibers),
                             tuple((name, layout(inputs[name])) for name in bound), cls,
                             tuple(runs), stored)


def _by_name(mapping) -> dict:
    return {getattr(k, "name", k): v for k, v in (mapping or {}).items()}


def request_for(req: pipeline.Request, measured: pipeline.Measured) -> pipeline.Request:
    """`req` planned for `measured`: its sizes as the options dims and nnz, below
    the caller's own; `measured` keeps only the figures that were used."""
    options = dict(req.options)
    given_dims, given_nnz = _by_name(options.get("dims")), _by_name(options.get("nnz"))
    dims = tuple((n, v) for n, v in measured.dims if n not in given_dims)
    nnz = tuple((n, v) for n, v in measured.nnz if n not in given_nnz)
    options["dims"] = {**dict(dims), **given_dims}
    options["nnz"] = {**dict(nnz), **given_nnz}
    return replace(req, options=options, measured=replace(measured, dims=dims, nnz=nnz))


class PlannedLater:
    """The kernel planned for a size class known to plan its owner's own program
    (SignaturePlans._same_classes): read from the class's manifest when something
    asks for it (explain(), the plan), else the owner itself."""

    __slots__ = ("owner", "key", "_kernel")

    def __init__(self, owner, key: str):
        self.owner, self.key, self._kernel = owner, key, None

    def resolve(self):
        if self._kernel is None:
            owner, kern = self.owner, None
            if build.read_manifest(owner.name, self.key, DEFERRED) is not None:
                kern = type(owner).of_request(owner.request, key=self.key,
                                              per_signature=False)
            self._kernel = kern if kern is not None and kern.from_manifest else owner
        return self._kernel


def class_key(request_key: str | None, cls) -> str | None:
    """The key of a size class's manifest: its kernel's request key and the class."""
    if request_key is None:
        return None
    return hashlib.sha256(repr((request_key, cls)).encode()).hexdigest()


class SignaturePlans:
    """The plans of a runtime.kernel.Kernel on disk and per size class: its
    manifest (what compiling its request made, read back by a later process)
    and the kernels planned for the size classes of its calls, with the sizes
    every call's inputs are checked to agree on (`_signature`, `_sizes`)."""

    def _restore(self) -> Restored | None:
        """The result a previous compile of this request left on disk, if any, its
        program decoded on first need (runtime.restored; ETCHPY_DEBUG prints every
        stage, so it always runs them)."""
        if self._request is None or os.environ.get("ETCHPY_DEBUG"):
            return None
        saved = build.read_manifest(self.request.name, self._request, DEFERRED)
        if (saved is None or saved.get("source_expr") != self.request.expr
                or not isinstance(saved.get("face"), CallFace)):
            return None
        self._texts = dict(saved["texts"])
        if saved.get("measured") is not None:     # the figures it was planned from
            self.request = replace(self.request, options=saved["options"],
                                   measured=saved["measured"])
        return Restored(self.request, saved, saved["face"])

    _stored = None     # the compiled parts a manifest keeps, encoded once (stored_parts)

    def _save_manifest(self):
        """Best effort: write what this kernel's request made (see _restore), and
        keep its program as that encoding from then on (`_keep_encoded`)."""
        if self._request is None:
            return
        if self._stored is None:
            self._stored, digest = stored_parts(materialized(self.compiled))
            if self._face.digest is None:
                self._face = replace(self._face, digest=digest)
        if self._stored is None:
            return
        self._keep_encoded()
        build.write_manifest(self.name, self._request, {
            "source_expr": self.source_expr, **self._stored, "texts": self._texts,
            "measured": self.request.measured, "options": self.request.options,
            "face": self._face}, DEFERRED)

    def _keep_encoded(self) -> None:
        """Once its manifest's parts are encoded (`_stored`), `compiled` as that
        encoding, decoded again on first need, as a kernel read from disk is (a
        runtime.restored.Restored): a process holding many kernels holds their
        text, not their programs' thousands of objects, which each full
        collection of the garbage collector would walk."""
        if self._stored is not None and (not isinstance(self.compiled, Restored)
                                         or self.compiled.decoded):
            self.compiled = Restored(self.compiled.request, self._stored, self._face)

    def _as_declared(self, bound, inputs) -> dict:
        """The bound inputs by the caller's names, each bound in its declared format:
        an input this kernel's plan converts is bound again as declared, so that the
        fibres measured on it are in its own storage order."""
        return {src: calling.bind(inputs[src], self.tensors[src], self.semiring) if conv
                else bound[name] for name, (src, _, conv) in self._inputs.items()}

    def _planned_for(self, bound, inputs, idx32) -> tuple:
        """(the kernel planned for the size class of these inputs, the kernel that
        runs it: this one when the programs are equal), planned on first need."""
        cls = size_class(self._modes, bound, inputs, idx32)
        hit = self._planned.get(cls)
        if hit is None:
            layouts = (adopted(self.tensors, inputs, self.request.tuning, self._modes)
                       if self.request.order is None else None)
            hit = self.planned_for_class(cls, lambda: measure(
                self._modes, bound, inputs, cls,
                {n: tv.format for n, tv in self.tensors.items()}), layouts)
        return hit

    def planned_for_class(self, cls: tuple, measured, layouts=None) -> tuple:
        """The kernel planned for a size class: (planned, runner) as _planned_for
        gives them, planned on first need and remembered.

        Parameters: cls, the class's key (hashable data); measured, a function
        returning the class's pipeline.Measured, called only when the class is
        new. etchpy.distributed plans a call over blocks with it, from the
        blocks' sizes added up.

        `layouts`: {tensor name: layout} of inputs given in another compressed
        layout, which the class's kernel declares so (runtime.adopt).

            >>> _, runner = kern.planned_for_class(("mine",), lambda: measured)
        """
        hit = self._planned.get(cls)
        if hit is not None:
            return hit
        if not self._planned and not self.from_manifest:
            self._save_manifest()       # a later process restores this kernel too
        if len(self._planned) >= 64:
            self._planned.clear()
        key = class_key(self._request, cls)
        if key is not None and key in self._same_classes():   # planned here before
            hit = self._planned[cls] = (PlannedLater(self, key), self)
            return hit
        req = request_for(self.request, measured())
        if layouts and (expr := redeclared(req.expr, layouts)) is not None:
            req = replace(req, expr=expr)
        try:
            kern = type(self).of_request(req, key=key, per_signature=False)
        except EtchpyError:     # the plan made from the hints runs these inputs too
            hit = self._planned[cls] = (None, self)
            return hit
        kern._warned = self._warned
        if not kern.from_manifest:
            kern._save_manifest()
        same = same_program(kern, self)
        if same and key is not None:
            self._same_class(key)
        hit = self._planned[cls] = (kern, self if same else kern)
        return hit

    _same = None       # the class keys whose planned program is this one's (a set)

    def _same_classes(self) -> set:
        """The keys of the size classes planned before (here or by an earlier
        process) to this kernel's own program: a call of such a class runs this
        kernel, and neither measures its inputs nor reads the class's manifest
        (none under ETCHPY_DEBUG, which shows every stage, as `_restore`)."""
        if self._same is None:
            debug = os.environ.get("ETCHPY_DEBUG")
            saved = None if debug else build.read_manifest(f"{self.name}.same", self._request)
            keys = saved.get("classes") if saved is not None else None
            self._same = (set(keys) if isinstance(keys, list)
                          and all(isinstance(k, str) for k in keys) else set())
        return self._same

    def _same_class(self, key: str) -> None:
        """Record (best effort) that size class `key` plans this kernel's program."""
        same = self._same_classes()
        if key not in same and len(same) < 256:
            same.add(key)
            build.write_manifest(f"{self.name}.same", self._request,
                                 {"classes": sorted(same)})

    def _signature(self, sig, bound, users, inputs) -> tuple:
        """(output shape, index type name, index dtype, runner, planned) for inputs
        of these shapes and index dtypes, which are checked to agree; remembered by
        `sig`. Runner and planned: see _planned_for (self and None when this kernel
        does not plan per signature)."""
        sizes = self._sizes(bound)
        # int32 when every index array already is int32 (no copies), else int64
        idx32 = {b.idx32 for b in bound.values()} - {None} == {True}
        shown, runner = (self._planned_for(users, inputs, idx32) if self._per_signature
                         else (None, self))
        found = (tuple(sizes[ix.name] for ix in self.out_indices),
                 "int32_t" if idx32 else "int64_t",
                 calling.INT32 if idx32 else calling.INT64, runner, shown)
        if len(self._signatures) >= 64:
            self._signatures.clear()
        self._signatures[sig] = found
        return found

    def _sizes(self, bound) -> dict[str, int]:
        sizes: dict[str, int] = {}
        dims = self._face.dims
        for var, tname, mode in dims:
            n = int(bound[tname].shape[mode])
            if sizes.setdefault(var, n) != n:
                user = self.compiled.program.plan.origin.get(var, var)
                seen = [f"{_label(self.tensors, t)} (mode {m}, size {bound[t].shape[m]})"
                        for v, t, m in dims if v == var]
                raise InputError(f"index {user} has different sizes in "
                                 + " and ".join(seen))
        return sizes

    def _for_every_size(self) -> "SignaturePlans":
        """The same kernel built for every input size (made on first need). A
        build for every size never asks for a larger one: asking again (return code
        3 from it) is an error naming the kernel, never a second retry."""
        if self._larger is None and not self.request.every_size:
            self._larger = type(self).of_request(
                replace(self.request, every_size=True), per_signature=False,
                key=class_key(self._request, "every_size"))
        larger = self._larger
        if self.request.every_size or larger is self or not larger.request.every_size:
            raise EtchpyError(
                f"kernel {self.name!r} asked more than once for a build for larger sizes "
                "(return code 3 from its every-size build): its shared object is not the "
                "one compiled for it; delete the kernel cache (ETCHPY_CACHE_DIR) and retry")
        return larger


def _label(tensors: dict, name: str) -> str:
    """An input as an error names it (a window by its operand: expr.windows.label)."""
    tv = tensors.get(name)
    return name if tv is None else label(tv)
