"""Gathered sums, switched by tuning.gather_sums: a walk over a compressed
segment whose only work is `acc := acc ⊕ vals[q] ⊗ dense[crd[q]]` (a row of an
SpMV, or any dot of a sparse fibre with a dense one) over float64 with lanes
for its (⊕, ⊗) (`lane_ops`: the real semiring, min_plus, max_plus, max_times),
or over float32 with + and * (real32),
in a program with a dense output, becomes imp.GatherSum. C then reduces the
segment eight products at a time in SIMD lanes (masked loads and gathers)
where the call's imp.GatherPick says so, and runs the walk loop, kept as the
node's fallback, otherwise. The lanes reassociate the reduction, so a real sum
may round differently from the loop's (min and max do not round;
proofs_notes/gather_sums.md); the reads are the loop's own, so the node is as
safe as the loop. fused_checks checks the node's coordinates as it checks the
loop's.
"""
from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np

from ... import host_facts, imp
from ...imp import (Assign, Bin, GatherPick, GatherSum, Load, Opaque, Prefetch, Ring, Seq, Var,
                    While, or_, seq)
from .checks_first import gathered, squared, summed
from .fused_checks import candidates, program_names


_ADD = {"{a} + {b}": "+", "({a} < {b} ? {a} : {b})": "min", "({a} > {b} ? {a} : {b})": "max"}
_MUL = {"{a} * {b}": "*", "{a} + {b}": "+"}


def lane_ops(semiring) -> tuple | None:
    """The lanes' (⊕, ⊗) for a float64 semiring whose C operations they compute
    exactly as the loop does (+ with *, min or max with + or *), or a float32
    one with + and * (ep_gather_sum's float lanes), else None."""
    dtype = np.dtype(semiring.dtype)
    if dtype not in (np.float64, np.float32):
        return None
    ops = (_ADD.get(semiring.add.c), _MUL.get(semiring.mul.c))
    if dtype == np.float32 and ops != ("+", "*"):
        return None
    return ops if None not in ops and ops != ("+", "+") else None


def run(prog, semiring, tuning):
    """`prog` with its gathered sums made imp.GatherSum, each level's pick
    declared first; `prog` itself when the pass is off or nothing matches.
    The body is switched once on the picks, outside every loop: where none is
    set the call runs the body as it was (a branch on the pick beside each walk
    made the scalar walks 4-15% slower than the same walks without lanes, the
    compiler laying out and allocating the loop for both forms)."""
    ops = lane_ops(semiring)
    if not (tuning.gather_sums and ops is not None and prog.output.mode == "dense"):
        return prog
    names = program_names(prog)
    body, picks = prog.body, []
    for name, lv in sorted(candidates(prog).items()):
        pick = names.fresh(f"{name}_gather")
        new = _rewrite(body, lv, pick, ops, tuning.plain_sum_lanes)
        if new != body:
            body = new
            host = host_facts.resolved(tuning)
            least, ragged = ((host.gather_from, host.gather_ragged_from) if ops == ("+", "*")
                             else (0, 0))
            if _plain_only(new, pick):  # no gather: ragged rows pay at every length
                least, ragged = max(tuning.plain_sum_from, 1), 1
            if _flat_only(new, pick):   # one segment of every row (flat_walks): lanes
                least, ragged = -1, 0
            picks.append(GatherPick(pick, lv.pos, lv.parents, least=least, ragged=ragged))
    if not picks:
        return prog
    lanes = functools.reduce(or_, (Var(p.var) for p in picks))
    return replace(prog, body=seq(*picks, imp.If(lanes, body, prog.body)))


def _rewrite(node, lv, pick: str, ops: tuple, plain: bool):
    def lanes(loop, found):
        acc, q, e, dense, square = found
        if square and ops != ("+", "*"):     # (the lanes square under + and * alone)
            return loop
        return GatherSum(acc, q, e, lv.vals, lv.crd, dense, loop, pick, ops=ops, square=square)
    matched = _gathered_or_summed if plain else _gathered
    return rewrite_gathered(node, lv, lanes, matched)


def _gathered(loop, crd, vals):
    got = gathered(loop, crd, vals)
    return None if got is None else (*got, False)


def _gathered_or_summed(loop, crd, vals):
    """(acc, q, e, dense, squared?) of a gathered, plain or squared sum's walk."""
    got = gathered(loop, crd, vals) or summed(loop, crd, vals)
    if got is not None:
        return (*got, False)
    got = squared(loop, crd, vals)
    return None if got is None else (*got, True)


def rewrite_gathered(node, lv, change, matched=gathered):
    """node with each walk of lv that `matched` (`gathered`, or also `summed`)
    matches (outside GatherSum nodes) replaced by change(the loop, what it found)."""
    match node:
        case While() if (found := matched(node, lv.crd, lv.vals)) is not None:
            return change(node, found)
        case Seq(stmts):
            return Seq(tuple(rewrite_gathered(s, lv, change, matched) for s in stmts))
        case GatherSum():
            return node
    if hasattr(node, "__dataclass_fields__") and hasattr(node, "body"):
        return replace(node, body=rewrite_gathered(node.body, lv, change, matched))
    if isinstance(node, imp.If):
        other = None if node.else_ is None else rewrite_gathered(node.else_, lv, change, matched)
        return replace(node, then=rewrite_gathered(node.then, lv, change, matched), else_=other)
    return node


def _flat_only(body, pick: str) -> bool:
    """Whether every GatherSum of `pick` in body walks a flat segment (Walk.rows)."""
    return all(n.fallback.walk is not None and n.fallback.walk.rows is not None
               for n in imp.statements(body) if isinstance(n, GatherSum) and n.pick == pick)


def _plain_only(body, pick: str) -> bool:
    """Whether every GatherSum of `pick` in body is a plain sum (no `dense`)."""
    return all(n.dense is None for n in imp.statements(body)
               if isinstance(n, GatherSum) and n.pick == pick)
