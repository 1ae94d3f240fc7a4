"""Estimated work of loop nests and plans under the stream model (Etch §8).

A loop nest over order (v1, ..., vn) visits, at depth k, one record per point of
the body's support projected onto {v1..vk}. A visit costs one unit, an innermost
record one per operation of the body (none for a product by an iso operand's one),
a dense temporary `tuning.temp_weight` per element (allocated, zeroed, read back).

Support sizes are estimates from `Stats`: an index has a size (default
`tuning.default_dim`) and a tensor a nonzero count (default: full for dense formats,
a share `tuning.sparse_density` of it for sparse ones). A sparse tensor with N
nonzeros projected onto a subset W of its indices has about min(|W|, N) points,
or exactly its non-empty fibres' count when W is a prefix of its storage order
and the fibre statistics measured on the inputs (`fibers`, pipeline.Measured.fibers)
give it. A product's support is at most its sparsest factor's (streams intersect); it is
estimated as a join (`join_support`): from each factor as the driver, the other factors
are joined one at a time, each multiplying the estimate by |g| / max(V(g, K), V(so far,
K)) over their shared indices K (V: distinct keys; the textbook estimate that the
smaller key set is contained in the larger), so a factor sharing indices fans out by its
mean fibre length and one whose indices are all bound filters by its density; the least
estimate over drivers is kept. A sum reads all operands.

The one cost model: the optimizer's e-graph and the lazy planner price with the
functions below too (docs/optimizer.md, "One cost model"); sizes: plan.stats.

    support(e, S, stats)          estimated records of Σ-free e over index set S
    product_bound(parts, S, stats)  a product's support from its factors'
    product_support(parts, S, stats)  the same from its factors' supports and keys
    join_estimate(parts, S, stats)  a product's support as a join of its factors
    merge_steps(parts, S, stats)  the entries a sum's merge steps through
    temp_work(cells, tuning)      a dense temporary's work
    nest_cost(body, order, stats) work of one loop nest (strided reads included)
    plan_cost(plan, stats)        work of a whole plan (steps, temporaries, scatters into
                                  them: plan.scatter; conversions, priced when planned)
"""
from __future__ import annotations

import math

from .. import maps
from . import fusion
from .scatter import holds_every, scatters
from ..expr.nodes import Access, Add, Expr, Lit, Map, Mul
from ..expr.walk import accesses
from .stats import Stats, base_name  # noqa: F401  (importers take them from here)
from .strides import dense_inner, out_of_order, strided


def support(e: Expr, space: frozenset, stats: Stats, independent=False) -> float:
    """Estimated number of points of e's support projected onto (and broadcast over)
    space. `independent`: a product's factors are taken as independent, so its
    support is also at most the product of their shares of the space (what the
    conversion search prices with: plan.convert). Remembered per (origin, e,
    space): loop orders share prefixes, and bodies share factors."""
    if not isinstance(space, frozenset):
        return _support_of(e, space, stats, independent)
    key = (stats.origin_key, e, space, independent)
    hit = stats.nests.get(key)
    if hit is None:
        hit = stats.nests[key] = _support_of(e, space, stats, independent)
    return hit


def _support_of(e: Expr, space, stats: Stats, independent) -> float:
    match e:
        case Access():
            mine = {ix.name for ix in e.indices}
            if e.tensor.format.is_dense:
                return stats.full(space)
            return stats.distinct(e, mine & space) * stats.full(space - mine)
        case Lit():
            return stats.full(space)
        case Mul():
            return min(_bound(e, space, stats, independent),
                       join_support(e, space, stats, independent))
        case Add(a, b):
            return min(stats.full(space), support(a, space, stats, independent)
                       + support(b, space, stats, independent))
        case Map(fn, a, arg):      # f(0) ≠ 0: the whole dense domain
            return (support(a, space, stats, independent) if maps.keeps_zero(fn, arg)
                    else stats.full(space))
    raise TypeError(f"the cost model takes Σ-free bodies, got {e!r}")


def _bound(e: Expr, space: frozenset, stats: Stats, independent) -> float:
    """A product's support is at most its sparsest factor's (and, independent, at
    most their shares of the space multiplied: product_bound)."""
    shares = [support(f, space, stats, independent) for f in _factors(e)]
    return product_bound([(space, s) for s in shares], space, stats) if independent \
        else min(shares)


