"""Lazy arrays: numpy-style operators that build a program instead of running it.

    a = ep.lazy(x)        x: a numpy array, a scipy.sparse array or matrix, an ep.Tensor
                          (1-d or 2-d)
    a @ b, a.T, a + b, a - b, a * b, a / b, a ** n, -a, a.sum(axis, keepdims)
    ep.exp(a), ep.log(a), ep.sqrt(a), ep.abs(a), ep.maximum(a, c), ep.minimum(a, c)

A node is a frozen record (op, args, shape, dtype, param) with its keys, ints made
as it is built (etchpy.lazy.keys): `key` is equal for two equal subprograms built
separately, so they are one node of the program (common subexpressions are
computed once); `skey` is its structure over numbered leaves (the replay lookup). Shapes broadcast as numpy's do, dtypes
follow numpy's promotion (found by running the operation on one-element arrays),
and a wrapped scipy matrix follows ndarray semantics (`*` is element-wise).
numpy functions on a lazy array build the same node (`np.exp(a)`, `x @ a`) or raise
a TypeError naming the ep. function: a lazy array is never copied densely behind
the user's back.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..errors import InputError
from ..expr.maps import map as map_expr
from ..expr.nodes import Expr
from .keys import BUILT as _BUILT, intern, known as _known, merge, scalar_key
from .show import show
from .wrap import canonical as _canonical, check_dtype as _check_dtype, \
    leaf_value as _leaf_value, ones as _ones

_DTYPE = type(np.dtype(np.float64))

MAPS = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "abs": np.abs,
        "recip": lambda x: np.true_divide(1, x), "maximum": np.maximum, "minimum": np.minimum}
# filled by etchpy.lazy.program when it is imported (it imports this module)
RUN: dict = {}
BINARY = {"add": np.add, "mul": np.multiply, "div": np.true_divide}


def lazy(x, constant: bool = False) -> "LazyArray":
    """Wrap x, an array (numpy, scipy.sparse array or matrix, or ep.Tensor; 0-, 1-
    or 2-d), as a lazy array: operators build a program, `.compute()` runs it.
    constant=True declares it known ahead of time (weights): only then may
    `ep.compute(..., max_rel_error=...)` approximate it (docs/approximations.md);
    exact computation treats it as any other operand.

    A scipy input whose entries are not canonical (duplicates, unsorted) is held
    as a canonical copy made now (duplicates summed; x itself is not modified).

    Raises: InputError for another kind of input, more than two dimensions or a
    dtype that is neither integer nor float (bool: cast it first).

        >>> a = ep.lazy(np.arange(6.0).reshape(2, 3))
        >>> (2 * a).sum(axis=0).compute()
        array([ 6., 10., 14.])
    """
    if isinstance(x, LazyArray):
        if not constant:
            return x
        if x.op != "leaf":
            raise InputError("ep.lazy(a, constant=True): a is a computed lazy array; "
                             "declare the array itself constant")
        x = x.param
    value = x           # the common cases, fast: a numpy array, a csr/csc array
    t = type(x)
    if not ((t is np.ndarray and x.ndim <= 2 or t in _WRAPPED and x.ndim == 2)
            and x.dtype.kind in "iuf"):
        value = _leaf_value(x)
        _check_dtype(value.dtype, "ep.lazy")
        if value is x:
            _WRAPPED.add(t)
    if type(value) is not np.ndarray:
        value = _canonical(value)     # duplicates summed, on a copy (wrap.canonical)
    node = LazyArray("leaf", (), value.shape, value.dtype, value)
    node.constant = bool(constant)
    return node


# the sparse array types ep.lazy wraps as they are (filled as they are met)
_WRAPPED: set = set()
_F64 = np.dtype(np.float64)


def _is_scalar(x) -> bool:
    t = type(x)
    return t is float or t is int or (
        isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, bool))


# const nodes of scalars met before, by keys.scalar_key: a scalar operand is one node
_CONSTS: dict = {}


def as_node(x) -> "LazyArray":
    """A lazy operand: a lazy array, a scalar (a "const" node) or an array to wrap."""
    if type(x) is LazyArray:
        return x
    if _is_scalar(x):
        k = scalar_key(x)
        node = _CONSTS.get(k)
        if node is None:
            if len(_CONSTS) >= 1024:
                _CONSTS.clear()
            dtype = _F64 if type(x) is float else np.asarray(x).dtype
            node = _CONSTS[k] = LazyArray("const", (), (), dtype, x)
        return node
    return lazy(x)


def _dummy(node: "LazyArray"):
    return node.param if node.op == "const" else np.ones(1, node.dtype)


def broadcast(a: tuple, b: tuple, what: str) -> tuple:
    if a == b or not b:
        return a
    if not a:
        return b
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        raise InputError(f"{what}: shapes {a} and {b} do not broadcast") from None


def _sig(node: "LazyArray"):
    """What numpy's promotion reads of an operand: a python scalar's type (a weak
    scalar), else the dtype."""
    p = node.param
    return type(p) if node.op == "const" and not isinstance(p, np.generic) else node.dtype


_PROMOTED: dict = {}


def binary(op: str, a, b) -> "LazyArray":
    if type(a) is not LazyArray:
        a = as_node(a)
    if type(b) is not LazyArray:
        b = as_node(b)
    sig = (op, _sig(a), _sig(b))
    dtype = _PROMOTED.get(sig)
    if dtype is None:
        with np.errstate(all="ignore"):
            dtype = _PROMOTED.setdefault(sig, BINARY[op](_dummy(a), _dummy(b)).dtype)
    shape = broadcast(a.shape, b.shape, op)
    if op == "div" and (b.op != "const" or b.param == 0):   # a * recip(b), div's dtype
        r = map_node("recip", b)
        if a.op == "const" and a.param == 1 and r.dtype == dtype and r.shape == shape:
            return r
        return LazyArray("mul", (a, r), shape, dtype, None)
    return LazyArray(op, (a, b), shape, dtype, None)


def map_node(fn: str, a, arg=None) -> "LazyArray":
    """Element-wise fn (a key of MAPS) of a lazy operand; `arg` is maximum's and
    minimum's scalar. An etchpy index expression gives ep.map(fn, a, arg)."""
    if isinstance(a, Expr):
        return map_expr(fn, a, arg)
    a = as_node(a)
    if fn in ("maximum", "minimum") and not _is_scalar(arg):
        raise InputError(f"ep.{fn}(a, c) takes a scalar c, got {arg!r}")
    sig = (fn, _sig(a), type(arg), arg, getattr(arg, "dtype", None))
    dtype = _PROMOTED.get(sig)
    if dtype is None:
        with np.errstate(all="ignore"):
            args = (_dummy(a),) if arg is None else (_dummy(a), arg)
            dtype = _PROMOTED.setdefault(sig, np.dtype(MAPS[fn](*args).dtype))
    return LazyArray("map", (a,), a.shape, dtype, (fn, arg))


