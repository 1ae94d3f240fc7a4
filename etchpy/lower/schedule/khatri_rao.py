"""A group pass, switched by tuning.khatri_rao: a Khatri-Rao step and the GEMM
step reading it (plan.dense.khatri_rao) run only when, on the real sizes, the
temporary holds no more cells than the factor it multiplies; otherwise the
kernel runs the fused step they replaced. The plan chose them on sizes known
or guessed before any input was seen, and a temporary larger than an input
could exhaust memory. Off, both steps run as planned, whatever the sizes."""
from __future__ import annotations

from dataclasses import replace
from functools import partial

from ... import imp
from ...expr.nodes import Access, Mul
from ...imp import If, seq
from ...plan import dense
from ..target import cells
from . import Claim


def claim(lw, groups, claims) -> list:
    """The group pass (schedule.PASSES): each Khatri-Rao step with the GEMM
    step right after it that reads it, as one Claim run under the size test
    (`lower_group`, each step lowered by `lw.lower_step`), where no earlier
    claim covers either. Off, each step runs on its own as planned."""
    steps = [g[0] if len(g) == 1 else None for g in groups]
    taken = {n for c in claims for n in c.covers}
    out, n = [], 0
    while n + 1 < len(steps):
        pair = steps[n:n + 2]
        if None not in pair and not {n, n + 1} & taken and _reads_kr(pair, 0):
            out.append(Claim(n, frozenset({n, n + 1}), pair[1].target == "out",
                             partial(lower_group, pair, lw.lower_step)))
            n += 2
        else:
            n += 1
    return out


def lower_group(steps, lower_one):
    """(statements, description, filled) of a Khatri-Rao pair; `lower_one(step)`
    lowers one step so. It runs under a test of its temporary's size, with
    the fused step in the other branch; neither then counts as filling the
    output (it is zeroed first, whichever branch runs)."""
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
