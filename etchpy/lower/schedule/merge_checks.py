"""Input checks inside a union merge (proofs_notes/validation.md, "Checks
inside a union merge").

A union by stepping fronts reads every entry of each operand segment it
walks, in order, and nothing else of it (streams.Merged); the lowering notes
the walks after the union's init has opened the segments (imp.Comment.walk).
An input whose every read of its last level's coordinates and values is at
the q of such a walk (`fusable`) is checked by the kernel where each of its
segments is opened, before anything reads it (`checked`):

    if ((uint64_t)e < (uint64_t)q || (uint64_t)pos[n_parents] < (uint64_t)e)
        { error = 4; e = q; }        /* unless 0 <= q <= e <= nnz */
    else {
        bad := q < e && !(crd[q] <u dim); r := q + 1
        while (r < e) { bad |= !(crd[r - 1] < crd[r]) | !(crd[r] <u dim); r := r + 1 }
        if (bad) { error = 4; e = q; }
    }

so every segment the merge reads lies inside crd and has coordinates inside
the dimension, strictly increasing: what the full pass establishes for it.
A failed segment is emptied (e = q): the merge reads nothing of it, and the
kernel returns the error code (the runtime then checks that input in full and
raises an InputError naming it, or canonicalises it). The scan is a loop with
no branch over the entries the merge reads next (they stay in cache), one
comparison pair each, where the merge spends a compare, a branch and a store.
An input read any other way (a gallop, a search, an intersection that may
stop early) is not fused: the runtime checks it in full before the call.
"""
from __future__ import annotations

from ... import imp
from ...imp import (Assign, Bin, Comment, Const, Decl, If, Load, Not, Prefetch, Seek,
                    ShortIntersect, Var, While, and_, lt, or_, seq)
from ...streams import Merged


def candidates(prog, note=Merged) -> dict[str, tuple]:
    """{input: the Walk facts of its segments that unions walk whole (note Merged;
    streams.Met: that intersections read in part)}, from the notes
    (imp.Comment.walk) in prog.body."""
    arrays = {p.name for p in prog.params if p.kind == "in_array"}
    out: dict[str, dict] = {}
    for n in imp.statements(prog.body):
        if isinstance(n, Comment) and isinstance(n.walk, note):
            for w in n.walk.walks:
                if w.crd in arrays and w.narrow is None:
                    out.setdefault(w.tensor, {})[w] = None
    return {name: tuple(ws) for name, ws in out.items()}


def fusable(prog) -> dict[str, tuple]:
    """The candidates every read of whose coordinates and values is at the q of
    one of its merge walks (`reads_at`)."""
    return {name: ws for name, ws in candidates(prog).items() if reads_at(prog.body, ws)}


def reads_at(body, walks, spans=frozenset()) -> bool:
    """Whether every read of the walks' crd and vals arrays is at a walk's q, or (for
    spans, a set of (q, end, crd) of segments read in part) a seek or a short
    intersection over one of spans: prefetches may point anywhere and hint reads
    steer only prefetches; any other node naming crd reads it elsewhere."""
    at = {}
    for w in walks:
        at.setdefault(w.crd, set()).add(Var(w.q))
        at.setdefault(w.vals, set()).add(Var(w.q))
    ok = True

    def visit(node):
        nonlocal ok
        match node:
            case Prefetch() | Load(hint=True) | Comment():
                return
            case Load(array, index) if array in at:
                ok = ok and index in at[array]
                return
            case Seek(q, Var(end), crd, t, r) if crd in at:
                ok = ok and (q, end, crd) in spans
                visit(t)
                visit(r)
                return
            case ShortIntersect(qa, ea, ca, qb, eb, cb, inner):
                for side in ((qa, ea, ca), (qb, eb, cb)):
                    ok = ok and (side[2] not in at or side in spans)
                visit(inner)
                return
        inside = imp.parts(node)
        if not isinstance(node, (tuple, list)) and any(
                isinstance(v, str) and v in at for v in inside):
            ok = False          # a field naming crd
            return
        for value in inside:
            visit(value)

    visit(body)
    return ok


def opened(w, err: str, code: int) -> imp.Stmt:
    """The test that the segment of walk w just opened lies inside crd, 0 <= q
    <= e <= nnz, else the error and the segment emptied (module docstring)."""
    q, e = Var(w.q), Var(w.end)
    outside = or_(Bin("<u", e, q), Bin("<u", Load(w.pos, Var(w.parents)), e))
    return If(outside, seq(Assign(err, Const(code)), Assign(w.end, q)))


def checked(w, err: str, code: int, names: imp.Names) -> imp.Stmt:
    """The check of the segment of walk w just opened (module docstring)."""
    q, e = Var(w.q), Var(w.end)
    r, bad = names.fresh(f"{w.q}_r"), names.fresh(f"{w.q}_bad")
    rv, bv = Var(r), Var(bad)
    crd_r = Load(w.crd, rv)
    fail = seq(Assign(err, Const(code)), Assign(w.end, q))
    first = and_(lt(q, e), Not(Bin("<u", Load(w.crd, q), Var(w.dim))))
    step = Bin("|", Not(lt(Load(w.crd, Bin("-", rv, Const(1))), crd_r)),
               Not(Bin("<u", crd_r, Var(w.dim))))
    scan = seq(Decl(bad, "bool", first), Decl(r, "index", Bin("+", q, Const(1))),
               While(lt(rv, e), seq(Assign(bad, Bin("|", bv, step)),
                                    Assign(r, Bin("+", rv, Const(1))))),
               If(bv, fail))
    return If(opened(w, err, code).cond, fail, scan)


def rewrite(node, fused: dict, err: str, code: int, names: imp.Names):
    """node with each merge note followed by the checks of its fused walks."""
    if isinstance(node, Comment) and isinstance(node.walk, Merged):
        ws = [w for w in node.walk.walks if w in fused.get(w.tensor, ())]
        return seq(Comment(node.text), *(checked(w, err, code, names) for w in ws))
    if isinstance(node, (Load, Var, Const, Bin)):
        return node
    return imp.map_parts(node, lambda x: rewrite(x, fused, err, code, names))
