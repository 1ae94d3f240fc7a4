"""Input checks in a union's own steps (proofs_notes/validation.md, "Checks in
a union's steps"), switched by Tuning.merge_steps.

A union by stepping fronts whose loops are its phases (lower.schedule.phases,
each noted streams.Stepped) takes one step per coordinate of the union of its
operands' segments, in order; every coordinate of a walked segment is the
union's coordinate at one step, in its segment's order. So the walked
segments are strictly increasing and inside [0, dim) exactly when the step
coordinates are (the steps' own sequence being strictly increasing when they
are). A merge whose steps use their coordinate only as data (`_safe`: stored,
compared, never an address) is checked in them, with no pass over its
coordinates and no branch in its loops:

    after the merge note, the walked segments' bounds, one branch for all:
        if (OR over them of (uint64_t)e < (uint64_t)q | (uint64_t)pos[n] < (uint64_t)e)
            { error = 4; e = q for each; }
    index prev = -1, bad = 0;
    each phase loop, after its coordinate j is declared:
        bad |= gap(j, prev) | j; prev = j;      /* gap: j - prev - 1 modulo 2^64 */
    after the last phase loop:
        if (bad < 0 || prev >= dim) error = 4;

bad's sign is set when some j is below 0, else exactly when some j <= prev:
while every j so far is at least 0, prev is in [-1, 2^63) and j - prev - 1 in
[-2^63, 2^63), no wrap. With none, the steps rise strictly from 0 to prev < dim.
The steps run on what they read: a bad coordinate is only stored into the
output, which the kernel drops when it returns the error code (the runtime
then checks the input in full and raises an InputError naming it, or
canonicalises it). A merge used any other way keeps merge_checks' checks. Where a full loop over
the parents opens every segment of an input (`bounds_ahead`, Tuning.
merge_bounds_ahead), its bounds test is left out: the loop's blocks test their
pos chain first (segment_checks.block_loop; fused_checks.Level.stepped).
"""
from __future__ import annotations

from dataclasses import replace
from functools import reduce

from ... import imp
from ...imp import (Accum, Assign, Bin, Comment, Const, Decl, If, Load, Not, Ring, Select, Seq,
                    Store, Var, While, lt, or_, seq)
from ...streams import Merged, Stepped
from . import merge_checks, segment_checks

_PLAIN = (Var, Const, Bin, Not, Select, Load, Ring, Decl, Assign, Store, Accum, If, Seq, Comment)


def split(prog, tuning) -> tuple[dict, dict, dict]:
    """(merge_checks.fusable(prog), the part of it checked in the merges' steps
    (its inputs whose every merge is `eligible`), the rest); all empty when
    fused_checks is off."""
    merges = merge_checks.fusable(prog) if tuning.fused_checks else {}
    stepped = eligible(prog.body, merges) if tuning.merge_steps else frozenset()
    return (merges, {n: ws for n, ws in merges.items() if n in stepped},
            {n: ws for n, ws in merges.items() if n not in stepped})


def eligible(body, merges: dict) -> frozenset[str]:
    """The inputs of `merges` ({name: walks}) every merge note of which, in
    body, is followed in its sequence by its phase loops (streams.Stepped),
    each `_safe`, and no phase loop of its merge stands anywhere else."""
    ok: dict[str, bool] = {}
    found, noted = {}, {}       # phase loops by merge: after its notes, anywhere
    for node in imp.statements(body):
        if isinstance(node, While) and isinstance(node.walk, Stepped):
            noted[node.walk.merged] = noted.get(node.walk.merged, 0) + 1
        if not isinstance(node, Seq):
            continue
        for k, st in enumerate(node.stmts):
            if isinstance(st, Comment) and isinstance(st.walk, Merged):
                loops = _steps(node.stmts[k + 1:], st.walk)
                found[st.walk] = found.get(st.walk, 0) + len(loops)
                good = bool(loops) and all(_safe(loop, st.walk) for loop in loops)
                for w in st.walk.walks:
                    ok[w.tensor] = ok.get(w.tensor, True) and good
    for m, n in noted.items():      # a phase loop away from its note: not checked here
        for w in m.walks:
            ok[w.tensor] = ok.get(w.tensor, True) and found.get(m) == n
    return frozenset(n for n in merges if ok.get(n))


def _steps(stmts, merged) -> list:
    return [s for s in stmts if isinstance(s, While) and isinstance(s.walk, Stepped)
            and s.walk.merged == merged]


def _first(loop: While):
    """The loop's first statement when it declares the step's coordinate, else None."""
    body = imp.seq_parts(loop.body)
    st = body[0] if body else None
    return st if isinstance(st, Decl) and st.init == loop.walk.index else None


