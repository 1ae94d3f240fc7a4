"""The named-index expression language.

Grammar (every node is a frozen, hashable dataclass):

    e ::= A[i1, ..., in]       Access: tensor variable A of order n, distinct indices
        | c                    Lit: a scalar literal, a value of the semiring's carrier
        | e * e                Mul: product, broadcasting by index name
        | e + e                Add: sum over the union of supports, broadcasting
        | Σ_i e                Sum: contraction of an index i that is free in e
        | f(e)                 Map: a named function (etchpy.maps) of each completed
                               value of e, after e's sums (built by ep.map)

Sugar: `a - b` is `a + (-1)*b` (the -1 marked: rings only); `e ** n` is n-fold `*`.
Free indices are in order of first appearance; type errors are raised as the expression
is built; the syntax gives one node per operation and operands, so an expression rebuilt is
the object built before (expr.interned; ep.tensor's too). Diagonals (A[i, i]): expr.diagonal;
comparisons: expr.compare; windows (`A[i[lo:hi:s], j]`): expr.windows (proofs_notes/).
"""
from __future__ import annotations

import functools
import numbers
import operator
from dataclasses import dataclass

import numpy as np

from .. import maps
from ..errors import ExpressionTypeError
from ..formats import Format
from .interned import NODES, Nodes, ids_key, kept_hash, literal_key
from .tensor_help import (COMPARE_PREFIX, IDENTITY_PREFIX, RESERVED_NAMES,  # noqa: F401
                          RESERVED_PREFIXES, TENSOR_DOC, checked as _checked)


def _comparison(op: str):
    def method(self, other):
        return self.build(self, op, other)
    return method


class Comparable:
    """The syntax `a < b`, `a <= b`, `a > b`, `a >= b` of indices and expressions;
    its meaning, a 0/1 factor, is expr.compare.compare, set as `build` there."""

    build = None
    __lt__, __le__, __gt__, __ge__ = (_comparison(op) for op in ("<", "<=", ">", ">="))


@dataclass(frozen=True)
class Index(Comparable):
    """A named index (made by `ep.indices`). Parameters: name, an identifier.
    `i[lo:hi:step]` is a window of it (expr.windows).
        >>> i, j = ep.indices("i j")
        >>> i
        Index('i')
    """

    name: str
    window_of = None     # i[lo:hi:step]: expr.windows.window, set there

    def __post_init__(self):
        if not (isinstance(self.name, str) and self.name.isidentifier()):
            raise ExpressionTypeError(f"index name must be an identifier, got {self.name!r}")

    def __getitem__(self, s):
        return self.window_of(self, s)

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"Index({self.name!r})"


def indices(names: str) -> tuple[Index, ...]:
    """Named indices, one per name in `names` (separated by spaces or commas).

    Returns: a tuple of Index, even for one name. Raises: ExpressionTypeError for
    no name or one that is not an identifier.

        >>> i, j, k = ep.indices("i j k"); (n,) = ep.indices("n")
    """
    parts = names.replace(",", " ").split()
    if not parts:
        raise ExpressionTypeError("ep.indices needs at least one name")
    return tuple([NODES.made((Index, p), Index, p) for p in parts])   # (expr.interned)


