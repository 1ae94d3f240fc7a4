"""Intersections' rows prefetched a block ahead, switched by
tuning.met_prefetch (rows ahead; 0, the default: off) and tuning.prefetch.

An intersection reads each row's segments from their start (streams.Met,
noted after its init by the lowering: imp.Comment.walk). Where a full loop
`while (c < n)` opens such a segment at its own counter (q := pos[c], the
Decl or Assign among the loop body's own statements), each row hints the
coordinates of the row `tuning.met_prefetch` rows on (met_checks.next_block:
crd[pos[min(c + d, parents)]], clamped into [0, pos[parents]]), so
they are in cache when their merge reads them. Keyed on the stream facts, not
on formats: any input whose segments an intersection opens so gets it.

A prefetch changes no result, and its position read pos[min(c + d, parents)]
is inside pos (parents + 1 positions), so the step is as safe as the loop,
a checked build's included (met_checks: prefetches may point anywhere; its
block loop then adds no hint of its own, segment_checks.block_loop)."""
from __future__ import annotations

from ... import imp
from ...imp import Assign, Bin, Comment, Decl, Load, Prefetch, Var, While, seq
from ...streams import Met
from .met_checks import next_block


def run(prog, semiring, tuning):
    """`prog` with each full loop over rows that opens an intersection's
    segments at its counter hinting their coordinates tuning.met_prefetch rows
    on; `prog` itself when the switch or tuning.prefetch is off."""
    if not (tuning.prefetch and tuning.met_prefetch > 0):
        return prog
    return imp.map_parts(prog, lambda x: _rewrite(x, tuning.met_prefetch), notes=True)


def _rewrite(node, rows: int):
    """node with every loop `_walks` finds hinting first in its body."""
    if isinstance(node, (Load, Var, Bin)):
        return node
    node = imp.map_parts(node, lambda x: _rewrite(x, rows), notes=True)
    walks = _walks(node) if isinstance(node, While) else {}
    if not walks:
        return node
    c = node.cond.a
    fetch = [next_block(w, c, Var(w.parents), rows) for w in walks.values()]
    return While(node.cond, seq(*fetch, node.body), node.walk)


def _walks(loop: While) -> dict:
    """{crd: its Walk} when `loop` is `while (c < n)` and its body's own
    statements open a noted intersection's segment over crd at c (q :=
    pos[c]), crd not already hinted in the body."""
    match loop.cond:
        case Bin("<", Var() as c, _):
            pass
        case _:
            return {}
    own = imp.seq_parts(loop.body)
    opened = {(s.name, s.init if isinstance(s, Decl) else s.value) for s in own
              if isinstance(s, (Decl, Assign))}
    hinted = {s.array for s in imp.statements(loop.body) if isinstance(s, Prefetch)}
    out = {}
    for s in own:
        if isinstance(s, Comment) and isinstance(s.walk, Met):
            for w in s.walk.walks:
                if (w.q, Load(w.pos, c)) in opened and w.crd not in hinted and w.narrow is None:
                    out.setdefault(w.crd, w)
    return out
