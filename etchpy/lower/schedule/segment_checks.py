"""Segment checks made a block of parents at a time, ahead of the loop that
opens them (proofs_notes/validation.md, "Segments checked a block ahead").

A fused level (lower.schedule.fused_checks) checks each segment as a walk
opens it: `0 <= q <= e <= nnz`, a test and a branch per segment. Where every
walk of the level opens its segment at pos[c] .. pos[c+1] for the counter c
of a full loop over the parents,

    c := 0; while (c < parents) { ...; c := c + 1 }     (c assigned nowhere else)

the kernel already runs once per parent, and the same test is cheaper as a
flat pass: the loop runs a block of `block` parents at a time, first testing
that pos does not decrease over the block, pos[r] <= pos[r+1] for every r of
it, in a loop with no branch and one comparison a parent (it vectorises), and
that the block's last end is inside crd, pos[end] <= nnz (once a block), then
the block's iterations without the per-segment guard (a level of dimension 0
fails every block: fused_checks reads a bad coordinate of such a level's walks
as coordinate 0):

    while (c < parents) {
        end := min(c + block, parents); bad := [dim = 0] | [nnz <u pos[end]]
        for r in [c, end): bad |= pos[r+1] < pos[r]
        if (bad) { error := 4; end := c; c := parents }
        while (c < end) { ...; c := c + 1 }
    }

Every segment the loop opens is pos[r] .. pos[r+1] for an r of a block
already passed: pos[r+1] <= pos[end] <= nnz down the block's chain, and
pos[r] >= 0 by induction down the chain pos[0] <= ... <= pos[r] (0 <= pos[0]
<= nnz is an O(1) fact the runtime checks before every call, as is nnz <=
len(crd); each block's chain starts at the last end of the block before). So
0 <= q <= e <= nnz, what the per-segment guard establishes. A failed block
leaves its rows and all later ones unrun; the kernel returns the error code
and the runtime checks that input in full (the output is not used). The bound
is tested once a block, not once a parent: the pass is half as long (what it
cost: docs/performance.md, "Fused input checks").
"""
from __future__ import annotations

from ...imp import (Assign, Bin, Const, Decl, If, Load, Seek, Seq, ShortIntersect, Var, While, lt,
                    min_, seq)
from ...imp.analysis import children, scalars_assigned, statements
from ...streams import Walk


def plan(prog, levels) -> list:
    """[(a full loop of prog.body, the levels checked ahead of its blocks)]:
    each of `levels` (fused_checks.Level values) all of whose walks open their
    segments at pos[c], pos[c+1] inside a full loop over its parents with
    counter c (`_full`, `_loops_opening`) is listed with each such loop."""
    out = {}
    for lv in levels:
        for loop in _loops_opening(prog.body, lv, parent_names(prog, lv.parents)) or ():
            out.setdefault(loop, []).append(lv)
    return list(out.items())


def parent_names(prog, parents: str) -> set[str]:
    """The C names equal to the size `parents` in the kernel: itself and the
    dim_{var} of each index it sizes (the prologue checks they agree)."""
    return {parents} | {f"dim_{var}" for var, tensor, mode in prog.dims
                        if f"{tensor}_dim{mode}" == parents}


def _full(before, loop):
    """(counter, bound) when `before; loop` is a full loop, else None."""
    match before, loop:
        case (Assign(c, Const(0)) | Decl(c, _, Const(0)), While(Bin("<", Var(c2), Var(n)), body)) \
                if c == c2 and _steps_once(body, c):
            return c, n
    return None


def _steps_once(body, c: str) -> bool:
    stmts = body.stmts if isinstance(body, Seq) else (body,)
    return (bool(stmts) and stmts[-1] == Assign(c, Bin("+", Var(c), Const(1)))
            and c not in scalars_assigned(Seq(stmts[:-1])))


def _loops_opening(body, lv, bounds: set[str]) -> list | None:
    """The full loops (bound among `bounds`) whose counters c open lv's walks
    at pos[c] (q) and pos[c + 1] (end) from inside them, in the order the body
    holds them (the names their blocks declare are drawn in it, so the C is the
    same in every process), when every value
    given to a walk's q or end is such an opening, q + 1 or end (q), or 0 (a
    declaration); else None."""
    walks = [s.walk for s in statements(body) if isinstance(s, While)
             and isinstance(s.walk, Walk) and s.walk.crd == lv.crd]
    qs, ends = {w.q for w in walks}, {w.end for w in walks}
    steps = {v for q in qs for v in (Bin("+", Var(q), Const(1)), *(Var(e) for e in ends))}
    used, ok = {}, True      # loops in the order visited (names are drawn in it)

    def visit(node, active: dict):
        nonlocal ok
        match node:
            case Seq(stmts):
                for k, s in enumerate(stmts):
                    got = _full(stmts[k - 1], s) if k else None
                    if got and got[1] in bounds:     # a full loop: its counter opens rows
                        visit(s.body, {**active, got[0]: s})
                    else:
                        visit(s, active)
                return
            case Assign(name, value) | Decl(name, _, value) if name in qs | ends:
                c = _opening(value, lv.pos, name in ends)
                if c in active:
                    used[active[c]] = None
                elif not (isinstance(node, Decl) and value == Const(0)) and not (
                        name in qs and value in steps):
                    ok = False
                return
            case Seek(q=name) if name in qs | ends:
                ok = False
            case ShortIntersect(qa=qa, qb=qb) if {qa, qb} & (qs | ends):
                ok = False
        for child in children(node):
            visit(child, active)

    visit(body, {})
    return list(used) if ok and used else None


def _opening(value, pos: str, end: bool) -> str | None:
    match value:
        case Load(a, Var(c)) if a == pos and not end:
            return c
        case Load(a, Bin("+", Var(c), Const(1))) if a == pos and end:
            return c
    return None


def block_loop(loop: While, levels, err: str, error_code: int, block: int, names) -> While:
    """The full loop `loop` run `block` parents at a time, the segments of
    `levels` (fused_checks.Level values over its parents) checked ahead of each
    block (module docstring); a failed block sets `err` to `error_code`."""
    c, n = loop.cond.a, loop.cond.b
    end, r, bad = (names.fresh(f"{c.name}_{part}") for part in ("block", "r", "bad"))
    ev, rv, bv = Var(end), Var(r), Var(bad)
    test, first = bv, Const(0)
    for lv in levels:                   # dim 0: no coordinate is inside (fused_checks'
        first = Bin("|", first, Bin("==", Var(lv.dim), Const(0)))     # clamped loops)
        first = Bin("|", first, Bin("<u", Load(lv.pos, Var(lv.parents)), Load(lv.pos, ev)))
        test = Bin("|", test, Bin("<", Load(lv.pos, Bin("+", rv, Const(1))), Load(lv.pos, rv)))
    scan = seq(Decl(r, "index", c), Decl(bad, "bool", first),
               While(lt(rv, ev), seq(Assign(bad, test), Assign(r, Bin("+", rv, Const(1))))))
    stop = If(Bin("!=", bv, Const(0)),
              seq(Assign(err, Const(error_code)), Assign(end, c), Assign(c.name, n)))
    return While(loop.cond, seq(Decl(end, "index", min_(Bin("+", c, Const(block)), n)),
                                scan, stop, While(lt(c, ev), loop.body)))