def product_bound(parts, space: frozenset, stats: Stats) -> float:
    """The support over `space` of a product of independent factors, given as
    (index names, support) pairs, a repeated factor once: at most each factor's
    support broadcast over `space`, and at most `space` times every density."""
    dens = math.prod(s / max(1.0, stats.full(names)) for names, s in parts)
    return min(stats.full(space) * dens, min(s * stats.full(space - names)
                                             for names, s in parts))


def merge_steps(parts, space: frozenset, stats: Stats) -> float:
    """Entries a merge (a sum) over `space` steps through: each operand's (index
    names, support) broadcast. The sum's support is at most this and `space`."""
    return sum(s * stats.full(space - names) for names, s in parts)


def temp_work(cells: float, tuning) -> float:
    """A dense temporary of `cells` entries (allocated, zeroed, written, read)."""
    return tuning.temp_weight * cells


def sort_work(records: float, tuning) -> float:
    """Collecting `records` coordinate records and sorting them: twice a
    temporary's work per record."""
    return 2 * tuning.temp_weight * records


def _factors(e: Expr) -> list:
    return _factors(e.a) + _factors(e.b) if isinstance(e, Mul) else [e]


def _names(e: Expr) -> frozenset:
    match e:
        case Access():
            return frozenset(ix.name for ix in e.indices)
        case Mul(a, b) | Add(a, b):
            return _names(a) | _names(b)
    return frozenset()


def join_support(e: Mul, space: frozenset, stats: Stats, independent=False) -> float:
    """The product's support over `space` estimated as a join of its factors
    (`join_estimate`): a sparse access's keys are its distinct keys, any other
    factor's its support over the keys' indices."""
    def keys_of(f):
        if isinstance(f, Access) and not f.tensor.format.is_dense:
            return lambda sub: stats.distinct(f, sub)
        return lambda sub: support(f, sub, stats, independent)
    return join_estimate([(_names(f) & space, keys_of(f)) for f in _factors(e)], space, stats)


def product_support(parts, space: frozenset, stats: Stats) -> float:
    """A product's support over `space` as `support` estimates it, its factors
    given as (index names within space, support, keys): at most its sparsest
    factor's, broadcast over space, and at most the join estimate
    (`join_estimate`). The optimizer's e-graph prices its product classes so."""
    sparsest = min(s * stats.full(space - names) for names, s, _ in parts)
    return min(sparsest, join_estimate([(names, keys) for names, _, keys in parts], space, stats))


def join_estimate(parts, space: frozenset, stats: Stats) -> float:
    """A product's support over `space` estimated as a join (see the module
    docstring), its factors given as (index names within space, keys), keys(K)
    the factor's distinct keys over K: the least, over the factors as drivers, of
    the driver's keys times each other factor's |g| / max(V(g, K), V(so far, K)),
    factors taken greedily by least multiplier; indices no factor holds are
    broadcast."""
    names = [frozenset(p[0]) for p in parts]
    n = len(parts)
    bit = {v: 1 << b for b, v in enumerate(set().union(*names))}   # index sets as bit masks
    masks = [sum(bit[v] for v in ns) for ns in names]
    subsets = dict(zip(masks, names))
    memo: dict = {}

    def held(sub: int) -> frozenset:             # the index names of mask `sub`
        got = subsets.get(sub)
        if got is None:
            got = subsets[sub] = frozenset(v for v, b in bit.items() if b & sub)
        return got

    def keys(k: int, sub: int) -> float:       # V(factor k, sub)
        hit = memo.get(sub * n + k)
        if hit is None:
            hit = memo[sub * n + k] = parts[k][1](held(sub))
        return hit

    mine = [keys(k, masks[k]) for k in range(n)]
    best = math.inf
    for d in range(n):
        est, covered, joined = mine[d], masks[d], [d]
        left = [k for k in range(n) if k != d]
        while left:
            m = k = None
            for c in left:          # the least multiplier, the first factor on a tie
                shared = masks[c] & covered
                if shared:
                    so_far = min(est, stats.full(held(shared)))
                    for j in joined:
                        if shared & masks[j] == shared:
                            so_far = min(so_far, keys(j, shared))
                    mc = mine[c] / max(keys(c, shared), so_far, 1.0)
                else:
                    mc = mine[c]
                if m is None or mc < m:
                    m, k = mc, c
            est, covered = est * m, covered | masks[k]
            joined.append(k)
            left.remove(k)
        best = min(best, est)
    return max(1.0, best) * stats.full(space - set().union(*names))


