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

Where a level's walk in the row is a full segment loop (`q := pos[c]; e :=
pos[c+1]; while (q < e) {...; q := q + 1}`, no break, q and e changed by
nothing else: row_starts.carried), the row's start is carried instead of
read: `at := pos[c]` before the loop, the walk starts at `at` and leaves `at := q`, and
the test is `(nnz <u pos[c+1]) | (pos[c+1] < at)`. A row that passes has
at <= pos[c+1], so its walk ends with q = pos[c+1]: `at` is pos[c] at every
row's test, as above (proofs_notes/validation.md, "The row's start carried").
The next row's walk then starts from a register, not a load of pos
(docs/performance.md, session 62).
"""
from __future__ import annotations

from ... import imp
from ...imp import (Assign, Bin, Break, Const, Decl, GatherSum, If, Load, ParallelFor, Prefetch,
                    Var, While, and_, lt, seq)
from .row_starts import carried, carry_walk


def takes(loop, lvs, body, first: set) -> bool:
    """Whether the full loop `loop` of `body` (segment_checks.plan, no window's
    offset) checks its levels `lvs` as each row opens: a serial loop, inside no
    loop split across threads, summing no segment of theirs in SIMD lanes, none
    of them tested before a block by check_first (that pass needs the blocks),
    none read by a merge (their order and coordinates are the block pass's)."""
    if isinstance(loop, ParallelFor) or any(lv.tensor in first or lv.merged or lv.met
                                            for lv in lvs):
        return False
    crds = {lv.crd for lv in lvs}
    if any(isinstance(u, GatherSum) and u.crd in crds or isinstance(u, Prefetch)
           for u in imp.statements(loop)):
        return False
    return not any(loop == u for p in imp.statements(body) if isinstance(p, ParallelFor)
                   for u in imp.statements(p.body))


def row_loop(loop: While, levels, err: str, error_code: int, names=None):
    """`loop` (while (c < parents) {...; c := c + 1}) with the levels' segments
    checked as each row opens, after a test of their dimensions, each level's
    start carried where its walk is `carried` and `names` is given (module
    docstring)."""
    c, n = loop.cond.a, loop.cond.b
    nxt = Bin("+", c, Const(1))
    out, empty, body, starts = Const(0), Const(0), loop.body, []
    for lv in levels:
        end, start = Load(lv.pos, nxt), Load(lv.pos, c)
        walk = carried(body, lv.pos, c) if names is not None else None
        if walk is not None:
            at = names.fresh(f"{c.name}_at")
            body, start = carry_walk(body, walk, at), Var(at)
            starts.append(Decl(at, "index", Load(lv.pos, c)))
        out = Bin("|", out, Bin("|", Bin("<u", Load(lv.pos, Var(lv.parents)), end),
                                Bin("<", end, start)))
        empty = Bin("|", empty, Bin("==", Var(lv.dim), Const(0)))
    fail = Assign(err, Const(error_code))
    return seq(If(and_(lt(c, n), empty), seq(fail, Assign(c.name, n))), *starts,
               While(loop.cond, seq(If(out, seq(fail, Break()), rare=True), body),
                     loop.walk))
