"""The converter's search (plan.convert.search) against an exhaustive one.

The search runs once per (origin, body, loop indices, written order,
conversions made) for every converter sharing a Stats memo, prices converted
copies under names of their (source, format), and skips a combination whose
conversions, sort and floor of its nest's work already reach the best so far.
None of that may change what is chosen: here the same costs, loop order and
conversions as pricing every order and combination, and the same plan text
from a cold and a warm memo.
"""
import itertools
import math

import pytest

from etchpy.expr.nodes import Index, TensorVar
from etchpy.expr.nodes import sum as ep_sum
from etchpy.expr.walk import accesses
from etchpy.imp import Names
from etchpy.plan import convert
from etchpy.plan.cost import Stats, nest_cost
from etchpy.plan.plan import make_plan

b, c, f, g, b1, f1 = (Index(n) for n in ("b", "c", "f", "g", "b1", "f1"))
T0 = TensorVar("T0", 3, "csf")
T1 = TensorVar("T1", 2, "csr")
T2 = TensorVar("T2", 2, "csc")
T3 = TensorVar("T3", 2, "coo")
BODIES = [                                  # Σ-free products of 3 and 4 loop indices
    (T0[b, c, b1] * T1[b, b1] * T2[f, c], ("b", "c", "f", "b1")),
    (T1[b, c] * T2[c, f] * T3[f, b], ("b", "c", "f")),
    (T1[c, b] * T2[f, c] * T3[g, f] * T1[g, b], ("b", "c", "f", "g")),
    (T0[f, c, f1] * T3[c, f] * T2[f1, b], ("f", "c", "f1", "b")),
]
SIZES = [Stats(dims={"b": 3, "c": 4, "f": 3, "g": 5}, nnz={"T0": 20, "T1": 5, "T2": 7, "T3": 9}),
         Stats(dims={"b": 900, "c": 40, "f": 3000, "g": 50},
               nnz={"T0": 5000, "T1": 800, "T2": 6000, "T3": 30000})]


def exhaustive(body, variables, stats, made=frozenset()):
    """Every candidate order and combination priced, nothing remembered or skipped."""
    best, declared = None, math.inf
    sparse = list(dict.fromkeys(a for a in accesses(body) if not a.tensor.format.is_dense))
    for order in convert.candidate_orders(body, variables, stats.tuning.orders_tried):
        bad = [a for a in sparse if not convert.walked_in_order(a, order)]
        choices = [convert.ways(a, order, stats, made) for a in bad]
        for combo in itertools.islice(itertools.product(*choices),
                                      stats.tuning.conversion_choices):
            new = convert.substitute(body, {a: w.name for a, (_, w) in zip(bad, combo)},
                                     {w.name: w for _, w in combo})
            cost = nest_cost(new, order, stats, independent=True) + sum(
                w.cost for key, w in dict(combo).items() if key not in made)
            if best is None or cost < best[0]:
                best = (cost, order, tuple((a, k) for a, (k, _) in zip(bad, combo)))
            if not combo:
                declared = min(declared, cost)
    return best, declared


@pytest.mark.parametrize("sizes", range(len(SIZES)))
@pytest.mark.parametrize("case", range(len(BODIES)))
def test_the_search_chooses_what_pricing_everything_chooses(case, sizes):
    body, variables = BODIES[case]
    given = SIZES[sizes]
    for made in (frozenset(), frozenset({("T2", convert.permuted(
            T2.format, T2[c, f], ("f", "c")))})):
        best, declared, _ = convert.search(body, variables, given.with_origin({}), None, made)
        want, want_declared = exhaustive(body, variables, given.with_origin({}), made)
        assert declared == want_declared
        assert (best[0], best[1], tuple((a, k) for a, k, _ in best[2])) == want


def test_a_warm_memo_plans_as_a_cold_one():
    """Planned twice with one Stats (the second converter reads the remembered
    search) and once with a fresh one: the same plan, its copies named alike."""
    e = ep_sum((b, c, f), T1[b, c] * T1[c, f] * T1[f, b] * T3[b, f])
    shared = Stats(dims={"b": 30, "c": 40, "f": 50}, nnz={"T1": 80, "T3": 90})
    first = make_plan(e, stats=shared).explain()
    assert "convert" in first
    assert make_plan(e, stats=shared).explain() == first
    fresh = Stats(dims=shared.dims, nnz=shared.nnz)
    assert make_plan(e, stats=fresh).explain() == first


def test_copies_are_named_in_the_order_the_search_met_them():
    body, variables = BODIES[2]
    stats = SIZES[0].with_origin({})
    one, two = convert.Converter(Names(), stats, True), convert.Converter(Names(), stats, True)
    got = [conv.cheapest(body, variables, stats) for conv in (one, two)]
    assert one.named == two.named and got[0][0][2] == got[1][0][2]