def matmul(a, b) -> "LazyArray":
    a, b = as_node(a), as_node(b)
    if a.ndim == 0 or b.ndim == 0:
        raise InputError("matmul: an operand is a scalar; use * to scale")
    ka = a.shape[-1]
    kb = b.shape[0]
    if ka != kb:
        raise InputError(f"matmul: shapes {a.shape} and {b.shape} do not align "
                         f"({ka} != {kb})")
    shape = a.shape[:-1] + b.shape[1:]
    dtype = a.dtype if a.dtype == b.dtype else np.result_type(a.dtype, b.dtype)
    return LazyArray("matmul", (a, b), shape, dtype, None)


def reduce_sum(a, axis=None, keepdims=False) -> "LazyArray":
    a = as_node(a)
    if axis is None:
        axes = tuple(range(a.ndim))
    else:
        axes = tuple(sorted(ax % a.ndim if isinstance(ax, int) and -a.ndim <= ax < a.ndim
                            else _bad_axis(ax, a)
                            for ax in (axis if isinstance(axis, tuple) else (axis,))))
    shape = tuple((1 if d in axes else n) for d, n in enumerate(a.shape) if keepdims
                  or d not in axes)
    dtype = np.sum(np.ones(1, a.dtype)).dtype
    return LazyArray("sum", (a,), shape, dtype, (axes, bool(keepdims)))


