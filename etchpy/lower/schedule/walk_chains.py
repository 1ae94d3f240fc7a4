"""Walk sums in chains (Tuning.walk_chains, walk_chain_count): a checked SpMV's
long rows, tested before their block runs (checks_first.long_rows), add their
terms into k accumulators instead of one. fused_checks applies `chain` to that
arm alone; other walks keep one chain.

A loop

    while (q < e) { ...; acc := acc ⊕ t; ...; q := q + 1 }

whose body is straight-line (declarations, assignments, prefetches, opaque
marks), steps q by one at its end and nowhere else, changes nothing `e` reads,
assigns no variable declared outside it but acc, and reads acc only in that one
update, over a float or complex carrier, runs k of its iterations at a time
while q + k − 1 < e, the j-th of each k adding into its own accumulator
(declared at ⊕'s zero; its locals renamed), then adds those into acc and runs
the rest (at most k − 1: with k = 2 one test, not a loop). A row's adds then
form k chains, not one; the chained copies carry no opaque marks (EP_OPAQUE:
measured, the marks between the copies cost a long row 5-9%). Every
iteration runs the loop's own statements in the loop's order; only ⊕'s grouping
changes (a real sum may round differently; min and max do not:
proofs_notes/walk_chains.md). A walk that clamps its coordinates counts its
failures in a second outer variable and is not taken.
"""
from __future__ import annotations

import numpy as np

from ... import host_facts, imp
from ...imp import (Assign, Bin, Comment, Const, Decl, GatherSum, Gemm, Opaque, Ring, Seq, Var,
                    While, seq)

_STRAIGHT = (Decl, Assign, Opaque, Comment)


def count(semiring, tuning) -> int:
    """The accumulators a walk sum takes under `tuning` (the host's
    walk_chain_count at -1): 1 (no chains) where tuning.walk_chains is off or the
    carrier is not float or complex."""
    if not tuning.walk_chains or semiring is None \
            or np.dtype(semiring.dtype).kind not in "fc":
        return 1
    return max(1, host_facts.resolved(tuning).walk_chain_count)


def chain(node, k: int, names, zero):
    """node with each walk sum `chained` takes made k chains (k < 2: node).
    GatherSum and Gemm nodes are not entered (their fallbacks are theirs)."""
    if k < 2 or isinstance(node, (GatherSum, Gemm)):
        return node
    if isinstance(node, While) and (got := chained(node, k, names, zero)) is not None:
        return got
    if not hasattr(node, "__dataclass_fields__") and not isinstance(node, tuple):
        return node
    return imp.map_parts(node, lambda x: chain(x, k, names, zero))


def summed_walk(loop: While):
    """(q, e, acc, the body's statements but q's step) of a loop `chained`
    takes, else None."""
    match loop.cond:
        case Bin("<", Var(q), e):
            pass
        case _:
            return None
    stmts = imp.spliced(loop.body)
    if not stmts or stmts[-1] != Assign(q, imp.add(Var(q), imp.ONE)):
        return None
    body = stmts[:-1]
    if not body or not all(isinstance(s, _STRAIGHT) for s in body):
        return None
    block = Seq(tuple(body))
    local = imp.declared_in(block)
    if q in imp.scalars_assigned(block) | local \
            or imp.names_used(e) & (imp.scalars_assigned(block) | local | {q}):
        return None
    outer = [s for s in body if isinstance(s, Assign) and s.name not in local]
    if len(outer) != 1 or _term(outer[0]) is None:
        return None         # (a clamped walk's error count: its checks stay one chain)
    acc = outer[0].name
    if any(acc in imp.names_used(s) for s in body if s is not outer[0]) \
            or acc in imp.names_used(e):
        return None
    return q, e, acc, body


def _term(s: Assign):
    match s.value:
        case Ring("add", Var(a), t) if a == s.name and s.name not in imp.names_used(t):
            return t
    return None


def chained(loop: While, k: int, names, zero) -> imp.Stmt | None:
    """loop's iterations k at a time into k accumulators while k remain, then
    loop itself for the rest; None where summed_walk does not take it."""
    got = summed_walk(loop)
    if got is None:
        return None
    q, e, acc, body = got
    step = Assign(q, imp.add(Var(q), imp.ONE))
    local = sorted(imp.declared_in(Seq(tuple(body))))
    lanes = [names.fresh(f"{acc}_chain") for _ in range(k - 1)]
    body = [s for s in body if not isinstance(s, Opaque)]    # (no marks: the docstring)
    copies = [*body, step]
    for lane in lanes:
        renamed = {acc: lane, **{n: names.fresh(n) for n in local}}
        copies += [imp.rename(s, renamed) for s in body] + [step]
    total = [Var(a) for a in lanes]
    while len(total) > 1:                  # a balanced tree of adds
        total = [Ring("add", total[j], total[j + 1]) if j + 1 < len(total) else total[j]
                 for j in range(0, len(total), 2)]
    fits = imp.lt(imp.add(Var(q), Const(k - 1)), e)
    rest = loop if k > 2 else imp.If(imp.lt(Var(q), e), seq(*body, step))   # (k − 1 at most)
    return seq(imp.If(fits, seq(*[Decl(a, "value", zero) for a in lanes],
                                While(fits, seq(*copies)),
                                Assign(acc, Ring("add", Var(acc), total[0])))),
               rest)
