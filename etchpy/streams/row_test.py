"""The test of a row predicate (expr.compare, kind "value") as an Imp expression.

A value predicate's stream is its structure's access stream whose leaf value at
position q is one where its formula (expr.formula) holds and zero elsewhere
(streams.from_expr, Binding.test); `formula_test` builds that formula's Imp
expression from the position and the coordinates of the levels entered.
proofs_notes/predicates.md ("Row predicates").
"""
from __future__ import annotations

from typing import Callable

from .. import imp
from ..errors import CompileError
from ..expr import formula
from ..expr.bins import levels_below
from ..expr.compare import CompareVar
from ..imp import ZERO, Const, Load, Ring, lt, select


def dim_var(var: str) -> imp.Expr:
    return imp.Var(f"dim_{var}")


def formula_test(tv: CompareVar, first: str, names: list[str]) -> Callable:
    """test(f, start, at, coords): formula f of value predicate tv at position `at`
    of its structure and coordinates `coords` of its indices `names` (column 0
    `first`, column k <name>__c<k>, slot s <name>__p at s, numbered from `start`:
    expr.compare's `every_test`; runtime.predicates binds them). A column of
    tv.narrow is read as its integer type, as is each bound compared with it."""
    narrow = {k[0]: k for k in tv.narrow}

    def column(k, at, coords):
        return _column(tv, first, names, k, at, coords)

    def test(f, start: int, at: imp.Expr, coords: dict) -> imp.Expr:
        slot = iter(range(start, 1 << 30))

        def operand(x):
            match x[0]:
                case "col":
                    return column(x[1], at, coords)
                case "idx":
                    return _coord(tv, coords, names[x[1]])
                case "scaled":                 # arithmetic, not the semiring's ⊗
                    inner = operand(x[1])          # (its slots first: formula.slots)
                    return imp.Bin("*", operand(x[2]) if isinstance(x[2], tuple)
                                   else Const(x[2], "value"), inner)
                case "plus":                   # nor its ⊕
                    inner = operand(x[1])
                    return imp.Bin("+", inner, operand(x[2]))
            return Load(f"{tv.name}__p_vals", imp.Const(next(slot)))

        def holds(n):
            match n[0]:
                case "cmp":
                    if n[2][0] == "col" and n[2][1] in narrow:     # runtime.narrow
                        _, view, _, step = narrow[n[2][1]]
                        a = column(n[2][1], at, coords)
                        b = Load(f"{tv.name}__p_vals", Const(next(slot) * step), view=view)
                    else:
                        a, b = operand(n[2]), operand(n[3])
                    return {"<": lambda: lt(a, b), "<=": lambda: imp.le(a, b),
                            ">": lambda: lt(b, a), ">=": lambda: imp.le(b, a)}[n[1]]()
                case "and":
                    return _both(imp.and_, "&", holds(n[1]), holds(n[2]))
                case "or":
                    return _both(imp.or_, "|", holds(n[1]), holds(n[2]))
                case "true":
                    return imp.TRUE
            return imp.not_(holds(n[1]))
        return holds(f)
    return test


def _column(tv: CompareVar, first: str, names: list[str], k: int, at: imp.Expr,
            coords: dict) -> imp.Expr:
    """Column k of value predicate tv: read at position `at` of its structure
    (of `tv.through`: at the position its positions array holds there), or,
    located, at its indices' coordinates (row-major)."""
    arr = first if k == 0 and k not in tv.through else f"{tv.name}__c{k}_vals"
    where = tv.columns[k][2]
    view = next((v for j, v, _, _ in tv.narrow if j == k), "")
    if k in tv.through:
        return Load(arr, Load(f"{tv.name}__w{k}_vals", at, view=tv.through_view))
    if where is None:
        return Load(arr, at, view=view)
    flat: imp.Expr = ZERO
    for p in where:
        flat = imp.add(imp.mul(flat, dim_var(names[p])), _coord(tv, coords, names[p]))
    return Load(arr, flat)


