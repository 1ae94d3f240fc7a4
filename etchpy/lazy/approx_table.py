"""Approximations of constant operands, kept in a side table (docs/approximations.md).

An approximation is not equal to what it replaces, so it never enters the
e-graph, the canonical forms or `ep.equivalent`: each constant leaf (a leaf
wrapped with `ep.lazy(W, constant=True)`) gets a list of `Candidate`s, a side
table keyed by the leaf and tagged with each candidate's own error
‖W − W̃‖_F / ‖W‖_F. A choice of one candidate per constant leaf (a genome; index
0 is always the exact operand) is applied by rebuilding the lazy program with
the leaves substituted (`substitute`), and only that rebuilt program, a new
program, is translated and optimised exactly.

Candidates of a constant m×n matrix W (float; vectors and integers get none):
    svd k    W ≈ U_k·(Σ_k V_kᵀ) for k = r − s, r − 2s, ... with s = ⌊log₂ min(m, n)⌋
             (the fuzzy-eqsat step) and r = min(m, n), keeping only ranks whose
             product costs less than W's: k·(m + n) < m·n; a product with it is
             rebuilt as (A·U_k)·(Σ_k V_kᵀ) (or U_k·((Σ_k V_kᵀ)·B)), never forming W̃
    prune t  entries with |w| < t·max|W| set to zero (t in 1e-3, 1e-2, 1e-1: the
             thresholds are relative to the largest entry, so they do not depend on
             the scale of W; settings.prune_thresholds), stored as a scipy csr array
             that the sparse kernels run; kept only when a product through it is
             cheaper than through W in the one cost model (plan.product_cost: a
             csr multiply-add against a dense one run by BLAS)
The search's knobs are fields of approx_search.Settings, the model's weights
fields of the Tuning the program compiles under; both passed explicitly.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import maps
from ..plan.product_cost import product_cost
from ..tuning import DEFAULT, Tuning
from .approx_search import Settings
from .array import as_node, binary, lazy, map_node, matmul, power, reduce_sum, transpose
from .nodes import Binary, Const, LazyArray, Leaf, Map, MatMul, Pow, Sum, Transpose
from .wrap import trusted


@dataclass(frozen=True)
class Candidate:
    """One approximation of a constant leaf: kind ("exact", "svd", "prune"), its
    parameter (rank, relative threshold), its own relative Frobenius error, and
    the lazy node that replaces the leaf (the leaf itself for "exact")."""
    kind: str
    param: object
    error: float
    node: LazyArray

    def describe(self) -> str:
        if self.kind == "exact":
            return "exact"
        if self.kind == "svd":
            return f"truncated SVD rank {self.param} (own error {self.error:.3g})"
        nnz = self.node.value.nnz
        return (f"pruned |w| < {self.param:g}·max|W| -> csr, {nnz} nonzeros "
                f"(own error {self.error:.3g})")


def svd_ranks(m: int, n: int) -> list[int]:
    """The ranks tried for an m×n matrix: min(m, n) − j·⌊log₂ min(m, n)⌋, j ≥ 1,
    cheaper than the matrix (k·(m + n) < m·n), largest first."""
    r = min(m, n)
    step = max(1, int(math.floor(math.log2(r)))) if r > 1 else 1
    return [k for k in range(r - step, 0, -step) if k * (m + n) < m * n]


def _svd_candidates(w: np.ndarray, norm: float) -> list[Candidate]:
    ranks = svd_ranks(*w.shape)
    if not ranks:
        return []
    u, s, vt = np.linalg.svd(w, full_matrices=False)
    tail = np.concatenate([np.cumsum((s ** 2)[::-1])[::-1], [0.0]])   # Σ_{i≥k} s_i²
    out = []
    for k in ranks:
        left = np.ascontiguousarray(u[:, :k], dtype=w.dtype)
        right = np.ascontiguousarray(s[:k, None] * vt[:k], dtype=w.dtype)
        err = math.sqrt(max(tail[k], 0.0)) / norm
        node = matmul(lazy(left), lazy(right))
        out.append(Candidate("svd", k, err, node))
    return out


def _prune_candidates(w: np.ndarray, norm: float, settings: Settings,
                      tuning: Tuning) -> list[Candidate]:
    import scipy.sparse as sps
    top = float(np.abs(w).max())
    out, seen = [], set()
    m, n = w.shape
    dense = product_cost(m, m, n, {}, tuning)
    for t in settings.prune_thresholds:
        keep = np.abs(w) >= t * top
        nnz = int(keep.sum())
        if nnz in seen or product_cost(m, m, n, {"B": nnz}, tuning) >= dense:
            continue        # dominated: costs as much as W in every product
        seen.add(nnz)
        pruned = np.where(keep, w, 0)
        err = float(np.linalg.norm(w - pruned)) / norm
        out.append(Candidate("prune", t, err, lazy(sps.csr_array(pruned))))
    return out


def candidates(leaf: Leaf, settings: Settings = Settings(),
               tuning: Tuning = DEFAULT) -> list[Candidate]:
    """The side table's row for a constant leaf: the exact leaf first, then its
    approximations (none for a vector, a sparse, an integer or a zero matrix);
    `tuning` holds the cost model's weights that decide which pruned ones pay."""
    exact = [Candidate("exact", None, 0.0, leaf)]
    w = leaf.value
    if leaf.ndim != 2 or not isinstance(w, np.ndarray) or w.dtype.kind != "f":
        return exact
    norm = float(np.linalg.norm(w))
    if norm == 0 or not np.isfinite(norm):
        return exact
    return exact + _svd_candidates(w, norm) + _prune_candidates(w, norm, settings, tuning)


