"""Lazy arrays: numpy-style operators that build a program instead of running it.

    a = ep.lazy(x)        x: a numpy array, a scipy.sparse array or matrix, an ep.Tensor
                          (1-d or 2-d)
    a @ b, a.T, a + b, a - b, a * b, a / b, a ** n, -a, a.sum(axis, keepdims)
    ep.exp(a), ep.log(a), ep.sqrt(a), ep.abs(a), ep.maximum(a, c), ep.minimum(a, c)

The builders of the nodes of etchpy.lazy.nodes (registered there for the
operators). Shapes broadcast as numpy's do, dtypes follow numpy's promotion
(found by running the operation on one-element arrays; a map's by its numpy
form in etchpy.maps), and a wrapped scipy matrix follows ndarray semantics (`*`
is element-wise). numpy functions on a lazy array build the same node
(`np.exp(a)`, `x @ a`: a map is found by its `numpy_name`) or raise a TypeError
naming the ep. function: a lazy array is never copied densely behind the
user's back.
"""
from __future__ import annotations

import numbers
import struct
import sys

import numpy as np

from .. import maps
from ..errors import InputError
from ..expr.maps import map as map_expr
from ..expr.nodes import Expr
from ..settings import LIMITS
from .keys import DERIVED, scalar_key
from .nodes import (RUN, Add, Binary, Const, Div, LazyArray, Leaf, Map, MatMul, Mul, Pow,
                    Sum, Transpose, leaf, pair, unary)
from .wrap import canonical as _canonical, check_dtype as _check_dtype, \
    checked as _checked, leaf_value as _leaf_value, ones as _ones


def lazy(x, constant: bool = False) -> LazyArray:
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
    hit = _KEPT.get(id(x)) if _KEPT else None
    if hit is not None and hit[0] is x and not constant and hit[1] is x.data \
            and hit[2] is x.indices and hit[3] is x.indptr and hit[4] == x.shape \
            and x.has_canonical_format:
        return hit[5]                   # the leaf of this matrix, as below (_keep)
    if isinstance(x, LazyArray):
        if not constant:
            return x
        if not isinstance(x, Leaf):
            raise InputError("ep.lazy(a, constant=True): a is a computed lazy array; "
                             "declare the array itself constant")
        x = x.value
    value = leaf_value(x)
    n = leaf(value, bool(constant), value.shape, value.dtype)
    if value is x and KEEP[0] and type(x) is not np.ndarray and not constant:
        _keep(x, n)
    return n


# id of a scipy csr/csc array ep.lazy wrapped as itself (its arrays checked, its
# entries canonical) -> (it, its data, indices, indptr, shape, its leaf): while it
# holds the same arrays and shape and stays canonical, ep.lazy gives that leaf
# again (what it would build: equal fields, the same value), so a loop wrapping
# the same matrix each call builds nothing. At most LIMITS.lazy_kept_matrices; a
# matrix its caller dropped is let go at the next one kept; emptied with the keys'
# table (keys.DERIVED) and when switched off: KEEP[0], set by lazy.c_nodes.use
# (Tuning.lazy_node_bytes > 0, as the C node memo; proofs_notes/lazy_operators.md)
_KEPT: dict = {}
KEEP = [True]
DERIVED.append(_KEPT)


def _keep(x, n: Leaf) -> None:
    for k, e in list(_KEPT.items()):
        if sys.getrefcount(e[0]) <= 3:  # the entry, the leaf, the call's argument:
            del _KEPT[k]                # dropped by its caller
    while _KEPT and len(_KEPT) >= LIMITS.lazy_kept_matrices:
        del _KEPT[next(iter(_KEPT))]
    if LIMITS.lazy_kept_matrices > 0:
        _KEPT[id(x)] = (x, x.data, x.indices, x.indptr, x.shape, n)


def keep_leaves(on: bool) -> None:
    """Whether ep.lazy gives a scipy matrix wrapped again its leaf (_KEPT); off
    lets every kept one go.

    >>> keep_leaves(False); keep_leaves(True)
    """
    KEEP[0] = bool(on)
    if not on:
        _KEPT.clear()


