"""A Khatri-Rao step and the GEMM step reading it (plan.dense.khatri_rao) run
only when, on the real sizes, the temporary holds no more cells than the
factor it multiplies; otherwise the kernel runs the fused step they replaced.
The plan chose them on sizes known or guessed before any input was seen, and
a temporary larger than an input could exhaust memory."""
from __future__ import annotations

from dataclasses import replace

from ... import imp
from ...expr.nodes import Access, Mul
from ...imp import If, seq
from ...plan import dense
from ..target import cells


def step_groups(plan):
    """The plan's steps in order, in groups lowered together: a Khatri-Rao step
    with the GEMM step right after it that reads it, or one step alone."""
    steps, n = plan.steps, 0
    while n < len(steps):
        if _reads_kr(steps, n):
            yield steps[n:n + 2]
            n += 2
        else:
            yield steps[n:n + 1]
            n += 1


def lower_group(steps, lower_one):
    """(statements, description, filled) of a group; `lower_one(step)` lowers one
    step so. A Khatri-Rao pair runs under a test of its temporary's size, with
    the fused step in the other branch; neither then counts as filling the
    output (it is zeroed first, whichever branch runs)."""
    if len(steps) == 1:
        return lower_one(steps[0])
    kr, gemm = steps
    rest = gemm.body.a
    fused = replace(gemm, body=Mul(rest, kr.body))
    (s_kr, t_kr, _), (s_gemm, t_gemm, _) = lower_one(kr), lower_one(gemm)
    s_fused, t_fused, _ = lower_one(fused)
    fits = imp.le(cells(kr.out), cells(dense.storage_axes(rest)))
    text = f"{t_kr}; {t_gemm}; when the temporary is larger than {rest.tensor.name}: {t_fused}"
    return [If(fits, seq(*s_kr, *s_gemm), seq(*s_fused))], text, False


def _reads_kr(steps, n) -> bool:
    """Is steps[n] a Khatri-Rao step whose temporary steps[n + 1] multiplies?"""
    if n + 1 >= len(steps) or not steps[n].target.startswith(dense.KR_PREFIX):
        return False
    body = steps[n + 1].body
    return (isinstance(body, Mul) and isinstance(body.b, Access)
            and body.b.tensor.name == steps[n].target
            and dense.storage_axes(body.a) is not None)
