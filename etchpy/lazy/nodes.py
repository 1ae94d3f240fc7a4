"""The nodes of a lazy program: one dataclass per kind (immutable by contract: see
"building" below), matched by class.

    Leaf(value, constant)     an input array (numpy, or scipy csr/csc)
    Const(value)              a scalar operand (shape ())
    Add(a, b), Mul, Div       element-wise, numpy broadcasting (Binary)
    MatMul(a, b)              a @ b
    Transpose(a)              a.T
    Pow(a, n)                 a ** n, n >= 1 an int
    Sum(a, axes, keepdims)    a.sum(axes, keepdims)
    Map(a, fn, arg)           the map fn of etchpy.maps (arg: its scalar, or None)

Each also has its `shape` and `dtype` (keyword fields, not matched), `args` (its
operands) and `with_args(...)` (the same node over new operands). `key` is
equal for two equal subprograms built separately (common subexpressions are one
node), `skey` is the structure over numbered leaves (the replay lookup): ints
made as the node is built (etchpy.lazy.keys). The base class `LazyArray` is
what users hold; its operators call the builders etchpy.lazy.array registers
in `RUN` (that module imports this one), and etchpy.lazy.operators replaces
them with the same builders' nodes made from one probe when met before;
`.compute()` and `.explain()` are etchpy.lazy.program's. A new kind is a dataclass over Unary or Pair with its
`_param` (what its key holds beyond its operands) and `translate`, and a
builder; each `match` that does not name it takes its default (dense, not
element-wise, its own step or fused into a kernel; docs/architecture.md).
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field, replace

import numpy as np

from .keys import BUILT as _BUILT, intern, known as _known, merge, scalar_key

# the builders of etchpy.lazy.array (binary, matmul, power, reduce_sum, transpose,
# ufunc, function), etchpy.lazy.program's compute and explain and etchpy.lazy.show's
# show, registered as those modules are imported (they import this one)
RUN: dict = {}

node = dataclass(eq=False, repr=False, slots=True)


@node
class LazyArray:
    """A lazy numpy-like array (made by `ep.lazy` and the operators on it, not
    directly): one of the node classes of this module.

    `.shape`, `.ndim`, `.dtype`, `.T`; `@ + - * / **`, unary `-`, `.sum(axis,
    keepdims)`; `.compute()` runs its program, `.explain()` shows it (see
    etchpy.lazy.program). Comparison and truth value are refused (no silent
    evaluation).

        >>> a = ep.lazy(np.ones((2, 3)))
        >>> (a @ a.T).sum(axis=1).compute()
        array([3., 3.])
    """

    shape: tuple = field(kw_only=True)
    dtype: np.dtype = field(kw_only=True)
    key: object = field(init=False)         # set as it is built (_keys)
    skey: int = field(init=False)
    lkeys: tuple = field(init=False)
    _leaves: tuple = field(init=False)
    __array_priority__ = 1000
    OPERANDS = ()
    args = ()

    def __post_init__(self):        # shape a tuple and dtype a np.dtype, as given
        _BUILT[0] += 1
        self._keys()                # set key, skey, lkeys and _leaves (the module doc)

    def _param(self):
        """What the key holds of this node beyond its kind, dtype and operands."""
        return None

    def translate(self, tr, ix: tuple):
        """The index expression of this node with axes named ix (None: size one),
        for a kind translate.Translator does not match itself; tr.expr(operand,
        names) translates an operand. Raises AssertionError (no translation).

            >>> def translate(self, tr, ix):     # an outer product a[:, None] * b
            ...     return Mul(tr.expr(self.a, ix[:1]), tr.expr(self.b, ix[1:]))
        """
        raise AssertionError(f"no translation for {type(self).__name__}")

    def with_args(self, *args) -> "LazyArray":
        """This node over the operands args (its shape, dtype and parameters kept).

            >>> (a + b).with_args(a, c)           # a + c
        """
        return replace(self, **dict(zip(self.OPERANDS, args)))

    @property
    def leaves(self) -> tuple:
        """The distinct leaves under this node, in order of first use."""
        return (self,) if self._leaves is None else self._leaves

    @property
    def ndim(self) -> int:
        """The number of axes (0, 1 or 2)."""
        return len(self.shape)

    @property
    def T(self) -> "LazyArray":  # noqa: N802 - numpy's name
        """The transpose (itself for fewer than two axes)."""
        return RUN["transpose"](self)

    def __repr__(self):
        return f"LazyArray(shape={self.shape}, dtype={self.dtype}, {RUN['show'](self)})"

    def __hash__(self):
        return hash(self.key)

    def __getattr__(self, name):    # only for an attribute not set
        if name == "key" and type(self) not in (Leaf, Const):   # the C operators leave
            self.key = k = (self.skey, self.lkeys)     # it to be made when read
            return k
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __eq__(self, other):
        raise TypeError("== on lazy arrays is not supported: compare computed results")

    def __bool__(self):
        raise TypeError("the truth value of a lazy array is not known before .compute()")

    def __array__(self, *args, **kwargs):
        raise TypeError("a lazy array is not converted to numpy implicitly: call "
                        ".compute() (or ep.compute(a, b, ...))")

    __add__ = lambda self, o: RUN["binary"](Add, self, o)          # noqa: E731
    __radd__ = lambda self, o: RUN["binary"](Add, o, self)         # noqa: E731
    __mul__ = lambda self, o: RUN["binary"](Mul, self, o)          # noqa: E731
    __rmul__ = lambda self, o: RUN["binary"](Mul, o, self)         # noqa: E731
    __truediv__ = lambda self, o: RUN["binary"](Div, self, o)      # noqa: E731
    __rtruediv__ = lambda self, o: RUN["binary"](Div, o, self)     # noqa: E731
    __matmul__ = lambda self, o: RUN["matmul"](self, o)            # noqa: E731
    __rmatmul__ = lambda self, o: RUN["matmul"](o, self)           # noqa: E731
    __pow__ = lambda self, n: RUN["power"](self, n)                # noqa: E731
    __neg__ = lambda self: RUN["binary"](Mul, -1, self)            # noqa: E731
    __pos__ = lambda self: self                                    # noqa: E731
    __sub__ = lambda self, o: RUN["subtract"](self, o)             # noqa: E731
    __rsub__ = lambda self, o: RUN["subtract"](o, self)            # noqa: E731

    def sum(self, axis=None, keepdims=False) -> "LazyArray":  # noqa: A003
        """The sum over axis (None: every axis; an int or a tuple of ints), keeping
        the summed axes with size one when keepdims, as numpy's.

            >>> p / p.sum(axis=1, keepdims=True)
        """
        return RUN["reduce_sum"](self, axis, keepdims)

    def compute(self, **options):
        """Run this array's program: ep.compute(self, **options), options being
        optimize, threads, tuning.

            >>> loss.compute()
        """
        return RUN["compute"](self, **options)

    def explain(self, **options) -> str:
        """The program, its rewrites, steps and kernels: ep.explain(self,
        **options), options being optimize, threads, tuning.

            >>> print(loss.explain())
        """
        return RUN["explain"](self, **options)

    def __array_ufunc__(self, ufunc, method, *args, **kwargs):
        name = ufunc.__name__
        if method != "__call__" or kwargs:
            raise TypeError(f"numpy's {name}.{method} on a lazy array: use the operators "
                            f"or ep.{name}")
        return RUN["ufunc"](name, args)

    def __array_function__(self, func, types, args, kwargs):
        return RUN["function"](func.__name__, args, kwargs)


@node
class Leaf(LazyArray):
    """An input: value a numpy array or a scipy csr/csc array (a Dry stand-in
    or None inside explain's and the sampler's own steps); constant when it was
    declared known ahead of time (ep.lazy(x, constant=True))."""
    value: object
    constant: bool = False

    def _keys(self) -> None:
        leaf(self.value, self.constant, self.shape, self.dtype, self)


@node
class Const(LazyArray):
    """A scalar operand (a python or numpy number)."""
    value: object
    shape: tuple = field(default=(), kw_only=True)

    def _keys(self) -> None:
        t = (Const, scalar_key(self.value), self.dtype)
        k = _known(t) or intern(t)
        self.key = self.skey = k
        self.lkeys = self._leaves = ()


@node
class Pair(LazyArray):
    """A node of two operands a and b."""
    a: LazyArray
    b: LazyArray
    OPERANDS = ("a", "b")

    @property
    def args(self) -> tuple:
        return (self.a, self.b)

    def _keys(self) -> None:
        pair(type(self), self.a, self.b, self.shape, self.dtype, self)


@node
class Binary(Pair):
    """An element-wise operation of a and b broadcast together (Add, Mul, Div);
    `ufunc` is numpy's (the meaning, and how a dtype is promoted), `apply` the
    operator on two values."""


@node
class Add(Binary):
    """a + b."""
    ufunc, symbol, apply = np.add, "+", staticmethod(operator.add)


@node
class Mul(Binary):
    """a * b (unary minus is -1 * b)."""
    ufunc, symbol, apply = np.multiply, "*", staticmethod(operator.mul)


@node
class Div(Binary):
    """a / b, b a non-zero scalar (a division by anything else is a * recip(b))."""
    ufunc, symbol, apply = np.true_divide, "/", staticmethod(operator.truediv)


@node
class MatMul(Pair):
    """a @ b (numpy's matmul of 1-d and 2-d operands)."""


@node
class Unary(LazyArray):
    """A node of one operand a."""
    a: LazyArray
    OPERANDS = ("a",)

    @property
    def args(self) -> tuple:
        return (self.a,)

    def _keys(self) -> None:
        unary(type(self), self.a, self.shape, self.dtype, n=self)


@node
class Transpose(Unary):
    """a.T of a 2-d a."""


@node
class Pow(Unary):
    """a ** n, an int n >= 1 (a ** 0 is a leaf of ones)."""
    n: int

    def _param(self):
        return self.n


@node
class Sum(Unary):
    """The sum of a over the sorted axes, kept with size one when keepdims."""
    axes: tuple
    keepdims: bool

    def _param(self):
        return (self.axes, self.keepdims)


@node
class Map(Unary):
    """The map fn of etchpy.maps on each entry of a (arg: its scalar, or None)."""
    fn: str
    arg: object

    def _param(self):
        return (self.fn, None if self.arg is None else scalar_key(self.arg))


# ------------------------------------------------------------------ building
# A node is built by its dataclass constructor (then __post_init__ sets its keys)
# or, by the builders of etchpy.lazy.array, by leaf/pair/unary below: the same
# fields and keys, stored directly (a program is rebuilt on every call of a
# training loop). Nodes are immutable by contract, not by a frozen dataclass:
# nothing assigns a field of a node once built (its keys would no longer say
# what it is); a frozen dataclass's stores cost as much as the rest of a build.
_new = object.__new__


def leaf(value, constant: bool, shape: tuple, dtype, n=None) -> Leaf:
    """Leaf(value, constant, shape=shape, dtype=dtype), built fast (n: the node the
    dataclass constructor made, its keys to set). Its key is its array's
    identity (minus its id: never an interned key), its skey its kind."""
    if n is None:
        _BUILT[0] += 1
        n = _new(Leaf)
    n.value = value
    n.constant = constant
    n.shape = shape
    n.dtype = dtype
    k = -id(value)          # the array's identity (interned keys are positive)
    t = ("S", shape, dtype, type(value) is not np.ndarray and hasattr(value, "tocsr"))
    n.key = k
    n.skey = _known(t) or intern(t)
    n.lkeys = (k,)
    n._leaves = None
    return n


def pair(cls, a: LazyArray, b: LazyArray, shape: tuple, dtype, n=None) -> Pair:
    """cls(a, b, shape=shape, dtype=dtype) for a Pair class cls, built fast (n:
    as for leaf)."""
    if n is None:
        _BUILT[0] += 1
        n = _new(cls)
    n.a = a
    n.b = b
    n.shape = shape
    n.dtype = dtype
    ka, kb, la, lb = a.lkeys, b.lkeys, a._leaves, b._leaves
    la, lb = (a,) if la is None else la, (b,) if lb is None else lb
    if not kb:
        leaves, lkeys, share = la, ka, None
    elif not ka:
        leaves, lkeys, share = lb, kb, None
    elif len(ka) == 1 and len(kb) == 1 and ka[0] != kb[0]:
        leaves, lkeys, share = la + lb, ka + kb, None
    else:
        leaves, lkeys, share = merge(la, lb, ka, kb)
    t = (cls, dtype, a.skey, b.skey, share)
    k = _known(t) or intern(t)
    n.key = (k, lkeys)
    n.skey = k
    n.lkeys = lkeys
    n._leaves = leaves
    return n


def unary(cls, a: LazyArray, shape: tuple, dtype, *params, n=None) -> Unary:
    """cls(a, *params, shape=shape, dtype=dtype) for a Unary class cls, built
    fast (params: the class's own fields in order; n: as for leaf, its
    parameters set)."""
    if n is None:
        _BUILT[0] += 1
        n = _new(cls)
        if params:
            for name, v in zip(cls.__slots__, params):
                setattr(n, name, v)
    n.a = a
    n.shape = shape
    n.dtype = dtype
    t = (cls, n._param(), dtype, a.skey)
    k = _known(t) or intern(t)
    lkeys = a.lkeys
    n.key = (k, lkeys)
    n.skey = k
    n.lkeys = lkeys
    n._leaves = (a,) if a._leaves is None else a._leaves
    return n