def _bad_axis(ax, a):
    raise InputError(f"sum: axis {ax!r} is out of range for shape {a.shape}")


def power(a, n) -> "LazyArray":
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise InputError(f"a ** n needs an integer n >= 0, got {n!r}")
    a = as_node(a)
    dtype = (np.ones(1, a.dtype) ** int(n)).dtype
    if n == 0:      # numpy's x ** 0 is 1 for every x, inf and nan too (never 1 + 0·x)
        return LazyArray("leaf", (), a.shape, dtype, _ones(a.shape, dtype))
    return LazyArray("pow", (a,), a.shape, dtype, int(n))


def transpose(a) -> "LazyArray":
    a = as_node(a)
    if a.op == "T":
        return a.args[0]
    return a if a.ndim < 2 else LazyArray("T", (a,), a.shape[::-1], a.dtype, None)


class LazyArray:
    """A lazy numpy-like array (made by `ep.lazy` and the operators on it, not
    directly): a node with its op ("leaf", "const", "add", "mul", "matmul", "T",
    "pow", "sum", "map"), its operand nodes args, its shape and dtype, and param
    (a leaf's value, a scalar, an exponent, (axes, keepdims), (map, arg)).

    `.shape`, `.ndim`, `.dtype`, `.T`; `@ + - * / **`, unary `-`, `.sum(axis,
    keepdims)`; `.compute()` runs its program, `.explain()` shows it (see
    etchpy.lazy.program). Comparison and truth value are refused (no silent
    evaluation).

        >>> a = ep.lazy(np.ones((2, 3)))
        >>> (a @ a.T).sum(axis=1).compute()
        array([3., 3.])
    """

    __array_priority__ = 1000
    __slots__ = ("op", "args", "shape", "dtype", "param", "key", "skey", "lkeys",
                 "_leaves", "constant")

    def __init__(self, op, args, shape, dtype, param):
        self.op, self.param = op, param
        self.args = args if type(args) is tuple else tuple(args)
        self.shape = shape if type(shape) is tuple else tuple(shape)
        self.dtype = dtype if type(dtype) is _DTYPE or isinstance(dtype, np.dtype) \
            else np.dtype(dtype)
        self.constant = False       # a leaf declared constant (ep.lazy(x, constant=True))
        _BUILT[0] += 1
        if not args:
            if op == "leaf":
                t = ("leaf", id(param))
                self.key = k = _known(t) or intern(t)
                t = ("S", self.shape, self.dtype,
                     type(param) is not np.ndarray and hasattr(param, "tocsr"))
                self.skey = _known(t) or intern(t)
                self._leaves, self.lkeys = None, (k,)
            else:
                t = (op, scalar_key(param), self.dtype)
                self.key = self.skey = _known(t) or intern(t)
                self._leaves, self.lkeys = (), ()
            return
        a = args[0]
        if len(args) == 1:
            p = param if op != "map" else (param[0], scalar_key(param[1]))
            t = (op, p, self.dtype, a.skey)
            self.skey = _known(t) or intern(t)
            self._leaves, self.lkeys = (a,) if a._leaves is None else a._leaves, a.lkeys
        else:
            b = args[1]
            ka, kb = a.lkeys, b.lkeys
            if not kb:
                self._leaves, self.lkeys, share = a.leaves, ka, None
            elif not ka:
                self._leaves, self.lkeys, share = b.leaves, kb, None
            elif len(ka) == 1 and len(kb) == 1 and ka[0] != kb[0]:
                self._leaves, self.lkeys, share = a.leaves + b.leaves, ka + kb, None
            else:
                self._leaves, self.lkeys, share = merge(a.leaves, b.leaves, ka, kb)
            t = (op, param, self.dtype, a.skey, b.skey, share)
            self.skey = _known(t) or intern(t)
        self.key = (self.skey, self.lkeys)

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
        return transpose(self)

    def __repr__(self):
        return f"LazyArray(shape={self.shape}, dtype={self.dtype}, {show(self)})"

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        raise TypeError("== on lazy arrays is not supported: compare computed results")

    def __bool__(self):
        raise TypeError("the truth value of a lazy array is not known before .compute()")

    def __array__(self, *args, **kwargs):
        raise TypeError("a lazy array is not converted to numpy implicitly: call "
                        ".compute() (or ep.compute(a, b, ...))")

    __add__ = lambda self, o: binary("add", self, o)          # noqa: E731
    __radd__ = lambda self, o: binary("add", o, self)         # noqa: E731
    __mul__ = lambda self, o: binary("mul", self, o)          # noqa: E731
    __rmul__ = lambda self, o: binary("mul", o, self)         # noqa: E731
    __truediv__ = lambda self, o: binary("div", self, o)      # noqa: E731
    __rtruediv__ = lambda self, o: binary("div", o, self)     # noqa: E731
    __matmul__ = lambda self, o: matmul(self, o)              # noqa: E731
    __rmatmul__ = lambda self, o: matmul(o, self)             # noqa: E731
    __pow__ = lambda self, n: power(self, n)                  # noqa: E731
    __neg__ = lambda self: binary("mul", -1, self)            # noqa: E731
    __pos__ = lambda self: self                               # noqa: E731

    def __sub__(self, o):
        return binary("add", self, binary("mul", -1, as_node(o)))

    def __rsub__(self, o):
        return binary("add", o, binary("mul", -1, self))

    def sum(self, axis=None, keepdims=False) -> "LazyArray":  # noqa: A003
        """The sum over axis (None: every axis; an int or a tuple of ints), keeping
        the summed axes with size one when keepdims, as numpy's.

            >>> p / p.sum(axis=1, keepdims=True)
        """
        return reduce_sum(self, axis, keepdims)

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
        return numpy_ufunc(name, args)

    def __array_function__(self, func, types, args, kwargs):
        name = func.__name__
        if name == "sum":
            return reduce_sum(*args, **kwargs)
        if name == "transpose" and not kwargs and len(args) == 1:
            return transpose(args[0])
        if name == "matmul":
            return matmul(*args)
        raise TypeError(f"np.{name} does not apply to a lazy array: use its operators, "
                        f".sum(axis), or the ep. functions (ep.exp, ep.log, ep.sqrt, "
                        f"ep.abs, ep.maximum, ep.minimum); .compute() gives numpy arrays")