@dataclass(frozen=True)
class TensorVar:
    """A named tensor of fixed order with a declared storage format (made by
    `ep.tensor`); index it with ep.indices to build an expression.

    Parameters: name, an identifier naming the input (not out, dim, acc, tmp..., out_...);
    order, the number of indices; format, a format name ("dense", "csr", "csc", "dcsr",
    "coo", "csf") or an ep.Format; iso (see `tensor`).

        >>> ep.TensorVar("A", 2, "csr")[i, j]
        A[i,j]
    """

    name: str
    order: int
    format: object = "dense"   # a format name or an etchpy.formats.Format
    iso: bool = False          # every stored value is the semiring's one (never read)
    windowed = None            # A[i[lo:hi], j]: expr.windows.as_access, set there
    diagonal = None            # A[i, i]: expr.diagonal.diagonal, set there

    def __post_init__(self):
        plain = type(self.name) is type(self.format) is str and type(self.order) is int
        fmt = (_checked if plain else _checked.__wrapped__)(self.name, self.order, self.format)
        object.__setattr__(self, "format", fmt)

    def __getitem__(self, idx) -> "Access":
        if isinstance(idx, tuple):     # (keys spelled out for 1 and 2 indices: their cost)
            key = (Access, id(self), id(idx[0]), id(idx[1])) if len(idx) == 2 else \
                ids_key(Access, self, idx)
        else:
            key, idx = (Access, id(self), id(idx)), (idx,)
        if (acc := _get(key)) is not None:
            return acc      # (built before from these very objects: expr.interned)
        if (windowed := self.windowed(self, idx)) is not None:   # expr.windows
            return windowed
        for ix in idx:
            if not isinstance(ix, Index):
                raise ExpressionTypeError(f"{self.name}[...] takes indices made by "
                                          f"ep.indices, got {ix!r}")
        if len(idx) != self.order:
            shown = ", ".join(map(str, idx))
            raise ExpressionTypeError(f"tensor {self.name} has order {self.order} but is "
                                      f"indexed with {len(idx)} indices: {self.name}[{shown}]")
        if len(set(idx)) < len(idx):
            return self.diagonal(self, tuple(idx))
        return NODES.keep(key, Access(self, idx))

    def __repr__(self):
        fmt = repr(self.format.name or self.format) + (", iso=True" if self.iso else "")
        return f"tensor({self.name!r}, {self.order}, format={fmt})"


def tensor(name: str, order: int, format: str | Format = "dense", *, iso=False) -> TensorVar:
    try:        # one object per plain (name, int order, format name, iso): keys use `is`
        if (t := _tensor_get((name, order, format, iso))) is not None and type(order) is int:
            return t    # (kept for arguments `==` to these: a str's equals are strs)
    except TypeError:   # (an argument that does not hash: not a plain one)
        pass
    if type(name) is type(format) is str and type(order) is int and type(iso) is bool:
        return _TENSORS.keep((name, order, format, iso), TensorVar(name, order, format, iso))
    return TensorVar(name, order, format, iso)


_TENSORS = Nodes(1024)      # ep.tensor's of plain arguments (nodes are immutable)
_get, _tensor_get = NODES.get, _TENSORS.get     # (the tables' dict.get: a clear keeps it)
tensor.__doc__ = TENSOR_DOC     # help(ep.tensor): each format's zero-copy inputs, orders


@dataclass(frozen=True)
class IdentityVar(TensorVar):
    """The implicit identity δ of a diagonal `source[..., i, ..., i, ...]`: n×n, the semiring's
    one at (c, c), n the size of `source`'s modes `modes` (equal). It stores nothing (read
    as the equality of its indices: streams.from_expr); the runtime binds its sizes."""

    source: str = ""
    modes: tuple[int, int] = (0, 1)

    def __post_init__(self):   # its reserved name is made here, never by a user
        object.__setattr__(self, "format", Format.parse(self.format, self.order))


def _arith(op: str, right: bool = False):
    """Expr's `e op x` (`x op e` when `right`); x a str: a comparison's operand (expr.affine)."""
    def method(self, other):
        a, b = (other, self) if right else (self, other)
        if (node := _get((op, id(a), id(b)))) is not None:
            return node     # (two expressions met before: no check, no new node)
        if isinstance(other, str):
            return self._with_param(self, op, other, right)
        return made(op, as_expr(a), b) if right else made(op, a, as_expr(b))
    return method


def made(op: str, a, b):
    """The node of `a op b` (op "*", "+", "-"; "Σ": Σ_a b), one per op and operands
    (expr.interned); checked as its class checks when first made."""
    return NODES.made((op, id(a), id(b)), _new, op, a, b)


def _new(op, a, b):
    return Mul(a, b) if op == "*" else Add(a, b) if op == "+" else Sum(a, b) if op == "Σ" \
        else Add(a, made("*", _lit(-1, True), b))


def _lit(value, negation: bool = False):
    """Lit(value, negation), one node per literal key (expr.interned.literal_key)."""
    key = literal_key(value, negation)
    return Lit(value, negation) if key is None else NODES.made(key, Lit, value, negation)


