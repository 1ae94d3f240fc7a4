"""What a `Kernel` says about itself: its request's fields, its C text, its
report (explain) and its repr. A mixin of runtime.kernel.Kernel, which sets
`request`, `compiled`, `optimized`, `_sources`, `_libs`, `_variants`,
`_planned` and `_last`.

The plan, the program, the C text and the report are those of the kernel
planned for the last call's size class (runtime.signature), and before any
call those made from the size hints or guesses.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import pipeline
from ..explain_text import explain as explained
from .signature import PlannedLater

if TYPE_CHECKING:
    from ..c.render import CSource


class KernelFaces:
    """The descriptive half of `ep.Kernel` (see there)."""

    request: pipeline.Request
    compiled: pipeline.Compiled

    # ------------------------------------------------------- the request and its result
    semiring = property(lambda self: self.request.semiring, doc=(
        "The Semiring (with none given: the default one; each call follows its inputs)."))
    source_expr = property(lambda self: self.request.expr, doc="The expression as given.")
    out_indices = property(lambda self: self.request.out_indices,
                           doc="The output's indices, in its axis order.")
    out_format = property(lambda self: self.request.out_format,
                          doc="The sparse output's Format, or None for a dense output.")
    tensors = property(lambda self: self.request.tensors,
                       doc="The inputs: {name: TensorVar}, as the call takes them.")
    name = property(lambda self: self.request.name, doc="The C function's name.")
    threads = property(lambda self: self.request.threads, doc="OpenMP threads it runs on.")
    tuning = property(lambda self: self.request.tuning, doc="The Tuning it was built with.")
    plan = property(lambda self: self._current().compiled.plan,
                    doc="The loop nests compiled (a Plan).")
    program = property(lambda self: self._current().compiled.program,
                       doc="The lowered Imp program (lower.Program).")
    expr = property(lambda self: self._current().compiled.expr,
                    doc="The expression compiled.")
    plan_costs = property(lambda self: self._current().compiled.costs, doc=(
        "(cost as written, cost optimized, optimized one used?) when the optimizer "
        "ran, else None: the estimates explain() shows."))

    def _current(self):
        """The kernel planned for the last call's size class, else this one."""
        last = self._last
        if isinstance(last, PlannedLater):
            last = self._last = last.resolve()
        return self if last is None else last

    # ----------------------------------------------------------- C text
    def source(self, idx_type: str = "int64_t", include_header: bool = False) -> CSource:
        """The C of this kernel (c.render.CSource: .c, .cdef, .header, .prototype) for
        index type `idx_type` ("int32_t" or "int64_t"); with `include_header`, the
        standalone header too (as export_c writes it).

            >>> print(kern.source("int32_t").c)
        """
        kern = self._current()
        key = (idx_type, include_header)
        src = kern._sources.get(key)
        if src is None:
            src = kern._sources[key] = pipeline.render_c(kern.compiled, idx_type,
                                                         include_header)
            kern._keep_encoded()
        return src

    @property
    def c_source(self) -> str:
        """The C text for int64 indices.

            >>> print(ep.compile(ep.sum(j, A[i, j] * x[j])).c_source)
        """
        return self.source("int64_t").c

    @property
    def signature(self) -> str:
        """The C function's prototype.

            >>> kern.signature
            'int etchpy_kernel(...);'
        """
        return self.source("int64_t").prototype.render() + ";"

    def banner(self) -> tuple[str, ...]:
        """The lines that head the C text and explain(): expression, semiring,
        threads, formats, output, tuning changed, loop orders.

            >>> print("\\n".join(kern.banner()))
        """
        return pipeline.banner(self._current().compiled)

    def explain(self) -> str:
        """A readable report of what was compiled: the banner (expression, semiring,
        formats, output, loop orders, tuning changed), the optimizer's rewrites, the
        estimated costs and which sizes were given, measured on the inputs or
        guessed, the plan, and its streams. After a call, of the plan made for
        that call's size class; before any, of the one made from the hints. The
        inputs a call plan copies on every call (strided, or cast to the
        carrier's dtype), with the copy's bytes; those the general path copies on
        every call no plan runs (call_plans off, or a kind of inputs no plan
        covers), likewise.

            >>> print(ep.compile(ep.sum(j, A[i, j] * x[j])).explain())
        """
        kern = self._current()
        text = explained(kern.compiled, kern.optimized)
        if kern is self and self._per_signature:
            text += ("\nsizes: planned before any input was seen; the first call of each "
                     "size class\n  of the inputs plans again from the sizes measured on "
                     "them")
        copies = sorted({n for notes in tuple(self.__dict__.get("_copies", {}).values())
                         for n in notes})
        if copies:                            # a call plan's copy of an input (issue 39)
            text += "\ncall plans' copies:\n" + "\n".join(f"  {n}" for n in copies)
        copies = sorted({n for notes in tuple(self.__dict__.get("_general_copies", {}).values())
                         for n in notes})
        if copies:                            # the general path's, of calls no plan runs
            text += "\ngeneral path's copies:\n" + "\n".join(f"  {n}" for n in copies)
        walked = self._walked
        if walked is not None:                # a call ran one walk (runtime.shared)
            text += ("\none walk (runtime.shared): the last call whose factors shared one "
                     "structure ran this kernel,\n  rewritten from the expression above:\n"
                     + explained(walked.compiled, walked.optimized))
        return text

    def __repr__(self):
        """Name, expression, semiring, output and the shared objects built so far."""
        kerns = [self, *self._variants.values(),
                 *{id(k): k for _, k in self._planned.values() if k is not self}.values()]
        built = [f"{k.semiring.name}/{t}" for k in kerns for t in k._libs] or ["none yet"]
        sr = f"from the inputs' dtype (else {self.semiring.name})" if self._infer \
            else self.semiring.name
        out = ", ".join(ix.name for ix in self.out_indices)
        return (f"Kernel({self.name!r}: {self.expr}, semiring {sr}, output "
                f"{self.out_format or 'dense'} over ({out}), built: {', '.join(built)})")

