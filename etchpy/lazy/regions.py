"""Steps of a lazy program that run in numpy or scipy, not in a kernel: a dense
element-wise region as one numpy expression, and a lone product of a sparse
input and a dense materialised operand as scipy's product (a mixin of
etchpy.lazy.steps.Evaluator: it uses the evaluator's boundary, value, slot,
note and dry)."""
from __future__ import annotations

import numpy as np

from .array import LazyArray
from .show import show
from .kernel import Dry, is_sparse
from .sample import Sampler


class Regions:
    """The numpy and scipy steps of an Evaluator (see the module doc)."""

    # ------------------------------------------------------ library products
    def library_product(self, n: LazyArray) -> bool:
        """Whether n is a product of a sparse input (or its transpose) and a
        dense operand that is an input or materialised (scipy runs it)."""
        if not self.optimize or n.op != "matmul":
            return False
        a, b = n.args
        s = a.args[0] if a.op == "T" else a
        return (s.op == "leaf" and is_sparse(s.param) and b.op != "const"
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

        def step(env):
            x = env[sa]
            return np.asarray((x.T if flip else x) @ env[sb], dtype=dtype).reshape(shape)
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
        f, dtype, shape = self._region_fn(node, node), node.dtype, node.shape

        def step(env):
            with np.errstate(all="ignore"):
                out = f(env)
            if type(out) is np.ndarray and out.dtype == dtype and out.base is None:
                return out.reshape(shape)
            return np.array(out, dtype=dtype).reshape(shape)
        return step

    def _signed_fn(self, n: LazyArray, root: LazyArray):
        """fn(env) of a + (-1·b) as a - b, and of -1·b as -b (one numpy pass)."""
        if n.op == "mul":
            f = self._region_fn(n.args[1], root)
            return lambda env: np.negative(f(env))
        a, b = n.args if _negated(n.args[1]) else n.args[::-1]
        fa, fb = self._region_fn(a, root), self._region_fn(b.args[1], root)
        return lambda env: np.subtract(fa(env), fb(env))

    def _region_fn(self, n: LazyArray, root: LazyArray):
        """fn(env): the value of n in root's numpy region (boundaries from slots)."""
        if n.op == "const":
            c = n.param
            return lambda env: c
        if n is not root and self.boundary(n):
            self.value(n)
            s = self.slot(n)
            return lambda env: env[s]
        if _negated(n) or n.op == "add" and any(_negated(a) for a in n.args):
            return self._signed_fn(n, root)
        fs = [self._region_fn(a, root) for a in n.args]
        if n.op == "T":
            f = fs[0]
            return lambda env: f(env).T
        op = Op(n.op, n.param)
        return lambda env: Sampler.apply(op, [f(env) for f in fs])


def _negated(n: LazyArray) -> bool:
    """Whether n is -1·b (how unary minus and subtraction are built)."""
    return (n.op == "mul" and n.args[0].op == "const" and n.args[0].param == -1
            and n.args[1].shape == n.shape and n.args[1].dtype == n.dtype)


class Op:
    """A node's op and param without its operands (what a recorded step keeps:
    never the arrays of a run)."""

    __slots__ = ("op", "param")

    def __init__(self, op, param):
        self.op, self.param = op, param


