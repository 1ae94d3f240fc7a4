"""Comparisons of a value column read in an order keyed by that value, as ranges.

A table's order may be keyed by a value column (relational.by_value: lineitem
by receipt date, then its keys): its first level is the value's distinct
values, coded in order, and the column read in that order (a `KeyedVar`) holds
at every entry V[c], c the entry's code at that level, V nondecreasing. A
comparison of the column with a bound, `R[r, o] >= lo`, then holds at an entry
exactly when its code r lies in a range of codes: those whose value passes,
consecutive because V is monotone. `ranges(e)` splits every value predicate
(expr.compare, a row test) whose formula is a conjunction: each conjunct
comparing a keyed column with bounds (parameters or numbers) becomes a range
on the keyed index (a CompareVar of kind "range" whose `keyed` names the
column: its codes are worked out at call time from the tensor passed,
runtime.keyed), a skip that searches to its start and stops at its end; the
other conjuncts stay the row test, over the same columns (so the entries it
holds at are those every column stores, as before). A conjunct under an OR or
a NOT stays in the row test.

    ranges(e)     e with each such comparison a range of codes (Tuning.keyed_ranges)

proofs_notes/predicates.md ("A comparison on a value-keyed order").
"""
from __future__ import annotations

import hashlib
from dataclasses import fields, replace

from . import formula
from .compare import OPS, CompareVar, Predicate, token
from .nodes import COMPARE_PREFIX, Access, Expr, Mul
from ..formats import Format


def ranges(e: Expr) -> Expr:
    """e with the comparisons of keyed columns with bounds read as ranges of the
    keyed index's codes (module docstring); e itself when there is none."""
    if isinstance(e, Access):
        return _split(e)
    changed = {}
    for f in fields(e):
        v = getattr(e, f.name)
        if isinstance(v, Expr):
            new = ranges(v)
            if new is not v:
                changed[f.name] = new
    return replace(e, **changed) if changed else e


def _split(acc: Access) -> Expr:
    tv = acc.tensor
    if not (isinstance(tv, CompareVar) and tv.kind == "value" and tv.keyed
            and not tv.weights):
        return acc
    keyed = {name: (by, fmt) for name, by, fmt in tv.keyed}
    tests: dict[str, list] = {}
    rest = []
    for c in _conjuncts(tv.tests):
        if c[0] == "cmp" and c[2][0] == "col" and c[3][0] in formula.BOUNDS:
            name, _, at = tv.columns[c[2][1]]
            if at is None and name in keyed:        # (a "lin" bound, t - 1, as it is)
                tests.setdefault(name, []).append((c[1], c[3] if c[3][0] == "lin" else c[3][1]))
                continue
        rest.append(c)
    if not tests:
        return acc
    out: Expr = Predicate(_rest(tv, rest), acc.indices)
    for name, ts in sorted(tests.items()):
        by, fmt = keyed[name]
        out = Mul(keyed_range(acc.indices[by], name, by, fmt, tuple(ts)), out)
    return out


def keyed_range(i, name: str, by: int, fmt, tests: tuple) -> Predicate:
    """The codes of index i (mode `by` of keyed column `name`, stored in `fmt`)
    whose value passes every (op, bound) of `tests`."""
    words = [f"{OPS[o]}_{formula.operand_word(b, [], token) if isinstance(b, tuple) else token(b)}"
             for o, b in tests]
    var = CompareVar("_".join([f"{COMPARE_PREFIX}{i}_of_{name}"] + words), 1,
                     Format(["compressed"]), kind="range", tests=tests, source=name,
                     keyed=((name, by, fmt),))
    return Predicate(var, (i,))


def _rest(tv: CompareVar, rest: list) -> CompareVar:
    """tv with the conjuncts `rest` alone (formula.TRUE when none: the row test
    then only says which entries every column stores)."""
    f = formula.TRUE
    for c in rest:
        f = c if f == formula.TRUE else ("and", f, c)
    names = [c[0] for c in tv.columns]
    word = formula.token(f, names, token) if f != formula.TRUE else "rows_of_" + "_".join(
        dict.fromkeys(names))[:40]
    digest = hashlib.sha1(repr((tv.columns, f)).encode()).hexdigest()[:8]
    return replace(tv, name=f"{COMPARE_PREFIX}{word}_{digest}", tests=f, keyed=())


def _conjuncts(f):
    """The conjuncts of formula f (its top-level ANDs, flattened)."""
    if f[0] == "and":
        yield from _conjuncts(f[1])
        yield from _conjuncts(f[2])
    else:
        yield f
