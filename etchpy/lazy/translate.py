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

from ..expr.maps import map as map_expr
from ..expr.nodes import Add, Expr, Index, Lit, Mul, Sum
from .array import LazyArray, as_node, binary, map_node, matmul, reduce_sum, transpose

# maps with f(0) = 0 keep their operand's support (maximum/minimum by their scalar)
ZERO_PRESERVING = {"sqrt", "abs"}


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
        node = n if all(x is y for x, y in zip(args, n.args)) else \
            LazyArray(n.op, args, n.shape, n.dtype, n.param)
        canon[n.key] = node
        return node

    outs = [walk(o) for o in outputs]
    for o in outs:
        uses[o.key] += 1
    return outs, uses


def _terms(n: LazyArray, coef=1):
    """n as a list of (coefficient, term) through +, scalar * and unary -."""
    if n.op == "add":
        return _terms(n.args[0], coef) + _terms(n.args[1], coef)
    if n.op == "mul":
        a, b = n.args
        if a.op == "const":
            return _terms(b, coef * a.param)
        if b.op == "const":
            return _terms(a, coef * b.param)
    return [(coef, n)]


def _is_product(t: LazyArray) -> bool:
    return t.op == "matmul" and t.args[0].ndim == 2 and t.args[1].ndim == 2


def _pair_sum(a: LazyArray, b: LazyArray) -> LazyArray:
    """Σ a∘b, with Σ (A·B)∘(C·D) = Σ (AᵀC)∘(B·Dᵀ) for two products."""
    if _is_product(a) and _is_product(b):
        (p, q), (r, s) = a.args, b.args
        return reduce_sum(binary("mul", matmul(transpose(p), r), matmul(q, transpose(s))))
    return reduce_sum(binary("mul", a, b))


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
    n = node if all(x is y for x, y in zip(args, node.args)) else \
        LazyArray(node.op, args, node.shape, node.dtype, node.param)
    out = n
    if (n.op == "sum" and len(n.param[0]) == n.args[0].ndim and not n.param[1]
            and n.args[0].op == "pow" and n.args[0].param == 2):
        x = n.args[0].args[0]
        terms = _terms(x)
        if (x.ndim == 2 and len(terms) > 1 and any(_is_product(t) for _, t in terms)
                and all(t.shape == x.shape for _, t in terms)
                and (finite is None or finite(x))):
            parts = []
            for a, (ca, ta) in enumerate(terms):
                for b in range(a, len(terms)):
                    cb, tb = terms[b]
                    c = ca * cb * (1 if a == b else 2)
                    term = _pair_sum(ta, tb)
                    parts.append(term if c == 1 else binary("mul", as_node(c), term))
            out = parts[0]
            for p in parts[1:]:
                out = binary("add", out, p)
            out = map_node("maximum", out, 0)       # a sum of squares is never < 0
            if out.dtype != n.dtype:
                out = LazyArray(out.op, out.args, out.shape, n.dtype, out.param)
            fired.append(f"square expansion: Σ (Σ_a c_a·t_a)² over {len(terms)} terms "
                         f"-> {len(parts)} sums, products as Gram matrices")
    memo[node.key] = out
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
        op, a = node.op, node.args
        if op == "const":
            return Lit(node.param.item() if hasattr(node.param, "item") else node.param)
        got = self.pre(node, ix)
        if got is not None:
            return got
        if op in ("add", "mul"):
            ea = self.expr(a[0], child_names(node.shape, a[0], ix))
            eb = self.expr(a[1], child_names(node.shape, a[1], ix))
            return Add(ea, eb) if op == "add" else Mul(ea, eb)
        if op == "div":     # by a scalar (a division by an array is a boundary)
            return Mul(self.expr(a[0], child_names(node.shape, a[0], ix)),
                       Lit(1 / a[1].param))
        if op == "pow":
            return self.expr(a[0], ix) ** node.param
        if op == "T":
            return self.expr(a[0], ix[::-1])
        if op == "map":     # ep.map: a contracted operand is its own temporary
            fn, arg = node.param
            return map_expr(fn, self.expr(a[0], ix), arg)
        if op == "matmul":
            return self._matmul(a[0], a[1], ix)
        if op == "sum":
            return self._sum(node, ix)
        raise AssertionError(f"no translation for {op}")

    def _matmul(self, x: LazyArray, y: LazyArray, ix) -> Expr:
        k = self.fresh(x.shape[-1])
        nx = x.ndim - 1
        self.depth += k is not None
        ex = self.expr(x, ix[:nx] + (k,))
        ey = self.expr(y, (k,) + ix[nx:])
        self.depth -= k is not None
        return Mul(ex, ey) if k is None else Sum(k, Mul(ex, ey))

    def _sum(self, node: LazyArray, ix) -> Expr:
        (child,), (axes, keep) = node.args, node.param
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
            e = Sum(v, e)
        return e
