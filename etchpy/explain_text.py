"""`Kernel.explain()`'s text: what the stages made of a request (etchpy.pipeline),
in words: the banner, the optimizer's search, the estimated costs, the plan, the
algorithms chosen per level and the streams of each loop nest."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .pipeline import Compiled, banner
from .plan import algorithms
from .plan.stats import size_notes

if TYPE_CHECKING:
    from .optimizer.optimize import Optimized


STREAMS_LEGEND = (
    "locate = look up by position (a dense level); jump = a value broadcast along the",
    "index, no search; linear = step through stored entries; gallop = search ahead",
    "(exponential, then binary); merge/leapfrog = walk two sorted levels together;",
    "'X; locate into [Y]' = walk X and look Y up at each of its indices; Σ = summed")


def explain(compiled: Compiled, optimized: Optimized | None) -> str:
    """`Kernel.explain()`: the banner, the optimizer's search, the plans' estimated
    costs with the sizes they assumed (given or guessed), the plan compiled, and
    its streams with a legend."""
    req = compiled.request
    out = ["etchpy kernel", *("  " + b for b in banner(compiled))]
    if optimized is not None:
        out += ["optimizer:", *("  " + ln for ln in optimized.search_lines())]
    if compiled.costs is not None:
        out += ["estimated work (plan cost model):", "  " + _costs_text(compiled.costs)]
    if compiled.nesting:
        out += (["estimated work (plan cost model):"] if compiled.costs is None else []) \
            + ["  " + ln for ln in compiled.nesting]
    if compiled.costs is not None or req.measured is not None:
        out += ["  " + ln for ln in size_notes(req.expr, req.options.get("dims"),
                                              req.options.get("nnz"), req.tuning, req.measured)]
    out += ["plan:", *("  " + ln for ln in compiled.plan.explain().splitlines())]
    chosen = getattr(compiled.program, "algorithms", algorithms.NONE).lines()
    if chosen:
        out += ["algorithms (per intersected level and reused row: plan.algorithms):",
                *("  " + ln for ln in chosen)]
    out += ["streams (per loop nest and index level: how the loop finds the next index):",
            *(("  legend: " if n == 0 else " " * 10) + ln
              for n, ln in enumerate(STREAMS_LEGEND)),
            *("  " + t for t in compiled.program.streams_text)]
    return "\n".join(out)


def _costs_text(costs: tuple[float, float, bool]) -> str:
    written, rewritten, used = costs
    if rewritten == math.inf:
        return (f"as written {written:.4g}; no loop order walks the optimizer's rewrite: "
                "compiling the written expression")
    if rewritten == written and not used:
        return f"as written {written:.4g}; the optimizer found nothing cheaper"
    ratio = written / rewritten if rewritten else math.inf
    return (f"as written {written:.4g}, optimized {rewritten:.4g} ({ratio:.3g}x less): "
            f"compiling the {'optimized' if used else 'written'} expression")
