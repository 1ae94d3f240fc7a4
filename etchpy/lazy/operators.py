"""The operators of lazy arrays, made fast for a node met before.

A training loop rebuilds its program on every call: the same operations over
new arrays. The builders of etchpy.lazy.array check each operation, find its
shape and dtype and intern its key (etchpy.lazy.keys), and all they find is a
function of the node's kind, its parameter, its operands' skeys and how the
operands share leaves (skeys fix shapes and dtypes, and are never reused). So
each operator here keeps, by that, the (shape, dtype, skey) the builder gave
the first time, and builds a later node from them: one dict probe and the
node's stores, every check the builder made holding by the same skeys. Else
(a first meeting, an operand to wrap) the builder runs and its node is kept
as the pattern when it is the plain node of the operator, or `a · recip(b)`
for `a / b` (made again with recip(b) from its pattern). The nodes are the
builder's own, fields and keys: these tables are
emptied with the keys' table (keys.DERIVED), so an skey read here is the one
the builder would intern.

The operators are LazyArray's (`+ - * / @`, reflected, unary `-`, `.T`,
`.sum`), set on the class here, and `ep.lazy(x)` of a numpy array
(`wrap`); etchpy.lazy.array's builders stay the reference, and what numpy's
functions on a lazy array call.
"""
from __future__ import annotations

import functools

import numpy as np

from .array import _INTS, as_node, binary, lazy, map_node, matmul, reduce_sum, transpose
from .keys import BUILT, DERIVED, known, intern, merge
from .nodes import Add, Div, LazyArray, Leaf, Map, MatMul, Mul, Sum, Transpose

# (kind, operand skeys, sharing) -> (shape, dtype, skey) of the plain node, or
# _RECIP (the builder gave recip(b) for a / b); (kind or map, parameter, operand
# skey) -> (shape, dtype, skey, ...) of a node of one operand
_PAIRS: dict = {}
_UNARY: dict = {}
DERIVED += [_PAIRS, _UNARY]
_RECIP = ("recip",)
_new = object.__new__
_NDARRAY = np.ndarray


def _operand(y):
    """A lazy operand of a scalar or array y (an int met before: its const)."""
    c = _INTS.get(y) if type(y) is int else None
    return c if c is not None else as_node(y)


def _keep(table: dict, key, value) -> None:
    if len(table) >= 4096:
        table.clear()
    table[key] = value


def _pair(cls, build, swap: bool):
    """The operator `x cls y` (swap: `y cls x`, reflected), built by `build(a, b)`
    when its pattern is first met."""
    get = _PAIRS.get

    def op(x, y):
        if not isinstance(y, LazyArray):       # _operand(y), inline (-1 and 1 are common)
            c = _INTS.get(y) if type(y) is int else None
            y = c if c is not None else as_node(y)
        a, b = (y, x) if swap else (x, y)
        ka, kb, la, lb = a.lkeys, b.lkeys, a._leaves, b._leaves
        la, lb = (a,) if la is None else la, (b,) if lb is None else lb
        if not kb:
            leaves, lkeys, share = la, ka, None
        elif not ka:
            leaves, lkeys, share = lb, kb, None
        elif len(kb) == 1 and kb[0] not in ka:
            leaves, lkeys, share = la + lb, ka + kb, None
        else:
            leaves, lkeys, share = merge(la, lb, ka, kb)
        t = (cls, a.skey, b.skey, share)
        hit = get(t)
        if hit is None:
            n = build(a, b)
            if type(n) is cls and n.a is a and n.b is b:
                _keep(_PAIRS, t, (n.shape, n.dtype, n.skey))
            elif type(n) is Map and n.fn == "recip" and n.a is b and cls is Div:
                _keep(_PAIRS, t, _RECIP)
            elif (cls is Div and type(n) is Mul and n.a is a and type(n.b) is Map
                  and n.b.fn == "recip" and n.b.a is b):
                _keep(_PAIRS, t, (n.shape, n.dtype, n.skey, _RECIP))
            return n
        if hit is _RECIP:
            return map_op("recip", b)
        BUILT[0] += 1
        if len(hit) == 4:           # a / b made a · recip(b): recip(b)'s leaves are b's
            n = _new(Mul)
            n.a, n.b = a, map_op("recip", b)
            n.shape, n.dtype, k, _ = hit
        else:
            n = _new(cls)
            n.a, n.b = a, b
            n.shape, n.dtype, k = hit
        n.key = (k, lkeys)
        n.skey = k
        n.lkeys = lkeys
        n._leaves = leaves
        return n
    op.__name__ = op.__qualname__ = f"__{'r' if swap else ''}{cls.__name__.lower()}__"
    return op


def map_op(fn: str, a):
    """ep.exp(a) and the other maps taking no argument (map_node's node)."""
    if not isinstance(a, LazyArray):
        return map_node(fn, a)
    return _kept_map((Map, fn, a.skey), fn, a, None)


def map_arg(fn: str, a, arg):
    """ep.maximum(a, c) and the other maps taking a scalar argument (map_node's
    node), kept by (Map, fn, a's skey, the argument's type and value): a python
    int, float or bool argument only (a numpy scalar, or a nan that equals no
    key, runs the builder)."""
    if not isinstance(a, LazyArray) or type(arg) not in (int, float, bool):
        return map_node(fn, a, arg)
    return _kept_map((Map, fn, a.skey, type(arg), arg), fn, a, arg)


