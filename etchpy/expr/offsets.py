"""Index offsets in comparisons: `i < j + 1`, `i + 2 <= j`, `ep.eq(i, j - 3)`.

`i + k` and `i - k` (i an index, k an integer written in the expression) make an
`IndexOffset`, an affine index term, which is a comparison's operand and nothing
else (no tensor is accessed at it: `A[i + 1]` is refused; a shift is a window,
`A[i[1:]]`). A comparison of two such terms is moved to one offset on the right,
`a op b + d` (d = the right's offset minus the left's), and is the index
comparison of expr.compare (`index_pair`: kind "index", tests ((op, d),); NOT
and ep.eq of them: expr.logic), which stores nothing:
its stream is the outer index's every coordinate c and a bounded range of the
inner one whose ends are read off c with d folded in and clamped to [0, dim)
(streams.from_expr `index_compare`); `==` is the one code c ∓ d of the inner index.
Against a bound (`i + 2 < 5`) the offset folds into the bound (`i < 3`).
proofs_notes/predicates.md ("Index offsets").
"""
from __future__ import annotations

import numbers

import numpy as np

from ..errors import ExpressionTypeError
from . import affine
from .nodes import Expr, Index



def checked(x, what: str) -> int:
    """x as an index offset: an integer written in the expression (else an
    ExpressionTypeError naming it)."""
    if isinstance(x, (Index, IndexOffset)):
        raise ExpressionTypeError(f"{what}: indices are not added; an index is offset by "
                                  f"an integer (i + 1)")
    if isinstance(x, (Expr, affine.Affine)):
        raise ExpressionTypeError(f"{what}: an index is no value of an expression; an "
                                  f"index plus an integer is a comparison's operand "
                                  f"(i + 1 < j)")
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Integral, np.integer)):
        kind = ("a parameter's name" if isinstance(x, str) else
                "a float" if isinstance(x, (numbers.Real, np.floating)) else type(x).__name__)
        raise ExpressionTypeError(
            f"{what}: an index is offset by an integer written in the expression, got "
            f"{x!r} ({kind}); indices are integer codes (for a fractional bound compare the "
            f"index with a number: `i < 2.5`; for a bound given at call time, a parameter: "
            f"`i < \"hi\"`)")
    if abs(int(x)) >= 2 ** 62:     # beyond, x ± d could overflow the kernel's int64
        raise ExpressionTypeError(f"{what}: an index offset must be below 2**62 in "
                                  f"magnitude, got {x!r}")
    return int(x)


class IndexOffset(affine.Affine):
    """index + k, k an integer (k may be 0 only as built by arithmetic, e.g.
    `i + 1 - 1`): an operand of <, <=, >, >= and ep.eq only."""

    __slots__ = ()

    def __init__(self, index: Index, k: int):
        super().__init__(index, affine.ONE, affine.Lin.of(k))

    @property
    def k(self) -> int:
        return self.offset[0]

    def _with(self, op: str, other, right: bool = False):
        me = f"({self!r})" if self.k else f"{self!r}"
        it = str(other) if isinstance(other, Index) else repr(other)
        written = f"{it} {op} {me}" if right else f"{me} {op} {it}"
        if op == "-" and right:
            raise ExpressionTypeError(f"{written} negates an index; write the comparison "
                                      f"the other way round")
        if op not in "+-" and isinstance(other, (Expr, Index, affine.Affine)):
            raise ExpressionTypeError(f"{written}: an index is no value of an expression "
                                      f"(a comparison of it is: i < j + 1)")
        if op not in "+-":
            raise ExpressionTypeError(f"{written}: an index is offset by an integer, never "
                                      f"scaled (compare indices, each plus an integer)")
        k = checked(other, written)
        return IndexOffset(self.base, self.k + (k if op == "+" else -k))

    def __neg__(self):
        raise ExpressionTypeError(f"-({self!r}) negates an index; write the comparison "
                                  f"the other way round")

    def __repr__(self):
        k = self.k
        return f"{self.base}" if not k else f"{self.base} {'+' if k > 0 else '-'} {abs(k)}"


def _index_arith(op: str, right: bool = False):
    def method(self, other):
        return IndexOffset(self, 0)._with(op, other, right)
    return method


Index.__add__ = Index.__radd__ = _index_arith("+")
Index.__sub__ = _index_arith("-")
Index.__rsub__ = _index_arith("-", right=True)
Index.__mul__, Index.__rmul__ = _index_arith("*"), _index_arith("*", right=True)
Index.__neg__ = IndexOffset.__neg__


def index_term(x):
    """(index, k) when x is an index or an index plus an integer, else None."""
    if isinstance(x, Index):
        return x, 0
    if isinstance(x, IndexOffset):
        return x.base, x.k
    return None


def offset_of(tv) -> int:
    """The offset d of an index comparison x op y + d (0 for a plain one)."""
    return tv.tests[0][1] or 0


def bounds(op: str, t, dim, imp, plain: bool):
    """The ends (lo, hi) of the x in 0..dim-1 with x op t (imp expressions;
    `plain`: t is a coordinate of the other index, 0 <= t, and no clamp
    below 0 is needed; else lo clamps to 0 and hi to dim)."""
    one = imp.ONE
    lo, hi = {"<": (imp.ZERO, t), "<=": (imp.ZERO, imp.add(t, one)),
              ">": (imp.add(t, one), dim), ">=": (t, dim),
              "==": (t, imp.add(t, one))}[op]
    if not plain and lo != imp.ZERO:
        lo = imp.max_(lo, imp.ZERO)
    if hi is not dim:
        hi = imp.min_(hi, dim)
    return lo, hi
