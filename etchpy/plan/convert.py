"""Format conversions as planned steps: an input read in another format.

A loop nest walks every sparse input in its storage order. When no loop order
does (A[i,j]·B[j,i] with A and B csr), or when walking a converted copy is much
cheaper (`Tuning.conversions`, with the sizes of plan.cost), the planner reads
an access from a converted copy of its input instead: the same level kinds in
another mode order (csr <-> csc, a permuted coo or csf), or dense when the input
is small or nearly full. A conversion is materialised at call time by the
runtime (runtime.planned) before the kernel runs, and priced here at
`tuning.temp_weight` per stored entry (per element for dense) and per position
of the dense levels it reads and writes (`positions`). A structure the input
keeps made in that format (a table's stored order: `Stats.stored`) is read in
place, its values checked against the input's and gathered again only when
they were written: one read per stored entry. So among a table's stored
orders the planner reads the one whose walk, priced by the cost model,
costs least.

    Conversion                 one converted input: its name in the kernel, its
                               source tensor, the format, the estimated cost, why
    Converter(names, stats)    chooses conversions for a step's body (`walk`)
    kernel_tensors(plan, ts)   the kernel's inputs: the tensors it still reads as
                               written plus every converted copy
    bindings(plan, ts)         kernel input name -> (user's tensor, TensorVar, planned)

For each candidate loop order the conversions are determined (every access
walked against it is converted to the mode order the loop order visits, or to
dense), and the order plus conversions of least estimated work is taken
(`search`: run once per body for every converter sharing a Stats memo, and
not pricing a combination that cannot beat the best so far; the choice is the
one pricing every order and combination makes).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

from .cost import Stats, nest_cost, operations, sort_work, support
from .reserved import reserved_tensor
from ..errors import FormatError
from ..expr.compare import CompareVar
from ..expr.windows import WindowVar, label
from ..expr.nodes import Access, Add, Expr, Lit, Map, Mul, TensorVar
from ..expr.walk import accesses, map_operands
from ..formats import NAMED_FORMATS, Format, singleton


@dataclass(frozen=True)
class Conversion:
    """Input `source` (declared `source_format`) read as `name` in `format`."""

    name: str
    source: str
    source_format: Format
    format: Format
    cost: float
    reason: str

    @property
    def tensor(self) -> TensorVar:
        tvar = reserved_tensor(self.name, self.format.order, self.format)
        object.__setattr__(tvar, "converted_from", self.source)   # its entries: plan.cost
        return tvar

    def explain(self) -> str:
        return (f"{self.name} = {self.source} converted {self.source_format} -> "
                f"{self.format} (estimated work {self.cost:.3g}): {self.reason}")


def walked_in_order(acc: Access, order) -> bool:
    """Whether loop order `order` visits acc's indices in its storage order."""
    if acc.tensor.format.is_dense:
        return True
    pos = {v: k for k, v in enumerate(order)}
    st = [pos[acc.indices[m].name] for m in acc.tensor.format.mode_order]
    return st == sorted(st)


def permuted(fmt: Format, acc: Access, order) -> Format:
    """`fmt`'s level kinds in the mode order that loop order `order` visits (a
    singleton level under a unique one, a key that depended on the keys above
    it, compressed: in another order it may not)."""
    pos = {v: k for k, v in enumerate(order)}
    modes = tuple(sorted(range(fmt.order), key=lambda m: pos[acc.indices[m].name]))
    new = Format(singleton.independent(fmt.levels), modes)
    for name in NAMED_FORMATS:
        try:
            if Format.named(name, fmt.order) == new:
                return Format.named(name, fmt.order)
        except FormatError:     # a named format for another order
            continue
    return new


