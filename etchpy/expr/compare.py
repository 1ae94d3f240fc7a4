"""Comparisons as 0/1 factors: `i < j`, `i >= 3`, `A[i] >= t`, ep.between(i, lo, hi).

A comparison is an access of an implicit tensor, a `CompareVar`, that holds the
semiring's one where the comparison holds and nothing (its zero) elsewhere; a
product with it is a filter, correct in every semiring because one is the unit
of ⊗ and zero annihilates. Being a sparse access, it is planned like any other:
a range on an index is a sparse vector intersected with the relation's level
(the intersection gallops to lo and ends with the range), a value comparison
the operand's stored entries that pass. No caller passes it: the runtime binds
it at call time (runtime.predicates), so the kernel's C text does not depend
on a bound given as a parameter name. proofs_notes/predicates.md.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ..errors import ExpressionTypeError
from ..formats import Format
from .nodes import COMPARE_PREFIX, Access, Comparable, IdentityVar, Index, TensorVar, show

OPS = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


@dataclass(frozen=True)
class CompareVar(TensorVar):
    """The implicit 0/1 tensor of a comparison (see the module docstring).

    kind "range" (order 1): the coordinates c with c `op` bound for each (op,
    bound) of `tests`; "index" (order 2, "dense": either index may be the outer
    loop, and nothing is stored): c0 `op` c1, tests ((op, None),);
    "value" (the order and format of the tensor `source`): the entries `source`
    stores whose value v has v `op` bound (an absent entry is no row); "pair"
    (likewise): the entries that both `source` and `other` store, at the same
    coordinates, whose values v, w have v `op` w, tests ((op, None),). A bound
    is a number or the name of a parameter, a number passed at call time."""

    kind: str = "range"
    tests: tuple = ()
    source: str = ""
    other: str = ""

    def __post_init__(self):   # its reserved name is made here, never by a user
        object.__setattr__(self, "format", Format.parse(self.format, self.order))

    @property
    def params(self) -> tuple[str, ...]:
        """The names of the parameters its bounds read at call time."""
        return tuple(b for _, b in self.tests if isinstance(b, str))


@dataclass(frozen=True, repr=False)
class Predicate(Access):
    """An access of a CompareVar as built. Python's chained `lo <= i < hi` asks
    the truth of `lo <= i` and then drops it, so a truth value is an error."""

    def __bool__(self):
        raise ExpressionTypeError(f"{show(self)} has no truth value: for lo <= i < hi "
                                  f"write ep.between(i, lo, hi) or (i >= lo) * (i < hi)")


def stores_nothing(tv) -> bool:
    """Is `tv` an index comparison (i < j), whose value is computed from the
    coordinates, so that no array of it reaches a kernel?"""
    return isinstance(tv, CompareVar) and tv.kind == "index"


def token(bound) -> str:
    """A bound as part of an identifier: p_<name> for a parameter, else the number
    (- as n, . as d)."""
    if isinstance(bound, str):
        if not bound.isidentifier():
            raise ExpressionTypeError(f"a comparison's bound is a number or a parameter "
                                      f"name (an identifier), got {bound!r}")
        return f"p_{bound}"
    if isinstance(bound, (bool, np.bool_)) or not isinstance(bound, (numbers.Real, np.number)):
        raise ExpressionTypeError(f"a comparison's bound is a number or a parameter "
                                  f"name, got {bound!r}")
    b = float(bound)
    if not np.isfinite(b):
        raise ExpressionTypeError(f"a comparison's bound must be finite, got {bound!r}")
    text = repr(int(b)) if b == int(b) else repr(b)
    return text.replace("-", "n").replace(".", "d").replace("+", "")


def compare(a, op: str, b) -> Access:
    """`a op b` (op one of < <= > >=) as a 0/1 factor: two indices, an index and a
    bound, a tensor access and a bound (a number or a parameter name), or two
    tensor accesses at the same indices (A[i] < B[i]: where both store entries).

        >>> i, j = ep.indices("i j")
        >>> i < j
        cmp_i_lt_j[i,j]
    """
    if isinstance(a, Index) and isinstance(b, Index):
        if a == b:
            raise ExpressionTypeError(f"{a} {op} {a} compares an index with itself")
        var = CompareVar(f"{COMPARE_PREFIX}{a}_{OPS[op]}_{b}", 2, "dense", kind="index",
                         tests=((op, None),))
        return Predicate(var, (a, b))
    if isinstance(a, Index):
        return between(a, tests=((op, b),))
    if _plain(a) and _plain(b):
        return _pair(a, op, b)
    if _plain(a):
        t = a.tensor
        var = CompareVar(f"{COMPARE_PREFIX}{t.name}_{OPS[op]}_{token(b)}", t.order,
                         t.format, kind="value", tests=((op, b),), source=t.name)
        return Predicate(var, a.indices)
    raise ExpressionTypeError(f"cannot compare {a!r} {op} {b!r}: compare two indices, an "
                              f"index with a bound, a tensor access with a bound, or two "
                              f"tensor accesses with the same indices")


def _plain(a) -> bool:
    return type(a) is Access and not isinstance(a.tensor, (CompareVar, IdentityVar))


def _pair(a: Access, op: str, b: Access) -> Access:
    """A[idx] op B[idx]: the entries both store where A's value op B's value."""
    if a.indices != b.indices or a.tensor.order != b.tensor.order:
        raise ExpressionTypeError(f"{show(a)} {op} {show(b)}: two tensor accesses are "
                                  f"compared at the same indices, in the same order")
    if a.tensor.name == b.tensor.name:
        raise ExpressionTypeError(f"{show(a)} {op} {show(b)} compares a tensor with itself")
    t = a.tensor
    var = CompareVar(f"{COMPARE_PREFIX}{t.name}_{OPS[op]}_{b.tensor.name}", t.order, t.format,
                     kind="pair", tests=((op, None),), source=t.name, other=b.tensor.name)
    return Predicate(var, a.indices)


def between(i: Index, lo=None, hi=None, *, tests: tuple = ()) -> Access:
    """The 0/1 factor of lo <= i < hi over the index i (a None bound is open;
    each bound a number or the name of a parameter passed at call time);
    `tests` adds (op, bound) pairs (how `i >= b` and `i < b` are built).
    Python's chained `lo <= i < hi` cannot build it: write ep.between(i, lo, hi).

        >>> (i,) = ep.indices("i")
        >>> ep.between(i, 3, "hi")
        cmp_i_ge_3_lt_p_hi[i]
    """
    if not isinstance(i, Index):
        raise ExpressionTypeError(f"ep.between takes an index, got {i!r}")
    tests = tuple(tests) + tuple(t for t in ((">=", lo), ("<", hi)) if t[1] is not None)
    if not tests:
        raise ExpressionTypeError(f"ep.between({i}): give lo, hi or both")
    words = [f"{OPS[o]}_{token(b)}" for o, b in tests]
    var = CompareVar("_".join([f"{COMPARE_PREFIX}{i}"] + words), 1, Format(["compressed"]),
                     kind="range", tests=tests)
    return Predicate(var, (i,))


Comparable.build = staticmethod(compare)