def _kept_map(t, fn: str, a, arg):
    """The Map node of fn over a (with arg, or None), from the probe t of _UNARY
    when one was kept: the builder's node field by field; else map_node's,
    kept under t when it is a plain Map of a."""
    hit = _UNARY.get(t)
    if hit is None:
        n = map_node(fn, a) if arg is None else map_node(fn, a, arg)
        if type(n) is Map and n.a is a and n.arg is arg:
            _keep(_UNARY, t, (n.shape, n.dtype, n.skey))
        return n
    BUILT[0] += 1
    n = _new(Map)
    n.fn, n.arg, n.a = fn, arg, a
    n.shape, n.dtype, k = hit
    lkeys = a.lkeys
    n.key = (k, lkeys)
    n.skey = k
    n.lkeys = lkeys
    n._leaves = (a,) if a._leaves is None else a._leaves
    return n


def _transposed(a):
    """The transpose (itself for fewer than two axes)."""
    if type(a) is Transpose:
        return a.a
    if len(a.shape) < 2:
        return a
    t = (Transpose, None, a.skey)
    hit = _UNARY.get(t)
    if hit is None:
        n = transpose(a)
        if type(n) is Transpose and n.a is a:
            _keep(_UNARY, t, (n.shape, n.dtype, n.skey))
        return n
    BUILT[0] += 1
    n = _new(Transpose)
    n.a = a
    n.shape, n.dtype, k = hit
    lkeys = a.lkeys
    n.key = (k, lkeys)
    n.skey = k
    n.lkeys = lkeys
    n._leaves = (a,) if a._leaves is None else a._leaves
    return n


def _summed(a, axis=None, keepdims=False):
    """The sum over axis (None: every axis; an int or a tuple of ints), keeping
    the summed axes with size one when keepdims, as numpy's.

        >>> p / p.sum(axis=1, keepdims=True)
    """
    if not (axis is None or type(axis) is int) or type(keepdims) is not bool:
        return reduce_sum(a, axis, keepdims)
    t = (Sum, (axis, keepdims), a.skey)
    hit = _UNARY.get(t)
    if hit is None:
        n = reduce_sum(a, axis, keepdims)
        if type(n) is Sum and n.a is a:
            _keep(_UNARY, t, (n.shape, n.dtype, n.skey, n.axes))
        return n
    BUILT[0] += 1
    n = _new(Sum)
    n.shape, n.dtype, k, n.axes = hit
    n.keepdims = keepdims
    n.a = a
    lkeys = a.lkeys
    n.key = (k, lkeys)
    n.skey = k
    n.lkeys = lkeys
    n._leaves = (a,) if a._leaves is None else a._leaves
    return n


def wrap(x, constant: bool = False):
    """ep.lazy(x): a numpy array of at most two axes and an integer or float
    dtype as a leaf directly (etchpy.lazy.nodes.leaf's fields and keys),
    anything else by etchpy.lazy.array.lazy (its contract)."""
    if type(x) is not _NDARRAY or constant or x.ndim > 2 or x.dtype.kind not in "iuf":
        return lazy(x, constant)
    BUILT[0] += 1
    n = _new(Leaf)
    n.value = x
    n.constant = False
    n.shape = shape = x.shape
    n.dtype = dtype = x.dtype
    k = -id(x)
    t = ("S", shape, dtype, False)
    n.key = k
    n.skey = known(t) or intern(t)
    n.lkeys = (k,)
    n._leaves = None
    return n


def _subtract(x, y):
    """x - y, as the builder makes it: x + (-1)·y."""
    if not isinstance(y, LazyArray):
        y = _operand(y)
    return _add(x, _rmul(y, -1))


def _rsubtract(x, y):
    """y - x: y + (-1)·x."""
    return _radd(_rmul(x, -1), y)


def _negative(x):
    """-x: (-1)·x."""
    return _rmul(x, -1)


_add = _pair(Add, functools.partial(binary, Add), False)
_radd = _pair(Add, functools.partial(binary, Add), True)
_rmul = _pair(Mul, functools.partial(binary, Mul), True)
LazyArray.__add__, LazyArray.__radd__ = _add, _radd
LazyArray.__mul__, LazyArray.__rmul__ = _pair(Mul, functools.partial(binary, Mul), False), _rmul
LazyArray.__truediv__ = _pair(Div, functools.partial(binary, Div), False)
LazyArray.__rtruediv__ = _pair(Div, functools.partial(binary, Div), True)
LazyArray.__matmul__ = _pair(MatMul, matmul, False)
LazyArray.__rmatmul__ = _pair(MatMul, matmul, True)
LazyArray.__sub__, LazyArray.__rsub__ = _subtract, _rsubtract
LazyArray.__neg__ = _negative
LazyArray.T = property(_transposed)
LazyArray.sum = _summed
LazyArray._map_op = staticmethod(map_op)     # ep.exp and the others' (lazy.c_nodes swaps it)
LazyArray._map_arg = staticmethod(map_arg)   # ep.maximum and ep.minimum's (the same)
