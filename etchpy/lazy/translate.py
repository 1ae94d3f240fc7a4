"""LA -> RA: a lazy program as etchpy index expressions (after SPORES).

`share(outputs)` merges structurally equal nodes (common subexpressions become one
node) and counts each node's consumers. `expand_squares(node)` is the one rewrite
done at the array level: Σ (Σ_a c_a·t_a)² = Σ_{a,b} c_a·c_b·Σ t_a∘t_b, and for two
products Σ (A·B)∘(C·D) = Σ (AᵀC)∘(B·Dᵀ), so a squared loss never forms U·Vᵀ
(proofs_notes/la_to_ra.md). `Translator.expr(node, ix)` gives the expression of a
node whose axes are named `ix` (None for an axis of size one, which broadcasts):

    A @ B      ->  Σ_k A[i,k]·B[k,j]         (k fresh; no Σ when k has size one)
    A.T        ->  A with its two names swapped
    a + b      ->  Add, a * b -> Mul, each operand named by numpy broadcasting
    a / c      ->  (1/c)·a for a scalar c; a ** n -> n-fold Mul (n ≥ 1; a ** 0 is
                   built as a leaf of ones)
    a.sum(ax)  ->  Σ over a fresh name per summed axis
    exp(a) ... ->  ep.map("exp", a) (and log, sqrt, abs, recip, maximum, minimum)

A node the program materialises (a leaf, a map, a shared node, an operand sampled
on a sparse support) is an input of the expression, bound by the callback `pre`.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

from ..expr.maps import map as map_expr
from ..expr.nodes import Add as EAdd, Expr, Index, Lit, Mul as EMul, Sum as ESum
from .array import as_node, binary, map_node, matmul, reduce_sum, transpose
from .nodes import Add, Const, Div, LazyArray, Map, MatMul, Mul, Pow, Sum, Transpose


def share(outputs) -> tuple[list[LazyArray], Counter]:
    """The outputs with structurally equal nodes merged, and each node's consumer
    count (by key) over the whole program."""
    canon: dict = {}
    uses: Counter = Counter()

    def walk(n: LazyArray) -> LazyArray:
        if n.key in canon:
            return canon[n.key]
        args = tuple(walk(a) for a in n.args)
        for a in set(a.key for a in args):
            uses[a] += 1
        node = n if all(x is y for x, y in zip(args, n.args)) else n.with_args(*args)
        canon[n.key] = node
        return node

    outs = [walk(o) for o in outputs]
    for o in outs:
        uses[o.key] += 1
    return outs, uses


def _terms(n: LazyArray, coef=1):
    """n as a list of (coefficient, term) through +, scalar * and unary -."""
    match n:
        case Add(a, b):
            return _terms(a, coef) + _terms(b, coef)
        case Mul(Const(c), b):
            return _terms(b, coef * c)
        case Mul(a, Const(c)):
            return _terms(a, coef * c)
    return [(coef, n)]


def _is_product(t: LazyArray) -> bool:
    return type(t) is MatMul and t.a.ndim == 2 and t.b.ndim == 2


def _pair_sum(a: LazyArray, b: LazyArray) -> LazyArray:
    """Σ a∘b, with Σ (A·B)∘(C·D) = Σ (AᵀC)∘(B·Dᵀ) for two products."""
    if _is_product(a) and _is_product(b):
        (p, q), (r, s) = a.args, b.args
        return reduce_sum(binary(Mul, matmul(transpose(p), r), matmul(q, transpose(s))))
    return reduce_sum(binary(Mul, a, b))


def expand_squares(node: LazyArray, fired: list, memo=None, finite=None) -> LazyArray:
    """The program with every full sum of a square of a sum with a matrix product
    among its terms expanded (see the module doc); `fired` collects what fired.
    finite(x) (default: always) says whether the squared x is finite: an inf or
    nan term would make the expansion's inf - inf a nan, so it is not expanded.
    The expansion is clamped at 0 (its cancellation can go below)."""
    memo = {} if memo is None else memo
    if node.key in memo:
        return memo[node.key]
    args = tuple(expand_squares(a, fired, memo, finite) for a in node.args)
    n = node if all(x is y for x, y in zip(args, node.args)) else node.with_args(*args)
    out = n
    match n:
        case Sum(Pow(x, 2) as sq, axes, False) if len(axes) == sq.ndim:
            out = _expand(n, x, fired, finite)
    memo[node.key] = out
    return out


def _expand(n: Sum, x: LazyArray, fired: list, finite) -> LazyArray:
    """Σ x² over every axis with x a sum of terms expanded (or n itself)."""
    terms = _terms(x)
    if not (x.ndim == 2 and len(terms) > 1 and any(_is_product(t) for _, t in terms)
            and all(t.shape == x.shape for _, t in terms)
            and (finite is None or finite(x))):
        return n
    parts = []
    for a, (ca, ta) in enumerate(terms):
        for b in range(a, len(terms)):
            cb, tb = terms[b]
            c = ca * cb * (1 if a == b else 2)
            term = _pair_sum(ta, tb)
            parts.append(term if c == 1 else binary(Mul, as_node(c), term))
    out = parts[0]
    for p in parts[1:]:
        out = binary(Add, out, p)
    out = map_node("maximum", out, 0)       # a sum of squares is never < 0
    if out.dtype != n.dtype:
        out = replace(out, dtype=n.dtype)
    fired.append(f"square expansion: Σ (Σ_a c_a·t_a)² over {len(terms)} terms "
                 f"-> {len(parts)} sums, products as Gram matrices")
    return out


def child_names(parent_shape, child: LazyArray, ix) -> tuple:
    """Names of a broadcast operand's axes: the parent's trailing ones, None where
    the operand has size one."""
    lead = len(parent_shape) - child.ndim
    return tuple(None if child.shape[d] == 1 else ix[lead + d] for d in range(child.ndim))


class Translator:
    """Index expressions of nodes, with fresh names i0, i1, ...; `pre(node, names)`
    gives the expression of a node the caller handles itself (an input: a leaf or
    a materialised node; a sampled product), or None to translate it here."""

    def __init__(self, pre, prefix: str = "i"):
        self.pre, self.prefix, self.count = pre, prefix, 0
        self.depth = 0          # sums enclosing the node being translated

    def fresh(self, size: int):
        if size == 1:
            return None
        self.count += 1
        return Index(f"{self.prefix}{self.count - 1}")

    def names(self, node: LazyArray) -> tuple:
        return tuple(self.fresh(n) for n in node.shape)

    def expr(self, node: LazyArray, ix: tuple) -> Expr:
        if type(node) is Const:
            v = node.value
            return Lit(v.item() if hasattr(v, "item") else v)
        got = self.pre(node, ix)
        return got if got is not None else self._expr(node, ix)

    def _expr(self, node: LazyArray, ix: tuple) -> Expr:
        """The expression of node translated here (not an input)."""
        match node:
            case Add(a, b) | Mul(a, b):
                ea = self.expr(a, child_names(node.shape, a, ix))
                eb = self.expr(b, child_names(node.shape, b, ix))
                return EAdd(ea, eb) if type(node) is Add else EMul(ea, eb)
            case Div(a, Const(c)):  # by a scalar (a division by an array is a boundary)
                return EMul(self.expr(a, child_names(node.shape, a, ix)), Lit(1 / c))
            case Pow(a, n):
                return self.expr(a, ix) ** n
            case Transpose(a):
                return self.expr(a, ix[::-1])
            case Map(a, fn, arg):   # ep.map: a contracted operand is its own temporary
                return map_expr(fn, self.expr(a, ix), arg)
            case MatMul(a, b):
                return self._matmul(a, b, ix)
            case Sum():
                return self._sum(node, ix)
        return node.translate(self, ix)     # a kind added beside these translates itself

    def _matmul(self, x: LazyArray, y: LazyArray, ix) -> Expr:
        k = self.fresh(x.shape[-1])
        nx = x.ndim - 1
        self.depth += k is not None
        ex = self.expr(x, ix[:nx] + (k,))
        ey = self.expr(y, (k,) + ix[nx:])
        self.depth -= k is not None
        return EMul(ex, ey) if k is None else ESum(k, EMul(ex, ey))

    def _sum(self, node: LazyArray, ix) -> Expr:
        child, axes, keep = node.a, node.axes, node.keepdims
        names, bound, it = [], [], iter(ix)
        for d, n in enumerate(child.shape):
            if d in axes:
                v = self.fresh(n)
                names.append(v)
                bound += [v] if v is not None else []
                if keep:
                    next(it)
            else:
                names.append(next(it))
        self.depth += bool(bound)
        e = self.expr(child, tuple(names))
        self.depth -= bool(bound)
        for v in reversed(bound):
            e = ESum(v, e)
        return e
