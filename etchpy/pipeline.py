"""The compiler, stage by stage: a compile `Request` in, a `Compiled` kernel out.

    Request                                 expression, semiring, output, loop order,
                                            threads, optimizer options, Tuning
      → run_optimizer  → Optimized | None   equality saturation (optimizer.optimize)
      → choose_plan    → Plan, costs        loop nests: the optimizer's rewrite when
                                            it pays, else the expression as written
      → lower_program  → Program            streams per step, one Imp program (lower)
      → render_c       → CSource            C text for one index type (c.render)

`compile_request` runs the stages up to the Imp program, in this order
(`plan_request` those before lowering, `lower_planned` the rest); the C
text is rendered per index type when a kernel first needs it (runtime.kernel).
Under ETCHPY_DEBUG=1 each stage prints its result to stderr, headed
`---- etchpy <stage> ----` (optimizer, plan, streams, imp, c). Every knob comes
from `request.tuning`.
"""
from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import TYPE_CHECKING

from . import collector, host_facts, imp, tuning as tuning_, unit_arms
from .version import __version__
from .errors import FormatError, OrderError
from .expr.nodes import Expr, Index
from .expr.walk import keeps_sizes, tensors
from .formats import Format
from .plan import algorithms, dense as dense_plan, fusion, layout as plan_layout, nesting, \
    plan as planning, unfuse
from .plan.convert import kernel_tensors
from .plan.cost import Stats
from .plan.map_temps import map_temps
from .semiring import Semiring
from .tuning import Tuning

if TYPE_CHECKING:
    from . import lower
    from .c.render import CSource
    from .optimizer.optimize import Optimized


@dataclass(frozen=True)
class Measured:
    """Statistics read from the inputs of the call that planned a kernel
    (runtime.signature.measure): `dims` ((index, size), ...) and `nnz` ((tensor,
    stored entries), ...) as used (the caller's optimizer options win over
    them); `fibers` ((tensor, level, fibers, non-empty ones, longest, mean
    length), ...) per level with fibres (formats.level `fibres`); `given`
    ((tensor, layout as given), ...); `size_class`, the key of the inputs' size
    class; `runs` ((tensor, level, dense runs in all), ...) per level read as
    runs (bands, blocks); `stored` ((tensor, format), ...) the structures an
    input keeps made in another format (a table's stored orders)."""

    dims: tuple = ()
    nnz: tuple = ()
    fibers: tuple = ()
    given: tuple = ()
    size_class: tuple = ()
    runs: tuple = ()
    stored: tuple = ()


@dataclass(frozen=True)
class Request:
    """One compile request, already checked and normalised by its caller.

    `order`: the loop order the caller fixed (index names, outermost first), or
    None. `optimize`: whether the optimizer runs. `options`: the optimizer's
    keyword arguments (dims, nnz, exact, limits); dims and nnz also price the
    plans. `every_size`: build a workspace output for every dimension at once
    (else its dense kind only: see lower.lower_plan's hash_workspace).
    `measured`: the inputs' statistics when the request plans for one call's
    size class (their sizes are then in `options`), None before any input.
    """

    expr: Expr
    semiring: Semiring
    out_indices: tuple[Index, ...]
    out_format: Format | None = None
    order: tuple[str, ...] | None = None
    name: str = "etchpy_kernel"
    threads: int = 1
    optimize: bool = True
    options: dict = field(default_factory=dict)
    every_size: bool = False
    tuning: Tuning = tuning_.DEFAULT
    measured: Measured | None = None

    @cached_property
    def tensors(self) -> dict:
        """The expression's tensors by name (the kernel's inputs)."""
        return tensors(self.expr)


