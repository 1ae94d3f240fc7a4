"""Segment checks made by each row as it opens (Tuning.check_rows;
proofs_notes/validation.md, "Segments checked as each row opens"): for a
serial full loop over the parents whose walks of the level are scalar loops
(no SIMD lanes, imp.GatherSum) and clamp their coordinates
(lower.schedule.checked_walks.clamped_loop), in place of the flat pass over
pos a block ahead (lower.schedule.segment_checks.block_loop):

    if (c < parents && dim = 0) { error := 4; c := parents }
    while (c < parents) {
        if rare ((nnz <u pos[c+1]) | (pos[c+1] < pos[c])) { error := 4; break }
        ...; c := c + 1 }

The loop reads pos[c] and pos[c+1] for its walk anyway. Every segment it
opens is pos[c] .. pos[c+1] with 0 <= pos[c] <= pos[c+1] <= nnz: pos[c+1]
was just tested against nnz and pos[c], and pos[c] >= 0 down the chain of the
rows before (pos[0]: the runtime's O(1) test before every call). dim = 0 fails
before any coordinate is read as 0 (the clamp). The failing arm leaves the
loop (imp.Break) and is marked rare (imp.If.rare): one test and one branch a
row are the whole cost. Lanes keep the blocks: measured slower with the rows'
test (docs/performance.md, session 54).
"""
from __future__ import annotations

from ... import imp
from ...imp import (Assign, Bin, Break, Const, GatherSum, If, Load, ParallelFor, Prefetch, Var,
                    While, and_, lt, seq)


def takes(loop, lvs, body, first: set) -> bool:
    """Whether the full loop `loop` of `body` (segment_checks.plan, no window's
    offset) checks its levels `lvs` as each row opens: a serial loop, inside no
    loop split across threads, summing no segment of theirs in SIMD lanes, none
    of them tested before a block by check_first (that pass needs the blocks)."""
    if isinstance(loop, ParallelFor) or any(lv.tensor in first for lv in lvs):
        return False
    crds = {lv.crd for lv in lvs}
    if any(isinstance(u, GatherSum) and u.crd in crds or isinstance(u, Prefetch)
           for u in imp.statements(loop)):
        return False
    return not any(loop == u for p in imp.statements(body) if isinstance(p, ParallelFor)
                   for u in imp.statements(p.body))


def row_loop(loop: While, levels, err: str, error_code: int):
    """`loop` (while (c < parents) {...; c := c + 1}) with the levels' segments
    checked as each row opens, after a test of their dimensions (module
    docstring)."""
    c, n = loop.cond.a, loop.cond.b
    nxt = Bin("+", c, Const(1))
    out, empty = Const(0), Const(0)
    for lv in levels:
        end = Load(lv.pos, nxt)
        out = Bin("|", out, Bin("|", Bin("<u", Load(lv.pos, Var(lv.parents)), end),
                                Bin("<", end, Load(lv.pos, c))))
        empty = Bin("|", empty, Bin("==", Var(lv.dim), Const(0)))
    fail = Assign(err, Const(error_code))
    return seq(If(and_(lt(c, n), empty), seq(fail, Assign(c.name, n))),
               While(loop.cond, seq(If(out, seq(fail, Break()), rare=True), loop.body),
                     loop.walk))
