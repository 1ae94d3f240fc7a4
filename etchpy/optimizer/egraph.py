"""The e-graph: union-find over classes, hash-consed e-nodes, and the class analysis.

E-nodes are tuples `(op, payload, children)` over class ids:

    ("acc", Access, ())            a tensor access (indices as written)
    ("lit", value, ())             a literal, normalised through the semiring
    ("dim", index name, ())        |i| as a scalar (not expressible: never extracted)
    ("mul", None, (c1, ..., cn))   flat product, children sorted (a multiset: AC)
    ("add", None, (c1, ..., cn))   flat sum, children sorted
    ("sum", (i1, ..., ik), (c,))   Σ over a sorted set of index names free in c
    ("map", (fn, arg), (c,))       a map of c's completed value: opaque, no rule
                                   matches it, so no rewrite crosses it

Associativity and commutativity are built in: `mul_of`/`add_of` splice a child
class's flat node into the new one, and `canon` sorts the children.

Class analysis (`ClassData`), an invariant of every class:
- `free`: its free indices, the same for every node of the class (no rule
  changes them; `union` asserts it);
- `nnz`: an estimate of its support's size, the smallest over its nodes, by
  plan.cost's estimates over its children's and the sizes of a `Stats`;
- `const`: its value when it holds a literal, else None.

Congruence is restored by `rebuild` (re-canonicalise every node, merge classes
whose nodes collide, repeat until stable). The rules (optimizer.rules) build
right-hand sides through the constructors `lit`, `mul_of`, `add_of`, `sum_of`
and `renamed`, which apply flattening and the law Σ_i x = |i|·x directly.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

from .. import maps
from ..expr.nodes import Access, Add, Expr, Index, Lit, Map, Mul, Sum, as_expr
from ..expr.walk import spine, sum_chain
from ..plan import cost
from ..plan.cost import Stats, base_name
from ..semiring import Semiring


@dataclass
class ClassData:
    """The analysis of one class: free indices, support estimate, constant value,
    the sparse access it holds (its keys are measured or guessed per index set,
    Stats.distinct) and its keys remembered per index set (EGraph.keys)."""
    free: frozenset
    nnz: float
    const: object = None
    leaf: Access | None = None
    keys: dict = field(default_factory=dict)


class EGraph:
    """Hash-consed e-nodes, union-find over classes, class analysis.

    `stats` gives index sizes and tensor nonzero counts (a `plan.cost.Stats`,
    default: its guesses). Class ids are ints; `find` maps any id to its root.
    """

    def __init__(self, semiring: Semiring, stats: Stats | None = None):
        self.sr = semiring
        self.stats = stats if stats is not None else Stats()
        self.parent: list[int] = []
        self.classes: dict[int, dict] = {}       # root -> {node: None} (ordered set)
        self.memo: dict[tuple, int] = {}
        self.data: dict[int, ClassData] = {}
        self.one = semiring.one.item()
        self.zero = semiring.zero.item()
        self.index_names: set[str] = set()
        self.products: dict[tuple, float] = {}    # product_support by its classes' data
        self._renamed: dict[tuple, int | None] = {}
        self._fresh: dict[tuple, str] = {}

    # -- union-find and hash-consing ------------------------------------------
    def find(self, c: int) -> int:
        while self.parent[c] != c:
            self.parent[c] = self.parent[self.parent[c]]
            c = self.parent[c]
        return c

    def canon(self, node: tuple) -> tuple:
        """The node over root ids, children of `mul`/`add` sorted."""
        op, payload, kids = node
        kids = tuple(map(self.find, kids))
        if op in ("mul", "add"):
            kids = tuple(sorted(kids))
        return (op, payload, kids)

    def add(self, node: tuple) -> int:
        """The class of `node`: an existing one if hash-consing finds it, else a new one."""
        node = self.canon(node)
        hit = self.memo.get(node)
        if hit is not None:
            return self.find(hit)
        cid = len(self.parent)
        self.parent.append(cid)
        self.classes[cid] = {node: None}
        self.memo[node] = cid
        self.data[cid] = self.make_data(node)
        return cid

    def union(self, a: int, b: int) -> bool:
        """Merge two classes (same free indices); True if they were distinct."""
        a, b = self.find(a), self.find(b)
        if a == b:
            return False
        if len(self.classes[a]) < len(self.classes[b]):
            a, b = b, a
        self.parent[b] = a
        self.classes[a].update(self.classes.pop(b))
        da, db = self.data[a], self.data.pop(b)
        assert da.free == db.free, f"merged classes with free {set(da.free)} != {set(db.free)}"
        da.nnz = min(da.nnz, db.nnz)
        da.const = da.const if da.const is not None else db.const
        da.leaf, da.keys = da.leaf if da.leaf is not None else db.leaf, {}
        return True

    def rebuild(self):
        """Restore congruence: nodes equal after canonicalisation share a class."""
        while True:
            memo: dict[tuple, int] = {}
            pending = []
            for root in list(self.classes):
                fresh = {}
                for n in self.classes[root]:
                    cn = self.canon(n)
                    fresh[cn] = None
                    other = memo.setdefault(cn, root)
                    if self.find(other) != self.find(root):
                        pending.append((other, root))
                self.classes[root] = fresh
            if not pending:
                self.memo = memo
                return
            for a, b in pending:
                self.union(a, b)

    def nodes(self, c: int):
        hit = self.classes.get(c)            # its keys are the roots
        return hit if hit is not None else self.classes[self.find(c)]

    def info(self, c: int) -> ClassData:
        hit = self.data.get(c)               # its keys are the roots
        return hit if hit is not None else self.data[self.find(c)]

    def num_nodes(self) -> int:
        return sum(len(ns) for ns in self.classes.values())

    def first(self, c: int, op: str):
        """The first node of class c with operator `op`, or None."""
        for n in self.nodes(c):
            if n[0] == op:
                return n
        return None

    # -- analysis (plan.cost's estimates over the classes' supports) ------------
    def parts(self, kids) -> list:
        """(free indices, support) of each child class, for plan.cost's combinators."""
        return [(self.info(k).free, self.info(k).nnz) for k in kids]

    def keys(self, c: int, sub: frozenset) -> float:
        """Distinct keys of class c's support over `sub` (some of its free
        indices): a sparse access's from Stats.distinct, any other class's at most
        its support and sub's size; remembered per class till it is merged."""
        d = self.info(c)
        hit = d.keys.get(sub)
        if hit is None:
            hit = d.keys[sub] = (self.stats.distinct(d.leaf, sub) if d.leaf is not None
                                 else min(d.nnz, self.stats.full(sub)))
        return hit

    def product_support(self, kids) -> float:
        """The support of the product of classes `kids` (a repeated one once) as
        the planner estimates it (plan.cost.product_support: the sparsest class's
        support broadcast, and the join estimate over the classes' keys); remembered
        by what it reads of the classes (root, support, whether it holds a
        sparse access: merges only ever add one), so a merge that changes them is
        priced again."""
        kids = tuple(sorted({self.find(k) for k in kids}))
        data = [self.data[k] for k in kids]
        key = (kids, *[(d.nnz, d.leaf is None) for d in data])
        hit = self.products.get(key)
        if hit is None:
            free = frozenset().union(*(d.free for d in data))
            parts = [(d.free, d.nnz, partial(self.keys, k)) for k, d in zip(kids, data)]
            hit = self.products[key] = cost.product_support(parts, free, self.stats)
        return hit

    def make_data(self, node: tuple) -> ClassData:
        """The analysis of a new class holding only `node`."""
        op, payload, kids = node
        ds = [self.info(k) for k in kids]
        if op == "acc":
            free = frozenset(ix.name for ix in payload.indices)
            self.index_names |= free
            sparse = not payload.tensor.format.is_dense
            return ClassData(free, self.stats.tensor_nnz(payload), leaf=payload if sparse else None)
        if op == "lit":
            return ClassData(frozenset(), 1.0, payload)
        if op == "dim":
            return ClassData(frozenset(), 1.0)
        if op == "sum":
            free = ds[0].free - set(payload)
            return ClassData(free, min(self.stats.full(free), ds[0].nnz))
        if op == "map":            # f(0) ≠ 0: its operand's whole dense domain
            full = not maps.keeps_zero(*payload)
            return ClassData(ds[0].free, self.stats.full(ds[0].free) if full else ds[0].nnz)
        free = frozenset().union(*(d.free for d in ds))
        if op == "mul":     # a repeated factor once: x·x has x's support
            return ClassData(free, self.product_support(kids))
        return ClassData(free, min(self.stats.full(free),
                                   cost.merge_steps(self.parts(kids), free, self.stats)))

    # -- constructors (flattening and sum-dim built in) -----------------------
    def lit(self, value) -> int:
        return self.add(("lit", self.sr.literal(value).item(), ()))

    def mul_of(self, kids) -> int:
        """The class of the product of `kids` (1 when empty, the class itself when one)."""
        flat = self._flat(kids, "mul", self.one)
        if not flat:
            return self.lit(self.one)
        return flat[0] if len(flat) == 1 else self.add(("mul", None, tuple(flat)))

    def add_of(self, kids) -> int:
        """The class of the sum of `kids` (at least one)."""
        flat = self._flat(kids, "add", self.zero) or [self.find(kids[0])]
        return flat[0] if len(flat) == 1 else self.add(("add", None, tuple(flat)))

    def _flat(self, kids, op: str, unit) -> list:
        """The operands of an `op` over `kids`: each kid's first `op` node read through
        (unless that node holds the kid's own class, as x = x + x does), every operand
        that is the unit of `op` left out (1·x = x, 0 + x = x), and in an idempotent
        semiring a repeated term of a sum once (x + x = x). Built with them, products
        of ones and sums of repeats grew without end (1·1·…·x)."""
        flat = []
        for k in kids:
            inner = self.first(k, op)
            if inner and self.find(k) not in map(self.find, inner[2]):
                flat.extend(inner[2])
            else:
                flat.append(k)
        flat = [k for k in flat if self.info(k).const != unit]
        if op == "add" and self.sr.idempotent:
            flat = list({self.find(k): None for k in flat})
        return flat

    def sum_of(self, idx, body: int) -> int:
        """Σ_idx body; an index not free in body becomes a factor |i| (law sum-dim)."""
        free = self.info(body).free
        bound = tuple(sorted(i for i in idx if i in free))
        missing = sorted(i for i in idx if i not in free)
        out = self.add(("sum", bound, (body,))) if bound else body
        if missing and not self.sr.idempotent:
            out = self.mul_of([self.add(("dim", m, ())) for m in missing] + [out])
        return out

    def fresh_index(self, name: str, why) -> str:
        """A new index name `i__rN` for `name`, the same one again for the same `why` key."""
        key = (why, name)
        if key not in self._fresh:
            base, n = base_name(name), 1
            while f"{base}__r{n}" in self.index_names:
                n += 1
            self.index_names.add(f"{base}__r{n}")
            self._fresh[key] = f"{base}__r{n}"
        return self._fresh[key]

    def renamed(self, c: int, old: str, new: str, active=None) -> int | None:
        """A class for c with free index `old` renamed to the fresh `new`.

        Copies one term of c (the first node of each class that can be copied
        without going round a cycle); saturation regrows the alternatives.
        `new` must be fresh, so no Σ inside can capture it; None when it is not.
        """
        c = self.find(c)
        if old not in self.info(c).free:
            return c
        if new in self.info(c).free:
            return None                    # not fresh here: renaming would capture
        key = (c, old, new)
        if key in self._renamed:
            return self._renamed[key]
        active = set() if active is None else active
        if c in active:
            return None
        active.add(c)
        out = None
        for node in list(self.nodes(c)):
            out = self._renamed_node(node, old, new, active)
            if out is not None:
                break
        active.discard(c)
        self._renamed[key] = out
        return out

    def _renamed_node(self, node: tuple, old: str, new: str, active) -> int | None:
        op, payload, kids = node
        match op:
            case "acc":
                return self.add(("acc", Access(payload.tensor, tuple(
                    Index(new) if ix.name == old else ix for ix in payload.indices)), ()))
            case "sum" if new in payload:
                return None
            case "sum" | "mul" | "add" | "map":
                copies = [self.renamed(k, old, new, active) for k in kids]
                return None if None in copies else self.add((op, payload, tuple(copies)))
        return None

    def add_expr(self, e: Expr) -> int:
        """The class of expression `e`, its subterms added as they are written."""
        e = as_expr(e)
        match e:
            case Access():
                return self.add(("acc", e, ()))
            case Lit(v, _):
                return self.lit(v)
            case Mul():
                return self.mul_of([self.add_expr(p) for p in spine(e, Mul)])
            case Add():
                return self.add_of([self.add_expr(p) for p in spine(e, Add)])
            case Sum():
                idx, body = sum_chain(e)
                return self.sum_of([i.name for i in idx], self.add_expr(body))
            case Map(fn, a, arg):
                return self.add(("map", (fn, arg), (self.add_expr(a),)))
        raise TypeError(f"not an expression: {e!r}")