class Converter:
    """Chooses the conversions of a plan's steps; `made` keeps them by (source,
    format) so that steps share a converted copy. `optional`: also convert when
    it is cheaper (not only when no loop order walks the inputs as declared)."""

    def __init__(self, names, stats: Stats | None, optional: bool):
        self.names = names
        self.stats = stats or Stats()
        self.optional = optional and stats is not None
        self.made: dict[tuple, Conversion] = {}
        self.named: dict[tuple, str] = {}      # (source, format) -> its copy's name

    def walk(self, body: Expr, variables, origin, legal=None, written_out=None):
        """(body, order, new conversions): `legal` is the order chosen to walk
        body as declared (None: there is none). Conversions are taken when
        needed, or when optional and their estimated work (conversions
        included) is at most `tuning.rewrite_margin` times the least work of an
        order that converts nothing. `written_out`: a sparse output's axes in
        storage order; an order against it pays for sorting its records."""
        if legal is not None and not self.optional:
            return body, legal, ()
        stats = self.stats.with_origin(origin)
        if legal is not None and (not stats.tuning.conversions or len(variables) > 5):
            return body, legal, ()
        best, as_declared = self.cheapest(body, tuple(variables), stats, written_out)
        if legal is not None and (best is None or not best[3] or best[0] >
                                  stats.tuning.rewrite_margin * as_declared):
            return body, legal, ()
        if legal is None:
            why = "no loop order walks " + ", ".join(
                f"{label(a.tensor)}({', '.join(ix.name for ix in a.indices)}) as "
                f"{a.tensor.format}" for a in _sparse(body)) + " in storage order"
        else:
            why = (f"estimated work {best[0]:.3g} with it against {as_declared:.3g} "
                   "walking the inputs as declared")
        if best is None:
            raise FormatError(f"{why}, and a value comparison, a onehot or a window is read "
                              f"in its storage order (a comparison's companions follow its "
                              f"positions; a onehot and a window read their operand's "
                              f"own arrays)")
        _, order, new_body, convs = best
        made = []
        for key, conv in convs:
            if key not in self.made:
                self.made[key] = Conversion(conv.name, conv.source, conv.source_format,
                                            conv.format, conv.cost, why)
                made.append(self.made[key])
        return new_body, order, tuple(made)

    def cheapest(self, body, variables, stats, written_out=None):
        """((cost, order, body, conversions) of least estimated work over the
        candidate loop orders, conversions included, or None; the least work
        of an order that converts nothing, or inf). The search (`search`) runs
        once per (origin, body, variables, written_out, conversions made) for
        every converter planning with `stats`' memo; here its conversions get
        this converter's names, claimed in the order the search met them."""
        made = frozenset(self.made)
        key = ("conversions", stats.origin_key, body, variables, written_out, made)
        found = stats.nests.get(key)
        if found is None:
            found = stats.nests[key] = search(body, variables, stats, written_out, made)
        best, as_declared, claimed = found
        for source_key in claimed:
            self.fresh(source_key[0], source_key)
        if best is None:
            return None, as_declared
        cost, order, choice = best
        convs, renamed = {}, {}
        for acc, source_key, conv in choice:
            conv = self.made.get(source_key) or replace(conv, name=self.named[source_key])
            convs.setdefault(source_key, conv)
            renamed[acc] = conv.name
        new_body = substitute(body, renamed, {c.name: c for c in convs.values()})
        return (cost, order, new_body, tuple(convs.items())), as_declared

    def ways(self, acc: Access, order, stats):
        """((source, format), Conversion) for each format acc may be converted to."""
        out = []
        for key, conv in ways(acc, order, stats, frozenset(self.made)):
            made = self.made.get(key)
            out.append((key, made or replace(conv, name=self.fresh(key[0], key))))
        return out

    def fresh(self, source: str, key) -> str:
        """The name of a converted copy (reserved: tmp...), claimed once per key."""
        if key not in self.named:
            self.named[key] = self.names.fresh(f"tmp_{source}")
        return self.named[key]


