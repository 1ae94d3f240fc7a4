"""AND, OR and NOT of comparisons (`&` or `*`, `|`, `~`), with SQL's meaning.

A comparison is a 0/1 factor (expr.compare); over the rows of a query (the
entries every factor stores) these build 0/1 factors again:

    a & b     the product a·b. Two value predicates at the same indices become one
              (their formulas joined: one structure walked, one test per entry);
              two ranges of one index, one range
    a | b     one predicate when a and b are value predicates at the same indices,
              or tests of one index (a set of codes); otherwise a + (~a)·b, whose
              terms are disjoint, so a row where both hold counts once, and which
              needs no negation in the semiring. When both clauses test some of
              the indices alone (a part's brand in each clause over lines), the
              OR of those tests is a factor of its own as well, implied by the
              whole (a skip at those indices, whatever else each clause asks)
    ~a        a value predicate: the stored entries where its test fails (never a
              key tuple that no row gave); a test of one index: the other codes;
              i < j: i >= j; a product: ~x | ~y; a sum built by `|`: ~x · ~y

proofs_notes/predicates.md ("Boolean structure").
"""
from __future__ import annotations

from ..errors import ExpressionTypeError
from . import formula, offsets
from .compare import (CompareVar, Predicate, between, code_predicate, compare, index_pair,
                      operand, row_predicate)
from .nodes import Add, Expr, Index, Mul, show
from .walk import spine


def conjunction(a, b, *, fuse_all: bool = False) -> Expr:
    """a AND b (see the module docstring). `fuse_all`: also join a test of an
    index, or of a dense tensor at some of the indices, into a row predicate
    (how an OR's operands become one test; as factors of a product they stay
    apart, a range being a skip)."""
    a, b = _factor(a, "&"), _factor(b, "&")
    if _kind(a) == _kind(b) == "range" and a.indices == b.indices:
        return between(a.indices[0], tests=a.tensor.tests + b.tensor.tests)
    if _on_codes(a) and _on_codes(b) and a.indices == b.indices:
        return code_predicate(a.indices[0], ("and", _code_formula(a), _code_formula(b)))
    aligned = _value(a) and _value(b) and a.indices == b.indices
    fused = _fused(a, b, "and") if aligned or fuse_all else None
    return fused if fused is not None else Mul(a, b)


def disjunction(a, b) -> Expr:
    """a OR b (see the module docstring)."""
    a, b = _factor(a, "|"), _factor(b, "|")
    common, a, b = _common_factors(a, b)
    if common:
        return _product(*common, *([] if a is None or b is None else [disjunction(a, b)]))
    return _product(*_implied(a, b), _either(a, b))


def _either(a, b) -> Expr:
    """a OR b with no factor in common."""
    if _on_codes(a) and _on_codes(b) and a.indices == b.indices:
        return code_predicate(a.indices[0], ("or", _code_formula(a), _code_formula(b)))
    pa, pb = _one_predicate(a), _one_predicate(b)
    fused = _fused(pa, pb, "or") if pa is not None and pb is not None else None
    if fused is not None:
        return fused
    return Add(a, _and(negation(a), b))


def negation(a) -> Expr:
    """NOT a (see the module docstring)."""
    a = _factor(a, "~")
    match a:
        case Predicate() if _value(a):
            return row_predicate(a.tensor.columns, formula.negated(a.tensor.tests), a.indices,
                                 a.tensor.keyed)
        case Predicate() if _on_codes(a):
            return code_predicate(a.indices[0], formula.negated(_code_formula(a)))
        case Predicate() if _kind(a) == "index":
            return _index_negated(a)
        case Mul(x, y):
            return disjunction(negation(x), negation(y))
        case Add(x, y):
            return _and(negation(x), negation(y))
    raise ExpressionTypeError(f"~{show(a)}: NOT applies to comparisons and to their "
                              f"combinations by &, | and ~, not to a tensor's values")


def eq(a, b) -> Expr:
    """`a = b` as a 0/1 factor, the operands as `compare` takes them (`==` of two
    expressions is their structural equality, so this is a function): a
    tensor access with a bound, another access (at the same indices, or a
    dense one at some of them: `ep.eq(Pc[p, s], Least[p])`) or one of its
    indices; an index with a bound. It is (a <= b) & (a >= b): one test per
    entry, or one code of the index. NaN equals nothing.

        >>> (i,) = ep.indices("i")
        >>> ep.eq(i, 3)
        cmp_i_le_3_ge_3[i]
    """
    if (same := _index_equal(a, b)) is not None:   # i = j + d: one code (expr.offsets)
        return same
    a, b = _bound_right(a, b)
    return conjunction(compare(a, "<=", b), compare(a, ">=", b))


def _index_equal(a, b):
    """ep.eq of two index terms (an index, maybe plus an integer), else None."""
    ta, tb = offsets.index_term(a), offsets.index_term(b)
    if ta is None or tb is None:
        return None
    return index_pair(ta[0], "==", tb[0], tb[1] - ta[1])


def _index_negated(p):
    """NOT of an index comparison: the opposite test (== : < or >)."""
    (op, _), = p.tensor.tests
    x, y = p.indices
    d = offsets.offset_of(p.tensor)
    if op == "==":
        return disjunction(index_pair(x, "<", y, d), index_pair(x, ">", y, d))
    return index_pair(x, formula.NEGATED[op], y, d)