def _safe(loop: While, merged) -> bool:
    """Whether the loop's body declares its coordinate first, holds only plain
    statements and expressions (`_PLAIN`), and no address in it (of a load or
    a store) depends on a coordinate: the step's, a walked crd's, or a
    variable computed from one (the walks' counters q, stepped by 0 or 1 while
    q < end, excepted)."""
    first = _first(loop)
    if first is None:
        return False
    crds, qs = {w.crd for w in merged.walks}, {w.q for w in merged.walks}
    nodes = list(_nodes(loop.body))
    if not all(isinstance(n, _PLAIN) or not hasattr(n, "__dataclass_fields__") for n in nodes):
        return False
    tainted, grew = {first.name}, True
    while grew:
        grew = False
        for n in nodes:
            if isinstance(n, (Decl, Assign)) and n.name not in qs | tainted and _reads(
                    n.init if isinstance(n, Decl) else n.value, tainted, crds):
                tainted.add(n.name)
                grew = True
    return not any(isinstance(n, (Load, Store, Accum)) and _reads(n.index, tainted, crds)
                   for n in nodes)


def _nodes(node):
    """node and every node inside it (statements, expressions, field values)."""
    yield node
    if not isinstance(node, Comment):
        for x in imp.parts(node, notes=True):
            yield from _nodes(x)


def _reads(expr, tainted: set, crds: set) -> bool:
    return any(isinstance(n, Var) and n.name in tainted or isinstance(n, Load) and n.array in crds
               for n in _nodes(expr))


def bounds_ahead(prog, levels: list, tuning) -> list:
    """The levels (fused_checks.Level, stepped) of `levels` whose every segment
    a full loop over their parents opens (segment_checks.plan, no window's
    rows), when tuning.merge_bounds_ahead and check_block hold: their bounds
    are tested a block of parents ahead (segment_checks.block_loop: pos rises
    over the block and its last end is inside crd), not as each segment opens."""
    if not (tuning.merge_bounds_ahead and tuning.check_block > 0 and levels):
        return []
    planned = segment_checks.plan(prog, levels)
    full = {lv.tensor for _, lvs, off in planned if off is None for lv in lvs}
    full -= {lv.tensor for _, lvs, off in planned if off is not None for lv in lvs}
    return [lv for lv in levels if lv.tensor in full]


def rewrite(node, stepped: dict, err: str, code: int, names: imp.Names, ahead=frozenset()):
    """node with each merge of a `stepped` input ({name: walks}) checked in
    its steps (module docstring); the segments of inputs in `ahead` open with
    no bounds test (checked a block of parents ahead: `bounds_ahead`)."""
    if isinstance(node, Seq):
        return Seq(_rewrite_seq(tuple(rewrite(s, stepped, err, code, names, ahead)
                                      for s in node.stmts), stepped, err, code, names, ahead))
    if isinstance(node, (Load, Var, Const, Bin)):
        return node
    return imp.map_parts(node, lambda x: rewrite(x, stepped, err, code, names, ahead))


def _rewrite_seq(stmts: tuple, stepped, err, code, names, ahead) -> tuple:
    """stmts with the merge notes of stepped inputs among them followed by their
    segments' bounds (those not checked `ahead`) and prev, their phase loops
    stepping prev, the last one followed by prev's test."""
    out, prevs, tests = [], {}, {}      # by id of a phase loop: its prev; the last's test
    for k, st in enumerate(stmts):
        out.append(_stepped(st, prevs[id(st)]) if id(st) in prevs else st)
        if id(st) in tests:
            out.append(tests[id(st)])
        merged = st.walk if isinstance(st, Comment) and isinstance(st.walk, Merged) else None
        ws = [w for w in merged.walks if w in stepped.get(w.tensor, ())] if merged else []
        loops = _steps(stmts[k + 1:], merged) if ws else []
        if not loops:
            continue
        prev, bad = (Var(names.fresh(f"{ws[0].q}_{part}")) for part in ("prev", "bad"))
        if any(w.tensor not in ahead for w in ws):
            out.append(_bounds([w for w in ws if w.tensor not in ahead], err, code))
        out += [Decl(prev.name, "index", Const(-1)), Decl(bad.name, "index", Const(0))]
        prevs.update({id(lp): (prev, bad) for lp in loops})
        tests[id(loops[-1])] = If(reduce(or_, [lt(bad, Const(0))] + [
            Bin(">=", prev, Var(d)) for d in dict.fromkeys(w.dim for w in merged.walks)]),
            Assign(err, Const(code)))
    return tuple(out)


def _bounds(ws, err: str, code: int) -> If:
    """The test that every segment of walks ws just opened lies inside its crd
    (merge_checks.opened's, ORed with no short circuit: one branch), else the
    error and all of them emptied."""
    tests = [Bin("|", Bin("<u", Var(w.end), Var(w.q)),
                 Bin("<u", Load(w.pos, Var(w.parents)), Var(w.end))) for w in ws]
    return If(reduce(lambda a, b: Bin("|", a, b), tests),
              seq(Assign(err, Const(code)), *(Assign(w.end, Var(w.q)) for w in ws)))


def _stepped(loop: While, marks) -> While:
    """The phase loop with bad |= gap(j, prev) | j; prev := j after its coordinate j."""
    prev, bad = marks
    body = imp.seq_parts(loop.body)
    j = Var(body[0].name)
    step = (Assign(bad.name, Bin("|", bad, Bin("|", Bin("gap", j, prev), j))), Assign(prev.name, j))
    return replace(loop, body=seq(body[0], *step, *body[1:]))
