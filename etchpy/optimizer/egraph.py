"""A compact e-graph over expressions, its rewrite rules, saturation and extraction.

E-nodes are tuples `(op, payload, children)` over class ids:

    ("acc", Access, ())            a tensor access (indices as written)
    ("lit", value, ())             a literal, normalised through the semiring
    ("dim", index name, ())        |i| as a scalar (not expressible: never extracted)
    ("mul", None, (c1, ..., cn))   flat product, children sorted (a multiset: AC)
    ("add", None, (c1, ..., cn))   flat sum, children sorted
    ("sum", (i1, ..., ik), (c,))   Σ over a sorted set of index names free in c

Every class has one set of free indices (a class invariant: no rule changes it),
an nnz estimate (the smallest over its nodes) and possibly a constant value.
Congruence is restored by `rebuild` (re-canonicalise every node, merge classes
whose nodes collide, repeat until stable).

Rules are rows of the `RULES` table: a name, the node operator they look at, the
semiring laws they need ("idempotent", "int_mul", "negation"), a condition on the
node and a search that yields appliers (closures adding the right-hand side and
returning its class). Rules check that no index is captured; where pulling a Σ
out of a product would capture one (Σ_i v[i])·(Σ_i w[i]), `sum-pull` first
renames the clashing bound index to a fresh name `i__r1` (same size as i) in a
copy of the Σ's body (`EGraph.renamed`).

Cost (work estimate under the stream model, see `node_cost`): a product iterates
the space of its free indices driven by its sparsest operand, Σ reads its body's
support once, + reads every operand; extraction is greedy (tree cost, bottom-up
fixpoint) or exact (DAG cost, shared classes counted once, scipy's MILP).
"""
from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..expr.nodes import Access, Add, Expr, Index, Lit, Mul, Sum, as_expr, spine
from ..expr.nodes import sum as ep_sum
from .ra import literal_laws
from ..semiring import Semiring

from ..plan.cost import Stats, base_name


@dataclass
class ClassData:
    free: frozenset
    nnz: float
    const: object = None


@dataclass(frozen=True)
class Limits:
    nodes: int = 10_000
    iterations: int = 30
    seconds: float = 1.0
    match_limit: int = 100       # matches per rule and iteration before backoff
    ban_length: int = 2          # iterations a rule sits out (doubles each ban)
    patience: int = 3            # stop after this many iterations without a cheaper root
                                 # (needs a root; 0 or None turns early stopping off)
    check_every: int = 1         # extract the root's best cost every k iterations
    min_gain: float = 1e-3       # a relative decrease below this is not an improvement

    @staticmethod
    def of(x) -> "Limits":
        if x is None:
            return Limits()
        if isinstance(x, Limits):
            return x
        return Limits(**dict(x))


