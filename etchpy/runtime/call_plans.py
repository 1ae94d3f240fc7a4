"""Call plans: a kernel's calls on inputs of a kind it has run before, made in a
constant handful of operations (issue 39).

A call through Kernel's general path binds every input (runtime.calling.bind),
reads its size class (runtime.signature), finds the build that runs it and makes
the C arguments: about 10 µs of Python, for a scipy input or a new array every
call. None of that bookkeeping depends on the arrays' values, only on their
*kind*: the type, dtypes, layout flags, index dtype and size class of each input.
After a successful general call, `make_plan` works it out once for that kind and
returns a closure that, for a later call on inputs of the same kind, pulls the
arrays, repeats the checks the general path makes on every call, allocates the
output and calls the C function:

- a numpy input: C-contiguous, the carrier dtype, same ndim (else a miss); its
  NaN check when the semiring refuses NaN. One the general path copies (a dtype
  the carrier holds exactly, or not C-contiguous; Tuning.plan_casts): the same
  dtype and ndim as when the plan was made, copied as the general path does.
- a scipy csr/csc input of the declared layout: its index and value dtypes, 1-d
  C-contiguous arrays of matching lengths, and the same checks of its structure
  the general path makes: in O(1) (calling._bounds_in_o1) when the kernel checks
  the rest as it reads it (fused checks), else the compiled pass over its index
  arrays (checks.check_compressed). Its NaN check likewise.
- a scipy coo or pydata COO input of a coo tensor (order 2): the order check in
  C on every call (coo_inputs); a pydata GCXS as the scipy csr/csc it is, its
  compressed axes and fill checked too.
- an ep.Tensor input: its format, fill and dtypes, its layout check, NaN check.
- a scipy input its kernel checks as it reads it, over the index arrays of one
  checked in full (A @ A as Σ_k A[i,k]·B[k,j] on one matrix): the build without
  those checks, chosen per call by the arrays' addresses (runtime.twins).
- every input: its sizes in the plan's size class (each index's size and each sparse
  input's stored entries within the same power of two); a shared index's sizes equal.

A sparse output gets a plan too; the C binder (runtime.binder) makes those it covers
(dense outputs, the call's out= among them: `plan(inputs, out)`; csr/csc grown ones).
Anything else, or a nonzero return code, is a miss (MISS): the general path words errors,
converts and runs again. No input's values are kept (proofs_notes/call_plans.md).

    plan = make_plan(kern, made, inputs)      # after a general call; None if none fits
    y = plan(inputs)                          # the result, or MISS
"""
from __future__ import annotations

import functools

import numpy as np

from ..settings import LIMITS
from . import binder, given_out, inputs as io_, outputs, shared, twins
from .copy_notes import note_general, plan_notes
from .cast_steps import DenseCast, cast_lines
from .input_steps import input_step
from .plan_steps import Dense, Miss, Sparse, dense_lines, sparse_lines
from .shape_steps import ShapeStep, shape_made, shape_step
from .value_steps import SlotStep, column_bound, column_of, slots_owner, value_read
from .tensor import Tensor
from .window_steps import (DenseWindowStep, RowsWindowStep, TensorWindowStep, caller_names,
                           share_operands, window_step, windows_only)
from ..expr.windows import WindowVar

MISS = object()          # a plan's answer when these inputs are not of its kind


def plan_key(inputs: dict) -> tuple:
    """The key plans are kept under: the inputs' names and types, in call order."""
    return (*inputs, *map(type, inputs.values()))


def _shape_facts(owner, names, bound, out_shape):
    """(pairs of (k, mode, k2, mode2) whose sizes must agree, the output's sizes as
    (k, mode)), inputs numbered by their place in `names`; None when an output
    index has no input mode."""
    at = {n: k for k, n in enumerate(names)}
    first, equal = {}, []
    for ix, tname, mode in owner._modes:
        here = (at[tname], mode)
        if ix in first:
            equal.append((*first[ix], *here))
        else:
            first[ix] = here
    outs = tuple(first.get(ix.name) for ix in owner.out_indices)
    if None in outs or tuple(bound[names[k]].shape[m] for k, m in outs) != tuple(out_shape):
        return None
    return tuple(equal), outs


