"""Inputs over one structure, walked once: a kernel's calls on value columns of one
table (a mixin of runtime.kernel.Kernel).

When a product's factors are inputs over the same index arrays (the same
objects: the columns of one ep.relation(..., values=[...]) or ep.table), a
kernel compiled from `expr.shared.fused` walks that structure once and reads
every column at the same position, where the kernel as written merges their
identical segments level by level (proofs_notes/shared.md). Which inputs share
a structure is a fact of the call, checked on every call in O(levels) by
identity of the level arrays (with format, shape, fill and stored count), as
align.same_structure does for a comparison's columns (for the last call's
Tensors again, its answer is kept: `_walk_memo`); the kernel for a given
partition of the inputs into structures is made once and kept. Inputs
that do not share (arrays equal but not the same objects, other Tensors, scipy
or numpy inputs) run the kernel as written, so a call is right either way; a
row predicate over Tensors apart is read through positions (expr.through).
With Tuning.narrow_compared, the columns a fused row predicate only compares
with bounds are read as their narrow integer twins where the Tensor has one
now (runtime.narrow.twin: part of the kernel's key, with its dtype and scale),
the loop's tests then a flat_mask over blocks of that many entries; a kernel
whose loops that pass does not block reads them wide (narrow alone is slower).

    kernel._one_walk(inputs)   the kernel that runs these inputs with shared
                               structures walked once, or None (run self)
"""
from __future__ import annotations

import weakref
from dataclasses import replace

import numpy as np

from ..errors import EtchpyError
from ..expr import collapse, shared, sink, through
from ..formats import positions
from ..expr.walk import accesses
from . import binder, inputs as io_, keyed, narrow
from .tensor import Tensor

_UNSET = object()


def _structure(t) -> tuple | None:
    """What makes two Tensors store the same entries at the same positions: the
    identities of their level arrays, with their format, shape, fill and number of
    stored values; None for an input that is not an ep.Tensor. (Its own fields,
    not `levels` and `vals`: identities need no layout check, the call makes it.)"""
    if type(t) is not Tensor:
        return None
    return (t.format, t.shape, t.fill, len(t._vals),
            tuple(id(a) for lv in t._levels for a in lv.values()))


def classes(groups: tuple, inputs: dict) -> tuple:
    """((input name, the first name over its structure), ...), sorted, for every
    ep.Tensor input named in `groups`: the partition a fused kernel is made for
    (expr.shared.fused joins only the factors of one product over one structure)."""
    first: dict = {}
    out = {}
    for names in groups:
        for n in names:
            key = _structure(inputs.get(n))
            if key is not None:
                out[n] = first.setdefault(key, n)
    return tuple(sorted(out.items()))


