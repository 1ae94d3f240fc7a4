"""Exact extraction for a sketch (optimizer.sketch.exact): the least DAG cost over
the satisfying terms of the root class, against brute-force enumeration of every
term (acyclic, depth-bounded) on small e-graphs."""
import itertools
import math

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import etchpy as ep
from etchpy.optimizer.egraph import EGraph
from etchpy.optimizer.extract import build_node, extract_greedy, node_cost, to_expr
from etchpy.optimizer.sketch.search import shared_extract, term_dag_cost
from etchpy.optimizer.rules import rules_for
from etchpy.optimizer.saturate import saturate
from etchpy.optimizer.sketch import satisfies
from etchpy.optimizer.sketch.exact import exact_extract
from etchpy.optimizer.sketch.match import SketchMatch
from etchpy.plan.cost import Stats
from etchpy.testing import problems
from etchpy.tuning import Saturation

sk = ep.sketch
i, j, k, l = ep.indices("i j k l")
A, C = ep.tensor("A", 2), ep.tensor("C", 2)
B = ep.tensor("B", 2, format="csr")
x = ep.tensor("x", 1)
DIMS = {"i": 50, "j": 50, "k": 50, "l": 50}
THREE = ep.sum((j, k), A[i, j] * B[j, k] * x[k])
FOUR = ep.sum((j, k, l), A[i, j] * B[j, k] * C[k, l] * x[l])


class TooMany(Exception):
    pass


def terms(eg, c, depth, memo, cap=math.inf):
    """[(key, expr)]: every term of class c of height <= depth; key = (node, the
    operands' keys), so equal keys are equal subterms. TooMany past `cap` terms."""
    c = eg.find(c)
    if (c, depth) not in memo:
        out = []
        for n in (eg.classes[c] if depth else ()):
            if node_cost(eg, n) < math.inf:
                for kids in itertools.product(*(terms(eg, q, depth - 1, memo, cap)
                                                for q in n[2])):
                    out.append(((n, tuple(q for q, _ in kids)),
                                build_node(eg, n, [e for _, e in kids])))
                    if len(out) > cap:
                        raise TooMany
        memo[(c, depth)] = out
    return memo[(c, depth)]


def dag(eg, key, seen) -> float:
    if key in seen:
        return 0.0
    seen.add(key)
    return node_cost(eg, key[0]) + sum(dag(eg, q, seen) for q in key[1])


def brute(eg, root, sketch, depth):
    return min(((dag(eg, key, set()), e) for key, e in terms(eg, root, depth, {})
                if satisfies(e, sketch)), key=lambda r: r[0])


def grown(expr, nodes):
    eg = EGraph(ep.semirings.real, Stats(DIMS, {}))
    root = eg.add_expr(expr)
    saturate(eg, rules_for(eg.sr), Saturation(nodes=nodes, iterations=4, seconds=60.0,
                                              patience=0))
    return eg, root


CASES = [(THREE, 60, 6, s) for s in (sk.hole(), sk.contains(sk.sum("k", "?")), sk.contains("B"),
                                     sk.sum("j", sk.mul("A", "?")), sk.sum("j k", "?"))] + \
        [(FOUR, 40, 8, s) for s in (sk.contains(sk.sum("l", "?")),
                                    sk.sum("j", sk.mul("A", sk.materialised())),
                                    sk.contains(sk.mul("C", "x")),
                                    sk.either(sk.sum("j k l", "?"), sk.contains(sk.mul("A", "B"))))]


@pytest.mark.parametrize("expr, nodes, depth, sketch", CASES, ids=[str(c[3]) for c in CASES])
def test_exact_extraction_equals_brute_force_enumeration(expr, nodes, depth, sketch):
    eg, root = grown(expr, nodes)
    m = SketchMatch(eg, sketch)
    cost, term, exact, _ = exact_extract(m, root)
    assert exact and satisfies(term, sketch)
    want, _ = brute(eg, root, sketch, depth)
    assert cost == pytest.approx(want)