class Expr(Comparable):
    """An index expression: tensor accesses combined with `*` (the semiring's product,
    broadcasting by index name), `+` (its sum over the union of supports), `-` (rings only),
    `e ** n` and ep.sum. numpy functions and ufuncs and Python's sum() are refused with a
    TypeError: indices are named, so sum with ep.sum(index, e). `e.free`; & | ~: expr.logic.

        >>> (ep.sum(j, A[i, j] * x[j]) + 2 * y[i]).free
        (Index('i'),)
    """

    _with_param = None  # `e + "t"`: a comparison's operand (expr.affine.with_param)
    __mul__, __rmul__ = _arith("*"), _arith("*", True)
    __add__, __radd__ = _arith("+"), _arith("+", True)
    __sub__, __rsub__ = _arith("-"), _arith("-", True)

    def __neg__(self):
        return made("*", _lit(-1, True), self)

    def __pow__(self, n):
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            raise ExpressionTypeError(f"e ** n needs an integer n >= 1, got {n!r}")
        return functools.reduce(lambda a, b: made("*", a, b), [self] * int(n))  # ((e·e)·e)...

    @property
    def free(self) -> tuple[Index, ...]:
        """The free indices, in order of first appearance."""
        return free_indices(self)

    def __array_ufunc__(self, ufunc, method, *args, **kwargs):
        """`np.float64(2) * e` (a numpy scalar on the left) builds an expression as
        `2.0 * e` does; any other numpy ufunc raises a TypeError."""
        op = _NUMPY_OPERATORS.get(ufunc.__name__)
        args = tuple(int(a) if isinstance(a, np.bool_) else a.item()     # (a numpy bool is
                     if isinstance(a, np.generic) else a for a in args)   # no `==` result)
        if (op and method == "__call__" and not kwargs and len(args) == 2
                and all(isinstance(a, (Expr, numbers.Number)) for a in args)):
            return op(as_expr(args[0]), as_expr(args[1]))
        raise TypeError(_not_numpy(f"numpy's {ufunc.__name__} (maps: ep.map)", self))

    def __array_function__(self, func, types, args, kwargs):
        raise TypeError(_not_numpy(f"np.{func.__name__}", self))

    def __iter__(self):
        raise TypeError(_not_numpy("iterating (as Python's sum() does)", self))

    def __str__(self):
        return show(self)

    __repr__ = __str__

    def __getstate__(self):
        """What pickling and jsondata keep: the fields, not the hash kept below."""
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}


_NUMPY_OPERATORS = {"multiply": operator.mul, "add": operator.add, "subtract": operator.sub}


def _not_numpy(what: str, e: Expr) -> str:
    free = ", ".join(ix.name for ix in free_indices(e)) or "none"
    return (f"{what} does not apply to an etchpy expression ({show(e)}): its indices "
            f"are named, so an axis has no meaning. Sum over an index with "
            f"ep.sum(index, expr) (free indices here: {free}); evaluate with "
            f"ep.evaluate(expr, **inputs) to get a numpy array")


@dataclass(frozen=True, repr=False)
class Access(Expr):
    tensor: TensorVar
    indices: tuple[Index, ...]


@dataclass(frozen=True, repr=False)
class Lit(Expr):
    value: object
    negation: bool = False   # True for the -1 introduced by `a - b`

    def __post_init__(self):
        if not isinstance(self.value, numbers.Number):
            raise ExpressionTypeError(f"a literal must be a number, got {self.value!r}")


@dataclass(frozen=True, repr=False)
class Mul(Expr):
    a: Expr
    b: Expr


@dataclass(frozen=True, repr=False)
class Add(Expr):
    a: Expr
    b: Expr


@dataclass(frozen=True, repr=False)
class Sum(Expr):
    index: Index
    body: Expr

    def __post_init__(self):
        if not isinstance(self.index, Index):
            raise ExpressionTypeError(f"ep.sum takes indices, got {self.index!r}")
        if not isinstance(self.body, Expr):
            raise ExpressionTypeError(f"ep.sum takes an expression, got {self.body!r}")
        if self.index not in free_indices(self.body):
            raise ExpressionTypeError(f"cannot sum over index {self.index}: it is not free "
                                      f"in {show(self.body)}")


