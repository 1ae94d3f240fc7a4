"""Dense stores' last block overlapped, switched by tuning.overlap_tail, in
programs of one-byte values (the boolean semiring). An innermost loop whose
only effect is one store of a pure value read from arrays,

    while (v < end) { decls; out[f(v)] := e(v); v := v + 1 }

(decls: scalar declarations; e and f read no array the loop writes, and
nothing the loop assigns but v and its declarations; end is not a constant),
becomes, with W = tuning.overlap_values,

    if (W <= end - v) {
        last := end - W
        while (v < last) { k := 0; while (k < W) { body at v + k; k := k + 1 }; v := v + W }
        k := 0; while (k < W) { body at last + k; k := k + 1 }
        v := end
    } else { the loop as it was }

The blocks have a constant trip count, which C compiles as whole vectors: the
loop's remainder (end - v modulo the vector's width, up to 31 bytes) no longer
runs one value at a time, it is the last block, which starts W before the end
and so stores again some values the blocks before it stored. Each value
stored again is the one stored before, as e reads nothing the loop writes,
and the last store to each place is the original loop's last store to it (the
last block runs in order up to end - 1); every block's v lies in the loop's
own range, so nothing is read that the loop did not read.
proofs_notes/overlap_tail.md. Wider values have remainders of at most 7
values, and blocks of them measured slower (docs/performance.md, "Rows'
remainders as an overlapped block").
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ... import imp
from ...imp import (Assign, Bin, Bit, Block, Comment, Const, Decl, If, Load, Not, Ring, Select,
                    Store, Var, While, le, lt, seq)
from .fused_checks import program_names


def run(prog, semiring, tuning):
    """`prog` with each such loop (module docstring) given its overlapped last
    block, in a program of one-byte values (the boolean semiring); `prog`
    itself for wider values, when a block holds fewer than two values, or when
    no loop qualifies."""
    width = tuning.overlap_values
    if np.dtype(semiring.dtype).itemsize != 1 or width < 2:
        return prog
    found = list(dict.fromkeys(s for s in imp.statements(prog.body)
                               if isinstance(s, While) and _shape(s) is not None))
    if not found:
        return prog
    names, body = program_names(prog), prog.body
    for loop in found:
        body = imp.replaced(body, loop, _overlapped(loop, width, names))
    return replace(prog, body=body)


def _shape(loop: While):
    """(v, end) where `loop` is `while (v < end) {decls; one store; v := v + 1}`
    with a pure stored value (module docstring), else None."""
    match loop.cond:
        case Bin("<", Var(v), end):
            pass
        case _:
            return None
    if isinstance(end, Const):
        return None                 # a known count: C unrolls or vectorises it whole
    parts = [p for p in imp.seq_parts(loop.body) if not isinstance(p, Comment)]
    if len(parts) < 2 or parts[-1] != imp.incr(v):
        return None
    *decls, store = parts[:-1]
    if not isinstance(store, Store) or not all(isinstance(d, Decl) for d in decls):
        return None
    if imp.names_used(end) & ({v} | {d.name for d in decls}):
        return None                 # end changes in the loop
    read = {x.array for x in imp.subterms(loop.body) if isinstance(x, Load)}
    if store.array in read or store.array in imp.names_used(end):
        return None                 # the value reads what the loop writes
    if not any(isinstance(x, Load) for x in imp.subterms(store.value)):
        return None                 # a fill: C makes it a memset
    exprs = [d.init for d in decls] + [store.index, store.value]
    if not all(isinstance(x, _PURE) for e in exprs for x in imp.subterms(e)):
        return None
    return v, end


def _overlapped(loop: While, width: int, names):
    v, end = _shape(loop)
    k, last = names.fresh(f"{v}_k"), names.fresh(f"{v}_last")
    body = seq(*[p for p in imp.seq_parts(loop.body)[:-1] if not isinstance(p, Comment)])
    w = Const(width)

    def block(at):
        inner = imp.substitute(body, v, Bin("+", at, Var(k)))
        return Block(seq(Decl(k, "index", Const(0)),
                         While(lt(Var(k), w), seq(inner, imp.incr(k)))))
    blocks = seq(Decl(last, "index", Bin("-", end, w)),
                 While(lt(Var(v), Var(last)), seq(block(Var(v)), Assign(v, Bin("+", Var(v), w)))),
                 block(Var(last)), Assign(v, end))
    return If(le(w, Bin("-", end, Var(v))), Block(blocks), loop)


_PURE = (Var, Const, Bin, Not, Load, Bit, Select, Ring)   # expressions that read only