def _eligible(owner, kern, given=False) -> bool:
    """Whether calls of `owner` run by `kern` can have plans: a dense output or a sparse one
    the kernel grows (`_sparse_out`), no implicit tensors but windows, those made from
    shapes (shape_steps) and value predicates of one column with their slots
    (value_steps) unless `given` (passed made), no iso inputs, no conversions."""
    dense = owner._dense_out and all(
        kind in ("out_dense", "out_zeroed") for _, kind, _, _ in kern._out_slots)
    return ((dense or _sparse_out(owner, kern))
            and (given or not owner._identities or windows_only(owner.tensors, lambda tv: (
                shape_made(tv) or value_read(tv) or slots_owner(owner.tensors, tv))))
            and not owner._iso and all(src == name and not conv
                                       for name, (src, _, conv) in kern._inputs.items()))


def _sparse_out(owner, kern) -> bool:
    """Whether `kern` returns `owner`'s output in arrays it grows (a sparse format's
    arrays and counts, read back by runtime.outputs), with no dense slot."""
    return (owner.out_format is not None and not owner._dense_out
            and owner.request.tuning.sparse_plans and bool(kern._out_slots)
            and all(kind in ("out_grown", "out_count") for _, kind, _, _ in kern._out_slots))


def make_plan(owner, made: tuple, inputs: dict, given=False):
    """The plan for calls of kernel `owner` on inputs of the kind of `inputs`, which
    a general call just ran successfully as `made` (Kernel._make's tuple); None
    when some input's kind or the kernel is not one plans cover. A window's step
    (runtime.window_steps) reads its operand and parameters from the call, a δ's or
    an index comparison's (runtime.shape_steps) its shapes, a value predicate's
    (runtime.value_steps) its column's input and its bounds. `given`: `inputs` are
    those `made` bound, comparisons made (runtime.walk_plans)."""
    kern, lib, types, function, _, bound, out_shape, idx_dtype, planned = made
    if not _eligible(owner, kern, given) or caller_names(
            bound, owner.tensors, not given) != inputs.keys():
        return None
    # the caller's order (the binder's calls keep it), else the kernel's inputs (by steps)
    names = tuple(inputs) if bound.keys() == inputs.keys() else tuple(bound)
    types = {**types, "ffi": lib.ffi, "idx_dtype": idx_dtype}
    steps, reads = [], []       # reads: the caller's input each step reads (value_steps)
    for name in names:
        step, read, bound = _input(owner, kern, name, inputs, bound, given, lib, types)
        if step is None:
            return None
        steps.append(step)
        reads.append(read)
    facts = _shape_facts(owner, names, bound, out_shape)
    if facts is None:
        return None
    steps = tuple(zip(names, steps))
    share_operands(steps)
    (function, lib), trusted = twins.builds(owner, kern, function, lib, steps, bound)
    trusted = (trusted, twins.sources(steps, owner.request.tuning))
    copies = owner.__dict__.setdefault("_copies", {})      # shown by explain()
    if len(copies) >= 64:
        copies.clear()
    copies[plan_key(inputs)] = plan_notes(steps, inputs)    # the latest plan's of a key
    n_in = len(inputs)
    return (_in_c(owner, kern, lib, function, steps, facts, planned, n_in, idx_dtype, trusted,
                  tuple(reads) != names)
            or _closure(owner, kern, lib, types, function, steps, facts, planned, n_in, trusted,
                        reads))


