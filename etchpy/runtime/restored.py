"""A compiled kernel as a call needs it, and as a new process reads it back.

A call reads only a few facts of a kernel's compiled program: its C parameters,
which tensor mode gives each index its size, the inputs its fused checks cover,
the conversions its plan reads and the arrays a sparse result is read from
(`CallFace`). A kernel's manifest on disk (runtime.signature) stores them
beside the whole program, and a new process
that loads a known kernel decodes only them: the plan, the program and the
expression (hundreds of objects) stay parsed JSON until something asks for them
(`Restored`, delegating to the `pipeline.Compiled` it decodes on first need:
explain(), c_source, a new index type's C text). A kernel compiled in this
process keeps the same encoding once it has made it (runtime.signature,
`_keep_encoded`), so a process holding many kernels holds their text, not their
trees. Two programs are the same program when their stored encodings are equal
(`same_program`): the codec is one-to-one, so equal encodings are equal programs.

    face = CallFace.of(compiled)            # from a program compiled here
    restored = Restored(request, saved)     # from a manifest read with DEFERRED
    same_program(a, b)                      # two kernels' programs and expressions
"""
from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass

from .. import pipeline
from . import jsondata
from ..plan.convert import converted

__all__ = ["CallFace", "OutputFace", "Restored", "DEFERRED", "same_program", "materialized",
           "stored_parts"]

DEFERRED = ("plan", "program", "expr", "costs", "nesting")   # decoded on first need


@dataclass(frozen=True)
class OutputFace:
    """What reading a sparse result needs of a program's lower.program.Output (its
    fields of those names): `arrays` and `counts`, role -> C variable, and
    `records`. A class of this module, so that a manifest's face decodes before
    lower/ is imported."""

    arrays: dict
    counts: dict
    records: bool

    @classmethod
    def of(cls, out) -> "OutputFace":
        """The face of `out`, a lower.program.Output."""
        return cls(dict(out.arrays), dict(out.counts), out.records)


@dataclass(frozen=True)
class CallFace:
    """What a call reads of a compiled program: `params`, its C parameters;
    `dims`, (index variable, tensor, mode) per access mode; `fused`, the inputs
    its checked build checks as it reads them; `conversions` and `replaced`, as
    plan.convert.converted gives them; `digest`, the sha256 of the stored program
    and expression (None until stored); `fused_nan`, those of `fused` whose values
    it also checks for NaN; `output`, what reading a sparse result needs of the
    program's output (`OutputFace`)."""

    params: tuple
    dims: tuple
    fused: frozenset
    conversions: tuple
    replaced: frozenset
    digest: str | None = None
    fused_nan: frozenset = frozenset()
    output: "OutputFace | None" = None

    @classmethod
    def of(cls, compiled, digest: str | None = None) -> "CallFace":
        """The face of `compiled` (a pipeline.Compiled)."""
        checked = compiled.checked
        return cls(compiled.program.params, compiled.program.dims,
                   checked.fused if checked is not None else frozenset(),
                   *converted(compiled.plan), digest,
                   checked.fused_nan if checked is not None else frozenset(),
                   OutputFace.of(compiled.program.output))


def stored_parts(compiled) -> tuple[dict | None, str | None]:
    """(the DEFERRED parts of `compiled` as a manifest stores them, each encoded once
    (jsondata.Text), the sha256 of the stored encoding of its program and
    expression), or (None, None) when they cannot be stored. The digest is that of
    ``jsondata.dumps((program, expr))``: a tuple is a JSON array of its items."""
    try:
        parts = {name: jsondata.Text.of(getattr(compiled, name)) for name in DEFERRED}
    except (TypeError, ValueError, RecursionError):
        return None, None
    text = f"[{parts['program'].text},{parts['expr'].text}]"
    return parts, hashlib.sha256(text.encode("utf-8")).hexdigest()


class Restored:
    """A pipeline.Compiled read from a manifest, or encoded for one (a kernel
    compiled here keeps that, runtime.signature): `request`, `optimized` (None) and
    `face` at once; every other attribute of the Compiled (plan, program, expr,
    costs, nesting, checked, build) from the Compiled decoded on first need. A
    part that fails to decode is compiled again from the request. Safe from
    several threads: one decodes while the others wait for its Compiled."""

    optimized = None

    def __init__(self, request, saved: dict, face: CallFace):
        self.request, self.face = request, face
        self._saved, self._full = saved, None
        self._lock = threading.Lock()

    @property
    def decoded(self) -> bool:
        """Whether the whole Compiled has been decoded (or compiled again)."""
        return self._full is not None

    def full(self) -> pipeline.Compiled:
        """The whole Compiled (decoded once)."""
        full = self._full
        if full is not None:
            return full
        with self._lock:        # another thread may be decoding it, then clear _saved
            if self._full is None:
                from .. import lower    # its classes: jsondata decodes only imported ones
                s = self._saved
                try:
                    self._full = pipeline.Compiled(
                        self.request, None, s["plan"].value(), s["costs"].value(),
                        s["expr"].value(), s["program"].value(), tuple(s["nesting"].value()))
                except (jsondata.DataError, KeyError, AttributeError):
                    self._full = pipeline.compile_request(self.request)
                self._saved = None
            return self._full

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_saved", "_full", "_lock"):
            raise AttributeError(name)
        return getattr(self.full(), name)


def materialized(compiled) -> pipeline.Compiled:
    """`compiled` as a pipeline.Compiled (a Restored one decoded)."""
    return compiled.full() if isinstance(compiled, Restored) else compiled


def same_program(a, b) -> bool:
    """Whether kernels a and b compiled the same program and expression: by their
    stored digests when both have one, else by comparing them."""
    da, db = a._face.digest, b._face.digest
    if da is not None and db is not None:
        return da == db
    return a.compiled.program == b.compiled.program and a.compiled.expr == b.compiled.expr
