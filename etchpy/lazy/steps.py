"""The steps of a lazy program: the Evaluator materialises nodes one at a time,
memoised by structural key (see etchpy.lazy.program for which nodes it
materialises and why).

Kinds of step, each logged in `Evaluator.log`:
    kernel   a fused etchpy index expression (etchpy.lazy.translate) compiled
             with its real index sizes and nonzero counts; dense or csr output
    sampled  element-wise work evaluated only at one sparse pattern's stored
             entries (etchpy.lazy.sample): its matrix products as one etchpy
             kernel each (the mask times the product, csr output: an SDDMM), the
             element-wise work on those values by numpy; csr out
    numpy    a dense element-wise region as one numpy expression (one generated
             function: etchpy.lazy.region_code); with optimize=False a map on
             a materialised operand (on the stored values when f(0) = 0); a
             product whose dense factor is not finite off the
             sparse one's support (numpy's 0·inf = nan is kept)
    scipy    a lone product of a 2-d input (or its transpose) and a dense
    / numpy  materialised operand, nothing fused into it: scipy's own product
             for a sparse input, numpy's `@` (one BLAS call) for a dense one (a
             kernel call costs more and its loop is no faster)
"""
from __future__ import annotations

import numpy as np

from .. import maps
from .kernel import Dry, KernelContext, is_sparse
from .nodes import Const, LazyArray, Leaf, Map, MatMul, Mul, Pow, Sum, Transpose, Add, Div
from .regions import Regions
from .replay import finite as finite_value, result
from .state import Facts, Options, Report, Values
from . import sample
from .wrap import trusted


def keeps_zero(node: Map) -> bool:
    """Whether the map node is zero where its operand is (etchpy.maps.keeps_zero)."""
    return maps.keeps_zero(node.fn, node.arg)


def contracts(n: LazyArray) -> bool:
    """Whether n holds a matrix product or a sum (before any leaf)."""
    return isinstance(n, (MatMul, Sum)) or any(contracts(a) for a in n.args)


def does_work(n: LazyArray) -> bool:
    """Whether n computes anything (not an input, a scalar, a transpose, or a
    product of inputs and scalars: read where it is used)."""
    match n:
        case Leaf() | Const() | Transpose():
            return False
        case Mul(a, b):
            return not (isinstance(a, (Leaf, Const)) and isinstance(b, (Leaf, Const)))
    return True