class EGraph:
    """Hash-consed e-nodes, union-find over classes, class analysis."""

    def __init__(self, semiring: Semiring, dims=None, nnz=None):
        self.sr = semiring
        self.stats = Stats(dims, nnz)           # sizes and nonzeros, shared with etchpy.cost
        self.parent: list[int] = []
        self.classes: dict[int, dict] = {}       # root -> {node: None} (ordered set)
        self.memo: dict[tuple, int] = {}
        self.data: dict[int, ClassData] = {}
        self.one = semiring.one.item()
        self.zero = semiring.zero.item()
        self.index_names: set[str] = set()
        self._renamed: dict[tuple, int | None] = {}
        self._fresh: dict[tuple, str] = {}
        self._dim_memo: dict[str, float] = {}
        self._full_memo: dict = {}

    # -- union-find and hash-consing ------------------------------------------
    def find(self, c: int) -> int:
        while self.parent[c] != c:
            self.parent[c] = self.parent[self.parent[c]]
            c = self.parent[c]
        return c

    def canon(self, node: tuple) -> tuple:
        op, payload, kids = node
        kids = tuple(self.find(k) for k in kids)
        if op in ("mul", "add"):
            kids = tuple(sorted(kids))
        return (op, payload, kids)

    def add(self, node: tuple) -> int:
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
        return self.classes[self.find(c)]

    def info(self, c: int) -> ClassData:
        return self.data[self.find(c)]

    def num_nodes(self) -> int:
        return sum(len(ns) for ns in self.classes.values())

    # -- analysis --------------------------------------------------------------
    def dim(self, name: str) -> float:
        d = self._dim_memo.get(name)
        if d is None:
            d = self._dim_memo[name] = self.stats.dim(name)
        return d

    def full(self, free) -> float:
        f = self._full_memo.get(free)
        if f is None:
            f = self._full_memo[free] = math.prod(self.dim(v) for v in free)
        return f

    def make_data(self, node: tuple) -> ClassData:
        op, payload, kids = node
        ds = [self.info(k) for k in kids]
        if op == "acc":
            free = frozenset(ix.name for ix in payload.indices)
            self.index_names |= free
            return ClassData(free, self.stats.tensor_nnz(payload))
        if op == "lit":
            return ClassData(frozenset(), 1.0, payload)
        if op == "dim":
            return ClassData(frozenset(), 1.0)
        if op == "sum":
            free = ds[0].free - set(payload)
            return ClassData(free, min(self.full(free), ds[0].nnz))
        free = frozenset().union(*(d.free for d in ds))
        if op == "mul":
            dens = math.prod(self.density(self.find(k)) for k in set(kids))
            return ClassData(free, min(self.full(free) * dens, self.drive(free, kids)))
        spread = sum(self.info(k).nnz * self.full(free - self.info(k).free) for k in kids)
        return ClassData(free, min(self.full(free), spread))

    def density(self, c: int) -> float:
        d = self.info(c)
        return d.nnz / max(1.0, self.full(d.free))

    def drive(self, free, kids) -> float:
        """Iterations of a product over `free` driven by its sparsest operand."""
        return min(self.info(k).nnz * self.full(free - self.info(k).free) for k in kids)

    # -- constructors used by the rules ---------------------------------------
    def lit(self, value) -> int:
        return self.add(("lit", self.sr.literal(value).item(), ()))

    def first(self, c: int, op: str):
        for n in self.nodes(c):
            if n[0] == op:
                return n
        return None

    def mul_of(self, kids) -> int:
        flat = []
        for k in kids:
            inner = self.first(k, "mul")
            flat.extend(inner[2] if inner else (k,))
        if not flat:
            return self.lit(self.one)
        return flat[0] if len(flat) == 1 else self.add(("mul", None, tuple(flat)))

    def add_of(self, kids) -> int:
        flat = []
        for k in kids:
            inner = self.first(k, "add")
            flat.extend(inner[2] if inner else (k,))
        return flat[0] if len(flat) == 1 else self.add(("add", None, tuple(flat)))

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
        """A new index name for `name`, the same one again for the same `why` key."""
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
        `new` must be fresh, so no Σ inside can capture it.
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
        for op, payload, kids in list(self.nodes(c)):
            if op == "acc":
                out = self.add(("acc", Access(payload.tensor, tuple(
                    Index(new) if ix.name == old else ix for ix in payload.indices)), ()))
            elif op in ("sum", "mul", "add") and not (op == "sum" and new in payload):
                copies = [self.renamed(k, old, new, active) for k in kids]
                if None not in copies:
                    out = self.add((op, payload, tuple(copies)))
            if out is not None:
                break
        active.discard(c)
        self._renamed[key] = out
        return out

    def add_expr(self, e: Expr) -> int:
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
                idx = []
                while isinstance(e, Sum):
                    idx.append(e.index.name)
                    e = e.body
                return self.sum_of(idx, self.add_expr(e))
        raise TypeError(f"not an expression: {e!r}")



# ------------------------------------------------------------------------ rules


@dataclass(frozen=True)
class Rule:
    name: str
    op: str                                 # the node operator the rule looks at
    needs: frozenset                        # semiring laws required
    search: Callable                        # (egraph, class id, node) -> [applier]
    condition: Callable = lambda eg, c, n: True
    doc: str = ""


def _without(kids: tuple, k: int) -> list:
    out = list(kids)
    out.remove(k)
    return out