def operations(e: Expr) -> int:
    match e:
        case Mul(a, b) | Add(a, b):     # a·1 (combinators.mul folds it): no ⊗
            iso = type(e) is Mul and any(type(x) is Access and x.tensor.iso for x in (a, b))
            return (not iso) + operations(a) + operations(b)
        case Map(_, a, _):
            return 1 + operations(a)
    return 0


def fanout(e: Expr, seen: frozenset, v: str, stats: Stats) -> float | None:
    """Steps a loop over `v`, inside loops over `seen`, takes per point of `seen` to
    find e's points: a sparse level's mean fibre (its keys over seen∪{v} per key
    over seen), a dense level's or a dense tensor's |v|; a product steps the
    least of its factors (the others are searched), a sum all of its operands;
    None when e does not hold v (it does not bound the loop)."""
    match e:
        case Access():
            names = [ix.name for ix in e.indices]
            if v not in names:
                return None
            if holds_every(e, v):
                return stats.dim(v)         # a level holding every coordinate
            fmt = e.tensor.format
            mine = set(names) & seen
            parents = max(1.0, stats.distinct(e, mine))
            lev = fmt.mode_order.index(names.index(v))
            runs = stats.runs.get((e.tensor.name, lev), 0.0)   # entering each run is a step
            return (stats.distinct(e, mine | {v}) + runs) / parents
        case Mul(a, b):
            fa, fb = fanout(a, seen, v, stats), fanout(b, seen, v, stats)
            return fb if fa is None else fa if fb is None else min(fa, fb)
        case Add(a, b):
            fa, fb = fanout(a, seen, v, stats), fanout(b, seen, v, stats)
            if fa is None or fb is None:
                return stats.dim(v)
            return min(stats.dim(v), fa + fb)
    return None


def nest_cost(body: Expr, order, stats: Stats, independent=False,
              loose=frozenset(), out=None, outside=()) -> float:
    """Visits of every loop level plus the body's operations at the innermost level.
    A level visits at least its support, and at least its steps: the points of the
    level above times the body's fanout (a merge steps through entries that do not
    match, a dense level through every position). Under `tuning.access_order`, each
    innermost record also pays `tuning.stride_weight` per dense operand read against
    its storage order (`strided`), and an innermost loop that reads dense operands
    only, each along its last axis, costs `tuning.contiguous_weight` per record
    (it runs in SIMD lanes); a record of a dense operand whose outer axes the order
    visits out of storage order pays `tuning.contiguous_weight` again
    (`out_of_order`: its runs are not streamed in order), and so does a record
    writing the target (`out`) innermost along an axis not its last; `loose`
    names operands whose layout is still to be chosen (temporaries laid out for
    their reader: plan.layout), not counted. `out` (the target's axes, when known) adds one strided access when a contracted
    index loops outside free ones spanning more than `tuning.cache_cells` cells: each
    target cell is then left and come back to from memory (a scatter); `outside`
    names loops around the whole nest (a fused reader's prefix), counted there
    too. Under `tuning.access_order` too, a sparse operand walked inside a loop over an index
    it does not hold is walked again for every point of that loop (`rewalks`): when
    each walk covers more than `tuning.cache_cells` of its entries, every entry of
    every walk after the first pays `tuning.stride_weight` (read again from memory)."""
    key = (stats.origin_key, body, tuple(order), independent, loose, out, tuple(outside))
    hit = stats.nests.get(key)
    if hit is None:
        hit = stats.nests[key] = _nest_cost(body, order, stats, independent, loose, out,
                                            tuple(outside))
    return hit


def _fanout(body, seen, v, stats) -> float | None:
    """fanout, remembered per (origin, body, seen, v): loop orders share prefixes."""
    key = (stats.origin_key, body, seen, v)
    hit = stats.nests.get(key, key)
    if hit is key:
        hit = stats.nests[key] = fanout(body, seen, v, stats)
    return hit


def _nest_cost(body, order, stats, independent, loose, out, outside) -> float:
    total, seen, prev = 0.0, frozenset(), 1.0
    here = step = prev_outer = None
    for v in order:
        here = support(body, seen | {v}, stats, independent)
        step = _fanout(body, seen, v, stats)
        total += max(here, prev * (stats.dim(v) if step is None else step))
        seen, prev, prev_outer = seen | {v}, here, prev
    ops, n, simd = _innermost(body, order[-1] if order else None, loose, stats)
    if stats.tuning.access_order and order:
        if simd:                                         # a unit-stride loop: SIMD
            inner = max(here, prev_outer * (stats.dim(order[-1]) if step is None else step))
            total -= (1 - stats.tuning.contiguous_weight) * inner
            ops *= stats.tuning.contiguous_weight
        if out and order[-1] in out and out[-1] != order[-1]:
            ops += stats.tuning.contiguous_weight      # the target written against its order
        if out is not None and _revisits((*outside, *order), out, stats):
            n += 1                  # the target's cells are read back from memory
        ops += stats.tuning.stride_weight * n
        ops += stats.tuning.contiguous_weight * out_of_order(body, order, stats, loose)
        total += stats.tuning.stride_weight * rewalks(body, order, stats, independent)
    return total + prev * ops