class Evaluator(Regions):
    """Values of a program's nodes, one job per field: `uses` counts each node's
    consumers (by key; read only), `opts` is how it runs (state.Options),
    `values` the values computed and their steps (state.Values: what a Tape
    replays), `facts` the answers about nodes memoised for the run
    (state.Facts), `report` what explain shows (state.Report), and `plan` the
    fusion plan's choices ({candidate key: materialise?}; etchpy.lazy.fusion
    sets it)."""

    def __init__(self, uses, opts: Options = Options(), leaves=()):
        self.uses, self.opts = uses, opts
        self.values = Values(leaves, opts.dry)
        self.facts = Facts()
        self.report = Report()
        self.plan: dict = {}

    def note(self, text) -> None:
        """Log a step (explain only: text is a function making the line)."""
        if self.opts.dry:
            self.report.lines.append(text())

    def slot(self, node: LazyArray) -> int:
        """The slot of a computed node."""
        return self.values.slots[node.key]

    def done(self, node: LazyArray) -> bool:
        """Whether node's value is computed (or given)."""
        return node.key in self.values.slots

    def value(self, node: LazyArray):
        """node's value, computed (and its step recorded) on first use."""
        v = self.values.get(node.key, self)
        if v is not self:
            return v
        store = self.values.store
        match node:
            case Leaf(value):
                self.report.name_leaf(node.key)
                return store(node.key, value)
            case Const(value):
                c = np.asarray(value, dtype=node.dtype)
                return store(node.key, c, lambda env: c)
        fn = self._step(node)
        self.report.materialised.append(node)
        if fn is not None:
            v = fn(self.values.env)
        return store(node.key, v, fn)     # a dry run's steps: what etchpy.lazy.rows reads

    def _step(self, node: LazyArray):
        """fn(env) computing node (see the module doc for the kinds of step)."""
        if isinstance(node, Map) and not self.opts.optimize:
            return self._map(node)
        if isinstance(node, Mul) and self._unsafe_product(node):
            return self._dense_product(node)
        if self.pattern_region(node):
            return sample.on_pattern(self, node, self.pattern_slot(node))
        if self.library_product(node):
            return self._scipy_product(node)
        if self._dense_elementwise(node, node):
            return self._numpy_region(node)
        return self._kernel(node)

    def _map(self, node: Map):
        m, arg = maps.MAPS[node.fn], node.arg
        v = self.value(node.a)
        s, keep = self.slot(node.a), is_sparse(v) and keeps_zero(node)
        fmt, dtype = ("csr" if keep else "dense"), node.dtype
        self.note(lambda: f"numpy {m.name}{'' if arg is None else f'(·, {arg!r})'} of a "
                        f"{'sparse' if is_sparse(v) else 'dense'} {node.shape} "
                        f"-> {fmt}{' (stored values only)' if keep else ''}")
        if self.opts.dry:
            return lambda env: Dry(node.shape, node.dtype, keep)
        py, a = m.py, 0 if arg is None else arg

        def step(env):
            x = env[s]
            if is_sparse(x):        # scipy's conversions trust its arrays
                trusted(x)
            with np.errstate(all="ignore"):
                if keep:
                    out = x.tocsr(copy=True)
                    out.data = py(out.data, a).astype(dtype, copy=False)
                    return out
                return np.asarray(py(x.toarray() if is_sparse(x) else x, a), dtype=dtype)
        return step

    # ---------------------------------------------------------------- support
    def support(self, n: LazyArray):
        """A frozenset of (sparse leaf key, transposed) whose supports' union holds
        n's nonzeros, or None (dense)."""
        supports = self.facts.supports
        if n.key in supports:
            return supports[n.key]
        s = supports[n.key] = self._support(n)
        return s

    def _support(self, n: LazyArray):
        match n:
            case Leaf(value):
                if not is_sparse(value):
                    return None
                self.facts.sparse[n.key] = value
                return frozenset({(n.key, False)})
            case Transpose(a):
                s = self.support(a)
                return None if s is None else frozenset((k, not t) for k, t in s)
            case Add(a, b):
                sa, sb = self.support(a), self.support(b)
                return None if sa is None or sb is None else sa | sb
            case Mul(a, b):
                sa, sb = self.support(a), self.support(b)
                if sa is not None and sb is not None:
                    return min(sa, sb, key=len)
                return sa if sa is not None else sb
            case Pow(a, p):
                return self.support(a) if p > 0 else None
            case Div(a):
                return self.support(a)
            case Map(a):
                return self.support(a) if keeps_zero(n) else None
        return None

    def finite(self, n: LazyArray) -> bool:
        """Whether n holds no inf or nan (maps and materialised nodes are checked;
        sampled nodes are assumed finite off the support they are sampled on)."""
        if isinstance(n, Map) or self.done(n):
            v = self.value(n)
            if isinstance(v, Dry):
                return True
            ok = finite_value(v)
            self.values.guard(self.slot(n), ok)
            return ok
        return all(self.finite(a) for a in n.args) and (
            not isinstance(n, Const) or bool(np.isfinite(n.value)))

    def _unsafe_product(self, n: Mul) -> bool:
        """A product of a sparse operand and one that is not finite everywhere: the
        kernel would skip numpy's 0·inf = nan off the sparse support."""
        a, b = n.args
        sa, sb = self.support(a), self.support(b)
        if (sa is None) == (sb is None):
            return False
        dense = b if sa is not None else a
        if self.opts.optimize and sample.expensive(dense, self):
            return False        # sampled on the sparse support: assumed finite there
        return not self.finite(dense)

    def _dense_product(self, n: Mul):
        self.note(lambda: f"numpy product of dense copies {n.shape} (a factor is not "
                        f"finite off the other's sparse support) -> dense")
        if self.opts.dry:
            return lambda env: Dry(n.shape, n.dtype, False)
        for a in n.args:
            self.value(a)
        sa, sb, dtype = self.slot(n.a), self.slot(n.b), n.dtype

        def step(env):
            va, vb = (trusted(v).toarray() if is_sparse(v) else v for v in (env[sa], env[sb]))
            with np.errstate(all="ignore"):
                return np.asarray(va * vb, dtype=dtype)
        return step

    # ------------------------------------------------ work on one sparse pattern
    def single_pattern(self, n: LazyArray):
        """The csr array whose pattern holds n's support, when all the sparse
        leaves bounding it store one pattern (untransposed), else None."""
        s = self.support(n)
        if not s or any(t for _, t in s):
            return None
        vals = [self.facts.sparse[k] for k, _ in s]
        p = vals[0]
        if p.format != "csr" or not p.has_sorted_indices:
            return None
        return p if all(sample.same_pattern(self, v, p) for v in vals[1:]) else None

    def pattern_slot(self, n: LazyArray):
        """The slot of the csr leaf single_pattern(n) (None in a dry run)."""
        p = self.single_pattern(n)
        return None if self.opts.dry else next(
            self.values.slots[k] for k, _ in self.support(n) if self.facts.sparse[k] is p)

    def pattern_region(self, n: LazyArray) -> bool:
        """Whether n is element-wise work best done on its one sparse pattern's
        stored values: it holds a sampled product or two sparse operands."""
        if (not self.opts.optimize or n.ndim != 2 or not sample.elementwise(n)
                or isinstance(n, Transpose) or self.done(n) or self.single_pattern(n) is None):
            return False
        region, stack = [], [n]
        while stack:
            m = stack.pop()
            if isinstance(m, Mul) and self._unsafe_product(m):
                return False
            region.append(m)
            stack += [a for a in m.args if sample.elementwise(a) and not self.done(a)
                      and a.shape == sample.operand_shape(m)]
        leaves = {a.key for m in region for a in m.args
                  if isinstance(a, Leaf) and is_sparse(a.value)}
        return len(leaves) > 1 or any(sample.expensive(a, self) for m in region
                                      for a in m.args)

    # ---------------------------------------------------------------- kernels
    def boundary(self, n: LazyArray, depth: int = 0) -> bool:
        """Whether n is materialised, read inside a kernel under `depth` sums (0:
        at the top of its kernel, or a numpy region)."""
        if isinstance(n, Leaf) or self.done(n) or self.pattern_region(n):
            return True
        opt = self.opts.optimize
        if isinstance(n, Map) and (not opt or contracts(n.a) and depth > 0):
            return True     # computed once, not once per entry of an enclosing product
        if isinstance(n, Mul) and self._unsafe_product(n):
            return True
        choice = self.plan.get(n.key)
        if choice is not None:
            return choice   # a candidate of the fusion plan
        if opt and depth > 0 and self.lifts(n):
            return True     # element-wise work on a map of a sum: one kernel of its own
        return (self.uses[n.key] > 1 and does_work(n)
                and not (opt and sample.recomputed(n, self)))

    def lifts(self, n: LazyArray) -> bool:
        """Whether n is dense element-wise work holding, through operands of its
        shape, a map of a sum: under a sum it is materialised whole (the map and
        the work on it, once each), not the map alone."""
        if not isinstance(n, (Add, Mul, Pow, Map)) or self.done(n):
            return False
        if isinstance(n, Map) and contracts(n.a):
            return True
        return self.support(n) is None and any(
            a.shape == n.shape and self.lifts(a) for a in n.args)

    def pre(self, ctx: KernelContext, n: LazyArray, ix):
        """The expression of n inside the kernel of ctx when it is an input (a
        materialised node) or a sampled product; None to fuse it."""
        if n is not ctx.root and not isinstance(n, Const) and self.boundary(n, ctx.tr.depth):
            return ctx.bind(n, self.value(n), ix)
        if isinstance(n, Mul) and self.opts.optimize:
            return sample.sampled_product(ctx, n, ix)
        return None

    def _kernel(self, node: LazyArray):
        ctx = KernelContext(self, node)
        ix = ctx.tr.names(node)
        e = ctx.tr.expr(node, ix)
        out_ix = tuple(v for v in ix if v is not None)
        sparse = (self.support(node) is not None and len(out_ix) == 2)
        fmt = "csr" if sparse else "dense"
        return ctx.step(e, out_ix, fmt, node)


def to_result(node: LazyArray, v):
    """A computed value as compute returns it (numpy scalar for 0-d)."""
    return result(v, node.dtype, node.shape, isinstance(node, Leaf) and v is node.value)
