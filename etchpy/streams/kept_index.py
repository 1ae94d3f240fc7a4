"""A union's index kept in a state variable (Tuning.keep_union_index).

A union's index is an expression of its operands' (the front: `a_first ?
a.index : b.index`, streams.combinators.union_by_skipping), and a union of
unions nests them. Every level below reads that index where it locates an
operand at the union's coordinate (a marker probe, a dense factor) and in the
guards those reads make (streams.hoist), so an OR of clauses, each a product
over several indices (Q7's nation pair), wrote the nested fronts out in full at
every read of every level below (long C lines, the C compiler's time).
Kept in a variable assigned after init, next and skip (the only statements that
move the operands), each read is the variable: the same value wherever it is
read, since nothing else changes the operands' state between two of those
statements. Where the union is exhausted the variable holds 0, never read
(the index is read only at a valid state). A leaf union (no level below) keeps
its expression: only its own loop reads it (and lower.schedule.phases splits
it by the operands' validity). proofs_notes/kept_index.md.
"""
from __future__ import annotations

from ..imp import ZERO, Assign, Var, seq
from ..imp import select
from .stream import Stream, is_stream


def kept_index(names, s: Stream) -> Stream:
    """s with its index in a fresh state variable when levels lie below it and
    the index is not a variable already (see the module docstring)."""
    if not is_stream(s.value) or isinstance(s.index, Var):
        return s
    k = names.fresh(f"{s.var}_at")
    keep = Assign(k, select(s.valid, s.index, ZERO))
    return s.derive(s.facts, state=s.state + ((k, "index"),), init=seq(s.init, keep),
                    index=Var(k), next=seq(s.next, keep),
                    skip=lambda t, r: seq(s.skip(t, r), keep))
