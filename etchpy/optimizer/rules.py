"""The rewrite rules of the e-graph, as one table of data (`RULES`).

A rule is a row: a `name` (shown in `Optimized.explain()` and the saturation
statistics), a `pattern` (the node operator it looks at, the left-hand side
as text, and `find`, which yields the bindings of that left-hand side at one
e-node), a `condition` on a binding, an `applier` that adds the right-hand
side and returns its class (or None to do nothing), the right-hand side as
text, and the semiring laws it `needs` ("idempotent", "int_mul", "negation").

Contracts, for every rule:
- `pattern.find(eg, node)` and `condition(eg, node, binding)` only read the
  e-graph; they run at search time;
- `applier(eg, node, binding)` runs later in the same iteration (after other
  rules may have merged classes) and returns a class equal in the semiring to
  the class of `node`, with the same free indices, or None;
- no index is captured: where pulling a Σ out of a product would capture one,
  (Σ_i v[i])·(Σ_i w[i]), `sum-pull` renames the clashing bound index to a fresh
  name first (`EGraph.renamed`).

The law Σ_i x = |i|·x (i not free in x), "sum-dim", is not a row: `EGraph.sum_of`
applies it whenever a rule builds a Σ; in idempotent semirings |i|·x is x.
proofs_notes/optimizer.md argues each rule's soundness.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable

from .egraph import EGraph
from .ra import literal_laws
from ..semiring import Semiring


@dataclass(frozen=True)
class Pattern:
    """The left-hand side of a rule: its root operator and how to bind it at a node."""
    op: str                                             # "mul", "add" or "sum"
    lhs: str                                            # the left-hand side, as text
    find: Callable[[EGraph, tuple], Iterable[tuple]]    # (egraph, node) -> bindings


def always(eg: EGraph, node: tuple, binding: tuple) -> bool:
    """No condition beyond the pattern."""
    return True


@dataclass(frozen=True)
class Rule:
    """One row of the rules table (see the module docstring for the contracts)."""
    name: str
    pattern: Pattern
    condition: Callable[[EGraph, tuple, tuple], bool]
    applier: Callable[[EGraph, tuple, tuple], int | None]
    rhs: str
    needs: frozenset = frozenset()

    @property
    def law(self) -> str:
        return f"{self.pattern.lhs} -> {self.rhs}"


def _without(kids, k: int) -> list:
    out = list(kids)
    out.remove(k)
    return out


def _consts(eg: EGraph, kids) -> list:
    return [k for k in kids if eg.info(k).const is not None]

# -- distributivity -------------------------------------------------------------


def find_mul_of_add(eg: EGraph, node):
    """(other factors, an add node) for the first factor whose class holds a +."""
    for k in dict.fromkeys(node[2]):
        adds = [n for n in eg.nodes(k) if n[0] == "add"][:2]
        rest = _without(node[2], k)
        yield from ((rest, a) for a in adds)
        if adds:
            return


def expand(eg: EGraph, node, binding):
    rest, a = binding
    return eg.add_of([eg.mul_of(rest + [t]) for t in a[2]])


def _factorings(eg: EGraph, k: int):
    yield (k,)
    for n in list(eg.nodes(k))[:4]:
        if n[0] == "mul":
            yield n[2]


def find_common_factor(eg: EGraph, node):
    """(x, {term position: its factors}) for up to 4 classes x that divide 2+ terms."""
    where: dict[int, dict[int, tuple]] = {}
    for pos, k in enumerate(node[2]):
        for fs in _factorings(eg, k):
            for f in set(fs):
                where.setdefault(eg.find(f), {}).setdefault(pos, fs)
    found = 0
    for x, spots in where.items():
        if len(spots) >= 2:
            yield (x, spots)
            found += 1
        if found >= 4:
            return


def factor(eg: EGraph, node, binding):
    x, spots = binding
    x = eg.find(x)
    quotients = [eg.mul_of(_without(tuple(eg.find(f) for f in fs), x)) for fs in spots.values()]
    rest = [k for pos, k in enumerate(node[2]) if pos not in spots]
    return eg.add_of(rest + [eg.mul_of([x, eg.add_of(quotients)])])

# -- Σ and + --------------------------------------------------------------------


def find_sum_of_add(eg: EGraph, node):
    """(an add node) for up to two + nodes in the Σ's body."""
    return [(a,) for a in eg.nodes(node[2][0]) if a[0] == "add"][:2]


