"""Far rows' values left to the hardware, switched by tuning.run_far_bytes (0:
off) and tuning.prefetch: a level some walk of which sums `vals[q] ⊗
dense[crd[q]]` (an SpMV row: lower.schedule.gather_sums.gathered) prefetches
its values at a row's start (prefetch.prefetch_runs, `imp.Prefetch.ahead`) only
when the call's far pick (imp.GatherPick with crd: ep_far_pick) finds its rows
near, or the dense operand holds fewer than tuning.run_far_bytes bytes. Its crd
is prefetched as before.

Why (docs/performance.md, "Prefetching consecutive rows", session 42): where
the gathers miss the first-level cache (random columns over an x larger than
it), the values' prefetch, which the loop does not wait for, competes with
them; the coordinates', which the gathers' addresses wait for, pays. Where the
gathers hit (stencils, meshes, an x in cache) the loop streams, and the
values' prefetch pays. The pick is made once per call; the test at a row's
start is of a constant. A prefetch changes no result.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ... import imp
from ...imp import GatherPick, If, Not, Prefetch, Var, While
from ...imp.analysis import replaced
from .fused_checks import candidates, program_names
from .gather_sums import gathered


def run(prog, semiring, tuning):
    """`prog` with the row-start prefetches of the values of each gathered level
    under `if (!far)`, its far pick declared first; `prog` itself when the pass
    is off or no level matches."""
    if not (tuning.prefetch and tuning.run_far_bytes > 0 and prog.output.mode == "dense"):
        return prog
    names = program_names(prog)
    body, picks = prog.body, []
    least = max(1, tuning.run_far_bytes // np.dtype(semiring.dtype).itemsize)
    for name, lv in sorted(candidates(prog).items()):
        starts = _row_starts(body, lv)
        if not starts or not _gathers(body, lv):
            continue
        far = names.fresh(f"{name}_far_rows")
        for p in starts:
            body = replaced(body, p, If(Not(Var(far)), p))
        picks.append(GatherPick(far, lv.pos, lv.parents, lv.crd, lv.dim,
                                max(1, tuning.prefetch_near_share), least))
    if not picks:
        return prog
    return replace(prog, body=imp.seq(*picks, *_ragged_when_far(body, picks, tuning)))


def _ragged_when_far(body, picks: list, tuning) -> tuple:
    """body's statements, each lanes pick (gather_sums) of a level with a far
    pick here taking ragged rows into the lanes where that pick is set
    (imp.GatherPick.rows_far) from a mean of tuning.gather_ragged_far, and from
    one of tuning.gather_mild_far when their lengths' standard deviation is at
    most the mean / tuning.gather_mild_spread; each only when below the pick's
    own ragged rule (gather_ragged_from; 0: half of its `least`), 0: off. Such
    rows (random ones, meshes' P2 tetrahedra) gather from a dense operand of
    run_far_bytes or more, past the first-level cache, where the scalar loop,
    which mispredicts each ragged row's end, lost to the lanes on AMD Zen 4
    (docs/performance.md, session 59); Intel's rule (half of gather_from) is
    below both, so its C is unchanged."""
    far = {p.pos: p.var for p in picks}

    out = []
    for s in imp.seq_parts(body):
        if isinstance(s, GatherPick) and s.crd is None and s.pos in far and s.least > 0:
            rule = s.ragged if s.ragged > 0 else (s.least + 1) // 2
            ragged = tuning.gather_ragged_far if 0 < tuning.gather_ragged_far < rule else 0
            mild = tuning.gather_mild_far if 0 < tuning.gather_mild_far < (ragged or rule) else 0
            if ragged or mild:
                s = replace(s, rows_far=far[s.pos], far_ragged=ragged, far_mild=mild,
                            far_spread=max(1, tuning.gather_mild_spread))
        out.append(s)
    return tuple(out)


def _row_starts(body, lv) -> list:
    """The distinct prefetches of lv's values at a row's start (an `ahead`)."""
    out = []
    for n in imp.statements(body):
        if isinstance(n, Prefetch) and n.array == lv.vals and n.ahead and not n.write \
                and n not in out:
            out.append(n)
    return out


def _gathers(body, lv) -> bool:
    """Whether some walk of lv (a GatherSum's scalar loop included) sums
    vals[q] ⊗ dense[crd[q]]."""
    return any(isinstance(n, While) and gathered(n, lv.crd, lv.vals) is not None
               for n in imp.statements(body))
