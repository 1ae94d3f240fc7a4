"""Gathered values prefetched, switched by tuning.prefetch_values (the distance;
0: off) and tuning.prefetch: a walk over a compressed segment whose only work is
`acc := acc ⊕ vals[q] ⊗ dense[crd[q]]` (an SpMV row: lower.schedule.gather_sums.
gathered) also prefetches dense[crd[q + d]], the value d states on, when the
call's far pick (imp.GatherPick with crd: ep_far_pick) finds the level's
segments far (random rows, whose gathers miss the cache) and the dense operand
holds at least tuning.prefetch_min_bytes of values. The pick is made once per
call (docs/performance.md, "Prefetching gathered values"): random rows gain,
and the rows of stencils and meshes run as they did.

crd[q + d] is a hint read (imp.Load.hint) made only while q + d < pos[parents],
whose reads the runtime keeps inside crd, and a coordinate outside [0, dim) is
taken as 0: the prefetch's address is inside the dense operand whatever crd
holds, so the pass is as safe as the loop (a scipy input's checked build
included), and a prefetch changes no result.
"""
from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np

from ... import imp
from ...imp import Bin, Const, Decl, GatherPick, If, Load, Prefetch, Var
from .fused_checks import candidates, program_names
from .gather_sums import rewrite_gathered


def run(prog, semiring, tuning):
    """`prog` with its gathered walks prefetching the values they will gather,
    under far picks declared first: the body is switched once on them, outside
    every loop (a test at each state, or at each segment, cost near rows 15-50%,
    the compiler laying the loops out for both ways); `prog` itself when the
    pass is off or no walk matches. It runs after size_switch, whose one
    switch would otherwise find the body too large to copy
    (tuning.unswitch_limit)."""
    if not (tuning.prefetch and tuning.prefetch_values > 0 and prog.output.mode == "dense"):
        return prog
    names = program_names(prog)
    body, picks = prog.body, []
    least = tuning.prefetch_min_bytes // np.dtype(semiring.dtype).itemsize
    for name, lv in sorted(candidates(prog).items()):
        pick = names.fresh(f"{name}_far")
        new = _rewrite(body, lv, tuning.prefetch_values, names)
        if new != body:
            body = new
            picks.append(GatherPick(pick, lv.pos, lv.parents, lv.crd, lv.dim,
                                    max(1, tuning.prefetch_near_share), least))
    if not picks:
        return prog
    test = functools.reduce(imp.or_, (Var(p.var) for p in picks))
    return replace(prog, body=imp.seq(*picks, If(test, body, prog.body)))


def _rewrite(node, lv, d: int, names):
    return rewrite_gathered(node, lv, lambda loop, found: replace(
        loop, body=imp.seq(_ahead(found, lv, d, names), loop.body)))


def _ahead(found, lv, d: int, names) -> imp.Stmt:
    """`if (q + d < pos[parents]) { t = crd[q + d] inside [0, dim), else 0;
    prefetch dense[t] }`."""
    _, q, _, dense = found
    at = imp.add(Var(q), Const(d))
    coord = Load(lv.crd, at, hint=True)
    t = names.fresh(f"{lv.tensor}_ahead")
    inside = imp.select(Bin("<u", coord, Var(lv.dim)), coord, imp.ZERO)
    return If(imp.lt(at, Load(lv.pos, Var(lv.parents))),
              imp.seq(Decl(t, "index", inside), Prefetch(dense, Var(t))))
