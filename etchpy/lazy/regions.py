"""Steps of a lazy program that run in numpy or scipy, not in a kernel: a dense
element-wise region as one numpy expression, and a lone product of a 2-d input
and a dense materialised operand as scipy's product (a sparse input) or
numpy's `@` (a dense one: BLAS) (a mixin of
etchpy.lazy.steps.Evaluator: it uses the evaluator's boundary, value, slot,
note and dry)."""
from __future__ import annotations

import functools
import weakref

import numpy as np

from .. import host_facts
from .kernel import Dry, is_sparse
from . import c_nodes, spmm, thin
from .library import product
from .wrap import trusted
from .nodes import Binary, Const, LazyArray, Leaf, Map, MatMul, Pow, Transpose
from .show import show
from .region_code import epilogue_of, region_function
from .rows import block_rows, blocked_step, chain, region_rows


def sparse_input(a: LazyArray) -> bool:
    """Is `a` a sparse input, or the transpose of one (what scipy multiplies)?"""
    s = a.a if isinstance(a, Transpose) else a
    return isinstance(s, Leaf) and is_sparse(s.value)


def library_input(a: LazyArray) -> bool:
    """Is `a` a 2-d input, sparse or dense, or the transpose of one: what scipy's
    product (sparse) or numpy's `@` (dense: BLAS) multiplies by a dense operand?"""
    s = a.a if isinstance(a, Transpose) else a
    return isinstance(s, Leaf) and s.ndim == 2


class Regions:
    """The numpy and scipy steps of an Evaluator (see the module doc)."""

    # ------------------------------------------------------ library products
    def library_product(self, n: LazyArray) -> bool:
        """Whether n is a product of a 2-d input (sparse or dense, or its
        transpose), or with Tuning.lazy_dense_products of a dense 2-d value
        materialised (or its transpose), and a dense operand that is an input or
        materialised (scipy's product or numpy's `@` runs it)."""
        if not self.opts.optimize or not isinstance(n, MatMul):
            return False
        b = n.b
        if isinstance(b, Const) or self.support(b) is not None or not self.boundary(b, 1):
            return False
        if library_input(n.a):
            return True
        a = n.a.a if isinstance(n.a, Transpose) else n.a
        return (self.opts.knobs.lazy_dense_products and a.ndim == 2
                and not isinstance(a, Const) and self.support(a) is None
                and self.boundary(a, 1))

    def _scipy_product(self, n: MatMul):
        a, b = n.args
        flip = isinstance(a, Transpose)
        x = a.a if flip else a
        xv, bv = self.value(x), self.value(b)
        sa, sb = self.slot(x), self.slot(b)
        dtype, shape = n.dtype, n.shape
        lib = "scipy" if sparse_input(a) else "numpy"
        self.note(lambda: f"{lib} product {n.shape}: {show(n, self.report.names)} -> dense")
        if lib == "numpy":          # one BLAS call for float operands, as numpy's `@`
            plain = _dense_product(sa, sb, flip, dtype, shape)
            step = self._row_blocks(plain) if flip else plain
            return _dry(step, shape, dtype) if self.opts.dry else step
        if self.opts.dry:
            return lambda env: Dry(shape, dtype, False)
        view = Transposed() if flip else None
        knobs, seen = self.opts.knobs, _SEEN
        columns, work = knobs.lazy_spmm_columns, knobs.lazy_spmm_work
        thin_loop = thin.product if knobs.lazy_thin_loop else _none

        def step(env):
            x, d = env[sa], env[sb]
            y = spmm.product(x, flip, d, columns, work)    # a kernel: checks x's arrays
            if y is None:
                y = thin_loop(x, flip, d)       # a C loop: checks x's arrays in its walk
            if y is None:
                last = seen[0]
                if last[0] is not env or last[1] is not x:     # once per run and matrix
                    seen[0] = (env, trusted(x))     # scipy's code trusts x's arrays
                y = product(x, flip, d)     # scipy's loop, without `@`'s dispatch
                if y is None:
                    y = (view.of(x) if flip else x) @ d
            return np.asarray(y, dtype=dtype).reshape(shape)
        kern = spmm.vector_kernel(xv, flip, bv, columns)
        if kern is not None and dtype == np.float64 and shape == (xv.shape[flip],):
            # the kernel this step runs on these values: a replay may call it on the
            # slots directly (etchpy.lazy.fast_replay; its call plan misses, and this
            # step runs, where the values are of another kind)
            step.kernel = (kern, (("A", sa), ("B", sb)))
        return step

    def _row_blocks(self, plain):
        """plain (Xᵀ·b, X a dense input), or the step running it by row blocks
        of X with X·W and b's region (etchpy.lazy.rows) when b is computed
        row by row from X·W, each read only there."""
        sx, sb, _ = plain.product
        knobs, uses, values = self.opts.knobs, self.uses, self.values
        single = {s for k, s in values.slots.items() if uses[k] == 1}
        found = chain(sx, sb, dict(values.steps), single)
        if found is None:
            return plain
        # the host's L2 rule for a vector W only (two gemvs, each streaming X; a
        # thin matrix W's products are made tall instead: Tuning.lazy_blas_tall)
        vector = np.ndim(values.env[found[1].product[1]]) == 1
        rows = block_rows(values.env[sx], knobs.lazy_row_block_bytes, knobs.lazy_row_block_min,
                          l2_least=host_facts.row_block_l2(knobs) if vector else 0)
        if not rows:
            return plain
        names = self.report.names
        self.note(lambda: f"  replayed by blocks of {rows} rows of {names.get(self._key_of(sx))}:"
                          f" the product, the region and this product in each block")
        if self.opts.dry:
            return plain
        blas = c_nodes.product() if knobs.lazy_c_blas else None
        return blocked_step(plain, sx, *found, rows, blas)

    def _key_of(self, slot: int):
        return next(k for k, s in self.values.slots.items() if s == slot)

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
        reads: list = []
        knobs = self.opts.knobs
        fn = region_function(node, functools.partial(self._region_operand, reads),
                             knobs.lazy_region_scalars, knobs.lazy_region_direct)
        fn.rows = region_rows(node.shape, reads, not fn.transposes)
        if self.opts.dry:
            return _dry(fn, node.shape, node.dtype)
        fn.epilogue = self._epilogue(node, {slot for slot, _ in reads})
        return fn

    def _epilogue(self, node: LazyArray, read: set):
        """(the product's slot, op, e) when the region `node` is one operation of
        lazy_product's epilogue (binder_blas.c.j2) on a dense product step's value
        read by it alone and an operand e of node's shape and dtype (its slot) or a
        number the dtype holds exactly (a float), both read from their slots
        (`read`): the replay then makes both in one call (etchpy.lazy.fast_replay);
        else None."""
        if node.dtype not in (np.float64, np.float32) or not node.shape:
            return None
        found = epilogue_of(node)
        if found is None:
            return None
        p, code, e = found
        slots, steps = self.values.slots, dict(self.values.steps)

        def product(n) -> bool:     # a dense product step's value, read here alone
            return (isinstance(n, LazyArray) and n.shape == node.shape and n.dtype == node.dtype
                    and self.uses.get(n.key) == 1 and slots.get(n.key) in read and
                    getattr(steps.get(slots[n.key]), "dense_matmul", None) is not None)
        if not product(p):
            if code < 3 or not product(e):
                return None
            p, e, code = e, p, 4 if code == 3 else code       # e - p, or e + p
        if isinstance(e, LazyArray):
            if e.shape != node.shape or e.dtype != node.dtype or slots.get(e.key) not in read:
                return None
            return slots[p.key], code, slots[e.key]
        return slots[p.key], code, e

    def _region_operand(self, reads: list, n: LazyArray):
        """The slot of n's value when a numpy region reads it materialised (n
        computed now, (slot, shape) added to reads), else None."""
        if not self.boundary(n):
            return None
        self.value(n)
        reads.append((self.slot(n), n.shape))
        return self.slot(n)