@dataclass(frozen=True)
class Compiled:
    """What the stages made of a request. `costs` is (cost as written, cost of the
    optimizer's plan, optimizer's plan used?) when the optimizer ran; `expr` is the
    expression compiled (the optimizer's or the request's). `optimized` may be None
    although the optimizer ran (a Compiled restored from disk does not keep it)."""

    request: Request
    optimized: Optimized | None
    plan: planning.Plan
    costs: tuple[float, float, bool] | None
    expr: Expr
    program: lower.Program
    nesting: tuple[str, ...] = ()

    @cached_property
    @collector.pausing
    def checked(self) -> lower.Program | None:
        """The program's variant with fused input checks (lower.schedule.fused_checks:
        each input of `checked.fused`, read by full walks, is checked by those
        walks; `checked.error` reports a failure), or None when it has none (no
        such input, or tuning.fused_checks off). The build a call runs is the
        checked one when such an input was bound unchecked, else `program`."""
        from .lower.schedule import fused_checks    # lower/ and c/: not at import (below)
        return fused_checks.fuse(self.program, self.request.tuning, self.request.semiring)

    @cached_property
    @collector.pausing
    def unchecked(self) -> lower.Program:
        """The build without checks: `program`, long near rows chained (schedule.long_chains)."""
        from .lower.schedule import long_chains
        return long_chains.run(self.program, self.request.tuning, self.request.semiring)

    def build(self, checked: bool = True) -> lower.Program:
        """The program of a build: the checked variant where asked and present."""
        return self.checked if checked and self.checked is not None else self.unchecked

    @cached_property
    def unit(self) -> tuple | None:
        """(the Compiled of this request with its output's last index dropped, the
        C test of its extent 1), or None (etchpy.unit_arms)."""
        return unit_arms.arm(self, compile_request)


def compile_request(req: Request) -> Compiled:
    """Run the stages, top to bottom, up to the Imp program."""
    return lower_planned(req, plan_request(req))


@collector.pausing
def plan_request(req: Request) -> tuple:
    """The stages before lowering: (optimized, plan, costs, nesting lines), the
    plan as `lower_planned` lowers it. A request that cannot be planned (an
    order that walks no sparse input as stored, ...) raises here."""
    optimized = run_optimizer(req)
    if optimized is not None:
        dump("optimizer", optimized.explain)
    plan, costs, nested, expr = choose_plan(req, optimized)
    stats = Stats(req.options.get("dims"), req.options.get("nnz"), plan.origin,
                  req.tuning, req.measured.fibers if req.measured is not None else ())
    plan = fusion.widen(plan, stats)      # which fused readers may sum more
    if req.order is None:       # chains ended for BLAS; libm maps once a cell; dense steps as GEMMs
        dense_out = req.out_format is None or req.out_format.is_dense
        plan = unfuse.cut(plan, req.semiring, stats, dense_out)
        plan = map_temps(plan, stats)
        plan = dense_plan.khatri_rao(plan, req.semiring, req.tuning, stats.dim)
        plan = dense_plan.operand_temps(plan, req.semiring, stats, dense_out)
        plan = plan_layout.for_blas(plan, req.semiring, stats)
    dump("plan", plan.explain)
    return optimized, plan, costs, nested, expr


@collector.pausing
def lower_planned(req: Request, planned: tuple) -> Compiled:
    """The Compiled of `req` from `plan_request(req)`'s result: its plan lowered."""
    optimized, plan, costs, nested, expr = planned
    program = lower_program(req, plan)
    dump("streams", lambda: "\n".join(program.streams_text))
    dump("imp", lambda: imp.show(program.body))
    compiled = Compiled(req, optimized, plan, costs, expr, program, nested)
    dump("c", lambda: render_c(compiled).c)
    return compiled


def run_optimizer(req: Request) -> Optimized | None:
    """The optimizer's result, or None when the request does not optimize."""
    if not req.optimize:
        return None
    from .optimizer.optimize import remembered   # loaded by the first compile that optimizes
    return remembered(req.expr, req.semiring, req.tuning, req.options)


