"""A kernel's written form lowered on first need (a mixin of runtime.kernel.Kernel).

A kernel made by `ep.compile` whose calls may run one walk (runtime.shared:
factors over one structure fused, flat walks, runs of levels) often never runs
the expression as written: each call on inputs that share a structure runs a
kernel rewritten for them, planned, lowered and built on its own. Under
`Tuning.defer_written` such a kernel plans its written form when it is made
(so a request that cannot be planned still raises at `ep.compile`) and lowers
it only when something needs it: a call that does not take one walk, explain(),
the plan, the program or the C text, `build`, a manifest. What the lowered
program gives a call (`compiled`, the call face, the C parameters' slots, the
conversions and fused checks read by binding) is then set up once, on the
first access of any of them, exactly as an eager kernel sets it up when made;
until then none of them is an attribute. A kernel restored from a manifest, or
whose calls never take one walk, lowers when made, as before.

    kern._deferred(req)     whether kern's written form waits (its plan made now)
    kern._set_compiled(c)   what a call reads of the Compiled c, set up
"""
from __future__ import annotations

import os

from .. import pipeline
from . import calling
from .restored import CallFace
from .shared import _candidates
from ..plan.convert import bindings_of
from .last_call import inputs_of

# the attributes _set_compiled sets: asking for any of them lowers a deferred kernel
LOWERED = frozenset({"compiled", "_face", "_optimized", "_slots", "_inputs", "_in_slots",
                     "_out_slots", "_calloc_zero", "_dense_out", "_fused", "_fused_nan",
                     "_by_input"})


class Deferred:
    """The half of `ep.Kernel` that lowers its written form on first need."""

    _planned_parts = None       # pipeline.plan_request's result while lowering waits

    def _deferred(self, req: pipeline.Request) -> bool:
        """Whether this kernel (per signature, its fields up to `_users` set) lowers
        `req` on first need: under tuning.defer_written, when its calls may run one
        walk (not under ETCHPY_DEBUG, which prints every stage when the kernel is
        made). Then `req` is planned now (its errors raised) and its one-walk
        candidates kept for runtime.shared."""
        if not (req.tuning.defer_written and self._per_signature) or os.environ.get(
                "ETCHPY_DEBUG"):
            return False
        walk = self._walk = _candidates(req, set(self._users))
        self._walk_kernels = {}
        if walk is None:
            return False
        self._planned_parts = pipeline.plan_request(req)
        return True

    @property
    def lowered(self) -> bool:
        """Whether this kernel's written form has been lowered (always, unless
        Tuning.defer_written deferred it and nothing has needed it yet).

            >>> ep.compile(e).lowered
        """
        return self._planned_parts is None

    def __getattr__(self, name):
        """A LOWERED attribute of a deferred kernel: the written form lowered now
        (by each thread that asks before the first has set them all at once)."""
        parts = self.__dict__.get("_planned_parts") if name in LOWERED else None
        if parts is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self._set_compiled(pipeline.lower_planned(self.request, parts))
        self._planned_parts = None
        return getattr(self, name)

    def _set_compiled(self, compiled) -> None:
        """Set up what a call reads of `compiled` (a pipeline.Compiled, or a
        runtime.restored.Restored): its face, optimizer result and C slots, the
        LOWERED attributes, set in one dict update."""
        face = getattr(compiled, "face", None) or CallFace.of(compiled)
        slots = calling.slots(face.params)
        inputs = bindings_of(self.tensors, face.conversions, face.replaced)  # + conversions
        self.__dict__.update(
            compiled=compiled, _face=face, _optimized=compiled.optimized, _slots=slots,
            _inputs=inputs,
            # the slots each input fills, and the output's, as (position, kind, name, C type)
            _in_slots={name: tuple((pos, kind, role, ctype)
                                   for pos, (kind, tname, role, ctype) in enumerate(slots)
                                   if tname == name and kind in ("dim", "in_array"))
                       for name in inputs},
            _out_slots=tuple((pos, kind, tname, ctype)
                             for pos, (kind, tname, _, ctype) in enumerate(slots)
                             if kind not in ("dim", "in_array")),
            # a dense output from np.zeros already holds the zero when its bits are all 0
            _calloc_zero=(any(k == "out_zeroed" for k, *_ in slots)
                          and self.semiring.zero_bytes),
            _dense_out=(self.out_format is None and any(k == "out_dense" for k, *_ in slots)),
            _fused=face.fused, _fused_nan=face.fused_nan,     # the checked build's
            _by_input=inputs_of(inputs))                      # for last_call
