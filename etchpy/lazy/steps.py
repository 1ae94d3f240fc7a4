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
    numpy    a dense element-wise region as one numpy expression; with
             optimize=False a map on a materialised operand (on the stored values
             when f(0) = 0); a product whose dense factor is not finite off the
             sparse one's support (numpy's 0·inf = nan is kept)
    scipy    a lone product of a sparse input (or its transpose) and a dense
             materialised operand, nothing fused into it: scipy's own product
             (as a BLAS call for a dense one: a kernel call costs more and its
             loop is no faster)
"""
from __future__ import annotations

import numpy as np

from .array import MAPS, LazyArray
from .kernel import Dry, KernelContext, is_sparse
from .regions import Regions
from .replay import finite as finite_value, result
from .translate import ZERO_PRESERVING
from . import sample


def map_preserves_zero(node: LazyArray) -> bool:
    fn, arg = node.param
    if fn in ("maximum", "minimum"):
        return (arg <= 0) if fn == "maximum" else (arg >= 0)
    return fn in ZERO_PRESERVING


def contracts(n: LazyArray) -> bool:
    """Whether n holds a matrix product or a sum (before any leaf)."""
    return n.op in ("matmul", "sum") or any(contracts(a) for a in n.args)


def does_work(n: LazyArray) -> bool:
    if n.op in ("leaf", "const", "T"):
        return False
    return not (n.op == "mul" and all(a.op in ("leaf", "const") for a in n.args))


class Evaluator(Regions):
    """Values of a program's nodes; `uses` counts each node's consumers (by key).

    Each value has a slot in `env` (the `leaves` given first, in that order);
    `steps` lists (slot, fn) for every value computed as fn(env) from the slots
    before it, `guards` (slot, finite) the values whose finiteness chose a step;
    `replayable` is False once a value was computed otherwise (etchpy.lazy.replay).
    """

    def __init__(self, uses, optimize=True, threads=1, tuning=None, dry=False, leaves=()):
        self.uses, self.optimize, self.threads = uses, optimize, threads
        self.tuning, self.dry = tuning, dry
        self.memo: dict = {}
        self.env: list = []
        self.slots: dict = {}
        self.steps: list = []
        self.guards: list = []
        self.replayable = not dry
        self.plan: dict = {}          # the fusion plan's choices (etchpy.lazy.fusion)
        self.fusion = None            # what the fusion planner priced, for explain
        for leaf in leaves:
            self.slots[leaf.key] = len(self.env)
            self.env.append(leaf.param)
            self.memo[leaf.key] = leaf.param
        self.nleaf_slots = len(self.env)
        self.supports: dict = {}
        self.leaf_names: dict = {}
        self.materialised: list = []
        self.log: list = []
        self.nleaves = 0
        self.leaves: dict = {}        # sparse leaf values by key (for their patterns)
        self.patterns: dict = {}      # same_pattern's answers

    def name_leaf(self, node: LazyArray) -> None:
        """Name a leaf X0, X1, ... in the order they are first met."""
        if node.key not in self.leaf_names:
            self.leaf_names[node.key] = f"X{self.nleaves}"
            self.nleaves += 1

    def note(self, text) -> None:
        """Log a step (explain only: text is a function making the line)."""
        if self.dry:
            self.log.append(text())

    # ----------------------------------------------------------------- values
    def store(self, key, v, fn=None):
        """Give v a slot (fn: how it is computed from the slots before it; None:
        not replayable unless v is a leaf given at construction)."""
        self.slots[key] = len(self.env)
        self.env.append(v)
        self.memo[key] = v
        if fn is not None:
            self.steps.append((self.slots[key], fn))
        else:
            self.replayable = False
        return v

    def derived(self, key, fn) -> int:
        """The slot of fn(env), a value computed from the slots (once per key)."""
        if key not in self.slots:
            self.store(key, None if self.dry else fn(self.env), None if self.dry else fn)
        return self.slots[key]

    def slot(self, node: LazyArray) -> int:
        """The slot of a computed node."""
        return self.slots[node.key]

    def value(self, node: LazyArray):
        v = self.memo.get(node.key, self)
        if v is not self:
            return v
        if node.op == "leaf":
            self.name_leaf(node)
            return self.store(node.key, node.param)
        if node.op == "const":
            c = np.asarray(node.param, dtype=node.dtype)
            return self.store(node.key, c, lambda env: c)
        if node.op == "map" and not self.optimize:
            fn = self._map(node)
        elif node.op == "mul" and self._unsafe_product(node):
            fn = self._dense_product(node)
        elif self.pattern_region(node):
            fn = sample.on_pattern(self, node, self.pattern_slot(node))
        elif self.library_product(node):
            fn = self._scipy_product(node)
        elif self._dense_elementwise(node, node):
            fn = self._numpy_region(node)
        else:
            fn = self._kernel(node)
        self.materialised.append(node)
        if fn is not None:
            v = fn(self.env)
        return self.store(node.key, v, None if self.dry else fn)

    def _map(self, node: LazyArray):
        fn, arg = node.param
        v = self.value(node.args[0])
        s, keep = self.slot(node.args[0]), is_sparse(v) and map_preserves_zero(node)
        fmt, dtype = ("csr" if keep else "dense"), node.dtype
        self.note(lambda: f"numpy {fn}{'' if arg is None else f'(·, {arg!r})'} of a "
                        f"{'sparse' if is_sparse(v) else 'dense'} {node.shape} "
                        f"-> {fmt}{' (stored values only)' if keep else ''}")
        if self.dry:
            return lambda env: Dry(node.shape, node.dtype, keep)
        f = (lambda x: MAPS[fn](x)) if arg is None else (lambda x: MAPS[fn](x, arg))

        def step(env):
            x = env[s]
            with np.errstate(all="ignore"):
                if keep:
                    out = x.tocsr(copy=True)
                    out.data = f(out.data).astype(dtype, copy=False)
                    return out
                return np.asarray(f(x.toarray() if is_sparse(x) else x), dtype=dtype)
        return step

    # ---------------------------------------------------------------- support
    def support(self, n: LazyArray):
        """A frozenset of (sparse leaf key, transposed) whose supports' union holds
        n's nonzeros, or None (dense)."""
        if n.key in self.supports:
            return self.supports[n.key]
        s = self._support(n)
        self.supports[n.key] = s
        return s

    def _support(self, n: LazyArray):
        match n.op:
            case "leaf":
                if not is_sparse(n.param):
                    return None
                self.leaves[n.key] = n.param
                return frozenset({(n.key, False)})
            case "T":
                s = self.support(n.args[0])
                return None if s is None else frozenset((k, not t) for k, t in s)
            case "add":
                sa, sb = (self.support(a) for a in n.args)
                return None if sa is None or sb is None else sa | sb
            case "mul":
                sa, sb = (self.support(a) for a in n.args)
                if sa is not None and sb is not None:
                    return min(sa, sb, key=len)
                return sa if sa is not None else sb
            case "pow":
                return self.support(n.args[0]) if n.param > 0 else None
            case "div":
                return self.support(n.args[0])
            case "map":
                return self.support(n.args[0]) if map_preserves_zero(n) else None
        return None

    def finite(self, n: LazyArray) -> bool:
        """Whether n holds no inf or nan (maps and materialised nodes are checked;
        sampled nodes are assumed finite off the support they are sampled on)."""
        if n.op == "map" or n.key in self.memo:
            v = self.value(n)
            if isinstance(v, Dry):
                return True
            ok = finite_value(v)
            if (self.slot(n), ok) not in self.guards:
                self.guards.append((self.slot(n), ok))
            return ok
        return all(self.finite(a) for a in n.args) and (
            n.op != "const" or bool(np.isfinite(n.param)))

    def _unsafe_product(self, n: LazyArray) -> bool:
        """A product of a sparse operand and one that is not finite everywhere: the
        kernel would skip numpy's 0·inf = nan off the sparse support."""
        a, b = n.args
        sa, sb = self.support(a), self.support(b)
        if (sa is None) == (sb is None):
            return False
        dense = b if sa is not None else a
        if self.optimize and sample.expensive(dense, self):
            return False        # sampled on the sparse support: assumed finite there
        return not self.finite(dense)

    def _dense_product(self, n: LazyArray):
        self.note(lambda: f"numpy product of dense copies {n.shape} (a factor is not "
                        f"finite off the other's sparse support) -> dense")
        if self.dry:
            return lambda env: Dry(n.shape, n.dtype, False)
        for a in n.args:
            self.value(a)
        sa, sb, dtype = self.slot(n.args[0]), self.slot(n.args[1]), n.dtype

        def step(env):
            va, vb = (v.toarray() if is_sparse(v) else v for v in (env[sa], env[sb]))
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
        vals = [self.leaves[k] for k, _ in s]
        p = vals[0]
        if p.format != "csr" or not p.has_sorted_indices:
            return None
        return p if all(sample.same_pattern(self, v, p) for v in vals[1:]) else None

    def pattern_slot(self, n: LazyArray):
        """The slot of the csr leaf single_pattern(n) (None in a dry run)."""
        p = self.single_pattern(n)
        return None if self.dry else next(self.slots[k] for k, _ in self.support(n)
                                          if self.leaves[k] is p)

    def pattern_region(self, n: LazyArray) -> bool:
        """Whether n is element-wise work best done on its one sparse pattern's
        stored values: it holds a sampled product or two sparse operands."""
        if (not self.optimize or n.ndim != 2 or n.op not in sample.ELEMENTWISE
                or n.op == "T" or n.key in self.memo or self.single_pattern(n) is None):
            return False
        region, stack = [], [n]
        while stack:
            m = stack.pop()
            if m.op == "mul" and self._unsafe_product(m):
                return False
            region.append(m)
            stack += [a for a in m.args if a.op in sample.ELEMENTWISE
                      and a.key not in self.memo and a.shape == m.shape[::-1 if m.op == "T" else 1]]
        leaves = {a.key for m in region for a in m.args if a.op == "leaf" and is_sparse(a.param)}
        return len(leaves) > 1 or any(sample.expensive(a, self) for m in region
                                      for a in m.args)

    # ---------------------------------------------------------------- kernels
    def boundary(self, n: LazyArray, depth: int = 0) -> bool:
        """Whether n is materialised, read inside a kernel under `depth` sums (0:
        at the top of its kernel, or a numpy region)."""
        if n.op == "leaf" or n.key in self.memo or self.pattern_region(n):
            return True
        if n.op == "map" and (not self.optimize or contracts(n.args[0]) and depth > 0):
            return True     # computed once, not once per entry of an enclosing product
        if n.op == "mul" and self._unsafe_product(n):
            return True
        choice = self.plan.get(n.key)
        if choice is not None:
            return choice   # a candidate of the fusion plan
        if self.optimize and depth > 0 and self.lifts(n):
            return True     # element-wise work on a map of a sum: one kernel of its own
        return (self.uses[n.key] > 1 and does_work(n)
                and not (self.optimize and sample.expensive(n, self)))

    def lifts(self, n: LazyArray) -> bool:
        """Whether n is dense element-wise work holding, through operands of its
        shape, a map of a sum: under a sum it is materialised whole (the map and
        the work on it, once each), not the map alone."""
        if n.op not in ("add", "mul", "pow", "map") or n.key in self.memo:
            return False
        if n.op == "map" and contracts(n.args[0]):
            return True
        return self.support(n) is None and any(
            a.shape == n.shape and self.lifts(a) for a in n.args)

    def pre(self, ctx: KernelContext, n: LazyArray, ix):
        """The expression of n inside the kernel of ctx when it is an input (a
        materialised node) or a sampled product; None to fuse it."""
        if n is not ctx.root and n.op != "const" and self.boundary(n, ctx.tr.depth):
            return ctx.bind(n, self.value(n), ix)
        if n.op == "mul" and self.optimize:
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
    return result(v, node.dtype, node.shape, v is node.param)

