"""Gathered sums, switched by tuning.gather_sums: a walk over a compressed
segment whose only work is `acc := acc + vals[q]·dense[crd[q]]` (a row of an
SpMV, or any dot of a sparse fibre with a dense one) in the real semiring over
float64, in a program with a dense output, becomes imp.GatherSum. C then sums
the segment eight products at a time in SIMD lanes (masked loads and gathers)
where the call's imp.GatherPick says so, and runs the walk loop, kept as the
node's fallback, otherwise. The lanes reassociate the sum, so a float result may
round differently from the loop's (proofs_notes/gather_sums.md); the reads are
the loop's own, so the node is as safe as the loop. fused_checks checks the
node's coordinates as it checks the loop's.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ... import imp
from ...imp import (Assign, Bin, GatherPick, GatherSum, Load, Opaque, Prefetch, Ring, Seq, Var,
                    While, seq)
from .fused_checks import candidates, program_names


def applies(semiring) -> bool:
    """Whether ⊕ and ⊗ are float64 + and * (the lanes' fused multiply-add)."""
    return (np.dtype(semiring.dtype) == np.float64 and semiring.add.c == "{a} + {b}"
            and semiring.mul.c == "{a} * {b}")


def run(prog, semiring, tuning):
    """`prog` with its gathered sums made imp.GatherSum, each level's pick
    declared first; `prog` itself when the pass is off or nothing matches."""
    if not (tuning.gather_sums and applies(semiring) and prog.output.mode == "dense"):
        return prog
    names = program_names(prog)
    body, picks = prog.body, []
    for name, lv in sorted(candidates(prog).items()):
        pick = names.fresh(f"{name}_gather")
        new = _rewrite(body, lv, pick)
        if new != body:
            body = new
            picks.append(GatherPick(pick, lv.pos, lv.parents))
    return replace(prog, body=seq(*picks, body)) if picks else prog


def _rewrite(node, lv, pick: str):
    match node:
        case While() if (found := gathered(node, lv.crd, lv.vals)) is not None:
            acc, q, e, dense = found
            return GatherSum(acc, q, e, lv.vals, lv.crd, dense, node, pick)
        case Seq(stmts):
            return Seq(tuple(_rewrite(s, lv, pick) for s in stmts))
        case GatherSum():
            return node
    if hasattr(node, "__dataclass_fields__") and hasattr(node, "body"):
        return replace(node, body=_rewrite(node.body, lv, pick))
    if isinstance(node, imp.If):
        return replace(node, then=_rewrite(node.then, lv, pick),
                       else_=None if node.else_ is None else _rewrite(node.else_, lv, pick))
    return node


def gathered(loop: While, crd: str, vals: str):
    """(acc, q, e, dense) when `loop` is `while (q < e) { acc := acc + vals[q] *
    dense[crd[q]]; q := q + 1 }` (either factor first; prefetches and opaque
    marks around it), else None."""
    match loop.cond:
        case Bin("<", Var(q), Var(e)):
            pass
        case _:
            return None
    stmts = [s for s in (loop.body.stmts if isinstance(loop.body, Seq) else (loop.body,))
             if not isinstance(s, (Opaque, Prefetch))]
    if len(stmts) != 2 or stmts[1] != imp.incr(q):
        return None
    match stmts[0]:
        case Assign(acc, Ring("add", Var(a), Ring("mul", x, y))) if a == acc and acc != q:
            pass
        case _:
            return None
    at = Var(q)
    for value, gather in ((x, y), (y, x)):
        match value, gather:
            case Load(v, i), Load(dense, Load(c, j)) if (
                    v == vals and c == crd and i == at and j == at and dense not in (vals, crd)):
                return acc, q, e, dense
    return None
