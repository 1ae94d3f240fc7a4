"""Smart constructors of Imp: they fold constants so that staged code stays
readable, and never change meaning (each returns a node equal in value to the
plain node it stands for)."""
from __future__ import annotations

from .nodes import (FALSE, ONE, SKIP, TRUE, ZERO, Assign, Bin, Const, Expr, If, Not, Select,
                    Seq, Stmt, Var)


def seq(*stmts) -> Stmt:
    """The statements in order, nested Seqs flattened and Nones dropped."""
    out = []
    for s in stmts:
        match s:
            case None:
                pass
            case Seq(inner):
                out.extend(inner)
            case _:
                out.append(s)
    return out[0] if len(out) == 1 else Seq(tuple(out))


def if_(cond: Expr, then: Stmt, else_=None) -> Stmt:
    if cond == TRUE:
        return then
    if cond == FALSE:
        return else_ if else_ is not None else SKIP
    return If(cond, then, else_)


def and_(a: Expr, b: Expr) -> Expr:
    if a == TRUE:
        return b
    if b == TRUE:
        return a
    if FALSE in (a, b):
        return FALSE
    return Bin("&&", a, b)


def or_(a: Expr, b: Expr) -> Expr:
    if a == FALSE:
        return b
    if b == FALSE:
        return a
    if TRUE in (a, b):
        return TRUE
    return Bin("||", a, b)


def not_(a: Expr) -> Expr:
    match a:
        case Const(v, "bool"):
            return Const(not v, "bool")
        case Not(inner):
            return inner
    return Not(a)


def add(a: Expr, b: Expr) -> Expr:
    if b == ZERO:
        return a
    if a == ZERO:
        return b
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(a.value + b.value)
    return Bin("+", a, b)


def mul(a: Expr, b: Expr) -> Expr:
    if ONE == a:
        return b
    if ONE == b:
        return a
    if ZERO in (a, b):
        return ZERO
    return Bin("*", a, b)


def lt(a, b):
    return Bin("<", a, b)


def le(a, b):
    return Bin("<=", a, b)


def eq(a, b):
    return Bin("==", a, b)


def max_(a, b):
    return a if a == b else Bin("max", a, b)


def min_(a, b):
    return a if a == b else Bin("min", a, b)


def select(c, a, b):
    if c == TRUE:
        return a
    if c == FALSE:
        return b
    return Select(c, a, b)


def incr(name: str) -> Stmt:
    """name := name + 1."""
    return Assign(name, Bin("+", Var(name), ONE))


def min_bound(a, b):
    """The smaller of two upper bounds, either of which may be unknown (None)."""
    if a is None or b is None:
        return b if a is None else a
    return min_(a, b)


def sum_bound(a, b):
    """The sum of two upper bounds; unknown (None) when either is."""
    return None if a is None or b is None else add(a, b)


def sort_bits_words(size: Expr) -> Expr:
    """Words of a `bits` array that marks indices < size for `ForSorted`: one bit
    per index (size/64 + 1 words), then one summary bit per word of those
    (size/4096 + 1 words), so that the walk visits only the words that hold
    marks."""
    return add(add(Bin("/", size, Const(64)), Const(1)),
               add(Bin("/", size, Const(4096)), Const(1)))