def _input(owner, kern, name, inputs, bound, given, lib, types):
    """(the step of kernel input `name`, or None; the caller's input it reads; `bound`,
    with a value predicate's binding the plan's: its column's, as the kernel checks it)."""
    tv, sr, idx_dtype = owner.tensors.get(name), owner.semiring, types["idx_dtype"]
    slots, read = kern._in_slots[name], column_of(tv) if value_read(tv) and not given else name
    if shape_made(tv):
        return shape_step(tv, inputs, owner._modes, slots, sr, lib, types, idx_dtype), read, bound
    if isinstance(tv, WindowVar):
        return window_step(name, tv, inputs, bound[name], slots, sr, name in kern._fused, lib,
                           types, idx_dtype, owner.request.tuning.keep_call_bytes), read, bound
    if not given and slots_owner(owner.tensors, tv):
        return SlotStep(slots_owner(owner.tensors, tv), slots, sr, types), read, bound
    # the format the kernel that runs it declares (runtime.adopt)
    fmt, tuning = getattr(kern.tensors.get(name), "format", None), owner.request.tuning
    dense = fmt is not None and fmt.is_dense
    if read != name:        # as the kernel checks it: the build for that (twins.builds)
        bound = {**bound, name: column_bound(tv, fmt, inputs[read], sr, name in kern._fused,
                                             name in kern._fused_nan)}
    b = bound[name]
    return b and input_step(read, inputs[read], b, slots, sr, idx_dtype, types,
                            tuning.keep_call_bytes, tuning.plan_casts and dense,
                            fmt.mode_order if dense else None), read, bound


def _in_c(owner, kern, lib, function, steps, facts, planned, n_in, idx_dtype, trusted,
          renamed=False):
    """The C binder's plan for these steps (runtime.binder), or None where it makes
    none: a dense output, or a grown one of csr/csc or rle layout (outputs.grown_kind).
    `renamed`: a step reads an input of another name than its kernel input's."""
    by_name = renamed or any(type(step) in (RowsWindowStep, DenseWindowStep, TensorWindowStep,
                                            ShapeStep, SlotStep)
                             for _, step in steps)      # read the call's inputs by name
    if n_in != len(steps) and not by_name:
        return None
    grown = None
    if _sparse_out(owner, kern):
        kind = outputs.grown_kind(kern._face.output, owner.out_format, owner.semiring)
        if kind is None:
            return None
        grown = (kind, idx_dtype)
    return binder.plan_for(owner, kern, lib, function, steps, facts, planned, MISS,
                           n_in if by_name else None, grown, trusted)


_PLAN = """\
def plan(inputs, given=None):
    if len(inputs) != {n_in}:
        return MISS
    args = [None] * {n_args}
    try:
{pulls}
    except (Miss, ValueError, KeyError):   # an InputError too: the general path
        return MISS                          # raises it
    if {differ}:
        return MISS
{alloc}
    run = {call}
    if run(*args):              # the general path runs it again and words the error
        return MISS             # (or makes the trusted build: runtime.twins)
    owner._last = planned
    return {result}
"""