def leaf_value(x):
    """The array a leaf wrapping x holds (x itself, a numpy array of a number,
    a csr/csc array over a scipy matrix's arrays, a canonical copy of a scipy
    input whose entries are not canonical): ep.lazy's checks, without the node.
    Raises: InputError as ep.lazy does."""
    value = x           # the common cases, fast: a numpy array, a csr/csc array
    t = type(x)
    if not ((t is np.ndarray and x.ndim <= 2 or t in _WRAPPED and x.ndim == 2)
            and x.dtype.kind in "iuf"):
        value = _leaf_value(x)
        _check_dtype(value.dtype, "ep.lazy")
        if value is x:
            _WRAPPED.add(t)
    elif t is not np.ndarray:
        value = _checked(x)          # its arrays (wrap.checked)
    if type(value) is not np.ndarray and not value.has_canonical_format:
        value = _canonical(value)     # duplicates summed, on a copy (wrap.canonical)
    return value


# the sparse array types ep.lazy wraps as they are (filled as they are met)
_WRAPPED: set = set()
_F64 = np.dtype(np.float64)
_UNSIGNED = struct.Struct("<Q")     # float_bits' 8 bytes as the bits' unsigned int


def _is_scalar(x) -> bool:
    t = type(x)
    return t is float or t is int or (
        isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, bool))


# const nodes of scalars met before, by keys.scalar_key: a scalar operand is one node
# (the small ints of `1 / a`, `1 + a`, `-a` also by value, a probe cheaper than the key)
_CONSTS: dict = {}
_INTS: dict = {}
# the python floats' nodes of _CONSTS by their bit pattern as an unsigned int (the
# C operators' probe for a float operand: etchpy.lazy.c_nodes), emptied with it
_FLOATS: dict = {}


def as_node(x) -> LazyArray:
    """A lazy operand: a lazy array, a scalar (a Const node) or an array to wrap."""
    if isinstance(x, LazyArray):
        return x
    if type(x) is int and x in _INTS:
        return _INTS[x]
    if _is_scalar(x):
        k = scalar_key(x)
        node = _CONSTS.get(k)
        if node is None:
            if len(_CONSTS) >= 1024:
                _CONSTS.clear()
                _FLOATS.clear()
            dtype = _F64 if type(x) is float else np.asarray(x).dtype
            node = _CONSTS[k] = Const(x, dtype=dtype)
            if type(x) is int and -2 <= x <= 2:
                _INTS[x] = node
            elif type(x) is float:
                _FLOATS[_UNSIGNED.unpack(k[1])[0]] = node
        return node
    return lazy(x)


def _dummy(node: LazyArray):
    return node.value if type(node) is Const else np.ones(1, node.dtype)


# answers about shapes and dtypes met before (each a pure function of its key,
# found once by numpy: a program is rebuilt on every call of a training loop)
_SHAPES: dict = {}


def _remember(table: dict, key, value):
    if len(table) >= 4096:
        table.clear()
    table[key] = value
    return value


def broadcast(a: tuple, b: tuple, what) -> tuple:
    """numpy's broadcast shape of a and b; InputError naming `what` (a string or
    a node class) when they do not broadcast."""
    if a == b or not b:
        return a
    if not a:
        return b
    shape = _SHAPES.get((a, b))
    if shape is not None:
        return shape
    try:
        return _remember(_SHAPES, (a, b), tuple(np.broadcast_shapes(a, b)))
    except ValueError:
        what = what if isinstance(what, str) else what.__name__.lower()
        raise InputError(f"{what}: shapes {a} and {b} do not broadcast") from None


def _sig(node: LazyArray):
    """What numpy's promotion reads of an operand: a python scalar's type (a weak
    scalar), else the dtype."""
    if type(node) is Const and not isinstance(node.value, np.generic):
        return type(node.value)
    return node.dtype


_PROMOTED: dict = {}
_BINARY: dict = {}