def expand(eg: EGraph, c, node):
    """a·(b + c + ...) -> a·b + a·c + ...   (distributivity)"""
    out = []
    for k in dict.fromkeys(node[2]):
        adds = [n for n in eg.nodes(k) if n[0] == "add"][:2]
        rest = _without(node[2], k)
        for a in adds:
            out.append(lambda rest=rest, a=a: eg.add_of([eg.mul_of(rest + [t]) for t in a[2]]))
        if adds:
            break
    return out


def _factorings(eg: EGraph, k: int):
    yield (k,)
    for n in list(eg.nodes(k))[:4]:
        if n[0] == "mul":
            yield n[2]


def factor(eg: EGraph, c, node):
    """a·b + a·c -> a·(b + c)   (distributivity, right to left)"""
    where: dict[int, dict[int, tuple]] = {}
    for pos, k in enumerate(node[2]):
        for fs in _factorings(eg, k):
            for f in set(fs):
                where.setdefault(eg.find(f), {}).setdefault(pos, fs)
    out = []
    for x, spots in where.items():
        if len(spots) >= 2:
            out.append(lambda x=x, spots=spots: _factor_out(eg, node, x, spots))
        if len(out) >= 4:
            break
    return out


def _factor_out(eg: EGraph, node, x, spots):
    x = eg.find(x)
    quotients = [eg.mul_of(_without(tuple(eg.find(f) for f in fs), x)) for fs in spots.values()]
    rest = [k for pos, k in enumerate(node[2]) if pos not in spots]
    return eg.add_of(rest + [eg.mul_of([x, eg.add_of(quotients)])])


def sum_over_add(eg: EGraph, c, node):
    """Σ_A (a + b) -> Σ_A a + Σ_A b   (an index missing from a term gives |i|·term)"""
    idx, (body,) = node[1], node[2]
    return [lambda a=a: eg.add_of([eg.sum_of(idx, t) for t in a[2]])
            for a in eg.nodes(body) if a[0] == "add"][:2]


def add_of_sums(eg: EGraph, c, node):
    """Σ_A a + Σ_A b -> Σ_A (a + b)"""
    groups: dict[tuple, list] = {}
    for pos, k in enumerate(node[2]):
        for n in eg.nodes(k):
            if n[0] == "sum":
                groups.setdefault(n[1], []).append((pos, n[2][0]))
                break
    out = []
    for idx, members in groups.items():
        if len(members) >= 2:
            def apply(idx=idx, members=members):
                used = {p for p, _ in members}
                rest = [k for p, k in enumerate(node[2]) if p not in used]
                return eg.add_of(rest + [eg.sum_of(idx, eg.add_of([b for _, b in members]))])
            out.append(apply)
    return out


def sum_pull(eg: EGraph, c, node):
    """(Σ_A x)·y -> Σ_A (x·y)   renaming the indices of A that are free in y first"""
    out = []
    for k in dict.fromkeys(node[2]):
        rest = _without(node[2], k)
        rest_free = frozenset().union(*(eg.info(r).free for r in rest))
        for n in eg.nodes(k):
            if n[0] == "sum":
                out.append(lambda n=n, rest=rest, rest_free=rest_free:
                           _pull(eg, n, rest, rest_free))
                break
    return out


def _pull(eg: EGraph, node, rest, rest_free):
    bound, body = list(node[1]), node[2][0]
    for pos, ix in enumerate(bound):
        if ix in rest_free:
            new = eg.fresh_index(ix, why=(node, rest_free))
            body = eg.renamed(body, ix, new)
            if body is None:
                return None
            bound[pos] = new
    return eg.sum_of(tuple(bound), eg.mul_of(rest + [body]))