def _closure(owner, kern, lib, types, function, steps, facts, planned, n_in, trusted, reads):
    """The plan itself (see make_plan and the module docstring): a function written
    out for this kernel and kind, so that a call runs no loops of its own. Its text
    holds only integers; names and objects are in its namespace. `trusted`: (the
    trusted build and twin pairs or None, twins.sources); `reads`: the caller's
    input each step reads."""
    equal, outs = facts
    trusted, sources = trusted
    space = {"MISS": MISS, "Miss": Miss, "fresh": np.zeros if kern._calloc_zero else np.empty,
             "dtype": kern.semiring.dtype, "from_buffer": lib.ffi.from_buffer,
             "out_type": types["val_t[]"], "function": function, "trusted": None,
             "owner": owner, "planned": planned, "sr": owner.semiring, "fits": given_out.out_fits}
    pulls = []
    for k, (name, step) in enumerate(steps):
        space[f"name{k}"] = reads[k]
        if type(step) is Dense:        # written out here: no call of its own
            pulls += dense_lines(k, step, space)
        elif type(step) is DenseCast:
            pulls += cast_lines(k, step, space)
        elif type(step) is Sparse:
            j = sources.get(k)
            pulls += sparse_lines(k, step, space, None if j is None else functools.partial(
                twins.source_lines, k, j, steps[j][1]), k in sources.values())
        elif getattr(step, "whole", False):     # a window's: its operand and bounds
            space[f"step{k}"] = step
            pulls.append(f"        s{k} = step{k}(inputs, args)")
        else:
            space[f"step{k}"] = step
            pulls.append(f"        s{k} = step{k}(inputs[name{k}], args)")
            if k in sources:                 # a coo step after one over its arrays
                step.source[0] = steps[sources[k]][1].binder
    shape = "".join(f"s{k}[{m}], " for k, m in outs)
    grown = _sparse_out(owner, kern) and (lib, trusted and trusted[2])
    alloc, result = (_grown(owner, kern, grown, types, space, shape) if grown
                     else _dense(kern, shape, "out" if outs else "out[()]"))
    text = _PLAN.format(
        n_in=n_in, n_args=len(kern._slots), pulls="\n".join(pulls) or "        pass",
        differ=" or ".join(f"s{k}[{m}] != s{k2}[{m2}]" for k, m, k2, m2 in equal) or "False",
        alloc=alloc, result=result, call=twins.call_text(trusted, steps, space))
    exec(compile(text, f"<call plan of {kern.name}>", "exec"), space)   # noqa: S102
    return space["plan"]


def _dense(kern, shape, result):
    """(the plan's lines giving `args` a dense output: the call's out= where it fits
    (inputs.out_fits), else MISS; a fresh array without one; its result)."""
    lines = [f"    out = fresh(({shape}), dtype=dtype) if given is None else given",
             f"    if given is not None and not fits(given, ({shape}), dtype):\n        return MISS",
             f"    args[{[p for p, kind, _, _ in kern._out_slots if kind == 'out_dense'][0]}]"
             " = from_buffer(out_type, out)"]
    lines += [f"    args[{pos}] = {int(kern._calloc_zero)} and given is None"
              for pos, kind, _, _ in kern._out_slots if kind == "out_zeroed"]
    return "\n".join(lines), f"out if given is not None else {result}"


def _grown(owner, kern, libs, types, space, shape):
    """(the plan's lines giving a sparse output's arrays and counts their cells in
    `args`, its result: those arrays read back as Kernel._result reads them, each
    freed by the library of the build that ran: libs, the default's and the trusted's)."""
    lib, tlib = libs
    for key, of in (("read", lib), ("read_t", tlib or lib)):
        space[key] = outputs.reader(kern._face.output, owner.out_format, owner.semiring, of,
                                    kern.name, types["idx_dtype"])
    space["new"] = lib.ffi.new
    lines, cells = ["    if given is not None:\n        return MISS"], []
    for j, (pos, _, tname, ctype) in enumerate(kern._out_slots):
        space[f"ct{j}"], space[f"tn{j}"] = types[ctype], tname
        lines.append(f"    args[{pos}] = g{j} = new(ct{j})")
        cells.append(f"tn{j}: g{j}")
    grown = "{" + ", ".join(cells) + "}"
    return "\n".join(lines), f"(read_t if run is trusted else read)({grown}, ({shape}))"


