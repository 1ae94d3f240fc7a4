"""AND, OR and NOT of comparisons (`&` or `*`, `|`, `~`), with SQL's meaning.

A comparison is a 0/1 factor (expr.compare); over the rows of a query (the
entries every factor stores) these build 0/1 factors again:

    a & b     the product a·b. Two value predicates at the same indices become one
              (their formulas joined: one structure walked, one test per entry);
              two ranges of one index, one range
    a | b     one predicate when a and b are value predicates at the same indices,
              or tests of one index (a set of codes); otherwise a + (~a)·b, whose
              terms are disjoint, so a row where both hold counts once, and which
              needs no negation in the semiring
    ~a        a value predicate: the stored entries where its test fails (never a
              key tuple that no row gave); a test of one index: the other codes;
              i < j: i >= j; a product: ~x | ~y; a sum built by `|`: ~x · ~y

proofs_notes/predicates.md ("Boolean structure").
"""
from __future__ import annotations

from ..errors import ExpressionTypeError
from . import formula
from .compare import (CompareVar, Predicate, between, code_predicate, compare, operand,
                      row_predicate)
from .nodes import Add, Expr, Mul, show


def conjunction(a, b) -> Expr:
    """a AND b (see the module docstring)."""
    a, b = _factor(a, "&"), _factor(b, "&")
    if _value(a) and _value(b) and a.indices == b.indices:
        cols, fb = _joined_columns(a.tensor, b.tensor)
        return row_predicate(cols, ("and", a.tensor.tests, fb), a.indices)
    if _kind(a) == _kind(b) == "range" and a.indices == b.indices:
        return between(a.indices[0], tests=a.tensor.tests + b.tensor.tests)
    if _on_codes(a) and _on_codes(b) and a.indices == b.indices:
        return code_predicate(a.indices[0], ("and", _code_formula(a), _code_formula(b)))
    return Mul(a, b)


def disjunction(a, b) -> Expr:
    """a OR b (see the module docstring)."""
    a, b = _factor(a, "|"), _factor(b, "|")
    if _value(a) and _value(b) and a.indices == b.indices:
        cols, fb = _joined_columns(a.tensor, b.tensor)
        return row_predicate(cols, ("or", a.tensor.tests, fb), a.indices)
    if _on_codes(a) and _on_codes(b) and a.indices == b.indices:
        return code_predicate(a.indices[0], ("or", _code_formula(a), _code_formula(b)))
    return Add(a, _and(negation(a), b))


def negation(a) -> Expr:
    """NOT a (see the module docstring)."""
    a = _factor(a, "~")
    match a:
        case Predicate() if _value(a):
            return row_predicate(a.tensor.columns, formula.negated(a.tensor.tests), a.indices)
        case Predicate() if _on_codes(a):
            return code_predicate(a.indices[0], formula.negated(_code_formula(a)))
        case Predicate() if _kind(a) == "index":
            x, y = a.indices
            return compare(x, formula.NEGATED[a.tensor.tests[0][0]], y)
        case Mul(x, y):
            return disjunction(negation(x), negation(y))
        case Add(x, y):
            return _and(negation(x), negation(y))
    raise ExpressionTypeError(f"~{show(a)}: NOT applies to comparisons and to their "
                              f"combinations by &, | and ~, not to a tensor's values")


def _and(a, b) -> Expr:
    return conjunction(a, b) if isinstance(a, Predicate) and isinstance(b, Predicate) \
        else Mul(a, b)


def _factor(a, op: str) -> Expr:
    if not isinstance(a, Expr):
        raise ExpressionTypeError(f"{op} combines comparisons, got {a!r}")
    return a


def _kind(a) -> str | None:
    return a.tensor.kind if isinstance(a, Predicate) else None


def _value(a) -> bool:
    return _kind(a) == "value"


def _on_codes(a) -> bool:
    return _kind(a) in ("range", "codes")


def _code_formula(a: Predicate):
    """The test formula of a range or codes predicate, over ("idx",)."""
    tv: CompareVar = a.tensor
    if tv.kind == "codes":
        return tv.tests
    parts = [("cmp", op, ("idx",), operand(b)) for op, b in tv.tests]
    out = parts[0]
    for p in parts[1:]:
        out = ("and", out, p)
    return out


def _joined_columns(ta: CompareVar, tb: CompareVar):
    """(columns of ta then tb's new ones, tb's formula renumbered onto them)."""
    cols = list(ta.columns)
    where = {}
    for k, col in enumerate(tb.columns):
        names = [c[0] for c in cols]
        if col[0] in names:
            where[k] = names.index(col[0])
        else:
            where[k] = len(cols)
            cols.append(col)
    return tuple(cols), formula.renumbered(tb.tests, where)


def _swapped(fn):
    return lambda a, b: fn(b, a)


def _product(a, b) -> Expr:
    """a * b of a comparison: two comparisons join as `&` does, else Mul."""
    return conjunction(a, b) if isinstance(b, Predicate) else Expr.__mul__(a, b)


# the syntax on every expression (as compare.py sets Comparable.build)
Predicate.__mul__ = _product
Expr.__and__, Expr.__rand__ = conjunction, _swapped(conjunction)
Expr.__or__, Expr.__ror__, Expr.__invert__ = disjunction, _swapped(disjunction), negation
