"""Pieces, switched by tuning.pieces: the loop of a segment of dense blocks
(streams.Pieces, a block-list level) as one counted loop per block, inside a
loop over the blocks. The inner loop loads no coordinate and tests nothing but
its counter, so the C compiler may unroll and vectorise it."""
from __future__ import annotations

from ... import imp, streams
from ...imp import While, incr, seq


def run(em, s, parts) -> imp.Stmt | None:
    """The pass: a level whose run is counted pieces (streams.Pieces) loops per
    piece. The two loops visit the states of `while valid: …` in its order:
    within a piece, next is counter + 1; at its end, next is the advance."""
    pieces = s.facts.get(streams.Pieces)
    if pieces is None:
        return None
    inner = While(s.valid, seq(parts.fetch, imp.if_(s.ready, parts.on_ready),
                               incr(pieces.counter)))
    return seq(parts.init, While(s.valid, seq(inner, pieces.advance)))
