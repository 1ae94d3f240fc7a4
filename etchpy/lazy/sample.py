"""Sampled evaluation: a dense operand of `*` computed only where the other,
sparse, operand stores entries.

For `S * g` with S sparse and g dense and holding a matrix product (`U @ V.T`,
`log(W @ H)`, `1 + A @ B`), g is evaluated at the coordinates (r, c) of S's
stored entries: each product as one etchpy kernel `P[i,j]·Σ_k U[i,k]·V[j,k]`
(P: S's pattern with ones, csr output: an SDDMM), every element-wise operation
and map by numpy on those values, every other node materialised and gathered at
(r, c). The result is a csr array with S's pattern, so the product with S is a
kernel over two sparse operands. Off S's support g is assumed finite: numpy's
0·inf = nan there is not reproduced (the one documented difference).
"""
from __future__ import annotations

import numpy as np

from .. import maps
from ..expr.nodes import Index, Mul as EMul
from .array import matmul, transpose
from .kernel import Dry, KernelContext, is_sparse
from .nodes import Binary, Const, LazyArray, Leaf, Map, MatMul, Mul, Pow, Sum, Transpose
from .wrap import trusted


def elementwise(n: LazyArray) -> bool:
    """Whether n is element-wise work on operands of its shape (a transpose's
    reversed): a Binary, a power, a map or a transpose."""
    return isinstance(n, (Binary, Pow, Map, Transpose))


def operand_shape(n: LazyArray) -> tuple:
    """The shape an element-wise n's operand has when it is read entry for entry."""
    return n.shape[::-1] if isinstance(n, Transpose) else n.shape


def _outer(n: LazyArray) -> bool:
    return (isinstance(n, MatMul) and n.a.ndim == 2 and n.b.ndim == 2
            and min(n.shape) > 1)


def low_rank(n: LazyArray) -> bool:
    """Whether n is a matrix product of two matrices whose inner dimension is
    below both of its own (U @ V.T): larger than its factors together."""
    return _outer(n) and n.a.shape[-1] < min(n.shape)


def expensive(n: LazyArray, ev) -> bool:
    """Whether n is a dense 2-d node holding a matrix product through element-wise
    operations only (worth sampling under a sparse factor)."""
    return _holds(n, ev, _outer)


def recomputed(n: LazyArray, ev) -> bool:
    """Whether n, read twice, is recomputed by each reader (sampled, factorised)
    rather than materialised once: a dense 2-d node holding a low-rank product
    through element-wise operations only. A product of full rank (X @ W, X
    sparse n×n and W n×k) is smaller than its factors: materialised once."""
    return _holds(n, ev, low_rank)


def _holds(n: LazyArray, ev, product) -> bool:
    if n.ndim != 2 or min(n.shape) <= 1 or ev.support(n) is not None:
        return False

    def holds(m: LazyArray) -> bool:
        if ev.done(m):
            return False
        if product(m):
            return True
        return elementwise(m) and any(holds(a) for a in m.args
                                      if a.shape == operand_shape(m))
    return holds(n)


def sampled_product(ctx, n: LazyArray, ix):
    """The expression of n = a * b as S[·]·G[·] with G = b sampled on S = a's
    pattern (or the other way round), or None when n is not such a product."""
    ev = ctx.ev
    a, b = n.args
    sa, sb = ev.support(a), ev.support(b)
    if (sa is None) == (sb is None):
        return None
    sparse, dense = (a, b) if sa is not None else (b, a)
    if sparse.shape != n.shape or dense.shape != n.shape or not expensive(dense, ev):
        return None
    s_val = ev.value(sparse)
    key = (dense.key, sparse.key)
    g = ev.facts.sampled.get(key)
    if g is None:
        v, fn = _sample(ev, dense, sparse, s_val)
        g = ev.facts.sampled[key] = Leaf(v, shape=n.shape, dtype=dense.dtype)
        if g.key not in ev.values:
            ev.values.store(g.key, v, fn)
    es = ctx.bind(sparse, s_val, ix)
    eg = ctx.bind(g, g.value, ix)
    return EMul(es, eg)