def choose_plan(req: Request, optimized: Optimized | None):
    """(plan, costs, nesting lines, expression): the plan to compile, what it cost
    when the optimizer ran, explain()'s lines on the written nesting, and the
    expression the plan computes (the written one, the optimizer's, or the one of
    its tied alternatives that planned cheapest).

    The written expression is planned in its cheapest nesting (plan.nesting): each
    Σ nested in a product as its own step, as written, or flattened into the
    product's loops, whichever the cost model prices lower, so a plan is never
    priced above the nesting the user wrote. With the optimizer, its rewrite is
    planned the same way and compiled only when its plan costs at most
    `tuning.rewrite_margin` times the written one (math.inf: always). The model
    is coarse and sizes are guesses at compile time, so a constant-factor saving
    is not worth the risk while an asymptotic one is; with sizes measured on the
    inputs the margin is relieved by `tuning.measured_relief` (`_margin`). The
    rewrite must use the same tensors (the kernel's signature) and be walkable in
    some loop order, and may not make two modes agree in size that the written
    expression lets differ (Σ_j x + Σ_j y as Σ_j (x + y): `keeps_sizes`); the
    optimizer's alternatives, one class's choice apart, are priced beside it, also
    when its own term is the written one (its factors in the tensors' name order:
    the plan may not depend on names).
    Without the optimizer, each step keeps the heuristic loop order.

    Without a user order, a plan may read inputs converted to another format
    (plan.convert): when no loop order walks them as declared, and, with the
    optimizer, when that is priced much cheaper. Costs include the conversions.
    """
    out_format = req.out_format
    measured = req.measured if req.measured is not None else Measured()
    stats = Stats(req.options.get("dims"), req.options.get("nnz"), tuning=req.tuning,
                  fibers=measured.fibers, runs=measured.runs, stored=measured.stored)
    sr = req.semiring if req.order is None else None       # chains ended for BLAS (plan.unfuse)
    written = nesting.best(req.expr, req.out_indices, req.order, stats, out_format,
                           plan_stats=optimized is not None, sr=sr)
    if optimized is None:
        return written.plan, None, tuple(written.lines()), req.expr
    cost_written = written.price
    unchanged = (cost_written, cost_written, False), tuple(written.lines())
    same = optimized.expr == req.expr
    if (same and not optimized.alternatives) or (
            tensors(optimized.expr) != req.tensors or not keeps_sizes(optimized.expr, req.expr)):
        return (written.plan, *unchanged, req.expr)
    rewritten, expr = _cheapest_rewrite(req, optimized, stats)
    if rewritten is None:       # a user order cannot walk the rewrite's sparse inputs
        costs = unchanged[0] if same else (cost_written, math.inf, False)
        return written.plan, costs, unchanged[1], req.expr
    if rewritten.price <= _margin(req) * cost_written:
        return rewritten.plan, (cost_written, rewritten.price, True), unchanged[1], expr
    return written.plan, (cost_written, rewritten.price, False), unchanged[1], req.expr


def _margin(req: Request) -> float:
    """The share of the written plan's price a rewrite must come under: the
    `rewrite_margin`, relieved by `measured_relief` when the sizes were measured on
    the call's inputs (then only the model's coarseness is hedged, not a guess)."""
    margin = req.tuning.rewrite_margin
    return margin * req.tuning.measured_relief if req.measured is not None else margin


def _cheapest_rewrite(req: Request, optimized: Optimized, stats: Stats):
    """(the optimizer's term in its best nesting or one of its alternatives as
    nested (Optimized.alternatives: the e-graph's estimate ties where the plan model
    does not), whichever plans cheapest, and that term); (None, None) when no loop
    order walks any of them (an OrderError, or the FormatError of a onehot,
    comparison or window that no order reads in its storage order: the rewrite
    moved it against another).
    An alternative is another term of the same e-graph, whose flattened forms are
    terms of it too: pricing it as nested keeps planning time linear in their
    number. A sketched result (optimizer_options sketch=) keeps the nesting the
    sketch states."""
    best, best_expr = None, None
    sketched = bool(optimized.searches)     # a sketch states the nesting: kept as it is
    for n, e in enumerate((optimized.expr,) if sketched
                          else (optimized.expr, *optimized.alternatives)):
        if e == req.expr or tensors(e) != req.tensors or not keeps_sizes(e, req.expr):
            continue        # (the written term: priced already, in its best nesting)
        try:
            got = nesting.best(e, req.out_indices, req.order, stats, req.out_format,
                               only_written=sketched or n > 0,
                               sr=req.semiring if req.order is None else None)
        except (OrderError, FormatError):   # a onehot, comparison or window in no order
            continue
        if best is None or got.price < best.price:
            best, best_expr = got, e
    return best, best_expr


