"""Run sums, switched by tuning.runs: a Σ over a level of runs (streams.Flat:
one value across each counted piece) adds each piece once, as the semiring's
n-fold ⊕ of its value (Semiring.repeat), instead of once per coordinate. A
semiring without a closed form (repeat is None) keeps the per-cell loop.
proofs_notes/runs.md."""
from __future__ import annotations

from ... import imp, streams
from ...imp import Assign, Bin, Ring, Var, While, seq


def run(em, s, parts) -> imp.Stmt | None:
    """The pass: a contracted innermost level (its value a leaf, so the record
    adds that leaf into an accumulator) with Pieces and Flat loops per piece:
    record repeat(value, end − counter), then counter := end; advance. The
    states of a piece all have the one value, so this is the sum of their
    records."""
    pieces = s.facts.get(streams.Pieces)
    if (pieces is None or streams.Flat not in s.facts or not s.contracted
            or streams.is_stream(s.value) or em.sr.repeat is None):
        return None
    n = Bin("-", Var(pieces.end), Var(pieces.counter))
    once = s.derive(s.facts, value=Ring("repeat", s.value, n))
    body = seq(parts.fetch, imp.if_(s.ready, parts.record(once)),
               Assign(pieces.counter, Var(pieces.end)), pieces.advance)
    return seq(parts.init, While(s.valid, body))
