"""Phases, switched by tuning.phases: the loop of a union of leaf levels as one
loop per phase (both operands valid, only a, only b, neither)."""
from __future__ import annotations

import dataclasses

from ... import imp, streams
from ...imp import Assign, While, seq


def run(em, s, parts) -> imp.Stmt | None:
    """The pass: a union of leaf levels (streams.Split) whose ready code is small
    runs as its phases' loops."""
    if streams.Split in s.facts and not streams.is_stream(s.value) and parts.small:
        return seq(parts.init, *phases(s, parts.record))
    return None


def phases(s, record) -> list:
    """The four loops, those whose phase can hold, in this order. Each runs
    while its phase holds and s is valid, with the operands' validity tests
    folded in the records and in the statements of next that come before it
    moves any state. An exhausted operand stays exhausted, so the phases only
    ever move forward in this order, and the four loops visit the states of
    the one loop `while valid: …` in the same order. A union with a Merged
    fact notes its index on each loop (streams.Stepped)."""
    split = s.facts.get(streams.Split)
    va, vb = split.a_valid, split.b_valid
    merged, loops = s.facts.get(streams.Merged), []
    for facts in ({va: True, vb: True}, {va: True, vb: False},
                  {va: False, vb: True}, {va: False, vb: False}):
        holds = imp.and_(imp.and_(va if facts[va] else imp.not_(va),
                                  vb if facts[vb] else imp.not_(vb)),
                         imp.assume(s.valid, facts))
        if holds == imp.FALSE:
            continue
        v = dataclasses.replace(s, valid=holds, ready=imp.assume(s.ready, facts),
                                index=imp.assume(s.index, facts),
                                value=imp.assume(s.value, facts))
        note = None if merged is None else streams.Stepped(v.index, merged)
        loops.append(While(v.valid, seq(imp.if_(v.ready, record(v)),
                                        assume_ahead(s.next, facts)), note))
    return loops


def assume_ahead(nxt, facts) -> imp.Stmt:
    """next with the facts folded into its leading assignments, up to the first
    statement that could change a variable the facts read."""
    reads = set().union(*(imp.names_used(f) for f in facts))
    stmts = list(imp.seq_parts(nxt))
    for k, st in enumerate(stmts):
        if not (isinstance(st, Assign) and st.name not in reads):
            break
        stmts[k] = Assign(st.name, imp.assume(st.value, facts))
    return seq(*stmts)