def lower_program(req: Request, plan: planning.Plan) -> lower.Program:
    """The plan's steps as streams, lowered to one Imp program, with the
    intersection ways and markers chosen per level from the sizes and the
    measured fibres (plan.algorithms; estimated before any input is seen).
    lower/ and c/ load with the first compile or C text a process needs: a kernel
    restored from its manifest (runtime.restored) runs without them."""
    from . import lower
    stats = Stats(req.options.get("dims"), req.options.get("nnz"), plan.origin, req.tuning)
    fibers = req.measured.fibers if req.measured is not None else ()
    return lower.lower_plan(plan, req.semiring, kernel_tensors(plan, req.tensors),
                            req.out_format,
                            threads=req.threads, hash_workspace=req.every_size,
                            tuning=req.tuning,
                            algorithms=algorithms.choose(plan, stats, fibers, req.tuning))


@collector.pausing
def render_c(compiled: Compiled, idx_type: str = "int64_t",
             include_header: bool = False, checked: bool = True) -> CSource:
    """A build of the program as C over index type `idx_type` (the variant with
    fused input checks unless `checked` is False: Compiled.build), with the
    header when asked."""
    from .c import render as c      # lower/ and c/: not at import (lower_program)
    req, prog = compiled.request, compiled.build(checked)
    return c.render(prog, req.semiring, name=req.name, idx_type=idx_type,
                    banner=banner(compiled), version=__version__,
                    include_header=include_header, tuning=req.tuning,
                    unit=unit_arms.build(compiled, prog))


def banner(compiled: Compiled) -> tuple[str, ...]:
    """The lines that head the C text and `Kernel.explain()`."""
    req, plan, program = compiled.request, compiled.plan, compiled.program
    fm = ", ".join(f"{n}: {t.format}" for n, t in sorted(req.tensors.items()))
    lines = [f"expression: {compiled.expr}", f"semiring:   {req.semiring.name}",
             f"threads:    {req.threads}",
             f"formats:    {fm or '(none)'}",
             f"output:     {program.output.mode}"
             + (f" {req.out_format}" if req.out_format else "")
             + f" over ({', '.join(ix.name for ix in req.out_indices)})"]
    for k, part in enumerate(_packed(tuning_changes(req.tuning), 76)):
        lines.append(("tuning:     " if k == 0 else " " * 12) + part)
    lines += conversion_lines(plan)
    for step in plan.steps:
        lines.append(f"loop order: {step.target} over ({', '.join(step.order)})")
    for var, most in program.refuse_above:
        ix = plan.origin.get(var, var)
        lines.append(f"workspace:  dense while |{ix}| <= {most}; a larger |{ix}| builds "
                     "a hash-table kernel on first need")
    return tuple(lines)


def conversion_lines(plan: planning.Plan) -> list[str]:
    """Banner lines for the inputs the plan reads converted (plan.convert): the
    kernel takes each as its own arrays, in the converted format, named after it."""
    return [f"convert:    {c.source} ({c.source_format}) is read as {c.name} in "
            f"{c.format}; the kernel takes {c.name}'s arrays" for c in plan.conversions]


def tuning_changes(t: Tuning) -> list[str]:
    """The fields of `t`, its host fields resolved (etchpy.host_facts), that differ
    from tuning.DEFAULT, as `name=value` (after the preset's name when `t` is one)."""
    t = host_facts.resolved(t)
    changed = [f"{f.name}={getattr(t, f.name)!r}" for f in fields(t)
               if getattr(t, f.name) != getattr(tuning_.DEFAULT, f.name)]
    preset = [f"{name}:" for name, p in tuning_.PRESETS.items() if name != "default"
              and (p == t or host_facts.resolved(p) == t)]      # the host's facts resolved
    return preset[:1] + changed if changed else []


def _packed(parts: list[str], width: int) -> list[str]:
    """`parts` joined by ", " (by " " after one ending in ":") into lines of at most
    about `width` characters."""
    lines: list[str] = []
    for k, part in enumerate(parts):
        sep = "" if k == 0 else " " if parts[k - 1].endswith(":") else ", "
        if lines and len(lines[-1]) + len(sep) + len(part) <= width:
            lines[-1] += sep + part
            continue
        lines[-1:] = [lines[-1] + sep.rstrip()] if lines else []
        lines.append(part)
    return lines


def dump(stage: str, text) -> None:
    """Print text() to stderr under ETCHPY_DEBUG (text is only built then)."""
    if os.environ.get("ETCHPY_DEBUG"):
        print(f"---- etchpy {stage} ----\n{text()}", file=sys.stderr)