def sum_over_add(eg: EGraph, node, binding):
    (a,) = binding
    return eg.add_of([eg.sum_of(node[1], t) for t in a[2]])


def find_add_of_sums(eg: EGraph, node):
    """(bound indices, [(term position, Σ body)]) per bound set, from each term's first Σ."""
    groups: dict[tuple, list] = {}
    for pos, k in enumerate(node[2]):
        n = eg.first(k, "sum")
        if n is not None:
            groups.setdefault(n[1], []).append((pos, n[2][0]))
    return list(groups.items())


def several(eg: EGraph, node, binding) -> bool:
    """Two or more terms are Σ over the same indices."""
    return len(binding[1]) >= 2


def add_of_sums(eg: EGraph, node, binding):
    idx, members = binding
    used = {p for p, _ in members}
    rest = [k for p, k in enumerate(node[2]) if p not in used]
    return eg.add_of(rest + [eg.sum_of(idx, eg.add_of([b for _, b in members]))])

# -- Σ and * --------------------------------------------------------------------


def find_mul_of_sum(eg: EGraph, node):
    """(the first Σ node of a factor, the other factors, their free indices)."""
    for k in dict.fromkeys(node[2]):
        rest = _without(node[2], k)
        n = eg.first(k, "sum")
        if n is not None:
            yield (n, rest, frozenset().union(*(eg.info(r).free for r in rest)))


def sum_pull(eg: EGraph, node, binding):
    sum_node, rest, rest_free = binding
    bound, body = list(sum_node[1]), sum_node[2][0]
    for pos, ix in enumerate(bound):
        if ix in rest_free:
            new = eg.fresh_index(ix, why=(sum_node, rest_free))
            body = eg.renamed(body, ix, new)
            if body is None:
                return None
            bound[pos] = new
    return eg.sum_of(tuple(bound), eg.mul_of(rest + [body]))


def find_sum_of_mul(eg: EGraph, node):
    """(a, factors with a free, factors without) per bound a, for up to 3 * in the body."""
    idx, (body,) = node[1], node[2]
    for m in [n for n in eg.nodes(body) if n[0] == "mul"][:3]:
        for a in idx:
            yield (a, [k for k in m[2] if a in eg.info(k).free],
                   [k for k in m[2] if a not in eg.info(k).free])


def splits(eg: EGraph, node, binding) -> bool:
    """Some factors have a free and some do not."""
    return bool(binding[1]) and bool(binding[2])


def sum_push(eg: EGraph, node, binding):
    a, inner, outer = binding
    rest = tuple(i for i in node[1] if i != a)
    return eg.sum_of(rest, eg.mul_of(outer + [eg.sum_of((a,), eg.mul_of(inner))]))


def find_sum_of_sum(eg: EGraph, node):
    """(the inner Σ node) for the first Σ in the body."""
    return [(n,) for n in eg.nodes(node[2][0]) if n[0] == "sum"][:1]


def sum_merge(eg: EGraph, node, binding):
    (inner,) = binding
    return eg.sum_of(node[1] + inner[1], inner[2][0])

# -- constants and repeated terms -------------------------------------------------


def find_consts(eg: EGraph, node):
    """(the operands whose class is a constant)."""
    return [(_consts(eg, node[2]),)]


def _foldable(consts, unit, eg) -> bool:
    return len(consts) >= 2 or any(eg.info(k).const == unit for k in consts)


def foldable_mul(eg: EGraph, node, binding) -> bool:
    """Two constants to multiply, or a 1 to drop."""
    return _foldable(binding[0], eg.one, eg)


def foldable_add(eg: EGraph, node, binding) -> bool:
    """Two constants to add, or a 0 to drop."""
    return _foldable(binding[0], eg.zero, eg)


def _fold(eg: EGraph, node, consts, unit, op, make):
    """make(the other operands + the constants combined by op), the unit left out."""
    value = unit
    for k in consts:
        value = op(value, eg.sr.literal(eg.info(k).const))
    rest = [k for k in node[2] if k not in consts]
    if value == unit and rest:
        return make(rest)
    return make(rest + [eg.lit(value.item())])


def fold_mul(eg: EGraph, node, binding):
    return _fold(eg, node, binding[0], eg.sr.one, eg.sr.mul, eg.mul_of)


def fold_add(eg: EGraph, node, binding):
    return _fold(eg, node, binding[0], eg.sr.zero, eg.sr.add, eg.add_of)


