"""Run sums, switched by tuning.runs: a level of runs (streams.Flat: one value
across each counted piece, a leaf) is taken a piece at a time.

* Under Σ (a contracted level), each piece is added once, as the semiring's
  n-fold ⊕ of its value (Semiring.repeat), instead of once per coordinate; a
  semiring without a closed form (repeat is None) keeps the per-cell loop.
  A value that is itself a stream (the bins of a onehot below a run, or any
  levels below a piece that Flat says do not vary along it) is walked once
  per piece, each of its leaves taken n-fold: every record under a Σ adds.
* Otherwise (each coordinate written to its own cell), the value is read once
  per piece into a local, and the piece's cells are a counted loop storing it;
  into an output that writes runs (Target.writes_spans) the piece is one write
  of a run (streams.Span).

proofs_notes/runs.md."""
from __future__ import annotations

from ... import imp, streams
from ...imp import Assign, Bin, Decl, Ring, Var, While, incr, seq


def run(em, s, parts) -> imp.Stmt | None:
    """The pass: a level with Pieces and Flat. Contracted (every record below
    adds a leaf into an accumulator): record the value with each leaf v made
    repeat(v, end − counter), then counter := end; advance; the states of a
    piece all have the one value (and the same levels below), so this is the
    sum of their records. The free form needs a leaf value. Free: v := value at the
    piece's start, then the plain loop over the piece recording v."""
    pieces = s.facts.get(streams.Pieces)
    if pieces is None or streams.Flat not in s.facts:
        return None
    if s.contracted and em.sr.repeat is not None:
        n = Bin("-", Var(pieces.end), Var(pieces.counter))
        once = s.derive(s.facts, value=streams.map_leaf(lambda x: Ring("repeat", x, n),
                                                        s.value))
        body = seq(parts.fetch, imp.if_(s.ready, parts.record(once)),
                   Assign(pieces.counter, Var(pieces.end)), pieces.advance)
        return seq(parts.init, While(s.valid, body))
    if s.contracted or streams.is_stream(s.value) or em.presence.of(s.value) != imp.TRUE:
        return None
    if em.target.writes_spans:           # a run output: each piece one write
        whole = s.derive(s.facts.add(streams.Span(Var(pieces.end))))
        body = seq(parts.fetch, imp.if_(s.ready, parts.record(whole)),
                   Assign(pieces.counter, Var(pieces.end)), pieces.advance)
        return seq(parts.init, While(s.valid, body))
    v = em.names.fresh(f"{s.var}_run")
    each = s.derive(s.facts, value=Var(v))
    inner = While(s.valid, seq(parts.fetch, imp.if_(s.ready, parts.record(each)),
                               incr(pieces.counter)))
    return seq(parts.init, While(s.valid, seq(Decl(v, "value", s.value), inner,
                                              pieces.advance)))
