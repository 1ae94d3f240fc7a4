"""Steps of a lazy program that run in numpy or scipy, not in a kernel: a dense
element-wise region as one numpy expression, and a lone product of a sparse
input and a dense materialised operand as scipy's product (a mixin of
etchpy.lazy.steps.Evaluator: it uses the evaluator's boundary, value, slot,
note and dry)."""
from __future__ import annotations

import functools
import weakref

import numpy as np

from .array import LazyArray
from .show import show
from .kernel import Dry, is_sparse
from .sample import Op, Sampler


def sparse_input(a: LazyArray) -> bool:
    """Is `a` a sparse input, or the transpose of one (what scipy multiplies)?"""
    s = a.args[0] if a.op == "T" else a
    return s.op == "leaf" and is_sparse(s.param)


class Regions:
    """The numpy and scipy steps of an Evaluator (see the module doc)."""

    # ------------------------------------------------------ library products
    def library_product(self, n: LazyArray) -> bool:
        """Whether n is a product of a sparse input (or its transpose) and a
        dense operand that is an input or materialised (scipy runs it)."""
        if not self.optimize or n.op != "matmul":
            return False
        b = n.args[1]
        return (sparse_input(n.args[0]) and b.op != "const"
                and self.support(b) is None and self.boundary(b, 1))

    def _scipy_product(self, n: LazyArray):
        a, b = n.args
        x = a.args[0] if a.op == "T" else a
        self.value(x)
        self.value(b)
        sa, sb = self.slot(x), self.slot(b)
        flip, dtype, shape = a.op == "T", n.dtype, n.shape
        self.note(lambda: f"scipy product {n.shape}: {show(n, self.leaf_names)} -> dense")
        if self.dry:
            return lambda env: Dry(shape, dtype, False)

        view = Transposed() if flip else None

        def step(env):
            x = env[sa]
            return np.asarray((view.of(x) if flip else x) @ env[sb],
                              dtype=dtype).reshape(shape)
        return step

    # ------------------------------------------------- dense element-wise work
    def _dense_elementwise(self, n: LazyArray, root: LazyArray) -> bool:
        """Whether the region under root holds only element-wise operations on
        dense operands (numpy runs it: a kernel call would cost more)."""
        if n.op == "const":
            return True
        if n is not root and self.boundary(n):
            return not is_sparse(self.value(n))
        if n.op not in ("add", "mul", "div", "pow", "T", "map"):
            return False
        return all(self._dense_elementwise(a, root) for a in n.args)

    def _numpy_region(self, node: LazyArray):
        self.note(lambda: f"numpy element-wise {node.shape} on dense operands "
                        f"-> dense: {show(node, self.leaf_names)}")
        if self.dry:
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
        if n.op == "mul":
            m = n.args[1]
            return _ufunc_fn(n, np.negative, [m], [self._region_fn(m, root)])
        a, b = n.args if _negated(n.args[1]) else n.args[::-1]
        ms = [a, b.args[1]]
        return _ufunc_fn(n, np.subtract, ms, [self._region_fn(m, root) for m in ms])

    def _region_fn(self, n: LazyArray, root: LazyArray):
        """(fn(env), fresh): the value of n in root's numpy region (boundaries
        from slots); fresh when fn returns a new array of n's shape and dtype that
        nothing else holds, which the operation reading it may overwrite with
        its result (one temporary for a chain of operations, the same values)."""
        if n.op == "const":
            c = n.param
            return (lambda env: c), False
        if n is not root and self.boundary(n):
            self.value(n)
            s = self.slot(n)
            return (lambda env: env[s]), False
        if _negated(n) or n.op == "add" and any(_negated(a) for a in n.args):
            return self._signed_fn(n, root)
        fs = [self._region_fn(a, root) for a in n.args]
        if n.op == "T":
            f = fs[0][0]
            return (lambda env: f(env).T), False
        if n.op in _UFUNCS or n.op == "map" and n.param[0] in _UFUNCS:
            fn, arg = (n.op, None) if n.op in _UFUNCS else n.param
            return _ufunc_fn(n, _UFUNCS[fn], list(n.args), fs, arg)
        op, fns = Op(n.op, n.param), [f for f, _ in fs]
        return (lambda env: Sampler.apply(op, [f(env) for f in fns])), False


# the operations a numpy region runs as one ufunc (recip is 1 / x)
_UFUNCS = {"add": np.add, "mul": np.multiply, "div": np.true_divide, "exp": np.exp,
           "log": np.log, "sqrt": np.sqrt, "abs": np.abs, "recip": np.true_divide,
           "maximum": np.maximum, "minimum": np.minimum}


def _ufunc_fn(n: LazyArray, u, args: list, fs: list, arg=None):
    """(fn, fresh) of n = u(operands) (u(1, x) for recip, u(x, arg) for maximum
    and minimum), its result written over the first fresh operand of n's shape
    and dtype."""
    reuse = [k for k, (m, (_, fresh)) in enumerate(zip(args, fs))
             if fresh and m.shape == n.shape and m.dtype == n.dtype and n.ndim > 0]
    k = reuse[0] if reuse else -1
    fns = [f for f, _ in fs]
    if u is np.true_divide and len(fns) == 1:         # recip
        fns = [lambda env: 1] + fns
        k = k + 1 if k >= 0 else k
    elif arg is not None:
        fns = fns + [lambda env: arg]
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
    return (n.op == "mul" and n.args[0].op == "const" and n.args[0].param == -1
            and n.args[1].shape == n.shape and n.args[1].dtype == n.dtype)


