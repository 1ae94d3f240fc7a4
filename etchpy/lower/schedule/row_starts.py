"""Rows' starts carried (Tuning.carry_row_start; proofs_notes/validation.md,
"Every serial row loop carries its rows' start"): in a serial loop over the
rows c of a compressed level,

    while (c < n) { ...; q := pos[c]; e := pos[c+1]; ...;
                    while (q < e) {...; q := q + 1}; ...; c := c + 1 }

(c assigned only by its last statement, so the rows run c, c+1, ... with none
skipped; the walk a statement of the row's own, with no break, q and e
assigned nowhere else in the row: `carried`; or, in its place, a gathered sum
of the segment whose fallback is that walk, or an if each of whose two arms
runs one of these: a size switch's arms, the SIMD lanes' pick), the walk of
row c starts where row c-1's ended, a register, instead of a load of pos[c]:

    at := pos[c]   (or c < n ? pos[c] : 0, where c's start is not 0)
    while (c < n) { ...; q := at; e := pos[c+1]; ...; while (q < e) {...};
                    at := q; ...; c := c + 1 }

For a valid segment (pos[c] <= pos[c+1]) each of these ends with q =
pos[c+1] (a gathered sum's lanes set q := e), so `at` is pos[c] at every row. The program point's pass (`run`) carries every
such walk of an input's segment level (a level whose format stores segments,
formats.level segment_roles: compressed) in the build without fused checks,
whose inputs are valid (an ep.Tensor is checked when it is made, any other
input in full before the call). The build with fused checks
(lower.schedule.fused_checks) is made from the program with its starts read
again (`undone`) and, where Tuning.carry_checked_start holds, carries them
after its rewrite (`carry`): there a fused
level's walk keeps the plain form only where its segments were checked ahead
of the rows (a block's pass over pos, or row_checks' test as each row opens,
which carries its own start); a walk that tests its segment or can leave
early is no longer `carried`. A ParallelFor's iterations are not rows of a
serial loop: only a serial loop inside one carries, from its own first row. A
window's rows read pos[o + c] and carry nothing.
"""
from __future__ import annotations

from dataclasses import replace

from ... import imp
from ...expr.walk import accesses
from ...imp import (Assign, Bin, Break, Const, Decl, GatherSum, If, Load, Select, Seq, Var, While,
                    lt)
from ...imp.analysis import children
from ..program import program_names
from .segment_checks import steps_once

def run(prog, semiring, tuning):
    """`prog` with the walks of its serial row loops carried (module docstring);
    `prog` itself when none is."""
    starts = segment_starts(prog)
    if not starts:
        return prog
    body = carry(prog.body, starts, program_names(prog))
    return prog if body is prog.body else replace(prog, body=body)


def segment_starts(prog) -> frozenset[str]:
    """The C names of the arrays of segment starts (pos) of prog's inputs' levels."""
    arrays = {p.name for p in prog.params if p.kind == "in_array"}
    tensors = {acc.tensor.name: acc.tensor for step in prog.plan.steps
               for acc in accesses(step.body)}
    return frozenset(name for t, tv in tensors.items() for k, lv in enumerate(tv.format.levels)
                     if lv.segment_roles and (name := f"{t}_{lv.segment_roles[0]}{k}") in arrays)


def carry(node, starts: frozenset, names: imp.Names, flat: bool = False, before=None):
    """node with every walk over the arrays `starts` that a serial row loop of
    it `carried` starting where the row before ended; `before`: the statement
    run just before node, if any. With `flat`, a row's Seqs inside its Seq are
    read as its parts (the checked build's walk and its count: fused_checks)."""
    if isinstance(node, GatherSum) or not (isinstance(node, tuple) or children(node)):
        return node             # a gather's fallback (one loop, its walk); no statements
    if isinstance(node, Seq):
        out = []
        for k, s in enumerate(node.stmts):
            new = carry(s, starts, names, flat, node.stmts[k - 1] if k else None)
            out += new.stmts if isinstance(new, Seq) and isinstance(s, While) else [new]
        return node if len(out) == len(node.stmts) and all(
            a is b for a, b in zip(out, node.stmts)) else Seq(tuple(out))
    node = _mapped(node, lambda x: carry(x, starts, names, flat))
    return _row_loop(before, node, starts, names, flat) if isinstance(node, While) else node


def _mapped(node, f):
    """imp.map_parts(node, f) for a statement or a tuple, notes kept, but node
    itself where f changed none of its parts (untouched subtrees not rebuilt)."""
    if isinstance(node, tuple):
        new = tuple(f(x) for x in node)
        return node if all(a is b for a, b in zip(new, node)) else new
    parts = {k: v for k, v in vars(node).items() if k != "walk"}     # a statement's fields
    new = {k: f(v) for k, v in parts.items()}
    return node if all(new[k] is v for k, v in parts.items()) else replace(node, **new)


def _row_loop(before, loop: While, starts, names, flat: bool):
    """loop, or `at := pos[c]; ...; loop` with its walks carried, when loop is
    `while (c < n) {...; c := c + 1}` (c assigned nowhere else)."""
    match loop:
        case While(Bin("<", Var(c), bound), body) if steps_once(body, c):
            pass
        case _:
            return loop
    decls, row = [], Seq(tuple(imp.spliced(body))) if flat else body
    for pos in sorted(starts):
        while (walk := carried(row, pos, Var(c), arms=True)) is not None:
            row = carry_walk(row, walk, at := names.fresh(f"{c}_from"))
            decls.append(Decl(at, "index", _first(before, c, bound, pos)))
    return Seq((*decls, replace(loop, body=row))) if decls else loop



