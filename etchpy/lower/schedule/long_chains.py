"""The build without checks sums a long near row in chains, as the checked build
does (pipeline.Compiled.unchecked; switched by Tuning.walk_chains and the host's
check_first_from and walk_chain_count, as fused_checks' arm is).

fused_checks gives a checked SpMV's near scalar rows an arm of their own where
their mean length (entries over rows, exact) is at least check_first_from (20 on
AMD Zen, 0: off elsewhere): their walks add into walk_chain_count accumulators
(walk_chains.chain) and the lanes pick is 0 where the rows gather from shared
lines (ep_near_pick, fused_checks.unpicked). The build an ep.Tensor runs, made
from the same program without checks, had no such arm, and read 1.07-1.25x its
checked build on scikit-fem's P2 tetrahedra and 3-D elasticity (rows of 25-40;
docs/performance.md, session 75): a prebuilt Tensor slower than the scipy
matrix it was made from. Here each full loop over a level's rows (segment_checks
.plan, no window's offset, not split across threads) whose walk of the level is
a gathered sum (gather_sums.gathered) in no SIMD lanes, and not a copy whose
rows prefetch their arrays where only shorter rows reach it (checks_first.
scalar_sums, long_rows' rule), becomes

    if split (least · parents <= pos[parents]) { the loop, its walks chained } else { the loop }

and the lanes picks over those levels are unpicked as fused_checks does (the
loops found with the rows' starts read from pos, row_starts.undone, then carried
again where Tuning.carry_row_start holds, as fused_checks.fuse does). Either
arm computes the rows' sums; the chains change only ⊕'s grouping
(proofs_notes/walk_chains.md), the mean and the pick only choose.
"""
from __future__ import annotations

from dataclasses import replace

from ... import host_facts, imp
from ...imp import Bin, Const, If, Load, ParallelFor, Var
from ..program import program_names
from . import checks_first, row_starts, segment_checks, walk_chains
from .fused_checks import candidates, replace_loop, unpicked


def run(prog, tuning, semiring):
    """`prog` with its long near rows' walks chained (module docstring); `prog`
    itself where chains are off (one accumulator, not a float carrier, no
    check_first_from) or no loop qualifies."""
    k = walk_chains.count(semiring, tuning)
    host = host_facts.resolved(tuning)
    least = host.check_first_from
    levels = list(candidates(prog).values())
    if k < 2 or least <= 0 or tuning.check_first_near or not levels:
        return prog
    names, body, longs = program_names(prog), row_starts.undone(prog.body), {}
    short = 0 < host.run_mean_below <= least
    zero = Const(semiring.zero, "value")
    for loop, lvs, off in segment_checks.plan(replace(prog, body=body), levels):
        if off is not None or isinstance(loop, ParallelFor):
            continue
        stmts = list(imp.statements(loop))
        lv = next((lv for lv in lvs if checks_first.scalar_sums(stmts, lv, short)), None)
        chained = walk_chains.chain(loop, k, names, zero) if lv is not None else loop
        if chained == loop:
            continue
        parents = Var(lv.parents)
        test = Bin("<=", Bin("*", Const(least), parents), Load(lv.pos, parents))
        body = replace_loop(body, loop, If(test, chained, loop, split=True))
        longs.update((m.pos, (test, m)) for m in lvs)
    if not longs:
        return prog
    body = unpicked(body, longs, names)
    if tuning.carry_row_start:      # the starts undone to find the loops, carried again
        body = row_starts.carry(body, row_starts.segment_starts(prog), names)
    return replace(prog, body=body)
