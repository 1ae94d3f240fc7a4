"""Stacked rows, switched by tuning.stacked_rows (stacked_row_count rows, < 2: off): a
dense Σ over a leading axis into a vector, `out[j] ⊕= Σ_i f(i, j)` (`Σ_i A[i,j]·B[i,j]`,
a column sum), adds that many rows a pass over out instead of one. A loop

    while (i < D) { inits; while (j < E) { decls; out[g] ⊕= v; j := j + 1 }; i := i + 1 }

(inits: scalar declarations and assignments that read neither i nor out; decls:
scalar declarations that do not read i; g does not read i; v reads i; every
expression pure; D and E changed by nothing in the loop and E not a constant; out read
nowhere in it) becomes, with k = tuning.stacked_row_count,

    if (W <= E)
        while (i + k - 1 < D) { inits; while (j < E) { decls; out[g] ⊕= (v[i] ⊕ v[i+1]) ⊕ ...;
                                                       j := j + 1 }; i := i + k }
    the loop as it was (the last rows, fewer than k; all of them where E < W)

Each pass reads k rows of the operands against one load and one store of out[g] (the
operands' streams, k at once, are what a pass costs once they come from memory; W =
tuning.stacked_row_from, 0: any E: shorter rows, read from cache, ran slower stacked). The
same terms are ⊕-added into the same cells; only their grouping changes, as ⊕ is
associative (a real sum may round differently, as walk chains do):
proofs_notes/stacked_rows.md. An E that is a constant (a register block's width) is
left alone: C unrolls that loop whole."""
from __future__ import annotations

from dataclasses import replace

from ... import imp
from ...imp import Accum, Assign, Bin, Comment, Const, Decl, If, Load, Ring, Var, While, le, seq
from .overlap_tail import _PURE


def run(prog, semiring, tuning):
    """`prog` with each such loop (module docstring) stacked; `prog` itself when
    the count is below 2 or no loop qualifies."""
    k = tuning.stacked_row_count
    if k < 2:
        return prog
    loops = dict.fromkeys(s for s in imp.statements(prog.body) if isinstance(s, While))
    found = [(loop, shape) for loop in loops if (shape := _shape(loop)) is not None]
    body = prog.body
    for loop, shape in found:
        stacked = _stacked(shape, k)
        if tuning.stacked_row_from > 0:     # the row's length: the inner loop's end
            stacked = If(le(Const(tuning.stacked_row_from), shape[3].cond.b), stacked)
        body = imp.replaced(body, loop, seq(stacked, loop))
    return prog if not found else replace(prog, body=body)


def _shape(loop: While):
    """(i, inits, inner loop, its decls, the Accum) where `loop` has the module
    docstring's form, else None."""
    match loop.cond:
        case Bin("<", Var(i), dim):
            pass
        case _:
            return None
    parts = [p for p in imp.seq_parts(loop.body) if not isinstance(p, Comment)]
    if len(parts) < 2 or parts[-1] != imp.incr(i) or not isinstance(parts[-2], While):
        return None
    *inits, inner = parts[:-1]
    match inner.cond:
        case Bin("<", Var(j), end) if not isinstance(end, Const):
            pass
        case _:
            return None
    body = [p for p in imp.seq_parts(inner.body) if not isinstance(p, Comment)]
    if len(body) < 2 or body[-1] != imp.incr(j) or not isinstance(body[-2], Accum):
        return None
    *decls, acc = body[:-1]
    if not (all(isinstance(s, (Decl, Assign)) for s in inits)
            and all(isinstance(d, Decl) for d in decls)):
        return None
    changed = imp.scalars_assigned(loop.body) | imp.declared_in(loop.body) | {i}
    fixed = [s.init if isinstance(s, Decl) else s.value for s in inits] + \
        [d.init for d in decls] + [acc.index]
    if (any(i in imp.names_used(e) for e in fixed)
            or (imp.names_used(dim) | imp.names_used(end)) & changed
            or i not in imp.names_used(acc.value)):
        return None
    exprs = fixed + [acc.value, dim, end]
    if not all(isinstance(x, _PURE) for e in exprs for x in imp.subterms(e)):
        return None
    read = {x.array for e in exprs for x in imp.subterms(e) if isinstance(x, Load)}
    if acc.array in read or acc.array in imp.names_used(dim) | imp.names_used(end):
        return None
    return i, dim, inits, inner, decls, acc


def _stacked(shape, k: int) -> While:
    """The loop over k rows a pass (module docstring) of a loop of `_shape` shape."""
    i, dim, inits, inner, decls, acc = shape
    terms = [imp.substitute(acc.value, i, Bin("+", Var(i), Const(t)) if t else Var(i))
             for t in range(k)]
    while len(terms) > 1:     # a balanced ⊕ of the rows' terms
        terms = [Ring("add", a, b) for a, b in zip(terms[::2], terms[1::2])] + \
            (terms[-1:] if len(terms) % 2 else [])
    j_body = seq(*decls, Accum(acc.array, acc.index, terms[0]), imp.incr(inner.cond.a.name))
    return While(Bin("<", Bin("+", Var(i), Const(k - 1)), dim),
                 seq(imp.Comment(f"{k} rows of the Σ over {i} a pass (stacked rows)"),
                     *inits, replace(inner, body=j_body),
                     Assign(i, Bin("+", Var(i), Const(k)))))