# [(env, x)] of the last sparse input a scipy product step checked (one tuple:
# threads replace it whole): a run's env is a new list (kept alive here, so no
# later run's can be the same object), and no step writes an input, so x's
# arrays are as checked for the rest of that run
_SEEN: list = [(None, None)]


def _none(*_):
    """Tuning.lazy_thin_loop off: no thin product (scipy's loop runs it)."""
    return None


def _dry(step, shape, dtype):
    """A dry run's stand-in for step (a kernel.Dry of shape and dtype), with the
    step's `product` and `rows` (what etchpy.lazy.rows reads of a step)."""
    def dry(env):
        return Dry(shape, dtype, False)
    dry.product, dry.rows = getattr(step, "product", None), getattr(step, "rows", None)
    return dry


def _dense_product(sa: int, sb: int, flip: bool, dtype, shape):
    """fn(env): the dense input in slot sa (transposed when flip) times the
    value in slot sb, by numpy's `@`."""
    matmul = np.matmul

    def finish(y):
        return y if y.dtype == dtype and y.shape == shape else \
            np.asarray(y, dtype=dtype).reshape(shape)

    def step(env):
        y = matmul(env[sa].T if flip else env[sa], env[sb])
        return y if y.dtype == dtype and y.shape == shape else finish(y)
    step.product, step.finish = (sa, sb, flip), finish
    step.dense_matmul = (sa, sb, flip, dtype, shape)    # etchpy.lazy.fast_replay inlines it
    return step


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