# ------------------------------------------------------------------ rebuilding
def _is_factored(n: LazyArray, factored: set) -> bool:
    return isinstance(n, MatMul) and id(n) in factored


def _matmul(a: LazyArray, b: LazyArray, factored: set) -> LazyArray:
    """a @ b, keeping a factored operand's two factors apart: A·(U·R) = (A·U)·R."""
    if _is_factored(b, factored):
        return matmul(matmul(a, b.a), b.b)
    if _is_factored(a, factored):
        return matmul(a.a, matmul(a.b, b))
    return matmul(a, b)


def _transpose(a: LazyArray, factored: set) -> LazyArray:
    if _is_factored(a, factored):
        out = matmul(transpose(a.b), transpose(a.a))
        factored.add(id(out))
        return out
    return transpose(a)


def substitute(nodes, leaves: dict, factored: set) -> list[LazyArray]:
    """The program of `nodes` with each leaf whose key is in `leaves` replaced by
    its value (a lazy node), shapes and dtypes recomputed by the array
    constructors; `factored` holds the ids of replacement products U·R to keep
    apart (see _matmul)."""
    memo: dict = {}

    def walk(n: LazyArray) -> LazyArray:
        if n.key in memo:
            return memo[n.key]
        if isinstance(n, (Leaf, Const)):
            out = leaves.get(n.key, n)
        else:
            out = _rebuild(n, [walk(a) for a in n.args], factored)
        memo[n.key] = out
        return out
    return [walk(as_node(n)) for n in nodes]


def _rebuild(n: LazyArray, a: list, factored: set) -> LazyArray:
    match n:
        case Binary():
            return binary(type(n), a[0], a[1])
        case MatMul():
            return _matmul(a[0], a[1], factored)
        case Transpose():
            return _transpose(a[0], factored)
        case Pow(_, p):
            return power(a[0], p)
        case Sum(_, axes, keep):
            return reduce_sum(a[0], axes, keep)
        case Map(_, fn, arg):
            return map_node(fn, a[0], arg)
    raise AssertionError(f"no rebuild for {type(n).__name__}")


# -------------------------------------------------------------- cost and values
def cost(nodes, tuning: Tuning = DEFAULT, memo: dict | None = None) -> float:
    """The model cost of a program under the one cost model: a product (of two
    dense operands, run by BLAS, or through a csr operand) priced by
    plan.product_cost with `tuning`'s weights, element-wise work one per entry,
    transposes nothing; shared nodes once. `memo` (a dict the caller keeps
    across the programs of one search) holds each product shape's price."""
    memo = {} if memo is None else memo
    seen: set = set()
    total = 0.0
    stack = [as_node(n) for n in nodes]
    while stack:
        n = stack.pop()
        if n.key in seen or isinstance(n, (Leaf, Const)):
            continue
        seen.add(n.key)
        stack += n.args
        total += _node_cost(n, tuning, memo)
    return total


def _node_cost(n: LazyArray, tuning: Tuning, memo: dict) -> float:
    if isinstance(n, Transpose):
        return 0.0
    if not isinstance(n, MatMul):
        return float(max(1, math.prod(n.shape)))
    a, b = n.args
    k = a.shape[-1]
    rows = math.prod(a.shape[:-1]) if a.ndim > 1 else 1
    cols = math.prod(b.shape[1:]) if b.ndim > 1 else 1
    csr = {side: sp.value.nnz for side, sp in (("A", a), ("B", b))
           if isinstance(sp, Leaf) and hasattr(sp.value, "nnz")}
    if len(csr) > 1:            # both csr: priced through the sparser
        csr = dict([min(csr.items(), key=lambda kv: kv[1])])
    key = (rows, k, cols, tuple(csr.items()))
    if key not in memo:
        memo[key] = product_cost(rows, k, cols, csr, tuning)
    return memo[key]


def reference(nodes) -> list:
    """The numpy value of each node (dense numpy arrays; BLAS for products; the
    meaning etchpy's kernels are checked against), shared nodes once."""
    memo: dict = {}

    def val(n: LazyArray):
        if n.key not in memo:
            memo[n.key] = _value(n, [val(a) for a in n.args])
        return memo[n.key]
    with np.errstate(all="ignore"):
        return [np.asarray(val(as_node(n)), dtype=as_node(n).dtype) for n in nodes]


def _value(n: LazyArray, a: list):
    match n:
        case Leaf(p):
            return p if isinstance(p, np.ndarray) else trusted(p).toarray()
        case Const(v):
            return np.asarray(v, dtype=n.dtype)
        case Binary():
            return n.ufunc(a[0], a[1])
        case MatMul():
            return a[0] @ a[1]
        case Transpose():
            return a[0].T
        case Pow(_, p):
            return a[0] ** p
        case Sum(_, axes, keep):
            return np.sum(a[0], axis=axes, keepdims=keep)
        case Map(_, fn, arg):
            return maps.MAPS[fn].py(a[0], 0 if arg is None else arg)
    raise AssertionError(f"no value for {type(n).__name__}")


def rel_error(approx: list, exact: list) -> float:
    """The largest relative Frobenius error ‖Ỹ − Y‖_F / ‖Y‖_F over the results
    (the absolute error where ‖Y‖_F = 0; inf where Ỹ is not finite)."""
    worst = 0.0
    for y, e in zip(approx, exact):
        y = y.toarray() if hasattr(y, "toarray") else np.asarray(y, dtype=np.float64)
        e = np.asarray(e, dtype=np.float64)
        if not np.isfinite(y).all():
            return math.inf
        d = float(np.linalg.norm((y - e).ravel()))
        ne = float(np.linalg.norm(e.ravel()))
        worst = max(worst, d / ne if ne > 0 else d)
    return worst