def sum_push(eg: EGraph, c, node):
    """Σ_A (x·y) -> Σ_{A∖a} (y·Σ_a x)   when a is not free in y"""
    idx, (body,) = node[1], node[2]
    out = []
    for m in [n for n in eg.nodes(body) if n[0] == "mul"][:3]:
        for a in idx:
            inner = [k for k in m[2] if a in eg.info(k).free]
            outer = [k for k in m[2] if a not in eg.info(k).free]
            if inner and outer:
                rest = tuple(i for i in idx if i != a)
                out.append(lambda a=a, inner=inner, outer=outer, rest=rest: eg.sum_of(
                    rest, eg.mul_of(outer + [eg.sum_of((a,), eg.mul_of(inner))])))
    return out


def sum_merge(eg: EGraph, c, node):
    """Σ_A Σ_B x -> Σ_{A∪B} x"""
    idx, (body,) = node[1], node[2]
    return [lambda n=n: eg.sum_of(idx + n[1], n[2][0])
            for n in eg.nodes(body) if n[0] == "sum"][:1]


def _consts(eg, kids):
    return [k for k in kids if eg.info(k).const is not None]


def fold_mul(eg: EGraph, c, node):
    """c1·c2·x -> (c1 ⊗ c2)·x ; 1·x -> x   (constant folding)"""
    consts = _consts(eg, node[2])
    if len(consts) < 2 and not any(eg.info(k).const == eg.one for k in consts):
        return []

    def apply():
        value = eg.sr.one
        for k in consts:
            value = eg.sr.mul(value, eg.sr.literal(eg.info(k).const))
        rest = [k for k in node[2] if k not in consts]
        if value == eg.sr.one and rest:
            return eg.mul_of(rest)
        return eg.mul_of(rest + [eg.lit(value.item())])
    return [apply]


def fold_add(eg: EGraph, c, node):
    """c1 + c2 + x -> (c1 ⊕ c2) + x ; 0 + x -> x   (constant folding)"""
    consts = _consts(eg, node[2])
    if len(consts) < 2 and not any(eg.info(k).const == eg.zero for k in consts):
        return []

    def apply():
        value = eg.sr.zero
        for k in consts:
            value = eg.sr.add(value, eg.sr.literal(eg.info(k).const))
        rest = [k for k in node[2] if k not in consts]
        if value == eg.sr.zero and rest:
            return eg.add_of(rest)
        return eg.add_of(rest + [eg.lit(value.item())])
    return [apply]


def dim_idempotent(eg: EGraph, c, node):
    """|i|·x -> x   (n·x = x for n >= 1 when + is idempotent)"""
    dims = [k for k in node[2] if eg.first(k, "dim")]
    rest = [k for k in node[2] if k not in dims]
    return [lambda: eg.mul_of(rest)] if dims and rest else []


def add_repeated(eg: EGraph, c, node):
    """x + x -> 2·x   (the literal n is 1 + ... + 1)"""
    counts = Counter(node[2])
    reps = [k for k, n in counts.items() if n >= 2]
    if not reps:
        return []

    def apply():
        terms = [k for k in counts if k not in reps]
        terms += [eg.mul_of([eg.lit(counts[k]), k]) for k in reps]
        return eg.add_of(terms)
    return [apply]


def add_idempotent(eg: EGraph, c, node):
    """x + x -> x   (idempotent +)"""
    kids = list(dict.fromkeys(node[2]))
    return [lambda: eg.add_of(kids)] if len(kids) < len(node[2]) else []


RULES: tuple[Rule, ...] = (
    Rule("expand", "mul", frozenset(), expand, doc=expand.__doc__),
    Rule("factor", "add", frozenset(), factor, doc=factor.__doc__),
    Rule("sum-over-add", "sum", frozenset(), sum_over_add, doc=sum_over_add.__doc__),
    Rule("add-of-sums", "add", frozenset(), add_of_sums, doc=add_of_sums.__doc__),
    Rule("sum-pull", "mul", frozenset(), sum_pull, doc=sum_pull.__doc__),
    Rule("sum-push", "sum", frozenset(), sum_push, doc=sum_push.__doc__),
    Rule("sum-merge", "sum", frozenset(), sum_merge, doc=sum_merge.__doc__),
    Rule("fold-mul", "mul", frozenset(), fold_mul, doc=fold_mul.__doc__),
    Rule("fold-add", "add", frozenset(), fold_add, doc=fold_add.__doc__),
    Rule("dim-idempotent", "mul", frozenset({"idempotent"}), dim_idempotent,
         doc=dim_idempotent.__doc__),
    Rule("add-repeated", "add", frozenset({"int_mul"}), add_repeated, doc=add_repeated.__doc__),
    Rule("add-idempotent", "add", frozenset({"idempotent"}), add_idempotent,
         doc=add_idempotent.__doc__),
)
# The law Σ_i x = |i|·x (i not free in x), "sum-dim", is applied by EGraph.sum_of
# whenever a rule builds a Σ; in idempotent semirings |i|·x is x directly.