def _bound_right(a, b) -> tuple:
    """(a, b), or (b, a) when a is a bound (a number or a parameter name) and b
    is not: = and <> are symmetric, and a comparison takes its bound second."""
    return (b, a) if isinstance(a, (str, int, float)) and isinstance(b, (Expr, Index)) \
        else (a, b)


def ne(a, b) -> Expr:
    """`a <> b` as a 0/1 factor (operands as `eq`): (a < b) | (a > b), so, as SQL's
    <> with a NULL, a NaN value passes no test.

        >>> (i,) = ep.indices("i")
        >>> ep.ne(i, 3)
        cmp_i_or_idx_lt_3_idx_gt_3_33591bbb[i]
    """
    a, b = _bound_right(a, b)
    return disjunction(compare(a, "<", b), compare(a, ">", b))


def _and(a, b) -> Expr:
    return conjunction(a, b) if isinstance(a, Predicate) and isinstance(b, Predicate) \
        else Mul(a, b)


def _common_factors(a, b):
    """(the factors of both products a and b, what is left of a, of b): (c·x) |
    (c·y) = c·(x | y), so a test every clause repeats stays a factor of its own
    (a skip); None for a clause that is all common factors ((c) | (c·y) = c)."""
    fa, fb = list(spine(a, Mul)), list(spine(b, Mul))
    common = [f for f in fa if f in fb]
    if not common:
        return [], a, b
    rest_a, rest_b = [f for f in fa if f not in common], [f for f in fb if f not in common]
    return common, _product(*rest_a) if rest_a else None, _product(*rest_b) if rest_b else None


def _implied(a, b) -> list:
    """For each set S of indices that comparisons of both clauses read alone, S
    smaller than the clauses' indices: (the comparisons of a over S) | (those of
    b over S), a 0/1 factor that a | b implies, so that (a | b) equals it times
    a | b (proofs_notes/predicates.md, "Implied factors")."""
    fa, fb = list(spine(a, Mul)), list(spine(b, Mul))
    every = {ix for f in fa + fb for ix in getattr(f, "indices", ())}
    out, seen = [], []
    for f in fa:
        at = set(f.indices) if isinstance(f, Predicate) else every
        if at >= every or at in seen:
            continue
        seen.append(at)
        xa, xb = _over(fa, at), _over(fb, at)
        if xa and xb:
            out.append(disjunction(_product(*xa), _product(*xb)))
    return out


def _over(fs: list, at: set) -> list:
    return [f for f in fs if isinstance(f, Predicate) and set(f.indices) <= at]


def _product(*fs) -> Expr:
    out = fs[0]
    for f in fs[1:]:
        out = Mul(out, f)
    return out


def _one_predicate(e) -> Predicate | None:
    """e (a comparison, or a product of comparisons) as one predicate, when one
    structure holds all its tests; else None."""
    if isinstance(e, Predicate):
        return e
    if isinstance(e, Mul):
        x, y = _one_predicate(e.a), _one_predicate(e.b)
        if x is not None and y is not None:
            out = conjunction(x, y, fuse_all=True)
            return out if isinstance(out, Predicate) else None
    return None


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


def _fused(a: Predicate, b: Predicate, how: str) -> Predicate | None:
    """One row predicate of a `how` b: a value predicate whose indices hold the
    other's is the structure; None when neither is, or a column cannot be read
    from it (a tensor read at some of its indices must be row-major dense)."""
    for s, t, first in ((a, b, True), (b, a, False)):
        if not _value(s) or _kind(t) not in ("value", "range", "codes") \
                or not set(t.indices) <= set(s.indices):
            continue
        joined = _joined(s, t)
        if joined is not None:
            cols, ft = joined
            f = (how, s.tensor.tests, ft) if first else (how, ft, s.tensor.tests)
            keyed = tuple(sorted(set(s.tensor.keyed) | set(t.tensor.keyed),
                                 key=lambda k: k[:2]))
            return row_predicate(cols, f, s.indices, keyed)
    return None


def _joined(s: Predicate, t: Predicate):
    """(s's columns then t's new ones, t's formula over them and s's indices)."""
    idx = {p: s.indices.index(ix) for p, ix in enumerate(t.indices)}
    if not _value(t):
        return tuple(s.tensor.columns), formula.remapped(_code_formula(t), {}, idx)
    cols, where = list(s.tensor.columns), {}
    for k, (name, fmt, at) in enumerate(t.tensor.columns):
        own = tuple(range(len(t.indices))) if at is None else at
        pos = tuple(idx[p] for p in own)
        entry = (name, fmt, None if pos == tuple(range(len(s.indices))) else pos)
        if entry[2] is not None and not fmt.is_row_major_dense:
            return None
        same = [j for j, c in enumerate(cols) if (c[0], c[2]) == (name, entry[2])]
        where[k] = same[0] if same else len(cols)
        if not same:
            cols.append(entry)
    return tuple(cols), formula.remapped(t.tensor.tests, where, idx)


def _swapped(fn):
    return lambda a, b: fn(b, a)


def _times(a, b) -> Expr:
    """a * b of a comparison: two comparisons join as `&` does, else Mul."""
    return conjunction(a, b) if isinstance(b, Predicate) else Expr.__mul__(a, b)


# the syntax on every expression (as compare.py sets Comparable.build)
Predicate.__mul__ = _times
Expr.__and__, Expr.__rand__ = conjunction, _swapped(conjunction)
Expr.__or__, Expr.__ror__, Expr.__invert__ = disjunction, _swapped(disjunction), negation
