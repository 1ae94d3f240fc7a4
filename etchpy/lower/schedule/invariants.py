"""Values a loop does not change, computed once before it; switched by
tuning.hoist_invariants.

A walk's leaf often multiplies each entry by a factor the walk does not change:
Σ_i X[i,j]·(exp(t[i]) − y[i]) scatters row i's entries, each times the row's
`exp(t[i]) + -1·y[i]`, t a temporary of the same kernel. The C compiler takes such
a factor out of the loop only when it can tell the loop's stores do not reach what
the factor reads and its calls have no effect: a heap array (not a `restrict`
parameter) or a libm map (which may set `errno`) keeps it in the loop, evaluated
once per entry (an `exp` per entry where one per row is needed). Here it is
declared before the loop, under the loop's own test:

    while (c) B[e]    becomes    if (c) { v = e; while (c) B[v] }

Taken: a semiring-value term e (a Ring at its root) of a top statement of the
loop's body that each pass runs before anything could leave or branch (the body's
declarations, assignments and stores up to its first other statement), at a place
evaluated whenever that statement runs (not a select's branch, not right of && or
||), reading no scalar the body assigns or declares and no array it writes (a
statement kind this module does not know counts every name it uses as written),
and worth a variable: e holds a map other than ⊕ and ⊗, or a load of an array
that is not an input parameter. A term holding a map moves only over a float64
carrier, where every map's C value has the carrier's type (a float32 kernel's
`exp` is a double until the expression around it is stored; a complex one's
`cabs` is real). e reads its arrays directly (no index read from
another array, no probe or bit test): a coordinate read from an index array, which
the build with fused checks clamps where it is read, is never moved. Nothing else moves; every loop keeps its `walk`
note, so the passes after this one find their loops as before.

Why the result is the same: c is pure, so testing it once more changes nothing.
When the loop runs, its first pass reaches e's statement before any exit, and e
reads nothing the body changes, so e has one value in every pass, the value it
has after c first holds: v. When c fails, neither the loop nor v's declaration
runs. proofs_notes/invariants.md states the law; tests/lower/schedule/
test_invariants.py checks it.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ... import imp
from ...imp import (Accum, Assign, Bin, Bit, Block, Comment, Decl, If, Load, Opaque,
                    Prefetch, Probe, Ring, Select, Seq, Store, Var, While)
from ..program import program_names

_SIMPLE = (Decl, Assign, Store, Accum, Opaque, Prefetch, Comment)
_KNOWN = _SIMPLE + (Seq, Block, If, While, imp.Break)
_STATEMENTS = imp.Stmt.__args__


def run(prog, semiring, tuning):
    """`prog` with each loop's invariant values declared before it (the module
    docstring); `prog` itself when none is taken."""
    inputs = {p.name for p in prog.params if p.kind == "in_array"}
    names = program_names(prog)
    maps = semiring is not None and np.dtype(semiring.dtype) == np.float64
    body = _walk(prog.body, (inputs, maps), names)
    return prog if body is prog.body else replace(prog, body=body)


def _walk(s, inputs: tuple, names):
    """s (a statement or a tuple of them) with every loop inside it rewritten,
    innermost first."""
    if isinstance(s, tuple):
        return imp.map_parts(s, lambda x: _walk(x, inputs, names))
    if not isinstance(s, _STATEMENTS) or isinstance(s, _SIMPLE):
        return s
    t = imp.map_parts(s, lambda x: _walk(x, inputs, names))
    return _hoisted(t, inputs, names) if isinstance(t, While) else t


def _hoisted(loop: While, inputs: tuple, names):
    """The loop under its test with its invariant values declared first, or the loop."""
    changed = _changed(loop.body)
    top = loop.body.stmts if isinstance(loop.body, Seq) else (loop.body,)
    found: dict = {}
    for s in top:
        if not isinstance(s, _SIMPLE):
            break
        for e in _evaluated(s):
            _collect(e, changed, inputs, found)
    if not found:
        return loop
    decls, body = [], loop.body
    for e in found:
        v = names.fresh("row_value")
        decls.append(Decl(v, "value", e))
        body = imp.replaced(body, e, Var(v))
    return If(loop.cond, imp.seq(*decls, replace(loop, body=body)))


def _evaluated(s) -> tuple:
    """The expressions a simple statement evaluates each time it runs."""
    match s:
        case Decl(_, _, init):
            return (init,)
        case Assign(_, value):
            return (value,)
        case Store(_, index, value) | Accum(_, index, value):
            return (index, value)
    return ()


def _collect(e, changed: set, inputs: tuple, found: dict) -> None:
    """Adds to `found` the largest worthwhile invariant Ring terms of e at places
    evaluated whenever e is."""
    if isinstance(e, Ring) and _worth(e, inputs) and not imp.names_used(e) & changed:
        found[e] = None
        return
    match e:
        case Select(cond, _, _):
            _collect(cond, changed, inputs, found)
        case Bin(op, a, _) if op in ("&&", "||"):
            _collect(a, changed, inputs, found)
        case _:
            for x in imp.parts(e):
                if isinstance(x, imp.Expr.__args__):
                    _collect(x, changed, inputs, found)


def _worth(e, inputs: tuple) -> bool:
    """Whether e holds a map other than ⊕ and ⊗ or a load of a non-input array, and
    reads every array directly (no index read from an array: what fused checks
    clamp stays where they find it; no probe, no bit). `inputs`: (the input
    arrays, whether maps may move: a float64 carrier, where every map's C value
    is the carrier's type; elsewhere a map's C value (a libm double under a
    float32 carrier, cabs's real under a complex one) would be converted early)."""
    arrays, maps = inputs
    terms = list(imp.subterms(e))
    if any(isinstance(x, (Bit, Probe)) or isinstance(x, Load) and any(
            isinstance(y, (Load, Bit, Probe)) for y in imp.subterms(x.index))
            or isinstance(x, Ring) and x.op not in ("add", "mul") and not maps
            for x in terms):
        return False
    return any(isinstance(x, Ring) and x.op not in ("add", "mul")
               or isinstance(x, Load) and x.array not in arrays for x in terms)


def _changed(body) -> set:
    """Every name the body may change: scalars it assigns or declares, arrays it
    writes, and every name of a statement kind not known here."""
    out = imp.scalars_assigned(body) | imp.declared_in(body) | imp.arrays_written(body)
    for s in imp.statements(body):
        if not isinstance(s, _KNOWN):
            out |= imp.names_used(s, kept=False)
    return out
