"""Sketches: the shape of a plan, with holes, that guides equality saturation.

A sketch is a pattern over the e-graph's terms (optimizer.egraph):

    hole()  or "?"            any term
    tensor("A")  or "A"       an access of the tensor named A (any indices)
    mul(s1, ..., sk)          a product with k operands matching s1..sk, and maybe more
    add(s1, ..., sk)          a sum (+) likewise
    sum(indices, s)           Σ over exactly these bound indices (names, or Index
                              objects; None: any) of a body matching s
    materialised(s)           a term matching s that is a Σ: computed on its own
                              (a temporary or a separate loop nest), not fused
    contains(s)               a term with a subterm matching s (itself included)
    either(s1, ..., sn)       a term matching one of s1..sn
    of(expr)                  the sketch of an expression as written (holes nowhere)

A string argument is read as "?" (a hole) or as a tensor name.

Products and sums are flat and sorted in the e-graph (associativity and
commutativity are built in), so a sketch's children match a SUBSET of an
operator's operands: `mul(s1, ..., sk)` matches a product node with operands
x1..xm (m >= k) when distinct operands x_p1..x_pk match s1..sk (any order); the
other m - k operands are the remainder, unconstrained. A child of the same
operator is spliced in when the sketch is built (mul(mul(A, B), C) is
mul(A, B, C)), as the e-graph splices nested products. So mul("A", "B") matches
A·B and A·B·C; sum("k", mul("B", "C")) says that B and C are multiplied under a
Σ_k of their own: the factorisation (Σ_k B·C) is materialised, whatever
multiplies it. The e-graph holds no loop order (the planner chooses one after
extraction), so the choices a sketch can state are which subterms are
materialised and how the products and Σ nest.

Bound index names compare by the user's name: sum-pull renames a clashing bound
index i to i__r1, and `sum("i", ...)` still matches it.

The matcher and the extraction of the cheapest satisfying term are
optimizer.sketch.match; `optimize(expr, sketch=s)` or `sketches=[...]` runs
the guided search (optimizer.sketch.search).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...errors import SketchError
from ...expr.nodes import Access, Add, Index, Lit, Map, Mul, Sum, as_expr
from ...expr.walk import spine, sum_chain
from ...plan.cost import base_name

__all__ = ["Sketch", "hole", "tensor", "mul", "add", "sum", "materialised", "contains",
           "either", "of", "as_sketch", "satisfies"]


class Sketch:
    """A sketch node (frozen dataclasses below); `str(s)` is its text."""

    def parts(self) -> tuple:
        """Its child sketches."""
        return ()

    def height(self) -> int:
        return 1 + max((p.height() for p in self.parts()), default=0)


@dataclass(frozen=True)
class Hole(Sketch):
    def __str__(self):
        return "?"


@dataclass(frozen=True)
class Tensor(Sketch):
    name: str

    def __str__(self):
        return self.name


@dataclass(frozen=True)
class Op(Sketch):
    op: str                 # "mul" or "add"
    kids: tuple

    def parts(self):
        return self.kids

    def __str__(self):
        return f"{self.op}({', '.join(map(str, self.kids))})"


@dataclass(frozen=True)
class SumOf(Sketch):
    indices: tuple | None   # sorted names, or None for any
    body: Sketch

    def parts(self):
        return (self.body,)

    def __str__(self):
        ix = "?" if self.indices is None else " ".join(self.indices)
        return f"sum({ix}; {self.body})"


@dataclass(frozen=True)
class Materialised(Sketch):
    inner: Sketch

    def parts(self):
        return (self.inner,)

    def __str__(self):
        return f"materialised({self.inner})"


@dataclass(frozen=True)
class Contains(Sketch):
    inner: Sketch

    def parts(self):
        return (self.inner,)

    def __str__(self):
        return f"contains({self.inner})"


@dataclass(frozen=True)
class Either(Sketch):
    options: tuple

    def parts(self):
        return self.options

    def __str__(self):
        return f"either({', '.join(map(str, self.options))})"


def as_sketch(s) -> Sketch:
    """A sketch from a Sketch, "?" (a hole) or a tensor name; SketchError otherwise."""
    if isinstance(s, Sketch):
        return s
    if isinstance(s, str) and s == "?":
        return Hole()
    if isinstance(s, str) and s.isidentifier():
        return Tensor(s)
    if hasattr(s, "name") and hasattr(s, "order"):       # a TensorVar
        return Tensor(s.name)
    raise SketchError(f"not a sketch: {s!r} (use ep.sketch.hole(), a tensor name or a "
                      "sketch constructor)")


def hole() -> Sketch:
    """A hole: any term."""
    return Hole()


def tensor(name) -> Sketch:
    """An access of the tensor `name` (a name or a TensorVar), any indices."""
    return Tensor(getattr(name, "name", name)) if not isinstance(name, Sketch) else name


def _flat(op: str, kids) -> Sketch:
    if not kids:
        raise SketchError(f"{op}() needs at least one child sketch")
    flat = []
    for k in map(as_sketch, kids):
        flat.extend(k.kids if isinstance(k, Op) and k.op == op else (k,))
    return Op(op, tuple(flat))


def mul(*kids) -> Sketch:
    """A product some of whose operands match `kids` (one operand each)."""
    return _flat("mul", kids)


def add(*kids) -> Sketch:
    """A sum (+) some of whose operands match `kids` (one operand each)."""
    return _flat("add", kids)


def _names(indices) -> tuple | None:
    if indices is None or (isinstance(indices, str) and indices == "?"):
        return None
    if isinstance(indices, (str, Index)):
        indices = (indices,)
    names = []
    for ix in indices:
        name = getattr(ix, "name", ix)
        if not isinstance(name, str) or not name.isidentifier():
            raise SketchError(f"sum() takes index names or Index objects, got {ix!r}")
        names.extend(name.split() if " " in name else (name,))
    if not names:
        raise SketchError("sum() needs at least one index (None: any)")
    return tuple(sorted(base_name(n) for n in names))


def sum(indices, body="?") -> Sketch:     # noqa: A001 (the sketch language's Σ)
    """Σ over exactly `indices` (names, Index objects or "i j"; None or "?": any) of a
    body matching `body`: that Σ is computed on its own (a factorisation shape)."""
    if isinstance(indices, str) and " " in indices:
        indices = indices.split()
    return SumOf(_names(indices), as_sketch(body))


def materialised(s="?") -> Sketch:
    """A term matching `s` that is a Σ, computed on its own rather than fused."""
    return Materialised(as_sketch(s))


def contains(s) -> Sketch:
    """A term with a subterm (itself included) matching `s`."""
    return Contains(as_sketch(s))


def either(*options) -> Sketch:
    """A term matching one of `options` (at least one)."""
    if not options:
        raise SketchError("either() needs at least one sketch")
    return Either(tuple(as_sketch(o) for o in options))


def of(expr) -> Sketch:
    """The sketch of `expr` as written: its products, sums and Σ nesting, tensors by
    name; a literal or a map becomes a hole (the e-graph folds literals)."""
    e = as_expr(expr)
    match e:
        case Access():
            return Tensor(e.tensor.name)
        case Lit() | Map():
            return Hole()
        case Mul() | Add():
            op = "mul" if isinstance(e, Mul) else "add"
            kids = [of(p) for p in spine(e, type(e)) if not isinstance(p, Lit)]
            return _flat(op, kids) if kids else Hole()
        case Sum():
            idx, body = sum_chain(e)
            return SumOf(tuple(sorted(base_name(i.name) for i in idx)), of(body))
    raise SketchError(f"not an expression: {expr!r}")


def walk(s: Sketch):
    """Every node of `s`, children before parents (each distinct node once)."""
    seen: dict = {}

    def go(n):
        if n in seen:
            return
        for p in n.parts():
            go(p)
        seen[n] = None
    go(s)
    return list(seen)



def satisfies(expr, s) -> bool:
    """Does the expression `expr` satisfy the sketch `s`? The same semantics as
    the e-graph matcher, read off an expression tree: nested products and sums
    are flat (their operands are `spine`'s), and a chain Σ_i Σ_j x may be read
    as Σ_{i,j} x or as Σ_i (Σ_j x)."""
    return _sat(as_expr(expr), as_sketch(s))


def _sat(e, s: Sketch) -> bool:
    match s:
        case Hole():
            return True
        case Tensor(name):
            return isinstance(e, Access) and e.tensor.name == name
        case Op(op, kids):
            kind = Mul if op == "mul" else Add
            return isinstance(e, kind) and _assign(list(spine(e, kind)), list(kids))
        case SumOf(indices, body):
            return any(indices is None or tuple(sorted(base_name(i) for i in head)) == indices
                       for head, rest in _sum_splits(e) if _sat(rest, body))
        case Materialised(inner):
            return isinstance(e, Sum) and _sat(e, inner)
        case Either(options):
            return any(_sat(e, o) for o in options)
        case Contains(inner):
            return _sat(e, inner) or any(_sat(p, s) for p in _operands(e))
    return False


def _assign(operands: list, kids: list) -> bool:
    """Can distinct operands satisfy the sketches `kids`, one each?"""
    if not kids:
        return True
    first, rest = kids[0], kids[1:]
    return any(_sat(x, first) and _assign(operands[:k] + operands[k + 1:], rest)
               for k, x in enumerate(operands))


def _sum_splits(e):
    """(bound names, body) for each way of reading e's chain of Σ as one Σ."""
    chain = []
    while isinstance(e, Sum):
        chain.append(e)
        e = e.body
    return [([c.index.name for c in chain[:p]], chain[p] if p < len(chain) else e)
            for p in range(1, len(chain) + 1)]


def _operands(e) -> list:
    match e:
        case Mul() | Add():
            return list(spine(e, type(e)))
        case Sum():
            return [e.body]
        case Map():
            return [e.a]
    return []
