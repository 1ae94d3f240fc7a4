"""The fusion plan of a lazy program: which optional intermediates to
materialise, chosen by cost (after SystemML's fusion planner).

Some nodes must be materialised whatever the plan (a result, a leaf, a map of
a sum read under a sum, work sampled on a sparse pattern, a product whose
dense factor is not finite); the others are fused into their consumers. The
*candidates* are the nodes where either choice is right:
  - shared work (a node read twice or more that does work): computed once and
    read by each user, or recomputed inside each user;
  - element-wise work on a map of a sum, read under a sum (`σ(X·w) - y` in
    `Xᵀ·(σ(X·w) - y)`): one step of its own, or fused into the reading kernel
    (its map then materialised alone);
  - a matrix product read by element-wise work (`X·w` in `σ(X·w)`): its own
    step (the work then a numpy expression on it), or fused into the work;
  - dense element-wise work holding a product, the dense operand of a product
    with a sparse input (`X·w − y` in `Xᵀ·(X·w − y)`): one step of its own (the
    outer product then a library product), or fused into the outer product's
    kernel.
A plan (a set of materialised candidates) is priced as the sum over its steps
(the results and the materialised nodes, each counted once however many read
it) of the cost model's work of the step's fused index expression
(etchpy.optimizer.cost over etchpy.plan.cost's stream model, with the real
sizes and nonzero counts), plus the tuning's lazy_step_cost per step (a kernel
call's or a numpy expression's fixed cost; a lone sparse product run by scipy
is priced at lazy_library_work of its work plus lazy_library_step, a sparse
input times a vector at lazy_matvec_library_work) and
plan.cost.temp_work per entry of each materialised intermediate (a result is written in
every plan). Up to lazy_exhaustive candidates every plan is priced; beyond, the
search is greedy: from the rules' plan, flip the one candidate that lowers the
price most, until no flip does. Ties keep the rules' plan.
"""
from __future__ import annotations

import itertools
import math

from .. import maps
from ..expr.nodes import Access, TensorVar
from ..optimizer.optimize import cost as expr_cost
from ..plan.cost import temp_work
from .nodes import Add, Const, LazyArray, Leaf, Map, MatMul, Mul, Pow, Sum
from .regions import library_input, sparse_input
from .sample import expensive, low_rank, recomputed
from .steps import contracts, does_work
from .translate import Translator

# what the candidates' element-wise readers and sparse operands may be
_ELEMENTWISE = (Add, Mul, Pow, Map)


def _size(n: LazyArray) -> int:
    return math.prod(n.shape) if n.shape else 1


def candidates(ev, outs) -> list:
    """The program's candidates (see the module doc), in a fixed order."""
    out_keys = {o.key for o in outs}
    found, seen = [], set()

    def walk(n: LazyArray, parent):
        if n.key in seen or isinstance(n, (Leaf, Const)):
            return
        seen.add(n.key)
        for a in n.args:
            walk(a, n)
        if n.key in out_keys or ev.support(n) is not None or recomputed(n, ev):
            return
        if isinstance(n, Map) and contracts(n.a):
            return
        shared = ev.uses[n.key] > 1 and does_work(n)
        lift = isinstance(parent, (MatMul, Sum)) and ev.lifts(n)
        product = (isinstance(n, MatMul) and isinstance(parent, _ELEMENTWISE)
                   and not low_rank(n))
        if shared or lift or product or _sparse_operand(n, parent):
            found.append(n)
    for o in outs:
        walk(o, None)
    return found


def _sparse_operand(n: LazyArray, parent) -> bool:
    """Is n dense element-wise work holding a product, read as the dense operand
    of a product with a 2-d input, sparse or dense (or its transpose)?"""
    return (isinstance(parent, MatMul) and isinstance(n, _ELEMENTWISE)
            and n is parent.b and library_input(parent.a) and contracts(n))


