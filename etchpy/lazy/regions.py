"""Steps of a lazy program that run in numpy or scipy, not in a kernel: a dense
element-wise region as one numpy expression, and a lone product of a sparse
input and a dense materialised operand as scipy's product (a mixin of
etchpy.lazy.steps.Evaluator: it uses the evaluator's boundary, value, slot,
note and dry)."""
from __future__ import annotations

import functools
import weakref

import numpy as np

from .. import maps
from .kernel import Dry, is_sparse
from .library import product
from .nodes import Add, Binary, Const, LazyArray, Leaf, Map, MatMul, Mul, Pow, Transpose
from .show import show
from .sample import entrywise


def sparse_input(a: LazyArray) -> bool:
    """Is `a` a sparse input, or the transpose of one (what scipy multiplies)?"""
    s = a.a if isinstance(a, Transpose) else a
    return isinstance(s, Leaf) and is_sparse(s.value)


class Regions:
    """The numpy and scipy steps of an Evaluator (see the module doc)."""

    # ------------------------------------------------------ library products
    def library_product(self, n: LazyArray) -> bool:
        """Whether n is a product of a sparse input (or its transpose) and a
        dense operand that is an input or materialised (scipy runs it)."""
        if not self.opts.optimize or not isinstance(n, MatMul):
            return False
        b = n.b
        return (sparse_input(n.a) and not isinstance(b, Const)
                and self.support(b) is None and self.boundary(b, 1))

    def _scipy_product(self, n: MatMul):
        a, b = n.args
        flip = isinstance(a, Transpose)
        x = a.a if flip else a
        self.value(x)
        self.value(b)
        sa, sb = self.slot(x), self.slot(b)
        dtype, shape = n.dtype, n.shape
        self.note(lambda: f"scipy product {n.shape}: {show(n, self.report.names)} -> dense")
        if self.opts.dry:
            return lambda env: Dry(shape, dtype, False)

        view = Transposed() if flip else None

        def step(env):
            x, d = env[sa], env[sb]
            y = product(x, flip, d)     # scipy's loop, without `@`'s dispatch
            if y is None:
                y = (view.of(x) if flip else x) @ d
            return np.asarray(y, dtype=dtype).reshape(shape)
        return step

    # ------------------------------------------------- dense element-wise work
    def numpy_region(self, n: LazyArray) -> bool:
        """Whether n's step is a numpy expression (dense element-wise work), judged
        without computing anything: a materialised operand is dense when its
        support is (the fusion planner prices plans with it)."""
        return self._dense_elementwise(n, n, False)

    def _dense_elementwise(self, n: LazyArray, root: LazyArray, compute: bool = True) -> bool:
        """Whether the region under root holds only element-wise operations on
        dense operands (numpy runs it: a kernel call would cost more)."""
        if isinstance(n, Const):
            return True
        if n is not root and self.boundary(n):
            return self.support(n) is None if not compute else not is_sparse(self.value(n))
        if not isinstance(n, (Binary, Pow, Transpose, Map)):
            return False
        return all(self._dense_elementwise(a, root, compute) for a in n.args)

    def _numpy_region(self, node: LazyArray):
        self.note(lambda: f"numpy element-wise {node.shape} on dense operands "
                        f"-> dense: {show(node, self.report.names)}")
        if self.opts.dry:
            return lambda env: Dry(node.shape, node.dtype, False)
        f, dtype, shape = self._region_fn(node, node)[0], node.dtype, node.shape

        def step(env):
            with np.errstate(all="ignore"):
                out = f(env)
            if type(out) is np.ndarray and out.dtype == dtype and out.base is None:
                return out.reshape(shape)
            return np.array(out, dtype=dtype).reshape(shape)
        return step

    def _signed_fn(self, n: LazyArray, root: LazyArray):
        """(fn, fresh) of a + (-1·b) as a - b, and of -1·b as -b (one numpy pass)."""
        if isinstance(n, Mul):
            m = n.b
            return _ufunc_fn(n, np.negative, [m], [self._region_fn(m, root)])
        a, b = n.args if _negated(n.b) else n.args[::-1]
        ms = [a, b.b]
        return _ufunc_fn(n, np.subtract, ms, [self._region_fn(m, root) for m in ms])

    def _region_fn(self, n: LazyArray, root: LazyArray):
        """(fn(env), fresh): the value of n in root's numpy region (boundaries
        from slots); fresh when fn returns a new array of n's shape and dtype that
        nothing else holds, which the operation reading it may overwrite with
        its result (one temporary for a chain of operations, the same values)."""
        if isinstance(n, Const):
            c = n.value
            return (lambda env: c), False
        if n is not root and self.boundary(n):
            self.value(n)
            s = self.slot(n)
            return (lambda env: env[s]), False
        if _negated(n) or isinstance(n, Add) and any(_negated(a) for a in n.args):
            return self._signed_fn(n, root)
        fs = [self._region_fn(a, root) for a in n.args]
        match n:
            case Transpose():
                f = fs[0][0]
                return (lambda env: f(env).T), False
            case Binary():
                return _ufunc_fn(n, n.ufunc, list(n.args), fs)
            case Map(a, fn, arg) if maps.MAPS[fn].writes_out:     # as a ufunc of a
                py, c = maps.MAPS[fn].py, 0 if arg is None else arg
                return _ufunc_fn(n, lambda x, out=None: py(x, c, out=out), [a], fs)
        op, fns = entrywise(n), [f for f, _ in fs]
        return (lambda env: op([f(env) for f in fns])), False