def _sample(ev, node: LazyArray, sparse: LazyArray, s_val):
    """(node sampled on the pattern of the value s_val of sparse, the step
    computing it from the slots)."""
    ev.note(lambda: f"sampled {node.shape} on the stored entries of a sparse operand "
            f"-> csr (its pattern)")
    if ev.opts.dry:
        Sampler(ev, None).values(node, False)
        return Dry(node.shape, node.dtype, True), None
    ss = ev.slot(sparse)
    ps = ss if s_val.format == "csr" else ev.values.derived(
        ("csr", ss), lambda env: trusted(env[ss]).tocsr(), False)
    fn = _on(Sampler(ev, ps).values(node, False), ps, node.dtype)
    return fn(ev.values.env), fn


def _on(f, ps: int, dtype):
    """fn(env): the values f(env) as a csr array of the pattern in slot ps."""
    import scipy.sparse as sps

    def fn(env):
        p = trusted(env[ps])        # a leaf's arrays: its pattern is read as given
        with np.errstate(all="ignore"):
            vals = f(env)
        vals = np.broadcast_to(np.asarray(vals, dtype=dtype), p.data.shape).copy()
        return sps.csr_array((vals, p.indices, p.indptr), shape=p.shape)
    return fn


class Rows:
    """The row of each stored entry of a csr array, made on first use."""

    __slots__ = ("p", "_r")

    def __init__(self, p):
        self.p, self._r = p, None

    @property
    def r(self):
        if self._r is None:
            self._r = np.repeat(np.arange(self.p.shape[0]), np.diff(self.p.indptr))
        return self._r


class Sampler:
    """Steps fn(env) giving the values of nodes at the stored coordinates (r, c)
    of the csr pattern in slot ps (None: explain's dry run, nothing computed).
    Which way a step goes is chosen from the program (the signature replays
    it); what depends on values (whether an operand stores the pattern's
    coordinates) is checked in the step."""

    def __init__(self, ev, ps):
        self.ev, self.ps = ev, ps
        self.p = None if ps is None else ev.values.env[ps]
        self._rows = None

    def rows(self) -> int:
        """The slot of the pattern's Rows (a step of its own, made once)."""
        if self._rows is None:
            ps = self.ps
            self._rows = self.ev.values.derived(("rows", ps), lambda env: Rows(env[ps]),
                                                self.ev.opts.dry)
        return self._rows

    def values(self, n: LazyArray, flip: bool):
        if self.ev.done(n) or isinstance(n, (Leaf, Const, Sum)):
            return self.gather(n, flip)
        match n:
            case Transpose(MatMul(x, y) as child) if _outer(child):
                return self.values(matmul(transpose(y), transpose(x)), flip)
            case Transpose(child):
                return self.values(child, not flip)
        if _outer(n):
            return self.sddmm(n, flip)
        if isinstance(n, Mul) and not flip:
            weighted = self.weighted(n)
            if weighted is not None:
                return weighted
        if not elementwise(n):
            return self.gather(n, flip)
        fs = [self.values(a, flip) if a.shape == n.shape else self.gather(a, flip)
              for a in n.args]
        op = entrywise(n)
        return lambda env: op([g(env) for g in fs])

    def gather(self, n: LazyArray, flip: bool):
        """n materialised, read at (r, c) (broadcasting a lower-dimensional n)."""
        v = self.ev.value(n)
        if self.ps is None:
            return lambda env: 0.0
        s, ps, rows = self.ev.slot(n), self.ps, self.rows()
        if is_sparse(v):
            def fn(env):
                v, p = env[s], env[ps]
                if not flip and _same(v, p):
                    return v.data
                r, c = (p.indices, env[rows].r) if flip else (env[rows].r, p.indices)
                return np.asarray(trusted(v).tocsr()[r, c]).ravel()
            return fn
        return lambda env: _dense_at(np.asarray(env[s]), env[ps], env[rows], flip)

    def weighted(self, n: LazyArray):
        """S * (A @ B) with S a sparse leaf of the pattern: one SDDMM weighted by
        S's values (no separate product), or None."""
        for s, g in (n.args, n.args[::-1]):
            if (isinstance(s, Leaf) and is_sparse(s.value) and _outer(g) and self.p is not None
                    and same_pattern(self.ev, s.value, self.p)):
                return self.sddmm(g, False, s)
        return None

    def sddmm(self, n: LazyArray, flip: bool, weights=None):
        """Σ_k at (r, c) of the product n, as one etchpy kernel (csr output),
        times the values of the leaf `weights` (a csr array of the pattern;
        default ones)."""
        ev, ps = self.ev, self.ps
        ctx = KernelContext(ev, n)
        i, j = Index("s0"), Index("s1")
        shape = n.shape[::-1] if flip else n.shape
        if weights is not None:
            leaf, val = weights, ev.value(weights)
        else:
            val = Dry(shape, n.dtype, True) if ps is None else _ones(self.p)
            leaf = Leaf(val, shape=shape, dtype=n.dtype)
            ev.values.store(leaf.key, val, None if ps is None else (lambda env: _ones(env[ps])))
        ev.report.names.setdefault(leaf.key, "P (the sparse pattern)" if weights is None
                                   else "the sparse factor")
        pat = ctx.bind(leaf, val, (i, j))
        e = EMul(pat, ctx.tr.expr(n, (j, i) if flip else (i, j)))
        kern = ctx.step(e, (i, j), "csr", Leaf(None, shape=shape, dtype=n.dtype))
        if ps is None:
            return lambda env: 0.0
        rows = self.rows()

        def fn(env):
            out, p = kern(env), env[ps]
            if np.array_equal(out.indptr, p.indptr) and np.array_equal(out.indices,
                                                                          p.indices):
                return out.data
            return np.asarray(out.tocsr()[env[rows].r, p.indices]).ravel()
        return fn