def search(body, variables, stats: Stats, written_out, made: frozenset):
    """(best, least work converting nothing, claimed) over the candidate loop
    orders and, per order, up to `tuning.conversion_choices` combinations of
    the ways (`ways`) to convert the accesses it walks against their storage
    order: best is (cost, order, ((access, key, Conversion), ...)) or None, each
    Conversion under a name of its key alone (priced the same: nothing prices by
    a converted copy's name), the keys not in `made` claimed in the order met.
    A combination that converts is not priced when its conversions (`made`
    ones are free), sort and floor of its nest's work (`_priced`) already cost
    at least the best so far: its work could not be less."""
    sparse = list(dict.fromkeys(_sparse(body)))
    known, bodies = {}, {}      # (access, modes) -> its ways; combination -> body
    claimed: dict = {}
    best, as_declared = None, math.inf
    for order in candidate_orders(body, variables, stats.tuning.orders_tried):
        sort = _sort_cost(body, order, stats, written_out)
        bad = [a for a in sparse if not walked_in_order(a, order)]
        if any(_read_in_place(a) for a in bad):
            continue
        choices = [_ways_in(a, order, stats, made, known) for a in bad]
        claimed.update((key, None) for ch in choices for key, _ in ch if key not in made)
        most = stats.tuning.conversion_choices
        for combo in itertools.islice(itertools.product(*choices), most):
            convs = dict(combo)
            spent = sum(c.cost for key, c in convs.items() if key not in made)
            if convs and best is not None and spent + sort >= best[0]:
                continue                                    # before building its body
            if combo not in bodies:
                bodies[combo] = _priced(body, bad, combo, variables, stats)
            new_body, floor = bodies[combo]
            if convs and best is not None and spent + sort + floor >= best[0]:
                continue
            cost = nest_cost(new_body, order, stats, independent=True) + spent + sort
            if best is None or cost < best[0]:
                best = (cost, order, tuple((a, k, c) for a, (k, c) in zip(bad, combo)))
            if not convs:
                as_declared = min(as_declared, cost)
    return best, as_declared, tuple(claimed)


def _priced(body, bad, combo, variables, stats: Stats):
    """(body reading the conversions of `combo`, a floor of its nest's work in
    any loop order: cost.nest_cost's innermost level visits at least the
    support over all the indices and does the body's operations there, each at
    least `tuning.contiguous_weight` of a unit; other terms are never negative;
    a hair below, for rounding)."""
    new_body = substitute(body, {a: c.name for a, (_, c) in zip(bad, combo)},
                          {c.name: c for _, c in combo})
    if not variables:
        return new_body, 0.0
    weight = max(0.0, min(1.0, stats.tuning.contiguous_weight))
    inner = support(new_body, frozenset(variables), stats, True)
    return new_body, inner * (1 + operations(new_body)) * weight * (1 - 1e-9)


def _ways_in(acc: Access, order, stats: Stats, made: frozenset, known: dict):
    """`ways`, remembered in `known` per (access, the mode order `order` visits)."""
    pos = {v: k for k, v in enumerate(order)}
    key = (acc, tuple(sorted(range(len(acc.indices)), key=lambda m: pos[acc.indices[m].name])))
    if key not in known:
        known[key] = ways(acc, order, stats, made)
    return known[key]


def ways(acc: Access, order, stats: Stats, made: frozenset):
    """((source, format), Conversion) for each format acc may be converted to,
    each Conversion named by its key (`made`: keys whose copy is already made)."""
    t = acc.tensor
    fmts = [permuted(t.format, acc, order)]
    fmts += sorted((f for name, f in stats.stored if name == t.name and f != fmts[0]
                    and f.mode_order == fmts[0].mode_order), key=repr)   # stored, other kinds
    full = stats.full([ix.name for ix in acc.indices])
    nnz = stats.tensor_nnz(acc)
    tn = stats.tuning
    if full <= tn.dense_conversion_elements or nnz >= tn.dense_conversion_share * full:
        fmts.append(Format.named("dense", t.order))
    out = []
    for fmt in fmts:
        key = (t.name, fmt)
        if key in made or key in stats.stored:     # kept made: its values checked
            work = nnz
        else:
            work = stats.tuning.temp_weight * (full if fmt.is_dense else nnz + positions(
                acc, t.format, stats) + positions(acc, fmt, stats))
        out.append((key, Conversion(f"tmp_{t.name}:{fmt!r}", t.name, t.format, fmt, work, "")))
    return out


def positions(acc: Access, fmt: Format, stats: Stats) -> float:
    """The positions of `fmt`'s dense levels holding acc's entries (a conversion
    reads the source's and writes the target's: csr's row pointers are |rows|
    long however few rows hold entries): per dense level, the keys of the levels
    above it times its index's size."""
    names = [acc.indices[m].name for m in fmt.mode_order]
    total, above = 0.0, 1.0
    for k, level in enumerate(fmt.levels):
        if level.located:            # a dense level: a position per coordinate
            total += above * stats.dim(names[k])
        above = stats.distinct(acc, set(names[:k + 1])) if k + 1 < len(names) else above
    return total