def _coord(tv: CompareVar, coords: dict, name: str) -> imp.Expr:
    """The coordinate of index `name` at tv's entry; CompileError when its level
    notes none (a run list: one position holds a run of coordinates)."""
    if name not in coords:
        raise CompileError(f"{tv.name}: its test reads index {name}, whose level stores "
                           f"runs of coordinates (one position, many coordinates)")
    return coords[name]


def _both(fold, op: str, a: imp.Expr, b: imp.Expr) -> imp.Expr:
    """a AND b (op "&") or a OR b ("|") with both sides evaluated: every load of a
    row test reads an entry's own position or located coordinates, in bounds
    whatever the other side gives, so no short circuit is needed and the test
    compiles without branches (a constant side still folds)."""
    folded = fold(a, b)
    if folded in (a, b, imp.TRUE, imp.FALSE):
        return folded
    return imp.Bin(op, a, b)


def row_value(tv: CompareVar, first: str, names: list[str], sr) -> Callable:
    """The leaf value of value predicate tv at position `at` and coordinates
    `coords`: where its test (`row_test`) holds, the ⊗ of its `weights`
    columns' values there (the semiring's one when it has none), ⊗ the ⊕ of
    its terms' values (`_terms`), else zero; with no test (expr.formula.TRUE)
    the product alone."""
    test = formula_test(tv, first, names)
    one = Const(sr.one, "value")

    def value(at: imp.Expr, coords: dict) -> imp.Expr:
        at = _structure_position(tv, at, coords)
        w: imp.Expr = one
        for k in tv.weights:
            w = _times(one, w, _column(tv, first, names, k, at, coords))
        if tv.terms:
            w = _times(one, w, _terms(tv, first, names, sr, test, at, coords))
        if tv.tests == formula.TRUE:
            return w
        return select(test(tv.tests, 0, at, coords), w, Const(sr.zero, "value"))
    return value


def _times(one, w, x):
    return x if w == one else Ring("mul", w, x)


def _terms(tv: CompareVar, first: str, names: list, sr, test, at, coords) -> imp.Expr:
    """The ⊕ of tv's terms (expr.sums) at position `at`: each, where its test
    holds and its pinned coordinates are its constants, the ⊗ of its numbers
    and its columns' values, else zero."""
    one, total = Const(sr.one, "value"), None
    start = len(formula.slots(tv.tests))
    for cols, located, holds, numbers, pins in tv.terms:
        t: imp.Expr = one
        for c in numbers:
            t = _times(one, t, Const(sr.literal(c), "value"))
        for k in cols + located:
            t = _times(one, t, _column(tv, first, names, k, at, coords))
        if holds != formula.TRUE:
            t = select(test(holds, start, at, coords), t, Const(sr.zero, "value"))
            start += len(formula.slots(holds))
        if pins:                # outermost: schedule.fixed_coordinates finds it
            fixed = imp.TRUE
            for p, c in pins:
                fixed = imp.and_(fixed, imp.eq(_coord(tv, coords, names[p]), Const(c, "index")))
            t = select(fixed, t, Const(sr.zero, "value"))
        total = t if total is None else Ring("add", total, t)
    return total


def level_arrays(tv: CompareVar, levels: tuple, first: str) -> tuple:
    """A value predicate's level arrays: its structure's, then each bins level's
    column as its source (formats.bins: role "src"), then its dense levels'."""
    n = len(levels) - levels_below(tv)
    return levels[:n] + tuple({"src": first if k == 0 else f"{tv.name}__c{k}_vals"}
                              for k, _ in tv.bins) + levels[n + len(tv.bins):]


def _structure_position(tv: CompareVar, at: imp.Expr, coords: dict) -> imp.Expr:
    """The position of tv's structure's entry: `at` itself below its bins levels
    (each its parent's position); with dense levels of its terms below, the
    position entered at its structure's last level (streams.from_expr notes it
    as "@<level>")."""
    below = levels_below(tv)
    if below == len(tv.bins):
        return at
    key = f"@{tv.order - below - 1}"
    if key not in coords:
        raise CompileError(f"{tv.name}: its structure's position is not known at its leaf")
    return coords[key]