def _ones(p):
    import scipy.sparse as sps
    trusted(p)          # p.nnz is indptr[-1]: the pattern's arrays are read as given
    return sps.csr_array((np.ones(p.nnz), p.indices, p.indptr), shape=p.shape)


def _dense_at(v, p, rows: Rows, flip: bool):
    """The dense v read at the pattern p's coordinates (broadcasting)."""
    if v.ndim == 0:
        return v[()]
    c = rows.r if flip else p.indices
    if v.ndim == 1:
        return v[c] if v.shape[0] > 1 else v[0]
    r = p.indices if flip else rows.r
    return v[r if v.shape[0] > 1 else 0, c if v.shape[1] > 1 else 0]


def _same(a, b) -> bool:
    """Whether csr arrays a and b store the same coordinates in the same order."""
    return a is b or (a.format == b.format == "csr" and a.shape == b.shape
                      and np.array_equal(a.indptr, b.indptr)
                      and np.array_equal(a.indices, b.indices))


def same_pattern(ev, a, b) -> bool:
    """Whether csr arrays a and b store the same coordinates in the same order
    (remembered per pair of arrays for the program's run)."""
    if a is b:
        return True
    key = (id(a), id(b))
    patterns = ev.facts.patterns
    if key not in patterns:
        patterns[key] = (a.format == b.format == "csr" and a.shape == b.shape
                            and np.array_equal(a.indptr, b.indptr)
                            and np.array_equal(a.indices, b.indices))
    return patterns[key]


def on_pattern(ev, node: LazyArray, ps):
    """The step computing the element-wise node (whose support is the pattern of
    the csr leaf in slot ps) at that pattern's stored entries: a csr array with
    its pattern."""
    ev.note(lambda: f"element-wise {node.shape} on the stored entries of its sparse "
            f"operands (one pattern) -> csr")
    if ev.opts.dry:
        Sampler(ev, None).values(node, False)
        return lambda env: Dry(node.shape, node.dtype, True)
    return _on(Sampler(ev, ps).values(node, False), ps, node.dtype)



def entrywise(n: LazyArray):
    """f(values of n's operands) -> n's values, for element-wise n (a Binary, a
    power or a map); it keeps n's operation and parameters only, never n (a
    recorded step holds no array of the run that recorded it)."""
    match n:
        case Binary():
            apply = n.apply
            return lambda v: apply(v[0], v[1])
        case Pow(_, p):
            return lambda v: v[0] ** p
        case Map(_, fn, arg):
            py, a = maps.MAPS[fn].py, 0 if arg is None else arg
            return lambda v: py(v[0], a)
    raise AssertionError(f"{type(n).__name__} is not element-wise")
