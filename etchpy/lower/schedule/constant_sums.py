"""Constant sums, switched by tuning.constant_sums: a Σ over a plain counted loop
(streams.Counter: every state ready, one per coordinate first..end-1) whose value
is a leaf reading none of the loop's state (an iso operand's one, `a·1 = a`
folded by streams.combinators.mul, or a factor of outer levels alone) is that
value ⊕-ed end − first times: one record of `repeat(value, end − first)`
(Semiring.repeat, the n-fold ⊕) after init, when the loop has a state at all.

`Σ_i O[i]` of a dense iso O is then `dim_i · 1` and `Σ_j A[i]·O[j]` is
`A[i] · dim_j` (real), `A[i]` (min-plus: ⊕ idempotent); a semiring without a
closed form (repeat is None) keeps the loop. proofs_notes/constant_sums.md."""
from __future__ import annotations

from ... import imp, streams
from ...imp import Bin, If, Ring, Var, seq


def run(em, s, parts) -> imp.Stmt | None:
    """The loop pass (schedule.PASSES): the loop of `s` as one record, or None."""
    counter = s.facts.get(streams.Counter)
    if (counter is None or not s.contracted or em.sr.repeat is None
            or streams.is_stream(s.value) or s.ready != imp.TRUE):
        return None
    state = {name for name, _ in s.state} | {counter.name}
    if imp.names_used(s.value) & state:
        return None                     # the value changes along the loop
    n = Bin("-", counter.end, Var(counter.name))
    once = s.derive(s.facts.keep(), value=Ring("repeat", s.value, n))
    return seq(parts.init, If(s.valid, parts.record(once)))