_UFUNCS = {"add": lambda a, b: binary("add", a, b), "multiply": lambda a, b: binary("mul", a, b),
           "true_divide": lambda a, b: binary("div", a, b), "divide": lambda a, b: binary("div", a, b),
           "subtract": lambda a, b: binary("add", a, binary("mul", -1, as_node(b))),
           "matmul": matmul, "negative": lambda a: binary("mul", -1, a),
           "absolute": lambda a: map_node("abs", a), "reciprocal": lambda a: map_node("recip", a),
           "power": power}


def numpy_ufunc(name: str, args: tuple):
    """The lazy node numpy's ufunc `name` stands for, or a TypeError naming ep.'s."""
    if name in ("exp", "log", "sqrt"):
        return map_node(name, *args)
    if name in ("maximum", "minimum") and len(args) == 2:
        lazy_first = isinstance(args[0], LazyArray)
        a, c = args if lazy_first else args[::-1]
        if isinstance(a, LazyArray) and _is_scalar(c):
            return map_node(name, a, c)
    elif name in _UFUNCS:
        return _UFUNCS[name](*args)
    raise TypeError(f"numpy's {name} on a lazy array is not supported: use the operators "
                    f"or ep.exp, ep.log, ep.sqrt, ep.abs, ep.maximum(a, scalar), "
                    f"ep.minimum(a, scalar)")