def test_exact_extraction_shares_a_subterm_tree_cost_would_repeat():
    """A class with a term cheaper alone (Σ_m P·Q) and one reusing the costly S the
    sketch needs anyway (U·S): the least DAG cost takes the second, as brute force;
    tree cost takes the first, and the DAG-cost heuristic the second."""
    j2, m2 = ep.indices("j2 m2")
    X, Y, P, Q, U, V = (ep.tensor(n, 2) for n in "XYPQUV")
    S = ep.sum(j2, X[i, j2] * Y[j2, k])
    eg = EGraph(ep.semirings.real, Stats({"i": 10, "k": 10, "j2": 1000, "m2": 400}))
    c1 = eg.add_expr(ep.sum(m2, P[i, m2] * Q[m2, k]))
    eg.union(c1, eg.add_expr(U[i, k] * S))       # an extractor test: equal by fiat
    eg.rebuild()
    root = eg.add(("add", None, (eg.find(c1), eg.add_expr(V[i, k] * S))))
    want = sk.add(sk.mul("V", "?"), "?")
    cost, term, exact, _ = exact_extract(SketchMatch(eg, want), root)
    assert exact and "U" in str(term) and satisfies(term, want)
    assert cost == pytest.approx(brute(eg, root, want, 6)[0])
    assert cost < dag(eg, *[(key, set()) for key, e in terms(eg, root, 6, {})
                            if "P" in str(e) and satisfies(e, want)][:1][0])
    m_ = SketchMatch(eg, want)
    tree, heuristic = m_.extract(root), shared_extract(eg, want, root, m_)
    assert "P" in str(tree) and "U" in str(heuristic) and satisfies(heuristic, want)
    assert term_dag_cost(eg, heuristic) < term_dag_cost(eg, tree)


def test_over_the_budget_the_search_falls_back_and_says_so():
    from etchpy.optimizer.sketch.search import sketch_extract
    eg, root = grown(FOUR, 40)
    m = SketchMatch(eg, sk.contains(sk.sum("l", "?")))
    cost, term, exact, branches = exact_extract(m, root, budget=2)
    assert not exact and branches == 3 and term is None
    term, how = sketch_extract(eg, m.sketch, root, m, budget=2)
    assert how.startswith("NOT exact") and satisfies(term, m.sketch)
    assert sketch_extract(eg, m.sketch, root, m)[1].startswith("exact")


def _sketches_of(e):
    whole = sk.of(e)
    out = [sk.hole(), whole, sk.contains(whole)]
    if len(whole.parts()) > 1 and isinstance(whole, type(sk.mul("a"))):
        out.append(type(whole)(whole.op, (sk.hole(),) + whole.parts()[1:]))
    return out


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(problems(max_indices=3, max_occurrences=3), st.data())
def test_exact_extraction_is_no_costlier_than_any_enumerated_term(p, data):
    """Random problems and sketches: the exact cost is at most the DAG cost of every
    satisfying term of height <= 6 (so equal to the least, when its own term is
    that short), and its term satisfies the sketch."""
    eg = EGraph(p.semiring, Stats({}, {}))
    root = eg.add_expr(p.expr)
    saturate(eg, rules_for(eg.sr), Saturation(nodes=40, iterations=3, seconds=60.0,
                                              patience=0))
    target = to_expr(eg, root, extract_greedy(eg))               # a term of the root
    sketch = data.draw(st.sampled_from(_sketches_of(target)))
    m = SketchMatch(eg, sketch)
    if not m.satisfied(root):
        return event("sketch not satisfied")
    cost, term, exact, _ = exact_extract(m, root)
    assert exact and satisfies(term, sketch)
    try:
        found = [dag(eg, key, set()) for key, e in terms(eg, root, 6, {}, cap=3_000)
                 if satisfies(e, sketch)]
    except TooMany:
        return event("too many terms to enumerate")
    event("compared with enumeration" if found else "no satisfying term of height <= 6")
    assert all(cost <= f * (1 + 1e-9) for f in found)
