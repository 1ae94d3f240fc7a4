"""Affine operands of comparisons: `B[i] + 1 < A[i]`, `A[i] > 0.5 * B[i] + "t"`.

A side of a comparison (expr.compare) is read as a·x + b: x a plain tensor
access, an index or nothing (a bound), a and b numbers written in the
expression or names of parameters passed at call time, combined by ordinary
arithmetic (not the semiring's ⊗ and ⊕). A number is a `Lit` of the
expression (`B[i] + 1` is an Add); a parameter's name beside an expression
(`B[i] + "t"`, `"a" * B[i]`, `B[i] - "t"`) makes an `Affine`, which is a
comparison's operand and nothing else (it is no expression: a product or a sum
with it is refused). Scales and offsets are `Lin`s: a number plus parameters
each times a number; a product of two parameters is refused (no one slot holds it).
proofs_notes/predicates.md ("Affine operands").
"""
from __future__ import annotations

import numbers

import numpy as np

from ..errors import ExpressionTypeError
from .nodes import Access, Add, Comparable, Expr, Index, Lit, Mul, show


def _num(x):
    return int(x) if isinstance(x, numbers.Integral) else float(x)


class Lin(tuple):
    """c + Σ k·p: (c, ((p, k), ...)), parameters sorted, none with k = 0."""

    @staticmethod
    def of(c=0, terms=()) -> "Lin":
        merged: dict = {}
        for p, k in terms:
            merged[p] = merged.get(p, 0) + k
        return Lin((_num(c), tuple(sorted((p, _num(k)) for p, k in merged.items() if k))))

    def __add__(self, other):
        return Lin.of(self[0] + other[0], self[1] + other[1])

    def times(self, other) -> "Lin":
        """self·other; ExpressionTypeError for a product of two parameters."""
        if self[1] and other[1]:
            raise ExpressionTypeError(f"a product of two parameters ({_show(self)} times "
                                      f"{_show(other)}) is not a comparison's operand")
        return Lin.of(self[0] * other[0], tuple((p, k * other[0]) for p, k in self[1])
                      + tuple((p, k * self[0]) for p, k in other[1]))

    @property
    def number(self):
        """Its number, when it reads no parameter (else None)."""
        return None if self[1] else self[0]


ZERO, ONE = Lin.of(0), Lin.of(1)


def _show(lin: Lin) -> str:
    parts = [repr(lin[0])] if lin[0] or not lin[1] else []
    return " + ".join(parts + [f"{k}*{p!r}" if k != 1 else repr(p) for p, k in lin[1]])


class Affine(Comparable):
    """scale·base + offset (base an expression, scale and offset `Lin`s): what
    an expression with a parameter's name gives (`B[i] + "t"`); a comparison's
    operand only."""

    __slots__ = ("base", "scale", "offset")

    def __init__(self, base, scale: Lin = ONE, offset: Lin = ZERO):
        self.base, self.scale, self.offset = base, scale, offset

    def _with(self, op: str, other, right: bool = False) -> "Affine":
        x = bound(other)
        if x is None:
            raise ExpressionTypeError(f"{self!r} {op} {other!r}: a parameter's name scales "
                                      f"or offsets one tensor access in a comparison; "
                                      f"combine it with numbers and parameter names only")
        if op == "*":
            return Affine(self.base, self.scale.times(x), self.offset.times(x))
        if op == "-":
            x = x.times(Lin.of(-1)) if not right else x
            if right:               # other - self
                return Affine(self.base, self.scale.times(Lin.of(-1)),
                              self.offset.times(Lin.of(-1)) + x)
        return Affine(self.base, self.scale, self.offset + x)

    def __add__(self, other):
        return self._with("+", other)

    def __sub__(self, other):
        return self._with("-", other)

    def __rsub__(self, other):
        return self._with("-", other, right=True)

    def __mul__(self, other):
        return self._with("*", other)

    def __neg__(self):
        return self._with("*", -1)

    __radd__, __rmul__ = __add__, __mul__

    def __repr__(self):
        scale = "" if self.scale == ONE else f"({_show(self.scale)}) * "
        offset = "" if self.offset == ZERO else f" + {_show(self.offset)}"
        return (f"{scale}{show(self.base)}{offset} (a parameter's name scales or offsets "
                f"a comparison's operand only, never an expression's value)")


def with_param(e: Expr, op: str, name: str, right: bool) -> Affine:
    """`e op name` (`name op e` when `right`), name a parameter's: an Affine."""
    return Affine(e)._with(op, name, right)


Expr._with_param = staticmethod(with_param)


def bound(x) -> Lin | None:
    """A number or a parameter's name as a Lin, else None."""
    if isinstance(x, str):
        if not x.isidentifier():
            raise ExpressionTypeError(f"a comparison's bound is a number or a parameter "
                                      f"name (an identifier), got {x!r}")
        return Lin.of(0, ((x, 1),))
    if isinstance(x, (numbers.Real, np.number)) and not isinstance(x, (bool, np.bool_)) \
            and np.isreal(x) and bool(np.isfinite(x)):
        return Lin.of(x)
    return None


def affine(x):
    """(base, scale, offset) with x = scale·base + offset: base a tensor access,
    an index or None (x is a number or a parameter's name), scale and offset
    Lins; None when x is not of that form (two accesses added, an access times
    an access, a sum...)."""
    if isinstance(x, Affine):
        got = affine(x.base)
        if got is None:
            return None
        base, s, o = got
        return base, s.times(x.scale), o.times(x.scale) + x.offset
    if isinstance(x, (Access, Index)):
        return x, ONE, ZERO
    if isinstance(x, Lit):
        b = bound(x.value)
        return None if b is None else (None, ZERO, b)
    if isinstance(x, (Mul, Add)):
        a, b = affine(x.a), affine(x.b)
        if a is None or b is None or (a[0] is not None and b[0] is not None):
            return None
        if isinstance(x, Add):
            return a[0] if a[0] is not None else b[0], a[1] + b[1], a[2] + b[2]
        (base, s, o), k = (a, b[2]) if b[0] is None else (b, a[2])
        return base, s.times(k), o.times(k)
    b = bound(x)
    return None if b is None else (None, ZERO, b)


def operand(lin: Lin) -> tuple:
    """A Lin as a formula bound (expr.formula): ("num", x), ("par", name) or
    ("lin", c, ((name, k), ...))."""
    c, terms = lin
    if not terms:
        return ("num", c)
    if c == 0 and len(terms) == 1 and terms[0][1] == 1:
        return ("par", terms[0][0])
    return ("lin", c, terms)