class OneWalk:
    """The half of `ep.Kernel` that runs inputs over one structure by one walk."""

    def _one_walk(self, inputs: dict):
        """(the kernel for `inputs` with each product's factors over one structure
        fused, each Σ over all of one access's indices a flat walk and each run of
        summed levels read by one access alone one level (expr.shared,
        expr.collapse), made once per partition; how it reads each input), or
        None when none of these applies to this call."""
        walk = self.__dict__.get("_walk", _UNSET)
        if walk is _UNSET:
            walk = self._walk = _candidates(self.request, set(self._users))
            self._walk_kernels = {}
        if walk is None or not self._per_signature or inputs.keys() != self._users.keys():
            return None    # (a kernel that runs one plan given, as a worker's shipped one,
            # runs it; the general path words a missing input)
        sig = narrow.signature(self, inputs)        # (runtime.narrow: () when off)
        memo = self.__dict__.get("_walk_memo")      # the last call's, for the same Tensors
        if memo is not None and memo[0] == tuple(inputs) and memo[3] == sig:
            for m, v in zip(memo[1], inputs.values()):
                if not (m is None or _same(m, v)):
                    break
            else:
                return memo[2]
        if walk[2] and _apart(walk[0], inputs):  # (no shared structure: as written)
            return None
        one = self._walk_for(walk, inputs, sig)
        if self.request.tuning.call_plans:
            self._walk_memo = (tuple(inputs), tuple(
                weakref.ref(v) if type(v) is Tensor else None if n in self._params else
                (type(v), io_.value_dtype(v)) for n, v in inputs.items()), one, sig, [])
        return one

    def _walk_for(self, walk, inputs: dict, sig: tuple = ()):
        """_one_walk's answer worked out: the partition of the inputs' structures
        and the kernel kept for it. It is a function of which Tensors the
        ep.Tensor inputs are (a Tensor's arrays, format, shape and fill cannot be
        rebound, and its dtypes give the semiring) and of the other inputs' types
        and value dtypes (the semiring; their values are not read), so _one_walk
        keeps it for the last call's Tensors, held weakly, and those types and
        dtypes (under `Tuning.call_plans`)."""
        groups, names, _ = walk
        tensors = tuple(n for n in names if type(inputs[n]) is Tensor)
        if not tensors or self._small(inputs, tensors):   # (numpy, scipy, partitioned
            return None                                   # inputs, small ones: as written)
        sr = self._semiring_of(inputs)
        key = (classes(groups, inputs), tuple(n for n in tensors if inputs[n].fill == sr.zero
                                              and inputs[n]._vals.ndim == 1
                                              and inputs[n].format.values_are_entries), tensors,
               sig, sr.dtype)
        kept = self._walk_kernels
        if key not in kept:
            kept[key] = self._fused_kernel(dict(key[0]), set(key[1]), set(key[2]), sig, sr)
        return kept[key]

    def _run_walk(self, one: tuple, out, inputs: dict):
        """Call the fused kernel of `one` (from _one_walk) on `inputs`; explain() then
        shows it below the kernel's own (plan, program and c_source stay the
        kernel's own: a caller binds its arguments by them, etchpy.distributed)."""
        res = self._walk_plan(one, inputs) if out is None else None   # (runtime.walk_plans)
        if res is None:
            res = run_one_walk(*one, out, inputs)
        if self._walked is None and not self.from_manifest and self.lowered:
            self._save_manifest()    # a later process restores this kernel (not lowered again;
            # one never lowered is made again unlowered, runtime.deferred)
        self._walked = one[0]._current()
        return res

    def _made(self, req):
        """A kernel of this one's class for request `req`, or None when it cannot
        be made; a narrow one's loops blocked by flat_mask (runtime.narrow)."""
        if any(getattr(a.tensor, "narrow", ()) for a in accesses(req.expr)):
            t = req.tuning
            req = replace(req, tuning=t.with_(flat_mask=t.flat_mask or t.narrow_compared))
        kern = type(self).__new__(type(self))
        try:
            kern._setup(req, infer=self._infer)
        except EtchpyError:
            return None
        return kern

    def _fused_kernel(self, classes_: dict, flats: set, tensors: set, sig=(), sr=None):
        req = self.request
        expr, order, merged, runs = _rewritten(req, classes_, flats, tensors,
                                               sr.dtype if sr is not None else None)
        read = {n: None for _, names in merged.values() for n in names}
        for names, k, j, _ in runs.values():    # right to left within one access
            read.update({n: (read.get(n, ((), None))[0] + ((k, j),), names[0])
                         for n in names})
        if expr == req.expr and order == req.order:
            return None
        wide = expr
        if sig:
            expr, narrowed = narrow.narrowed_expr(expr, {n: f for n, *f in sig}, {
                n for n, how in read.items() if how is None}, sr)
            read.update(dict.fromkeys(narrowed, NARROW))
        kern = self._made(replace(req, expr=expr, order=order))
        if kern is not None and expr is not wide and not narrow.blocked(kern.program):
            kern = self._made(replace(req, expr=wide, order=order))  # (narrow alone: slower)
            read = {n: None if how is NARROW else how for n, how in read.items()}
        if kern is None:             # e.g. a fused column the plan would have converted
            return None
        kern._warned = self._warned
        kern._walk = None            # (its walks are one already: not fused again)
        kern._declared = collapse.declared(req.expr)
        if any(how not in (None, NARROW) for how in read.values()):
            kern._kept.max_bytes = None   # its inputs made per call (_collapsed): no call
        return kern, read                 # would match, and none holds their values


def _same(seen, v) -> bool:
    """Is input v what the last call's `seen` notes (`_walk_memo`): the same
    Tensor, a parameter (None: its value is not read), or another input of the
    same type and value dtype?"""
    if seen is None:
        return True
    if type(seen) is tuple:
        return type(v) is seen[0] and (v.dtype if seen[0] is np.ndarray
                                       else io_.value_dtype(v)) == seen[1]
    return seen() is v


def _order(order, merged: dict):
    """A fixed loop order with each new index where the first it replaces
    (merged: new index -> the names it replaces) stood."""
    if order is None:
        return None
    for q, old in merged.items():
        order = tuple(q if o == old[0] else o for o in order if o not in old[1:])
    return order