def find_dims(eg: EGraph, node):
    """(the |i| factors, the other factors)."""
    dims = [k for k in node[2] if eg.first(k, "dim")]
    return [(dims, [k for k in node[2] if k not in dims])]


def drop_dims(eg: EGraph, node, binding):
    return eg.mul_of(binding[1])


def find_repeats(eg: EGraph, node):
    """(term counts, the terms that occur twice or more)."""
    counts = Counter(node[2])
    return [(counts, [k for k, n in counts.items() if n >= 2])]


def add_repeated(eg: EGraph, node, binding):
    counts, reps = binding
    terms = [k for k in counts if k not in reps]
    terms += [eg.mul_of([eg.lit(counts[k]), k]) for k in reps]
    return eg.add_of(terms)


def add_idempotent(eg: EGraph, node, binding):
    return eg.add_of(list(dict.fromkeys(node[2])))


def dims_and_rest(eg: EGraph, node, binding) -> bool:
    """Some |i| factor, and some other factor to keep."""
    return bool(binding[0]) and bool(binding[1])


def has_repeats(eg: EGraph, node, binding) -> bool:
    """Some term occurs twice."""
    return len(set(node[2])) < len(node[2])


IDEMPOTENT, INT_MUL = frozenset({"idempotent"}), frozenset({"int_mul"})

MUL_OF_ADD = Pattern("mul", "a·(b + c + …)", find_mul_of_add)
ADD_OF_MULS = Pattern("add", "a·b + a·c + d", find_common_factor)
SUM_OF_ADD = Pattern("sum", "Σ_A (a + b)", find_sum_of_add)
ADD_OF_SUMS = Pattern("add", "Σ_A a + Σ_A b", find_add_of_sums)
MUL_OF_SUM = Pattern("mul", "(Σ_A x)·y", find_mul_of_sum)
SUM_OF_MUL = Pattern("sum", "Σ_A (x·y)", find_sum_of_mul)
SUM_OF_SUM = Pattern("sum", "Σ_A Σ_B x", find_sum_of_sum)
MUL_CONSTS = Pattern("mul", "c1·c2·x", find_consts)
ADD_CONSTS = Pattern("add", "c1 + c2 + x", find_consts)
MUL_DIMS = Pattern("mul", "|i|·x", find_dims)
ADD_REPEATS = Pattern("add", "x + x", find_repeats)

RULES: tuple[Rule, ...] = (
    #    name              pattern      condition      applier         right-hand side, laws
    Rule("expand",         MUL_OF_ADD,  always,        expand,         "a·b + a·c + …"),
    Rule("factor",         ADD_OF_MULS, always,        factor,         "a·(b + c) + d"),
    Rule("sum-over-add",   SUM_OF_ADD,  always,        sum_over_add,   "Σ_A a + Σ_A b"),
    Rule("add-of-sums",    ADD_OF_SUMS, several,       add_of_sums,    "Σ_A (a + b)"),
    Rule("sum-pull",       MUL_OF_SUM,  always,        sum_pull,       "Σ_A' (x'·y), A' fresh"),
    Rule("sum-push",       SUM_OF_MUL,  splits,        sum_push,       "Σ_{A∖a} (y·Σ_a x)"),
    Rule("sum-merge",      SUM_OF_SUM,  always,        sum_merge,      "Σ_{A∪B} x"),
    Rule("fold-mul",       MUL_CONSTS,  foldable_mul,  fold_mul,       "(c1⊗c2)·x"),
    Rule("fold-add",       ADD_CONSTS,  foldable_add,  fold_add,       "(c1⊕c2) + x"),
    Rule("dim-idempotent", MUL_DIMS,    dims_and_rest, drop_dims,      "x", IDEMPOTENT),
    Rule("add-repeated",   ADD_REPEATS, has_repeats,   add_repeated,   "2·x", INT_MUL),
    Rule("add-idempotent", ADD_REPEATS, has_repeats,   add_idempotent, "x", IDEMPOTENT),
)
RULES_BY_NAME = {r.name: r for r in RULES}


def semiring_laws(sr: Semiring) -> set[str]:
    """The laws of `sr` that rules may need: negation, idempotent, int_mul."""
    laws = {law for law in ("negation", "idempotent") if getattr(sr, law)}
    if literal_laws(sr)["int_mul"]:
        laws.add("int_mul")
    return laws


def rules_for(sr: Semiring, rules=RULES) -> list[Rule]:
    """The rules whose needed laws `sr` has."""
    laws = semiring_laws(sr)
    return [r for r in rules if r.needs <= laws]