def _fresh(n: LazyArray, m: LazyArray, fresh: bool) -> bool:
    """Whether n's result may be written over its operand m's value (fresh)."""
    return fresh and m.shape == n.shape and m.dtype == n.dtype and n.ndim > 0


def _ufunc_fn(n: LazyArray, u, args: list, fs: list):
    """(fn, fresh) of n = u(operands), its result written over the first fresh
    operand of n's shape and dtype."""
    reuse = [k for k, (m, (_, fresh)) in enumerate(zip(args, fs)) if _fresh(n, m, fresh)]
    k = reuse[0] if reuse else -1
    fns = [f for f, _ in fs]
    if len(fns) == 1:
        f = fns[0]
        return ((lambda env: u(f(env))) if k < 0 else
                (lambda env: _in_place1(u, f(env)))), n.ndim > 0
    fa, fb = fns
    if k < 0:
        return (lambda env: u(fa(env), fb(env))), n.ndim > 0
    if k == 0:
        return (lambda env: _in_place(u, fa(env), fb(env), 0)), True
    return (lambda env: _in_place(u, fa(env), fb(env), 1)), True


def _in_place1(u, x):
    return u(x, out=x)


def _in_place(u, a, b, k: int):
    return u(a, b, out=a if k == 0 else b)


class Transposed:
    """The transpose of the last sparse array asked for, kept while that array
    lives and still holds the arrays the transpose shares (scipy's `.T` builds
    and checks a new array on every call)."""

    __slots__ = ("ref", "view", "arrays", "__weakref__")

    def __init__(self):
        self.ref = self.view = self.arrays = None

    def of(self, x):
        """x.T (the one made before when x and its arrays are the same)."""
        v, a = self.view, self.arrays
        if (v is not None and self.ref() is x and a[0] is x.data and a[1] is x.indices
                and a[2] is x.indptr and a[3] == x.shape):
            return v
        v = x.T
        self.arrays = (x.data, x.indices, x.indptr, x.shape)
        try:
            self.ref = weakref.ref(x, functools.partial(_forget, weakref.ref(self)))
        except TypeError:           # an array type that cannot be referred to weakly
            return v
        self.view = v
        return v


def _forget(cache_ref, _) -> None:
    """Drop a Transposed's view when its array dies (the view holds its arrays)."""
    cache = cache_ref()
    if cache is not None:
        cache.ref = cache.view = cache.arrays = None


def _negated(n: LazyArray) -> bool:
    """Whether n is -1·b (how unary minus and subtraction are built)."""
    match n:
        case Mul(Const(c), b):
            return c == -1 and b.shape == n.shape and b.dtype == n.dtype
    return False