def semiring_laws(sr: Semiring) -> set[str]:
    laws = {law for law in ("negation", "idempotent") if getattr(sr, law)}
    if literal_laws(sr)["int_mul"]:
        laws.add("int_mul")
    return laws


def rules_for(sr: Semiring, rules=RULES) -> list[Rule]:
    laws = semiring_laws(sr)
    return [r for r in rules if r.needs <= laws]

# ------------------------------------------------------------------- saturation


@dataclass
class SaturationStats:
    iterations: int = 0
    nodes: int = 0
    classes: int = 0
    fired: Counter = field(default_factory=Counter)
    stop: str = ""
    seconds: float = 0.0
    costs: list = field(default_factory=list)     # (iteration, best tree cost of the root)
    extract_seconds: float = 0.0                  # time spent in those extractions

    def as_dict(self) -> dict:
        return {"iterations": self.iterations, "nodes": self.nodes, "classes": self.classes,
                "rules fired": dict(self.fired), "stop": self.stop,
                "seconds": round(self.seconds, 4),
                "root costs": list(self.costs),
                "extract seconds": round(self.extract_seconds, 4)}


def saturate(eg: EGraph, rules, limits=None, root: int | None = None) -> SaturationStats:
    """Apply `rules` until nothing changes or a limit is hit (with per-rule backoff).

    With a `root` class and `limits.patience` > 0, the root's best (greedy tree) cost
    is extracted every `limits.check_every` iterations and saturation stops with
    reason "no improvement" once it has not decreased for `patience` consecutive
    iterations (a decrease by less than the fraction `limits.min_gain` does not count).
    """
    lim = Limits.of(limits)
    stats = SaturationStats()
    start = time.perf_counter()
    banned_until = {r.name: 0 for r in rules}
    bans = Counter()
    seen: set = set()
    watch = root is not None and bool(lim.patience)
    every = max(1, int(lim.check_every or 1))
    best_cost, best_at = math.inf, 0
    if watch:
        t0 = time.perf_counter()
        best_cost = best_costs(eg)[eg.find(root)]
        stats.extract_seconds += time.perf_counter() - t0
        stats.costs.append((0, best_cost))
    for it in range(lim.iterations):
        stats.iterations = it + 1
        matches, any_banned = [], False
        by_op = _nodes_by_op(eg)
        for r in rules:
            if banned_until[r.name] > it:
                any_banned = True
                continue
            keys, found = _search(eg, r, seen, by_op)
            if len(found) > lim.match_limit << bans[r.name]:
                banned_until[r.name] = it + (lim.ban_length << bans[r.name])
                bans[r.name] += 1
                any_banned = True
                continue
            seen.update(keys)
            matches += [(r, c, f) for c, f in found]
        before = eg.num_nodes(), len(eg.classes)
        stop = _apply(eg, matches, stats, lim, start)
        eg.rebuild()
        if stop:
            stats.stop = stop
            break
        if (eg.num_nodes(), len(eg.classes)) == before and not any_banned:
            stats.stop = "saturated"
            break
        if watch and (it + 1) % every == 0:
            t0 = time.perf_counter()
            now = best_costs(eg)[eg.find(root)]
            stats.extract_seconds += time.perf_counter() - t0
            stats.costs.append((it + 1, now))
            if now < best_cost * (1 - lim.min_gain):
                best_cost, best_at = now, it + 1
            elif it + 1 - best_at >= lim.patience:
                stats.stop = "no improvement"
                break
    else:
        stats.stop = "iteration limit"
    stats.nodes, stats.classes = eg.num_nodes(), len(eg.classes)
    stats.seconds = time.perf_counter() - start
    return stats