def _rewritten(req, classes_: dict, flats: set, tensors: set, dtype=None):
    """(expr, order, merged, runs) of req's kernel for inputs partitioned into
    structures by `classes_`, `flats` those that may be read as their stored
    values and `tensors` the ep.Tensor inputs (the kernel's own when nothing
    applies); row predicates over Tensors apart read through positions when
    values of `dtype` can hold them (expr.through, Tuning.aligned_in_kernel)."""
    most, lowered = req.tuning.one_walk_terms, _lowered_flat(req)
    expr = through.marked(req.expr, classes_, tensors, dtype) \
        if req.tuning.aligned_in_kernel and dtype is not None else req.expr
    expr, merged = shared.flat(shared.fused(expr, classes_, most), flats, classes_,
                               flats - lowered)
    order = _order(req.order, {q: old for q, (old, _) in merged.items()})
    read = {n for _, names in merged.values() for n in names}
    if req.tuning.sink_located:
        order = sink.sunk(expr, order, req.out_indices,
                          req.out_format is None or req.out_format.is_dense)
    expr, runs = collapse.collapse(expr, tensors - read - lowered, order, classes_,
                                   req.tuning.dense_runs)
    return expr, _order(order, {q: run[3] for q, run in runs.items()}), merged, runs


def _candidates(req, names: set):
    """(the groups of expr.shared.groups, the inputs a flat walk or a run of
    levels may read, whether only inputs over one structure can change the
    kernel), or None when the expression has none of them. The last holds when
    every input over a structure of its own, each an ep.Tensor that may be read
    flat, leaves the kernel as it is: then a call whose groups share no
    structure runs the kernel as written, found without the partition."""
    expr = req.expr
    if not req.tuning.one_walk:
        return None
    most = req.tuning.one_walk_terms
    groups = shared.groups(expr, most) + tuple(    # and each comparison's columns
        names_ for a in accesses(expr) if len(names_ := collapse.inputs(a.tensor)) > 1)
    read = names - _lowered_flat(req)        # (lowering walks the others flat itself)
    one, merged = shared.flat(shared.fused(expr, dict.fromkeys(names, 0), most), names,
                              None, read)
    _, runs = collapse.collapse(one, read, _order(req.order, {
        q: old for q, (old, _) in merged.items()}), dense=req.tuning.dense_runs)
    if not (groups or merged or runs):
        return None
    alone = _rewritten(req, {n: n for n in names}, names, names, req.semiring.dtype)
    return groups, tuple(sorted(names)), alone[:2] == (expr, req.order)


def _lowered_flat(req) -> set:
    """The inputs whose declared format lowering walks flat itself under a Σ over
    all their indices (formats.positions.one_segment, Tuning.flat_walks): a
    plain access of one read as its values or as one level would make the same
    loop behind a one walk's call (a fused product's columns are still read flat:
    their values multiply in lanes)."""
    fmts = collapse.declared(req.expr) if req.tuning.flat_walks else {}
    return {n for n, fmt in fmts.items() if positions.one_segment(fmt)}


def _apart(groups: tuple, inputs: dict) -> bool:
    """No two ep.Tensor inputs of one group have their last level array in common
    (so no two are over one structure: those have all their level arrays in
    common); False when a Tensor has no level arrays (dense levels only)."""
    for names in groups:
        seen = set()
        for n in names:
            t = inputs.get(n)
            if type(t) is not Tensor:
                continue
            probe = t.__dict__.get(_PROBE, _UNSET)
            if probe is _UNSET:
                probe = _probe(t)
            if probe is _NO_ARRAY or id(probe) in seen:
                return False
            seen.add(id(probe))
    return True


_NO_ARRAY, _PROBE = False, "_etchpy_probe"  # a probe of no level array; its __dict__ key


def _probe(t: Tensor):
    """Tensor t's last level array (of its last level with one), or _NO_ARRAY; kept on
    t, whose levels and level mappings cannot change (Tensor): t's for its life."""
    probe = _NO_ARRAY
    for lv in reversed(t._levels):
        for a in lv.values():
            probe = a
        if probe is not _NO_ARRAY:
            break
    t.__dict__[_PROBE] = probe
    return probe