def _sort_cost(body, order, stats, written_out) -> float:
    """What writing a sparse output (axes `written_out` in storage order) from
    loop order `order` costs beyond appending or a row workspace: its records
    sorted, twice `temp_weight` per record, when the order visits its axes out
    of order or runs a contracted index outside any but its last axis."""
    if not written_out:
        return 0.0
    pos = [order.index(v) for v in written_out]
    outer = set(order[:pos[-2] + 1]) if len(pos) > 1 else set()
    if pos == sorted(pos) and outer <= set(written_out):
        return 0.0
    return sort_work(support(body, frozenset(order), stats, True), stats.tuning)


def _read_in_place(acc: Access) -> bool:
    """A value comparison (expr.compare) is never converted: the arrays it reads
    besides its structure are aligned with its positions; nor is a window
    (expr.windows), read over its operand's own arrays, nor a onehot
    (expr.bins), whose bins are read off its operand's values in place."""
    return (isinstance(acc.tensor, CompareVar) and acc.tensor.kind in ("value", "bins")
            or isinstance(acc.tensor, WindowVar))


def _sparse(body: Expr) -> list[Access]:
    return [a for a in accesses(body) if not a.tensor.format.is_dense]


def substitute(e: Expr, renamed: dict, convs: dict) -> Expr:
    """Σ-free e with each access in `renamed` reading the converted tensor named there."""
    match e:
        case Access(_, idx) if e in renamed:
            return Access(convs[renamed[e]].tensor, idx)
        case Access() | Lit():
            return e
        case Mul() | Add() | Map():
            return map_operands(e, lambda x: substitute(x, renamed, convs))
    raise TypeError(f"not a Σ-free expression: {e!r}")


def candidate_orders(body: Expr, variables: tuple, most: int):
    """Loop orders to try: every permutation when there are at most `most`
    (tuning.orders_tried); else, for each index, an order that starts with it
    and then breaks as few storage orders as it can, and the first `most`
    permutations."""
    if math.factorial(len(variables)) <= most:
        yield from itertools.permutations(variables)
        return
    for k in range(len(variables)):
        yield relaxed_order(body, variables[k:] + variables[:k])
    yield from itertools.islice(itertools.permutations(variables), most)


def relaxed_order(body: Expr, variables: tuple) -> tuple:
    """A topological order of the storage-order constraints that, when they form a
    cycle, takes next the index with fewest unmet predecessors."""
    preds = {v: set() for v in variables}
    for a in _sparse(body):
        st = [a.indices[m].name for m in a.tensor.format.mode_order]
        for x, y in zip(st, st[1:]):
            preds[y].add(x)
    order, left = [], list(variables)
    while left:
        best = min(left, key=lambda v: (len(preds[v] - set(order)), variables.index(v)))
        order.append(best)
        left.remove(best)
    return tuple(order)


def kernel_tensors(plan, tensors: dict) -> dict:
    """The kernel's inputs by name: `tensors` (the expression's), less those that
    every access now reads converted, plus every converted copy."""
    return {name: tv for name, (_, tv, _) in bindings(plan, tensors).items()}


def bindings(plan, tensors: dict) -> dict:
    """Kernel input name -> (the user's tensor it is bound from, its TensorVar,
    whether it is a planned conversion)."""
    return bindings_of(tensors, *converted(plan))


def converted(plan) -> tuple[tuple, frozenset]:
    """(name, source, TensorVar) of every planned conversion of `plan`, and the
    names of the tensors read only through their conversions."""
    convs = getattr(plan, "conversions", ())
    if not convs:
        return (), frozenset()
    read = {a.tensor.name for s in plan.steps for a in accesses(s.body)}
    return (tuple((c.name, c.source, c.tensor) for c in convs),
            frozenset({c.source for c in convs} - read))


def bindings_of(tensors: dict, conversions: tuple, replaced: frozenset) -> dict:
    """`bindings` from what `converted` says of a plan."""
    out = {name: (name, tv, False) for name, tv in tensors.items() if name not in replaced}
    for name, source, tv in conversions:
        out[name] = (source, tv, True)
    return out