def binary(kind: type[Binary], a, b) -> LazyArray:
    """a kind b (Add, Mul or Div) of two lazy operands (or scalars, arrays)."""
    if not isinstance(a, LazyArray):
        a = as_node(a)
    if not isinstance(b, LazyArray):
        b = as_node(b)
    # the result's (shape, dtype): a function of kind and what the operands' skeys
    # fix (shape, dtype; skeys are never reused), a scalar's by its kind alone (_sig)
    key = (kind, a.skey if type(a) is not Const else _sig(a),
           b.skey if type(b) is not Const else _sig(b))
    known = _BINARY.get(key)
    if known is None:
        known = _remember(_BINARY, key, _binary_type(kind, a, b))
    shape, dtype = known
    if kind is Div and (type(b) is not Const or b.value == 0):   # a * recip(b), div's dtype
        r = map_node("recip", b)
        if type(a) is Const and a.value == 1 and r.dtype == dtype and r.shape == shape:
            return r
        return pair(Mul, a, r, shape, dtype)
    return pair(kind, a, b, shape, dtype)


def _binary_type(kind: type[Binary], a: LazyArray, b: LazyArray) -> tuple:
    """(shape, dtype) of a kind b: numpy's broadcasting and promotion (an
    InputError when the shapes do not broadcast)."""
    with np.errstate(all="ignore"):
        dtype = kind.ufunc(_dummy(a), _dummy(b)).dtype
    sa, sb = a.shape, b.shape
    return (sa if sa == sb or not sb else sb if not sa else broadcast(sa, sb, kind)), dtype


def subtract(a, b) -> LazyArray:
    """a - b, built as a + (-1)·b."""
    return binary(Add, a, binary(Mul, -1, as_node(b)))


def map_node(fn: str, a, arg=None) -> LazyArray:
    """Element-wise fn (a map of etchpy.maps) of a lazy operand; `arg` is the
    scalar of a map that takes one (maximum, minimum). An etchpy index
    expression gives ep.map(fn, a, arg). Raises: InputError for a missing or
    non-scalar arg of a map taking one; MapError for an unknown map."""
    if arg is None and isinstance(a, LazyArray):
        dtype = _PROMOTED.get((fn, a.dtype if type(a) is not Const else _sig(a)))
        if dtype is not None:       # met before: checked, its dtype known
            return unary(Map, a, a.shape, dtype, fn, None)
    if isinstance(a, Expr):
        return map_expr(fn, a, arg)
    a = as_node(a)
    m = maps.MAPS.get(fn)
    if not (arg is None or _is_scalar(arg)) or arg is None and m is not None and m.takes_arg:
        raise InputError(f"ep.{fn}(a, c) takes a scalar c, got {arg!r}")
    sig = (fn, _sig(a)) if arg is None else (fn, _sig(a), type(arg), arg,
                                             getattr(arg, "dtype", None))
    dtype = _PROMOTED.get(sig)
    if dtype is None:           # first met: checked, its dtype found
        maps.lookup(fn, arg)
        with np.errstate(all="ignore"):
            value = maps.MAPS[fn].py(_dummy(a), 0 if arg is None else arg)
            dtype = _PROMOTED.setdefault(sig, np.dtype(value.dtype))
    return unary(Map, a, a.shape, dtype, fn, arg)


def matmul(a, b) -> LazyArray:
    if not isinstance(a, LazyArray):
        a = as_node(a)
    if not isinstance(b, LazyArray):
        b = as_node(b)
    known = _BINARY.get((MatMul, a.skey, b.skey))    # met before: checked, typed
    if known is not None:
        return pair(MatMul, a, b, *known)
    if not a.shape or not b.shape:
        raise InputError("matmul: an operand is a scalar; use * to scale")
    ka = a.shape[-1]
    kb = b.shape[0]
    if ka != kb:
        raise InputError(f"matmul: shapes {a.shape} and {b.shape} do not align "
                         f"({ka} != {kb})")
    shape = a.shape[:-1] + b.shape[1:]
    dtype = a.dtype if a.dtype == b.dtype else np.result_type(a.dtype, b.dtype)
    _remember(_BINARY, (MatMul, a.skey, b.skey), (shape, dtype))
    return pair(MatMul, a, b, shape, dtype)