def _first(before, c: str, bound, pos: str):
    """pos[c] at the loop's start: read as it is after `c := 0` (pos has an entry
    0), else only where a row runs (c < bound), as the first row would."""
    match before:
        case Assign(name, Const(0)) | Decl(name, _, Const(0)) if name == c:
            return Load(pos, Var(c))
    return Select(lt(Var(c), bound), Load(pos, Var(c)), Const(0))


def carried(body, pos: str, c, arms: bool = False):
    """(q, the index of `q := pos[c]` among body's parts, the index of the walk)
    where the row's parts read a segment of `pos` as `q := pos[c]; e :=
    pos[c+1]; ...; while (q < e) {...; q := q + 1}` with no break in the walk
    and q and e assigned nowhere else in the row; with `arms`, the walk may
    also be a gathered sum of the segment or an if each of whose arms holds one
    such walk (`_ends`); else None."""
    parts = imp.seq_parts(body)
    first = {p.name: k for k, p in enumerate(parts)
             if isinstance(p, Assign) and p.value == Load(pos, c)}
    last = {p.name: k for k, p in enumerate(parts)
            if isinstance(p, Assign) and p.value == Load(pos, Bin("+", c, Const(1)))}
    for k, p in enumerate(parts):
        for q, e in ((q, e) for q in first for e in last if first[q] < k and last[e] < k):
            if (_ends(p, q, e, arms) and _once(parts, q, first[q], k)
                    and _once(parts, e, last[e], k)):
                return q, first[q], k
    return None


def _ends(p, q: str, e: str, arms: bool) -> bool:
    """Whether statement p, run with q <= e, leaves q = e and e as it was: a
    full loop `while (q < e) {...; q := q + 1}` (no break, q stepped only by
    its last statement); with `arms`, also a gathered sum of [q, e) whose
    fallback is such a loop (its lanes set q := e), or an if each of whose two
    arms runs one such statement and moves q and e nowhere else, with no
    break."""
    match p:
        case While(Bin("<", Var(a), Var(b)), wbody) if (a, b) == (q, e):
            inner = imp.seq_parts(wbody)
            return (bool(inner) and inner[-1] == imp.incr(q) and not _breaks(wbody)
                    and q not in _assigned(inner[:-1]) and e not in imp.scalars_assigned(wbody))
        case GatherSum(q=a, end=b, fallback=loop) if arms and (a, b) == (q, e):
            return _ends(loop, q, e, arms)
        case If(_, then, other) if arms and other is not None and not _breaks(p):
            return all(_arm_ends(arm, q, e) for arm in (then, other))
    return False


def _arm_ends(arm, q: str, e: str) -> bool:
    parts = imp.seq_parts(arm)
    walks = [k for k, u in enumerate(parts) if _ends(u, q, e, True)]
    return len(walks) == 1 and not {q, e} & _assigned(parts[:walks[0]] + parts[walks[0] + 1:])


def _breaks(s) -> bool:
    return any(isinstance(u, Break) for u in imp.statements(s))


def _assigned(stmts) -> set[str]:
    return set().union(*(imp.scalars_assigned(s) for s in stmts)) if stmts else set()


def _once(parts, name: str, at: int, walk: int) -> bool:
    """Whether `name` is assigned in the row's parts only at part `at` (and in
    the walk, part `walk`, by its own increment)."""
    return all(name not in imp.scalars_assigned(p) for k, p in enumerate(parts)
               if k not in (at, walk))


def carry_walk(body, walk, at: str):
    """body with its walk's `q := pos[c]` made `q := at`, and `at := q` after it."""
    q, first, k = walk
    parts = list(imp.seq_parts(body))
    parts[first] = Assign(q, Var(at))
    parts.insert(k + 1, Assign(at, Var(q)))
    return Seq(tuple(parts))


def undone(node):
    """node with every start `carry` carried read from pos again: the program
    `carry` was given (fused_checks rewrites the walks of that form)."""
    if isinstance(node, GatherSum) or not (isinstance(node, tuple) or children(node)):
        return node
    node = _mapped(node, undone)
    if not isinstance(node, Seq) or not any(isinstance(s, Decl) for s in node.stmts):
        return node
    out = []
    for s in node.stmts:
        while isinstance(s, While) and out and (got := _restored(out[-1], s)) is not None:
            out.pop()
            s = got
        out.append(s)
    return out[0] if len(out) == 1 and len(node.stmts) > 1 else Seq(tuple(out))


def _restored(decl, loop: While):
    """loop with the start `decl` declares read from pos again, when decl is
    `carry`'s `at := pos[c]` (or its guarded form) for loop's counter c."""
    match decl:
        case Decl(at, "index", Load(pos, Var(c)) | Select(_, Load(pos, Var(c)), Const(0))):
            pass
        case _:
            return None
    parts = imp.seq_parts(loop.body)
    takes = [k for k, p in enumerate(parts) if isinstance(p, Assign) and p.value == Var(at)]
    gives = [k for k, p in enumerate(parts) if isinstance(p, Assign) and p.name == at]
    if not (isinstance(loop.cond, Bin) and loop.cond.op == "<" and loop.cond.a == Var(c)
            and len(takes) == 1 and len(gives) == 1):
        return None
    q = parts[takes[0]].name
    if parts[gives[0]] != Assign(at, Var(q)):
        return None
    new = [Assign(q, Load(pos, Var(c))) if k == takes[0] else p
           for k, p in enumerate(parts) if k != gives[0]]
    return replace(loop, body=Seq(tuple(new)))