@dataclass(frozen=True, repr=False)
class Map(Expr):
    """fn (etchpy.maps) of each completed value of `a` (ep.map builds it)."""
    fn: str
    a: Expr
    arg: float | None = None

    def __post_init__(self):
        maps.lookup(self.fn, self.arg)
        if not isinstance(self.a, Expr):
            raise ExpressionTypeError(f"ep.map({self.fn!r}, e): e is {self.a!r}")


for _node in (Access, Lit, Mul, Add, Sum, Map, TensorVar, Index):
    _node.__hash__ = kept_hash(_node.__hash__)     # worked out once (expr.interned)
TensorVar.__getstate__ = Index.__getstate__ = Expr.__getstate__


def as_expr(x) -> Expr:
    if isinstance(x, Expr):
        return x
    if isinstance(x, bool):            # (what `==` of two expressions gives)
        raise ExpressionTypeError(f"a truth value ({x!r}) in an expression: `==` and `!=` "
                                  f"of expressions are their structural equality, not a "
                                  f"comparison; write ep.eq(a, b) or ep.ne(a, b)")
    if isinstance(x, numbers.Number):
        return _lit(x)
    if isinstance(x, TensorVar):
        if x.order == 0:
            return Access(x, ())
        raise ExpressionTypeError(f"tensor {x.name} of order {x.order} must be indexed, "
                                  f"e.g. {x.name}[{', '.join('ijkl'[:x.order])}]")
    raise ExpressionTypeError(f"cannot use {x!r} in an expression")


def sum(idx: Index | tuple[Index, ...] | list[Index],  # noqa: A001 - public name ep.sum
        body: Expr | TensorVar | numbers.Number) -> Expr:
    """Σ of `body` over the index `idx`, or over each index of a tuple (the last
    one innermost): the semiring's add folded over that index. This, not np.sum
    or sum(), is how an expression is summed: indices are named, not axes.

    Returns: an expression whose free indices are body's without `idx`.
    Raises: ExpressionTypeError when an index is not free in body.

        >>> y = ep.sum(j, A[i, j] * x[j])             # y[i] = Σ_j A[i,j]·x[j]
        >>> s = ep.sum((i, j), A[i, j])               # every entry, a scalar
    """
    if (node := _get(("Σ", id(idx), id(body)))) is not None:
        return node         # (made before of this index and body: expr.interned)
    body = as_expr(body)
    idxs = idx if isinstance(idx, (tuple, list)) else (idx,)
    if not idxs:
        raise ExpressionTypeError("ep.sum needs at least one index")
    for ix in reversed(idxs):
        body = made("Σ", ix, body)
    return body


def free_indices(e: Expr) -> tuple[Index, ...]:
    if isinstance(e, Access):       # (isinstance, not match: ep.sum checks per call)
        return e.indices
    if isinstance(e, Lit):
        return ()
    if isinstance(e, (Mul, Add)):
        fa = free_indices(e.a)
        return fa + tuple([i for i in free_indices(e.b) if i not in fa])
    if isinstance(e, Sum):
        return tuple([j for j in free_indices(e.body) if j != e.index])
    if isinstance(e, Map):
        return free_indices(e.a)
    raise ExpressionTypeError(f"not an expression: {e!r}")


def show(e: Expr, prec: int = 0) -> str:
    """Readable text, e.g. `Σ_j A[i,j]·x[j]`."""
    match e:
        case Access(t, idx):
            return f"{t.name}[{','.join(i.name for i in idx)}]" if idx else t.name
        case Lit(v, _):
            return repr(v)
        case Mul(a, b):
            s = f"{show(a, 2)}·{show(b, 2)}"
            return f"({s})" if prec > 2 else s
        case Add(a, b):
            s = f"{show(a, 1)} + {show(b, 1)}"
            return f"({s})" if prec > 1 else s
        case Sum(i, body):
            s = f"Σ_{i.name} {show(body, 2)}"
            return f"({s})" if prec > 0 else s
        case Map(fn, a, arg):
            return f"{fn}({show(a)}{'' if arg is None else f', {arg!r}'})"
    return repr(e)
