"""One-walk calls as call plans (a mixin of runtime.kernel.Kernel).

A call whose ep.Tensor inputs share a structure runs runtime.shared's fused
kernel on inputs derived from the call's: each input read flat as its values
array, each value predicate as its structure and columns
(runtime.identity.with_identities), the other inputs as given. Where every
derived input is one of the call's Tensors, an array over the memory of one of
their arrays, a Tensor made over such arrays alone, or an input passed through
by name, and every input but the Tensors is passed through, the derived inputs
are the same objects for as long as the Tensors are the same (their arrays
cannot be rebound, and Tensor.check_layout refuses a change of dtype, shape or
strides in place).
Then the second call on the same Tensors (runtime.shared's memo) makes a call
plan of the fused kernel over those inputs (runtime.call_plans, in C where the
binder covers them), and each later call checks the Tensors' layouts and runs
it: the one walk costs a plan's call, not a general call's binding. Anything
else (runs of levels, narrow twins, a call with a parameter: a comparison's
bound, a number of bins; a plan's miss) takes
the general path as before, as do Tensors of more than Tuning.keep_call_bytes in
all (the plan's inputs hold them, as a kept call does: runtime.last_call). Off:
Tuning.walk_plans.

    kern._walk_plan(one, inputs)  the output, or None (not planned: the general path)
    kern._small(inputs, tensors)  Tensors too small for the walk (Tuning.one_walk_from)
"""
from __future__ import annotations

import numpy as np

from .call_plans import MISS, make_plan
from .identity import with_identities
from .shared import walk_inputs
from .tensor import Tensor


class WalkPlans:
    """The half of `ep.Kernel` that runs a one walk by a call plan."""

    def _small(self, inputs: dict, tensors: tuple) -> bool:
        """Whether the distinct Tensors of `tensors` store fewer entries in all than
        Tuning.one_walk_from, for a kernel whose call plans run them as written (no
        comparison or identity of its own): there the one walk's call costs more
        than its walk saves, so the kernel as written runs them (a right answer
        either way: proofs_notes/shared.md)."""
        least = self.request.tuning.one_walk_from
        return least > 0 and not self._identities and sum(
            len(t._vals) for t in {id(t): t for t in map(inputs.get, tensors)}.values()) < least

    def _walk_plan(self, one: tuple, inputs: dict):
        """The output of fused kernel `one` (runtime.shared's, for the Tensors of the
        last call's memo) on `inputs` by its plan, or None where it has none (the
        first call on these Tensors, or inputs it does not cover)."""
        memo = self.__dict__.get("_walk_memo")
        if memo is None or memo[2] is not one or not self.request.tuning.walk_plans:
            return None
        held = memo[4]
        if not held:                 # the first call: the general path runs (and checks)
            held.append(False)
            return None
        if held[-1] is False:
            held[-1] = _planned(one, inputs)
        if held[-1] is None:
            return None
        plan, tensors, derived, passed = held[-1]
        for t in tensors:
            t.check_layout()
        res = plan({**derived, **{n: inputs[n] for n in passed}} if passed else derived)
        return None if res is MISS else res


def _planned(one: tuple, inputs: dict):
    """(a plan of the fused kernel, the call's Tensors, the derived inputs that stay,
    the names passed through per call), or None when some derived input is made
    per call or the kernel makes no plan for them."""
    kern, read = one
    if any(how is not None for how in read.values()):
        return None                  # runs of levels, narrow twins: made per call
    got = walk_inputs(read, inputs, kern)
    if kern._semiring_of(got) is not kern.semiring:
        return None
    derived = with_identities(kern.tensors, got, kern.semiring, kern.request.expr,
                              kern.request.tuning.aligned_once) if kern._identities else got
    tensors = tuple({id(v): v for v in inputs.values() if type(v) is Tensor}.values())
    if sum(a.nbytes for t in tensors for a in _arrays(t)) > kern.request.tuning.keep_call_bytes:
        return None                  # (held by the plan's inputs: a kept call's bound)
    own = {id(t) for t in tensors} | {id(_root(a)) for t in tensors for a in _arrays(t)}
    passed = tuple(n for n, v in derived.items() if n in inputs and v is inputs[n]
                   and type(v) is not Tensor)
    if any(type(v) is not Tensor and n not in passed for n, v in inputs.items()) or not all(
            _stays(v, own) for n, v in derived.items() if n not in passed):
        return None                  # (a parameter, a bins count, shapes what is derived)
    plan = make_plan(kern, kern._make(got, None), derived, given=True)
    if plan is None:
        return None
    return plan, tensors, {n: v for n, v in derived.items() if n not in passed}, passed


def _stays(v, own: set) -> bool:
    """Whether derived input v is one of the call's Tensors, an array over the
    memory of one of their arrays (`own`: the ids of those and of their arrays'
    bases), or a Tensor made over such arrays alone (a value predicate's
    structure over columns read flat). Such an array keeps its memory while the
    Tensor lives, and the Tensor's layout check refuses a change of its arrays."""
    if id(v) in own:
        return True
    if type(v) is Tensor:
        return all(id(_root(a)) in own for a in _arrays(v))
    return isinstance(v, np.ndarray) and id(_root(v)) in own


def _arrays(t: Tensor):
    yield t._vals
    for lv in t._levels:
        yield from lv.values()


def _root(a):
    while isinstance(a, np.ndarray) and a.base is not None:
        a = a.base
    return a