def _nodes_by_op(eg: EGraph) -> dict:
    """op -> [(class, node, sizes of its child classes)], one scan per iteration."""
    out: dict[str, list] = {}
    classes, find = eg.classes, eg.find
    for c, ns in classes.items():
        for n in ns:
            out.setdefault(n[0], []).append(
                (c, n, tuple(len(classes[find(k)]) for k in n[2])))
    return out


def _search(eg: EGraph, rule: Rule, seen: set, by_op: dict):
    """New matches of `rule` among `by_op` (see _nodes_by_op): a node is searched
    again only when a child class grew."""
    keys, found = [], []
    for c, n, sizes in by_op.get(rule.op, ()):
        key = (rule.name, n, sizes)
        if key in seen or not rule.condition(eg, c, n):
            continue
        keys.append(key)
        found += [(c, f) for f in rule.search(eg, c, n)]
    return keys, found


def _apply(eg, matches, stats, lim, start) -> str:
    for r, c, f in matches:
        rhs = f()
        if rhs is not None and eg.union(c, rhs):
            stats.fired[r.name] += 1
        if len(eg.memo) > lim.nodes:
            return "node limit"
        if time.perf_counter() - start > lim.seconds:
            return "time limit"
    return ""

# ------------------------------------------------------------------------- cost


def node_cost(eg: EGraph, node: tuple) -> float:
    """Estimated work of one node given its children's classes (1 + iterations)."""
    op, payload, kids = node
    if op == "dim":
        return math.inf
    if op in ("acc", "lit"):
        return 1.0
    if op == "sum":
        return 1.0 + eg.info(kids[0]).nnz
    free = frozenset().union(*(eg.info(k).free for k in kids))
    if op == "mul":
        return 1.0 + eg.drive(free, kids) * max(1, len(kids) - 1)
    return 1.0 + sum(eg.info(k).nnz * eg.full(free - eg.info(k).free) for k in kids)


def dag_cost(eg: EGraph, root: int, choice: dict) -> float:
    """Cost of the term chosen by `choice` (class -> node), each class counted once."""
    seen, total, todo = set(), 0.0, [eg.find(root)]
    while todo:
        c = eg.find(todo.pop())
        if c in seen:
            continue
        seen.add(c)
        node = choice[c]
        total += node_cost(eg, node)
        todo.extend(node[2])
    return total

# ------------------------------------------------------------------- extraction


def extract_greedy(eg: EGraph) -> dict:
    """For every class the node of least tree cost (bottom-up fixpoint)."""
    return _greedy(eg)[1]


def best_costs(eg: EGraph) -> dict:
    """For every class its least tree cost (what `extract_greedy` minimises)."""
    return _greedy(eg)[0]


def _greedy(eg: EGraph):
    best: dict[int, float] = {c: math.inf for c in eg.classes}
    choice: dict[int, tuple] = {}
    find = eg.find
    rows = []
    for c, ns in eg.classes.items():
        for n in ns:
            own = node_cost(eg, n)
            if own != math.inf:           # |i| nodes are never chosen
                rows.append((c, n, own, tuple({find(k): None for k in n[2]})))
    rows.sort(key=lambda r: r[0])       # children are mostly older classes: few passes
    changed = True
    while changed:
        changed = False
        for c, n, own, kids in rows:
            cost = own
            for k in kids:
                cost += best[k]
            if cost < best[c]:
                best[c], choice[c] = cost, n
                changed = True
    return best, choice