class Pricer:
    """Prices of plans over one program's evaluator (steps' costs memoised)."""

    def __init__(self, ev, outs, cands):
        self.ev, self.outs, self.cands = ev, outs, cands
        self.tuning = ev.opts.knobs
        self.memo: dict = {}

    def price(self, plan: frozenset) -> float:
        ev = self.ev
        ev.plan = {c.key: (c.key in plan) for c in self.cands}
        roots, done, total, t = list(self.outs), set(), 0.0, self.tuning
        outs = {o.key for o in self.outs}
        while roots:
            r = roots.pop()
            if r.key in done or isinstance(r, (Leaf, Const)):
                continue
            done.add(r.key)
            if self.ev.library_product(r):
                work = (t.lazy_matvec_library_work if sparse_input(r.a) and r.b.ndim == 1
                        else t.lazy_library_work)
                total += work * self.step(r, roots) + t.lazy_library_step
            else:
                kernel = not self.ev.numpy_region(r)
                total += self.step(r, roots, kernel) + t.lazy_step_cost
            if r.key not in outs:
                total += temp_work(_size(r), self.tuning)
        return total

    def step(self, root: LazyArray, roots: list, kernel: bool = False) -> float:
        """The cost of root's fused expression; the inputs it reads are pushed on
        roots (materialised ones are steps of their own). In a kernel each entry
        of a libm map (exp, log) costs lazy_libm_cost more: numpy's is SIMD."""
        ev, dims, nnz, names, libm = self.ev, {}, {}, {}, [0.0]

        def pre(n: LazyArray, ix):
            if (n is root or isinstance(n, Const) or not (
                    isinstance(n, Leaf) or ev.boundary(n, tr.depth) or _sampled(ev, n))):
                if kernel and isinstance(n, Map) and maps.MAPS[n.fn].c_libm:
                    libm[0] += _size(n) * self.tuning.lazy_libm_cost
                return None     # fused
            roots.append(n)
            key = (n.key, tuple(v is None for v in ix))
            name = names.setdefault(key, f"t{len(names)}")
            kept = tuple(v for v in ix if v is not None)
            for v, size in zip(kept, (m for m, v2 in zip(n.shape, ix) if v2 is not None)):
                dims[v.name] = size
            sparse = ev.support(n) is not None and len(kept) == 2
            if sparse:
                nnz[name] = min(int(ev.facts.sparse[k].nnz) for k, _ in ev.support(n))
            return Access(TensorVar(name, len(kept), "csr" if sparse else "dense"), kept)
        tr = Translator(pre, prefix="p")
        ix = tr.names(root)
        e = tr.expr(root, ix)
        key = (e, tuple(sorted(dims.items())), tuple(sorted(nnz.items())))
        if key not in self.memo:
            self.memo[key] = expr_cost(e, dims=dims, nnz=nnz)
        return self.memo[key] + libm[0]


def _sampled(ev, n: LazyArray) -> bool:
    """A product sampled on a sparse operand's pattern (priced as an input: the
    same in every plan)."""
    if not isinstance(n, Mul) or not ev.opts.optimize:
        return False
    sa, sb = ev.support(n.a), ev.support(n.b)
    dense = n.b if sa is not None else n.a
    return (sa is None) != (sb is None) and expensive(dense, ev)


def choose(ev, outs) -> dict:
    """The cheapest plan's choices ({candidate key: materialise?}), set as ev.plan;
    ev.report.fusion gets what explain shows: (candidates, rules' plan and price,
    chosen plan and price, plans priced, "exhaustive" or "greedy")."""
    cands = candidates(ev, outs)
    if not cands:
        ev.plan, ev.report.fusion = {}, None
        return ev.plan
    pricer = Pricer(ev, outs, cands)
    ev.plan = {}
    rules = frozenset(c.key for c in cands if ev.boundary(c, 1))
    priced = {rules: pricer.price(rules)}
    if len(cands) <= pricer.tuning.lazy_exhaustive:
        for bits in itertools.product((False, True), repeat=len(cands)):
            plan = frozenset(c.key for c, b in zip(cands, bits) if b)
            if plan not in priced:
                priced[plan] = pricer.price(plan)
        best = min(priced, key=lambda p: (priced[p], p != rules))
        how = "exhaustive"
    else:
        best, how = _greedy(pricer, cands, rules, priced), "greedy"
    ev.plan = {c.key: (c.key in best) for c in cands}
    ev.report.fusion = (cands, rules, priced[rules], best, priced[best], len(priced), how)
    return ev.plan


def _greedy(pricer, cands, start, priced) -> frozenset:
    best = start
    while True:
        flips = [best ^ {c.key} for c in cands]
        for p in flips:
            if p not in priced:
                priced[p] = pricer.price(p)
        nxt = min(flips, key=lambda p: priced[p])
        if priced[nxt] >= priced[best]:
            return best
        best = nxt