def reduce_sum(a, axis=None, keepdims=False) -> LazyArray:
    a = as_node(a)
    key = (a.shape, a.dtype, axis, bool(keepdims)) if isinstance(axis, (int, type(None))) else None
    known = _SHAPES.get(key) if key is not None else None
    if known is None:
        known = _sum_shape(a, axis, keepdims)
        if key is not None:
            _remember(_SHAPES, key, known)
    axes, shape, dtype = known
    return unary(Sum, a, shape, dtype, axes, bool(keepdims))


def _sum_shape(a, axis, keepdims) -> tuple:
    """(axes, shape, dtype) of a.sum(axis, keepdims=keepdims)."""
    if axis is None:
        axes = tuple(range(a.ndim))
    else:
        axes = tuple(sorted(ax % a.ndim if isinstance(ax, int) and -a.ndim <= ax < a.ndim
                            else _bad_axis(ax, a)
                            for ax in (axis if isinstance(axis, tuple) else (axis,))))
    shape = tuple((1 if d in axes else n) for d, n in enumerate(a.shape) if keepdims
                  or d not in axes)
    return axes, shape, np.sum(np.ones(1, a.dtype)).dtype


def _bad_axis(ax, a):
    raise InputError(f"sum: axis {ax!r} is out of range for shape {a.shape}")


def power(a, n) -> LazyArray:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise InputError(f"a ** n needs an integer n >= 0, got {n!r}")
    a = as_node(a)
    key = ("**", a.dtype, int(n))
    dtype = _PROMOTED.get(key)
    if dtype is None:
        dtype = _remember(_PROMOTED, key, (np.ones(1, a.dtype) ** int(n)).dtype)
    if n == 0:      # numpy's x ** 0 is 1 for every x, inf and nan too (never 1 + 0·x)
        return Leaf(_ones(a.shape, dtype), shape=a.shape, dtype=dtype)
    return unary(Pow, a, a.shape, dtype, int(n))


def transpose(a) -> LazyArray:
    if not isinstance(a, LazyArray):
        a = as_node(a)
    if type(a) is Transpose:
        return a.a
    return a if len(a.shape) < 2 else unary(Transpose, a, a.shape[::-1], a.dtype)


_UFUNCS = {"add": lambda a, b: binary(Add, a, b), "multiply": lambda a, b: binary(Mul, a, b),
           "true_divide": lambda a, b: binary(Div, a, b), "divide": lambda a, b: binary(Div, a, b),
           "subtract": subtract, "matmul": matmul, "negative": lambda a: binary(Mul, -1, a),
           "power": power}


def numpy_ufunc(name: str, args: tuple):
    """The lazy node numpy's ufunc `name` stands for (an operator, or the map of
    etchpy.maps whose numpy_name it is), or a TypeError naming ep.'s."""
    if name in _UFUNCS:
        return _UFUNCS[name](*args)
    m = next((m for m in maps.MAPS.values() if m.numpy_name == name), None)
    if m is not None and not m.takes_arg and len(args) == 1:
        return map_node(m.name, *args)
    if m is not None and m.takes_arg and len(args) == 2:
        a, c = args if isinstance(args[0], LazyArray) else args[::-1]
        if isinstance(a, LazyArray) and _is_scalar(c):
            return map_node(m.name, a, c)
    raise TypeError(f"numpy's {name} on a lazy array is not supported: use the operators "
                    f"or ep.exp, ep.log, ep.sqrt, ep.abs, ep.maximum(a, scalar), "
                    f"ep.minimum(a, scalar)")


def numpy_function(name: str, args, kwargs):
    """The lazy node of numpy function `name` (sum, transpose, matmul), or a
    TypeError naming what applies."""
    if name == "sum":
        return reduce_sum(*args, **kwargs)
    if name == "transpose" and not kwargs and len(args) == 1:
        return transpose(args[0])
    if name == "matmul":
        return matmul(*args)
    raise TypeError(f"np.{name} does not apply to a lazy array: use its operators, "
                    f".sum(axis), or the ep. functions (ep.exp, ep.log, ep.sqrt, "
                    f"ep.abs, ep.maximum, ep.minimum); .compute() gives numpy arrays")


RUN.update(binary=binary, subtract=subtract, matmul=matmul, power=power,
           reduce_sum=reduce_sum, transpose=transpose, ufunc=numpy_ufunc,
           function=numpy_function)