def extract_exact(eg: EGraph, root: int, time_limit: float = 2.0) -> dict | None:
    """Least DAG cost choice by integer programming (None if the solver fails)."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    root = eg.find(root)
    classes = _reachable(eg, root)
    nodes = [(c, n) for c in classes for n in eg.classes[c]]
    nidx = {cn: k for k, cn in enumerate(nodes)}
    cidx = {c: len(nodes) + k for k, c in enumerate(classes)}     # order variables
    nvar, big = len(nodes) + len(classes), len(classes) + 1
    cost = np.zeros(nvar)
    upper = np.concatenate([np.ones(len(nodes)), np.full(len(classes), big)])
    rows, lo, hi = [], [], []
    for k, (c, n) in enumerate(nodes):
        cost[k] = node_cost(eg, n)
        if math.isinf(cost[k]):
            cost[k], upper[k] = 0.0, 0.0
    for c in classes:      # a chosen class picks one node; the root is chosen
        rows.append({nidx[(c, n)]: 1.0 for n in eg.classes[c]})
        lo.append(1.0 if c == root else 0.0)
        hi.append(1.0)
    for k, (c, n) in enumerate(nodes):
        for kid in set(eg.find(x) for x in n[2]):
            row = {nidx[(kid, m)]: -1.0 for m in eg.classes[kid]}
            row[k] = row.get(k, 0.0) + 1.0
            rows.append(row)                     # node chosen -> child class chosen
            lo.append(-np.inf)
            hi.append(0.0)
            rows.append({cidx[c]: 1.0, cidx[kid]: -1.0, k: -float(big)})
            lo.append(1.0 - big)                 # order(c) > order(kid): no cycles
            hi.append(np.inf)
    ri = [r for r, row in enumerate(rows) for _ in row]
    ci = [col for row in rows for col in row]
    vals = [v for row in rows for v in row.values()]
    mat = coo_matrix((vals, (ri, ci)), shape=(len(rows), nvar))
    integrality = np.concatenate([np.ones(len(nodes)), np.zeros(len(classes))])
    res = milp(cost, constraints=LinearConstraint(mat.tocsr(), lo, hi),
               integrality=integrality, bounds=Bounds(np.zeros(nvar), upper),
               options={"time_limit": time_limit})
    if res.x is None:
        return None
    choice = {c: n for k, (c, n) in enumerate(nodes) if res.x[k] > 0.5}
    return choice if _acyclic(eg, root, choice) else None


def _acyclic(eg: EGraph, root: int, choice: dict) -> bool:
    state: dict[int, int] = {}

    def visit(c) -> bool:
        c = eg.find(c)
        if state.get(c) == 2:
            return True
        if state.get(c) == 1 or c not in choice:
            return False
        state[c] = 1
        ok = all(visit(k) for k in choice[c][2])
        state[c] = 2
        return ok
    return visit(root)


def _reachable(eg: EGraph, root: int) -> list[int]:
    seen, todo = {}, [root]
    while todo:
        c = eg.find(todo.pop())
        if c in seen:
            continue
        seen[c] = None
        for n in eg.classes[c]:
            todo.extend(n[2])
    return list(seen)

# ---------------------------------------------------------------- back to Expr


def to_expr(eg: EGraph, root: int, choice: dict) -> Expr:
    """The expression chosen by `choice`, from the original TensorVar objects."""
    node = choice[eg.find(root)]
    op, payload, kids = node
    if op == "acc":
        return payload
    if op == "lit":
        neg = bool(eg.sr.negation and not isinstance(payload, bool) and payload < 0)
        return Lit(payload, negation=neg)
    if op == "sum":
        return ep_sum(tuple(Index(i) for i in payload), to_expr(eg, kids[0], choice))
    if op == "dim":
        raise ValueError("|i| has no expression; it is never extracted")
    parts = sorted((to_expr(eg, k, choice) for k in kids), key=_display_rank)
    out = parts[0]
    for p in parts[1:]:
        out = Mul(out, p) if op == "mul" else Add(out, p)
    return out


def _display_rank(e: Expr):
    return ({Lit: 0, Access: 1}.get(type(e), 2), str(e))


def proves(e1, e2, semiring, limits=None) -> bool:
    """True when saturation puts e1 and e2 (same free indices) in one class."""
    eg = EGraph(semiring)
    a, b = eg.add_expr(e1), eg.add_expr(e2)
    saturate(eg, rules_for(semiring), limits)
    return eg.find(a) == eg.find(b)