class CallPlans:
    """The half of runtime.kernel.Kernel that picks a call's semiring and keeps its
    call plans (`_plans`: plan_key -> the plans of that key, the most recent first,
    at most LIMITS.call_plans_per_key of them, for at most 64 keys; `_unplanned`:
    the kinds no plan covers; `_plan`: the one tried first; `_first`: it, when a call
    tries it before anything else, else None)."""

    _first = None

    def call_with(self, inputs: dict):
        """`kernel(**inputs)` for a dict of inputs by tensor name (numpy or scipy
        arrays, ep.Tensors), without unpacking it: a call plan for inputs of this
        kind first, else the kernel's full call (which words every error). The
        same result, checks and errors as `kernel(**inputs)`; `inputs` is read, not
        kept. (A lazy program's kernel steps call it on every replay.)

            >>> y = kern.call_with({"A": scipy_csr, "x": numpy_vector})
        """
        res = self._by_plan(inputs)
        return self(**inputs) if res is MISS else res

    def _by_plan(self, inputs, tried=None):
        """The result of a call on `inputs` by `_plan`, else by another plan kept for
        their key (which becomes `_plan`: inputs of one kind in several size
        classes, called in turn, each keep a plan), else MISS. `tried`: a plan
        that has just missed these inputs, not run again."""
        plan = self._plan
        res = MISS if plan is None or plan is tried else plan(inputs)
        if res is MISS and self._plans:
            for other in self._plans.get(plan_key(inputs), ()):
                if other is not plan:
                    res = other(inputs)
                    if res is not MISS:
                        self._use(other, plan_key(inputs))
                        return res
        return res

    def _use(self, plan, key) -> None:
        """Make `plan` (kept for inputs of `key`) the one tried first; a call tries it
        before anything else (`_first`) when no call it accepts can be one a shared
        walk runs (`_plan_first`: runtime.shared takes ep.Tensor inputs only; a plan
        checks each input's exact type), else behind shared.apart_first's guard."""
        self._plan = plan
        walk = self.__dict__.get("_walk", plan)     # not worked out yet: not first
        self._plan_first = walk is None or Tensor not in key
        self._first = plan if self._plan_first else shared.apart_first(self, plan, walk, MISS)

    def _learn(self, inputs, made=None, variant=None) -> None:
        """Keep a plan for calls on inputs of the kind of `inputs`: made from `made`,
        the general call that just ran them, or the one `variant` (this kernel over
        the inputs' semiring) keeps for them. The semiring a kernel infers is a
        function of the inputs' value dtypes, which every plan checks. Types and
        value dtypes no plan covers are remembered, so that their calls do not try
        again."""
        key = plan_key(inputs)
        if not self.request.tuning.call_plans:      # explain()'s copies (runtime.copy_notes)
            return note_general(self, made, inputs, key)
        kind = (key, tuple([io_.value_dtype(v) for v in inputs.values()]))
        if kind in self._unplanned:
            return
        plan = (variant._plans.get(key, (None,))[0] if variant is not None
                else make_plan(self, made, inputs))
        if len(self._plans) >= 64 or len(self._unplanned) >= 64:
            self._plans.clear()
            self._unplanned.clear()
        if plan is None:
            if key not in self._plans:      # else another kind of these types has one
                self._unplanned.add(kind)
                note_general(self, made, inputs, key)       # every call's copies
        else:
            kept = self._plans.get(key, ())[: LIMITS.call_plans_per_key - 1]
            self._plans[key] = (plan, *kept)
            self._use(plan, key)

    def _in_variant(self, sr, out, inputs):
        """A call run by this kernel over semiring `sr` (`_variant`), whose plan for
        these inputs' kind this kernel keeps too."""
        kern = self._variant(sr)
        res = kern(out=out, **inputs)
        if out is None:
            self._learn(inputs, variant=kern)
        return res

    def _semiring_of(self, inputs):
        """The semiring of a call: the kernel's own, or the one the inputs' dtypes
        call for when no semiring was given (inputs.infer_semiring)."""
        if not self._infer:
            return self.semiring
        dtypes = tuple([io_.value_dtype(v) for n, v in inputs.items()
                        if n not in self._params])
        sr = self._inferred.get(dtypes)
        if sr is None:
            if len(self._inferred) >= 64:
                self._inferred.clear()
            sr = self._inferred[dtypes] = io_.infer_semiring(
                dtypes, self._literals, self._negation,
                names=[n for n in inputs if n not in self._params])
        return sr
