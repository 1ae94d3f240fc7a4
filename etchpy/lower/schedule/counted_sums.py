"""Counted sums in lanes, switched by tuning.counted_lanes: a contracted counted
loop (streams.Counter: c = first..end-1, every state ready, its coordinate c: a
dense level, not a walk of stored entries) whose only work is `acc := acc ⊕ v`, over a float or
complex carrier, adds its states tuning.counted_sum_lanes at a time into as many
accumulators, then a quarter as many, the rest in the plain loop
(pieces.split_sum, as a band's run is summed): the adds no longer wait on one
another. A dense vector's or matrix's sum, a dense matrix's row sums, a dense
min-plus matvec's rows; not a sum of terms under a test (a relation's filtered
sum: lower.schedule.flat_mask keeps its loop's bits). The terms are the loop's, each once; ⊕ is reassociated,
so a real sum may round differently, min and max do not
(proofs_notes/counted_sums.md). Integer carriers keep the plain loop, which the C
compiler vectorises itself (their ⊕ is exact)."""
from __future__ import annotations

import numpy as np

from ... import imp, streams
from ...imp import While, seq
from .pieces import _summed, split_sum

_WALKS = (streams.Segment, streams.Walk, streams.Scatter, streams.Entries, streams.Pieces,
          streams.Prelude)     # stored entries' walks (gathered sums, checks) and pieces: theirs


def run(em, s, parts) -> imp.Stmt | None:
    """The loop pass (schedule.PASSES): s's sum in lanes, or None."""
    counter = s.facts.get(streams.Counter)
    if (counter is None or counter.fixed is not None or not s.contracted
            or s.index != imp.Var(counter.name)     # a dense level: its coordinate is c
            or s.ready != imp.TRUE or parts.fetch != imp.SKIP
            or any(k in s.facts for k in _WALKS)
            or np.dtype(em.sr.dtype).kind not in "fc" or _summed(parts.on_ready) is None
            or any(isinstance(t, imp.Select) for t in imp.subterms(parts.on_ready))):
        return None     # (a term under a test: a filtered sum, flat_mask's to the last bit)
    lanes = em.tuning.counted_sum_lanes   # (not sum_lanes, the host's for short runs)
    stages = [lanes] + ([lanes // 4] if lanes // 4 >= 2 else [])
    split = [split_sum(em, s, parts, counter.name, counter.end, n) for n in stages]
    if all(x == imp.SKIP for x in split):
        return None
    return seq(parts.init, *split, While(s.valid, seq(parts.on_ready, s.next)))