def apart_first(kern, plan, walk, miss):
    """A call plan's guard that lets it go first (Kernel._first) where its calls may
    be ep.Tensor inputs and a shared walk competes, when only inputs over one
    structure can change the kernel (`walk[2]`; not a walk: not worked out yet),
    under Tuning.apart_first: for inputs apart (`_apart`: _one_walk would run the
    kernel as written, which the plans call; so for Tensors too small for the walk,
    Kernel._small, in C too) the plan's answer, else that of another
    plan of their key (Kernel._by_plan, which makes it the first), else `miss` (the
    call goes on to _one_walk, then the plans); None where that does not hold. Where
    any Tensor may change the kernel (not walk[2]: a flat read), the guard of small
    Tensors alone, where the kernel has one. Made once per plan the kernel keeps; in
    C for the binder's (proofs_notes/shared.md)."""
    if type(walk) is not tuple or not kern.request.tuning.apart_first or not walk[2] and (
            kern._identities or kern.request.tuning.one_walk_from <= 0):
        return None
    made = kern.__dict__.setdefault("_apart_guards", {})
    if plan not in made:            # (those of plans the kernel no longer keeps dropped)
        kept = {p for plans in kern._plans.values() for p in plans}
        for old in [p for p in made if p not in kept]:
            del made[old]
        made[plan] = _guard(kern, plan, walk, miss)
    return made[plan]


def _guard(kern, plan, walk: tuple, miss):
    groups, names, apart_ok = walk
    def retry(inputs):              # the key's other plans, after the plan's MISS
        return kern._by_plan(inputs, plan)
    def run(inputs):                # the plan, else the key's other plans
        res = plan(inputs)
        return res if res is not miss else retry(inputs)
    def first(inputs):
        return run(inputs) if apart_ok and _apart(groups, inputs) or kern._small(
            inputs, tuple(n for n in names if type(inputs.get(n)) is Tensor)) else miss
    least = 0 if kern._identities else kern.request.tuning.one_walk_from
    made = kern.request.tuning.apart_in_c and binder.apart_guard(   # in C, for the binder's
        plan, groups, Tensor, _PROBE, first, retry, (names, least), apart_ok)  # (apart_in_c)
    if made or not apart_ok or len(groups) != 1 or len(groups[0]) != 2:
        return made or first
    a, b = groups[0]

    def first_of_two(inputs):      # a group of two: two Tensors probed before (_probe)
        p, q = getattr(inputs.get(a), _PROBE, None), getattr(inputs.get(b), _PROBE, None)
        if p is not q and p is not None and q is not None and p is not _NO_ARRAY \
                and q is not _NO_ARRAY:
            return run(inputs)
        return first(inputs)
    return first_of_two


def run_one_walk(kern, read: dict, out, inputs: dict):
    """Call the fused kernel `kern`: each input it reads flat as its values, each
    it reads with a run of levels as one as that Tensor (made once, kept)."""
    return kern(out=out, **walk_inputs(read, inputs, kern))


def walk_inputs(read: dict, inputs: dict, kern=None) -> dict:
    """The inputs of a fused kernel `kern` that reads them as `read` says
    (run_one_walk); one read by runs of levels whose format is not the one the
    kernel declares for it (a table's singleton levels where it declares
    compressed ones) converted to that format first (its runs were chosen for it)."""
    got = dict(inputs)
    declared = getattr(kern, "_declared", {})
    for n, how in read.items():
        t = inputs[n]
        t.check_layout()            # the values as a kernel reads them: not handed
        if how is None or how is NARROW:
            got[n] = t._vals if how is None else narrow.kept(t)
            continue
        like = inputs[how[1]]
        if declared.get(n, t.format) != t.format:
            t, like = t.convert(declared[n]), None
        got[n] = _collapsed(t, how[0], like if like is not None else t)
    return got


NARROW = "narrow"       # `read`'s mark of an input read as its packed narrow twin


def _collapsed(t: Tensor, runs: tuple, like: Tensor) -> Tensor:
    """Tensor t with each run (k, j) of its levels as one (expr.collapse, applied
    in turn), over t's own values; its structure kept on t, its index arrays
    those of `like` (the first input of its structure) when like's are made.
    The Tensor is made per call, so that nothing kept holds t's values
    (Tensor.unwritten_mark)."""
    memo = t.__dict__.setdefault("_etchpy_collapsed", {})
    hit = memo.get(runs)
    if hit is None:
        other = like.__dict__.get("_etchpy_collapsed", {}).get(runs)
        shape, fmt, levels = t.shape, t.format, t.levels
        for k, j in runs:
            levels, n = positions.collapsed_levels(levels, k, j, shape[k])
            shape = shape[:k] + (n,) + shape[j + 1:]
            fmt = positions.collapsed_format(fmt, k, j)
        if other is not None and _structure(like)[1:] == _structure(t)[1:]:
            levels = other[2]                     # one structure: the same arrays
        made = Tensor._of((shape, fmt, levels, t._vals, t.fill), t.name)
        memo[runs] = (shape, fmt, made.levels)    # frozen: taken as they are
        return keyed.carry(t, made, runs)
    return keyed.carry(t, Tensor._of((*hit, t._vals, t.fill), t.name), runs)
