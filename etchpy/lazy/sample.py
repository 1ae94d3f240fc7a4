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

from ..expr.nodes import Index, Mul
from .array import MAPS, LazyArray, matmul, transpose
from .kernel import Dry, KernelContext, is_sparse

ELEMENTWISE = ("add", "mul", "div", "pow", "map", "T")


def _outer(n: LazyArray) -> bool:
    return (n.op == "matmul" and n.args[0].ndim == 2 and n.args[1].ndim == 2
            and min(n.shape) > 1)


def expensive(n: LazyArray, ev) -> bool:
    """Whether n is a dense 2-d node holding a matrix product through element-wise
    operations only (worth sampling, never worth materialising)."""
    if n.ndim != 2 or min(n.shape) <= 1 or ev.support(n) is not None:
        return False

    def holds(m: LazyArray) -> bool:
        if m.key in ev.memo:
            return False
        if _outer(m):
            return True
        return m.op in ELEMENTWISE and any(holds(a) for a in m.args
                                           if a.shape == m.shape[::-1 if m.op == "T" else 1])
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
    key = ("sampled", dense.key, sparse.key)
    if key not in ev.memo:
        ev.memo[key] = _sample(ev, dense, sparse, s_val)
    g = LazyArray("leaf", (), n.shape, dense.dtype, ev.memo[key][0])
    if g.key not in ev.slots:
        ev.store(g.key, *ev.memo[key])
    es = ctx.bind(sparse, s_val, ix)
    eg = ctx.bind(g, ev.memo[key][0], ix)
    return Mul(es, eg)


def _sample(ev, node: LazyArray, sparse: LazyArray, s_val):
    """(node sampled on the pattern of the value s_val of sparse, the step
    computing it from the slots)."""
    ev.note(lambda: f"sampled {node.shape} on the stored entries of a sparse operand "
            f"-> csr (its pattern)")
    if ev.dry:
        Sampler(ev, None).values(node, False)
        return Dry(node.shape, node.dtype, True), None
    ss = ev.slot(sparse)
    ps = ss if s_val.format == "csr" else ev.derived(("csr", ss), lambda env: env[ss].tocsr())
    fn = _on(Sampler(ev, ps).values(node, False), ps, node.dtype)
    return fn(ev.env), fn


def _on(f, ps: int, dtype):
    """fn(env): the values f(env) as a csr array of the pattern in slot ps."""
    import scipy.sparse as sps

    def fn(env):
        p = env[ps]
        with np.errstate(all="ignore"):
            vals = f(env)
        vals = np.broadcast_to(np.asarray(vals, dtype=dtype), p.data.shape).copy()
        return sps.csr_array((vals, p.indices, p.indptr), shape=p.shape)
    return fn


class Op:
    """A node's op and param without its operands (what a recorded step keeps:
    never the arrays of a run)."""

    __slots__ = ("op", "param")

    def __init__(self, op, param):
        self.op, self.param = op, param


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
        self.p = None if ps is None else ev.env[ps]
        self._rows = None

    def rows(self) -> int:
        """The slot of the pattern's Rows (a step of its own, made once)."""
        if self._rows is None:
            ps = self.ps
            self._rows = self.ev.derived(("rows", ps), lambda env: Rows(env[ps]))
        return self._rows

    def values(self, n: LazyArray, flip: bool):
        op = n.op
        if n.key in self.ev.memo or op in ("leaf", "const", "sum"):
            return self.gather(n, flip)
        if op == "T":
            child = n.args[0]
            if _outer(child):
                x, y = child.args
                return self.values(matmul(transpose(y), transpose(x)), flip)
            return self.values(child, not flip)
        if _outer(n):
            return self.sddmm(n, flip)
        if op == "mul" and not flip:
            weighted = self.weighted(n)
            if weighted is not None:
                return weighted
        if op not in ELEMENTWISE:
            return self.gather(n, flip)
        fs = [self.values(a, flip) if a.shape == n.shape else self.gather(a, flip)
              for a in n.args]
        o, apply = Op(n.op, n.param), Sampler.apply
        return lambda env: apply(o, [f(env) for f in fs])

    @staticmethod
    def apply(n, vals):
        match n.op:
            case "add":
                return vals[0] + vals[1]
            case "mul":
                return vals[0] * vals[1]
            case "div":
                return vals[0] / vals[1]
            case "pow":
                return vals[0] ** n.param
        fn, arg = n.param
        return MAPS[fn](vals[0]) if arg is None else MAPS[fn](vals[0], arg)

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
                return np.asarray(v.tocsr()[r, c]).ravel()
            return fn
        return lambda env: _dense_at(np.asarray(env[s]), env[ps], env[rows], flip)

    def weighted(self, n: LazyArray):
        """S * (A @ B) with S a sparse leaf of the pattern: one SDDMM weighted by
        S's values (no separate product), or None."""
        for s, g in (n.args, n.args[::-1]):
            if (s.op == "leaf" and is_sparse(s.param) and _outer(g) and self.p is not None
                    and same_pattern(self.ev, s.param, self.p)):
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
            val = _dry_pattern(shape, n.dtype) if ps is None else _ones(self.p)
            leaf = LazyArray("leaf", (), shape, n.dtype, val)
            ev.store(leaf.key, val, None if ps is None else (lambda env: _ones(env[ps])))
        ev.leaf_names.setdefault(leaf.key, "P (the sparse pattern)" if weights is None
                                 else "the sparse factor")
        pat = ctx.bind(leaf, val, (i, j))
        e = Mul(pat, ctx.tr.expr(n, (j, i) if flip else (i, j)))
        kern = ctx.step(e, (i, j), "csr", LazyArray("leaf", (), shape, n.dtype, None))
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
    if key not in ev.patterns:
        ev.patterns[key] = (a.format == b.format == "csr" and a.shape == b.shape
                            and np.array_equal(a.indptr, b.indptr)
                            and np.array_equal(a.indices, b.indices))
    return ev.patterns[key]


def on_pattern(ev, node: LazyArray, ps):
    """The step computing the element-wise node (whose support is the pattern of
    the csr leaf in slot ps) at that pattern's stored entries: a csr array with
    its pattern."""
    ev.note(lambda: f"element-wise {node.shape} on the stored entries of its sparse "
            f"operands (one pattern) -> csr")
    if ev.dry:
        Sampler(ev, None).values(node, False)
        return lambda env: Dry(node.shape, node.dtype, True)
    return _on(Sampler(ev, ps).values(node, False), ps, node.dtype)


def _dry_pattern(shape, dtype):
    return Dry(shape, dtype, True)