def rewalks(body: Expr, order, stats: Stats, independent=False) -> float:
    """Entries of sparse operands read again from memory. For each sparse operand,
    take the outermost loop over an index it does not hold, outside one it holds:
    each point of the loops down to it walks the operand's entries that the body
    reaches there (the body's points over all loops down to the operand's last
    index, per point of those: a loop between walks it once a point, and projecting
    it away loses what joins the two). A walk of more than `tuning.cache_cells`
    entries reads every visit beyond the operand's own entries from memory again."""
    extra = 0.0
    key = ("sparse operands", body)
    held = stats.nests.get(key)
    if held is None:
        held = stats.nests[key] = [(acc, frozenset(ix.name for ix in acc.indices))
                                   for acc in accesses(body) if not acc.tensor.format.is_dense]
    for acc, mine in held:
        last = max((p for p, v in enumerate(order) if v in mine), default=0)
        for p, v in enumerate(order[:last]):
            if v in mine:
                continue
            outer = frozenset(order[:p + 1])
            visits = support(body, frozenset(order[:last + 1]), stats, independent)
            walk = visits / max(1.0, support(body, outer, stats, independent))
            if walk > stats.tuning.cache_cells:
                extra += max(0.0, visits - stats.tensor_nnz(acc))
            break
    return extra


def _innermost(body, inner, loose, stats) -> tuple:
    """(operations, strided reads, whether a loop over `inner` innermost runs in
    SIMD lanes: no strided read, dense operands only), remembered per body."""
    key = ("innermost", body, inner, loose)
    hit = stats.nests.get(key)
    if hit is None:
        n = 0 if inner is None else strided(body, inner, loose)
        hit = stats.nests[key] = (operations(body), n,
                                  inner is not None and n == 0 and dense_inner(body, inner))
    return hit


def _revisits(order, out, stats) -> bool:
    """Does a contracted index loop outside free ones spanning more than
    `tuning.cache_cells` target cells (each is left and come back to, from memory)?"""
    return any(v not in out and stats.full([w for w in order[k + 1:] if w in out])
               > stats.tuning.cache_cells for k, v in enumerate(order))


def plan_cost(plan, stats: Stats | None = None) -> float:
    """Work of a plan: every step's loop nest plus the size of every dense
    temporary. Under tuning.fused_temporaries, a chain (plan.fusion) is priced
    as it runs: a reader's nest, with its prefix fixed, once per point of the
    prefix in the driver's support (of the prefix's box for a whole reader),
    plus clearing the workspace it read there; a fused temporary costs no dense array."""
    stats = (stats or Stats()).with_origin(plan.origin)
    plan = fusion.widen(plan, stats)
    readers, fused = {}, set()
    if stats.tuning.fused_temporaries:
        for chain in fusion.chains(plan):
            driver = plan.steps[chain.first]
            for t, link in enumerate(chain.links):
                readers[chain.steps[t + 1]] = (driver, link)
                fused.add(link.temp)
    total = 0.0
    for n, step in enumerate(plan.steps):
        if n in readers:
            driver, link = readers[n]
            points = stats.full(link.prefix) if link.whole else support(
                driver.body, frozenset(link.prefix), stats)
            inner = nest_cost(fusion.read_workspace(step.body, link),
                              fusion.inner_order(step, link), stats, out=step.out,
                              outside=tuple(link.prefix))
            total += points * (inner + stats.full(link.rest))
        else:
            total += nest_cost(step.body, step.order, stats, out=step.out)
        if step.target in plan.temps and step.target not in fused:
            total += temp_work(stats.full(step.out), stats.tuning)
            if stats.tuning.access_order and scatters(step):      # plan.scatter
                total += stats.tuning.scatter_weight * support(step.body, frozenset(step.order),
                                                               stats)
    return total + sum(c.cost for c in getattr(plan, "conversions", ()))

