"""Relational algebra for expressions, and a canonical form that decides equivalence.

RA grammar (flat, n-ary; every node is a frozen, hashable dataclass):

    q ::= Rel(access)          a bound tensor: the relation A(i1, ..., in) -> value
        | Const(value)         a constant relation with no attributes
        | Join(q1, ..., qn)    natural join, values multiplied (the `*` of a semiring)
        | Union(q1, ..., qn)   outer union, values added (the `+`), broadcast by name
        | Agg(attrs, q)        aggregate (Σ) the attributes `attrs` away
        | Apply(fn, arg, q)    a map (etchpy.maps) of q's completed values: opaque

`to_ra(expr)` flattens nested `*`, `+` and Σ; `from_ra(q)` rebuilds an expression
from the same TensorVar objects (with `ep.sum`, `*`, `+`, `Lit`).

Canonical form (`canonical(expr, semiring)`): by distributivity every expression
is a sum of monomials

    c · Σ_B (x1 · ... · xn)          xk accesses, B the bound indices

where each xk is an access or a map (opaque: one factor over the map's free
indices, named by its function and its operand's canonical terms, so no law
crosses it and exp(a+b) is not exp(a)+exp(b)), and c is a coefficient built
from literals and symbolic index sizes dim(·)
(Σ_i of a term that does not mention i multiplies it by |i|). A size is named by
the tensor modes that fix it, not by the index name: the modes linked to i through
shared indices in the whole expression (`A.1=B.0`), so that renaming a bound index
keeps the size, and Σ_j over A's mode 0 and Σ_j over its mode 1 are told apart.
Only an index that indexes no tensor keeps its name. Monomials are
keyed up to renaming of their bound indices by a canonical labelling (colour
refinement, then the smallest key over the permutations of tied indices), and
the coefficients of equal monomials are added. Two expressions with the same
free indices and equal canonical forms are equal in the semiring (sound in every
commutative semiring); for rings of characteristic 0 (real, integer) the
converse holds too, so `equivalent` is a decision procedure there.

Coefficient algebras (chosen from the semiring's laws, see `CoefAlgebra`):
- "numeric" (literals add and multiply like numbers: real, real32, integer):
  a polynomial over dims with exact rational coefficients;
- "idempotent" (min_plus, max_plus, boolean, ...): n·x = x for n >= 1, so dims
  vanish and coefficients are semiring values combined with the semiring's ops;
- "formal" (anything else): a multiset of (literal product, dims) pairs; sound
  but incomplete.
Assumptions: an index name denotes one size in one expression (so the modes
it links have equal sizes), every size is >= 1, and tensors are unconstrained
(no NaN/inf reasoning: 0·x = 0).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

from ..expr.nodes import Access, Add, Expr, Lit, Map, Mul, Sum, as_expr, free_indices
from ..expr.walk import spine, sum_chain
from .gauss import exact
from .monomials import monomial_key
from ..expr.nodes import sum as ep_sum
from ..semiring import Semiring, semirings

# ----------------------------------------------------------------------------- RA


@dataclass(frozen=True)
class Rel:
    access: Access


@dataclass(frozen=True)
class Const:
    value: object
    negation: bool = False


@dataclass(frozen=True)
class Join:
    parts: tuple


@dataclass(frozen=True)
class Union:
    parts: tuple


@dataclass(frozen=True)
class Agg:
    attrs: tuple      # Index objects, outermost first
    body: object


@dataclass(frozen=True)
class Apply:
    fn: str
    arg: object
    body: object


def to_ra(e: Expr):
    """The RA tree of `e`: nested `*`/`+` become one Join/Union, nested Σ one Agg."""
    e = as_expr(e)
    match e:
        case Access():
            return Rel(e)
        case Lit(v, neg):
            return Const(v, neg)
        case Mul():
            return Join(tuple(to_ra(p) for p in spine(e, Mul)))
        case Add():
            return Union(tuple(to_ra(p) for p in spine(e, Add)))
        case Sum():
            attrs, body = sum_chain(e)
            return Agg(attrs, to_ra(body))
        case Map(fn, a, arg):
            return Apply(fn, arg, to_ra(a))
    raise TypeError(f"not an expression: {e!r}")


def from_ra(q) -> Expr:
    """The expression of an RA tree (inverse of `to_ra` up to association)."""
    match q:
        case Rel(acc):
            return acc
        case Const(v, neg):
            return Lit(v, neg)
        case Join(parts) | Union(parts):
            exprs = [from_ra(p) for p in parts]
            out = exprs[0]
            for x in exprs[1:]:
                out = Mul(out, x) if isinstance(q, Join) else Add(out, x)
            return out
        case Agg(attrs, body):
            return ep_sum(tuple(attrs), from_ra(body))
        case Apply(fn, arg, body):
            return Map(fn, from_ra(body), arg)
    raise TypeError(f"not an RA node: {q!r}")

# ------------------------------------------------------------------ coefficients


def literal_laws(sr: Semiring) -> dict[str, bool]:
    """Which laws about literals hold: int_mul (literal n = 1+...+1), numeric."""
    try:
        one, two, three = (sr.literal(v) for v in (1, 2, 3))
        int_mul = bool(two == sr.add(sr.one, sr.one) and three == sr.add(two, sr.one))
        numeric = int_mul and bool(sr.mul(two, three) == sr.literal(6)
                                   and sr.add(two, three) == sr.literal(5))
    except Exception:   # noqa: BLE001 - e.g. boolean cannot hold 2
        int_mul = numeric = False
    return {"int_mul": int_mul, "numeric": numeric}


class CoefAlgebra:
    """Coefficients as {key: amount} maps; the mode fixes keys and arithmetic."""

    def __init__(self, sr: Semiring):
        self.sr = sr
        if literal_laws(sr)["numeric"]:
            self.mode = "numeric"
        elif sr.idempotent:
            self.mode = "idempotent"
        else:
            self.mode = "formal"

    def lit(self, v) -> tuple:
        val = self.sr.literal(v)
        if val == self.sr.zero:
            return ()
        if self.mode == "numeric":
            return (((), exact(val.item())),)
        if self.mode == "idempotent":
            return (((), val.item()),)
        return (((val.item(), ()), 1),)

    def dim(self, name: str) -> tuple:
        if self.mode == "numeric":
            return (((name,), Fraction(1)),)
        if self.mode == "idempotent":
            return self.one()
        return (((self.sr.one.item(), (name,)), 1),)

    def one(self) -> tuple:
        return self.lit(self.sr.one.item())

    def rename_dims(self, coef: tuple, names: dict) -> tuple:
        """coef with its size symbols renamed by `names` (like terms combined)."""
        if self.mode == "idempotent":
            return coef
        acc: dict = {}
        for k, a in coef:
            if self.mode == "numeric":
                k = tuple(sorted(names.get(d, d) for d in k))
            else:
                k = (k[0], tuple(sorted(names.get(d, d) for d in k[1])))
            acc[k] = self._amt_add(acc[k], a) if k in acc else a
        return self._freeze(acc)

    def _key_mul(self, k1, k2):
        if self.mode == "numeric":
            return tuple(sorted(k1 + k2))
        if self.mode == "idempotent":
            return ()
        return (self.sr.mul(k1[0], k2[0]).item(), tuple(sorted(k1[1] + k2[1])))

    def _amt_mul(self, a1, a2):
        return self.sr.mul(a1, a2).item() if self.mode == "idempotent" else a1 * a2

    def _amt_add(self, a1, a2):
        return self.sr.add(a1, a2).item() if self.mode == "idempotent" else a1 + a2

    def _is_zero_amt(self, a):
        return a == self.sr.zero if self.mode == "idempotent" else a == 0

    def _freeze(self, acc: dict) -> tuple:
        items = [(k, a) for k, a in acc.items() if not self._is_zero_amt(a)]
        if self.mode == "formal":
            items = [(k, a) for k, a in items if k[0] != self.sr.zero]
        return tuple(sorted(items, key=repr))

    def add(self, c1: tuple, c2: tuple) -> tuple:
        acc: dict = {}
        for k, a in c1 + c2:
            acc[k] = self._amt_add(acc[k], a) if k in acc else a
        return self._freeze(acc)

    def mul(self, c1: tuple, c2: tuple) -> tuple:
        acc: dict = {}
        for (k1, a1), (k2, a2) in itertools.product(c1, c2):
            k, a = self._key_mul(k1, k2), self._amt_mul(a1, a2)
            acc[k] = self._amt_add(acc[k], a) if k in acc else a
        return self._freeze(acc)

# ------------------------------------------------------------------ canonical form


@dataclass(frozen=True)
class Term:
    """One monomial coef · Σ_bound (factors)."""
    coef: tuple
    bound: frozenset            # internal names of the bound indices
    factors: tuple              # (tensor name, (index names ...)) per access


@dataclass(frozen=True)
class Canonical:
    """A canonical form: equal for two expressions means equal in the semiring."""
    free: frozenset             # free index names
    terms: tuple                # ((monomial key, coefficient), ...) sorted by key
    mode: str                   # the coefficient algebra (CoefAlgebra.mode)


def normal_terms(e: Expr, alg: CoefAlgebra) -> list[Term]:
    """e as a list of terms (sum of monomials); bound indices get fresh `name#k`
    names, and index sizes the names of their size classes (`SizeClasses`)."""
    counter = itertools.count()
    sizes, bound = SizeClasses(), []

    def go(e, env) -> list[Term]:
        match e:
            case Access(t, idx):
                names = tuple(env.get(ix.name, ix.name) for ix in idx)
                sizes.bind(t.name, names)
                return [Term(alg.one(), frozenset(), ((t.name, names),))]
            case Lit(v, _):
                c = alg.lit(v)
                return [Term(c, frozenset(), ())] if c else []
            case Mul(a, b):
                xs, ys = go(a, env), go(b, env)     # both sides: every access binds sizes
                return [_times(x, y, alg) for x in xs for y in ys]
            case Add(a, b):
                return go(a, env) + go(b, env)
            case Sum(i, body):
                new = f"{i.name}#{next(counter)}"
                bound.append(new)
                return [_sum_term(t, new, alg) for t in go(body, {**env, i.name: new})]
            case Map(fn, a, arg):
                free = tuple(env.get(ix.name, ix.name) for ix in free_indices(a))
                key = _opaque_key(f"{fn}({'' if arg is None else arg!r})", go(a, env), free, alg)
                sizes.bind(key, free)
                return [Term(alg.one(), frozenset(), ((key, free),))]
        raise TypeError(f"not an expression: {e!r}")

    terms = go(as_expr(e), {})
    names = sizes.names(bound)
    terms = [Term(alg.rename_dims(t.coef, names), t.bound, t.factors) for t in terms]
    return [t for t in terms if t.coef]


class SizeClasses:
    """Which index sizes an expression forces equal: an index and every tensor
    mode it indexes share a size (union-find over indices and `tensor.mode`)."""

    def __init__(self):
        self.parent: dict = {}

    def find(self, x):
        root = x
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while x != root:
            self.parent[x], x = root, self.parent[x]
        return root

    def bind(self, tensor: str, indices: tuple):
        for mode, ix in enumerate(indices):
            for x in (("index", ix), ("mode", f"{tensor}.{mode}")):
                self.parent.setdefault(x, x)
            a, b = self.find(("index", ix)), self.find(("mode", f"{tensor}.{mode}"))
            if a != b:
                self.parent[a] = b

    def names(self, bound: list) -> dict:
        """Each fresh bound name `i#k` -> the name of its size: the modes of its
        class joined by `=` (sorted), or `i` when it indexes no tensor."""
        modes: dict = {}
        for x in list(self.parent):
            if x[0] == "mode":
                modes.setdefault(self.find(x), []).append(x[1])
        return {b: "=".join(sorted(modes.get(self.find(("index", b)), [])))
                or b.split("#")[0] for b in bound}


def _opaque_key(head: str, terms: list, free: tuple, alg) -> str:
    """The name of a map's factor: its head and its operand's canonical terms,
    with the free indices named by their position in `free`."""
    pos = {v: f"${p}" for p, v in enumerate(free)}
    acc: dict = {}
    for t in terms:
        factors = tuple((n, tuple(pos.get(x, x) for x in ix)) for n, ix in t.factors)
        k = monomial_key(t.bound, factors)
        acc[k] = alg.add(acc[k], t.coef) if k in acc else t.coef
    return head + repr(sorted(((k, c) for k, c in acc.items() if c), key=repr))


def _times(x: Term, y: Term, alg) -> Term:
    return Term(alg.mul(x.coef, y.coef), x.bound | y.bound, x.factors + y.factors)


def _sum_term(t: Term, new: str, alg) -> Term:
    """Σ_new t: new becomes bound, or multiplies t by its size when t lacks it
    (the size named `new` for now; normal_terms renames it by its class)."""
    if any(new in ix for _, ix in t.factors):
        return Term(t.coef, t.bound | {new}, t.factors)
    return Term(alg.mul(t.coef, alg.dim(new)), t.bound, t.factors)


def canonical(e: Expr, semiring=None) -> Canonical:
    """The canonical form of `e` in `semiring` (default real), see the module docstring."""
    e = as_expr(e)
    sr = semirings.get(semiring if semiring is not None else semirings.real)
    alg = CoefAlgebra(sr)
    acc: dict = {}
    for t in normal_terms(e, alg):
        key = monomial_key(t.bound, t.factors)
        acc[key] = alg.add(acc[key], t.coef) if key in acc else t.coef
    terms = tuple(sorted(((k, c) for k, c in acc.items() if c), key=lambda kc: repr(kc[0])))
    return Canonical(frozenset(ix.name for ix in free_indices(e)), terms, alg.mode)


def equivalent(e1, e2, semiring=None) -> bool:
    """True when e1 and e2 have equal canonical forms (hence equal values).

    Complete for the real and integer semirings (False means some inputs tell
    them apart); for other semirings True is still a proof but False may be a
    missed equivalence (e.g. absorption x + x·y = x in boolean). `semiring`: a
    Semiring or a built-in name (default real).

        >>> ep.equivalent(ep.sum(j, A[i, j] * x[j]), ep.sum(j, x[j] * A[i, j]))
        True
    """
    return canonical(e1, semiring) == canonical(e2, semiring)
