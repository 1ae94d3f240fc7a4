"""Saturated sums, switched by tuning.saturated_sums: a Σ over a plain counted loop
(streams.Counter: every state ready, one per coordinate first..end-1) into an
accumulator, `acc := acc ⊕ v`, under a semiring whose `one` absorbs ⊕ (boolean
or: true | y = true), stops once the accumulator holds `one`: no later term can
change it. The loop runs in blocks of tuning.saturated_block terms, each a plain
counted loop (vectorised as before), and the test is made between blocks:

    init; while (c < end && acc != one) { e = min(c + block, end);
                                          while (c < e) { acc := acc ⊕ v; c++ } }

`Σ_j M[i, j]` of a dense boolean M (a row's `any`), or `Σ_j A[i, j] · x[j]` (a
pull step of reachability: is some in-neighbour in the frontier?) then stop at
the first block holding a true term. Where the ready code does anything else
(a presence flag, a prefetch) the plain loop is kept. proofs_notes/saturated_sums.md."""
from __future__ import annotations

from ... import imp, streams
from ...imp import Assign, Const, Decl, Ring, Var, While, incr, lt, seq
from .pieces import _summed


def absorbs(sr) -> bool:
    """Does `one` absorb ⊕ on every element (checked on the whole carrier, so only
    for a boolean one, as graph pulls ask: c.frontier.pulls)?"""
    if sr.dtype.kind != "b":
        return False
    return all(bool(sr.add(sr.one, y)) == bool(sr.one) for y in (False, True))


def run(em, s, parts) -> imp.Stmt | None:
    """The loop pass (schedule.PASSES): the loop of `s` in blocks that stop once
    its accumulator holds one, or None."""
    counter = s.facts.get(streams.Counter)
    block = em.tuning.saturated_block
    if (counter is None or block < 1 or s.ready != imp.TRUE or parts.fetch != imp.SKIP
            or streams.is_stream(s.value) or not absorbs(em.sr)):
        return None
    found = _summed(parts.on_ready)
    if found is None:
        return None
    acc, v = found
    c = counter.name
    upto = em.names.fresh(f"{c}_upto")
    one = Const(em.sr.one, "value")
    open_ = imp.and_(s.valid, imp.not_(imp.eq(Var(acc), one)))
    inner = While(lt(Var(c), Var(upto)), seq(Assign(acc, Ring("add", Var(acc), v)), incr(c)))
    return seq(parts.init, While(open_, seq(
        Decl(upto, "index", imp.min_(imp.add(Var(c), Const(block)), counter.end)), inner)))
