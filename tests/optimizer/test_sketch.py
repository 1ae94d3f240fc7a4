"""Sketch-guided optimization (optimizer.sketch: language, match, search): every term
extracted for a sketch satisfies it and equals the input on the reference backend;
the sketch language; errors; explain()."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import etchpy as ep
from etchpy.api import evaluate
from etchpy.expr.nodes import Add, Mul, Sum, free_indices
from etchpy.expr.walk import spine
from etchpy.optimizer.optimize import cost, optimize
from etchpy.optimizer.sketch import satisfies
from etchpy.testing import assert_same, problems

sk = ep.sketch
SMALL = dict(max_examples=25, deadline=None,
             suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
LIMITS = dict(seconds=30.0, iterations=8, nodes=3000)    # no time limit in effect: the
                                                         # searches are deterministic
# A guided search may spend an aimed, a demanded and a whole-graph iteration where
# unguided saturation spends one (proofs_notes/sketch.md, aimed growth): it never
# stops short of what saturation reaches, but may need more iterations to get there
# (dev profile seed 5039: a term saturation found in 6 iterations, guided in 12).
GUIDED = dict(LIMITS, iterations=3 * LIMITS["iterations"])

i, j, k, m = ep.indices("i j k m")
A, B, C = ep.tensor("A", 2), ep.tensor("B", 2, format="csr"), ep.tensor("C", 2)
x = ep.tensor("x", 1)
CHAIN = ep.sum((j, k, m), A[i, j] * B[j, k] * C[k, m] * x[m])


def subterms(e):
    """The subterms of e that are terms of the e-graph: nested sums are one node
    there (Σ_i Σ_j A is a Σ over {i, j}), so the inner Σ of a nest is not one."""
    yield e
    match e:
        case Mul() | Add():
            for p in spine(e, type(e)):
                yield from subterms(p)
        case Sum():
            body = e.body
            while isinstance(body, Sum):
                body = body.body
            yield from subterms(body)


def derived_sketches(e):
    """Sketches a term of e's class satisfies: e's own, with holes, contains(...)."""
    whole = sk.of(e)
    out = [whole, sk.contains(whole), sk.either(sk.tensor("nope"), whole)]
    out += [sk.contains(sk.of(s)) for s in subterms(e) if not isinstance(s, ep.expr.nodes.Lit)]
    if isinstance(e, Sum):
        out.append(sk.materialised(sk.hole()))
    parts = whole.parts()
    if len(parts) > 1 and isinstance(whole, type(sk.mul("a"))):
        out.append(type(whole)(whole.op, (sk.hole(),) + parts[1:]))   # a child as a hole
        out.append(type(whole)(whole.op, parts[:1]))                   # a subset
    return out


@settings(**SMALL)
@given(problems(max_indices=3, max_occurrences=3), st.data())
def test_extracted_term_satisfies_the_sketch_and_equals_the_input(p, data):
    target = optimize(p.expr, semiring=p.semiring, limits=LIMITS).expr
    s = data.draw(st.sampled_from(derived_sketches(target)))
    opt = optimize(p.expr, semiring=p.semiring, limits=GUIDED, sketch=s)
    assert satisfies(opt.expr, s), f"{opt.expr} does not satisfy {s}"
    out = free_indices(p.expr)
    assert set(free_indices(opt.expr)) == set(out)
    want = evaluate(p.expr, semiring=p.semiring, backend="reference", out_indices=out,
                    **p.inputs)
    got = evaluate(opt.expr, semiring=p.semiring, backend="reference", out_indices=out,
                   **{n: p.inputs[n] for n in ep.expr.walk.tensors(opt.expr)})
    assert_same(got, want, p.semiring, what=f"sketch {s}: {p.expr} -> {opt.expr}")


def test_a_guided_search_gets_more_iterations_than_saturation_took():
    """Σ_i A·(B[i,j] - 1)·C[i,j]: saturation reaches A·(-Σ_i C + Σ_i B·C) in 6
    iterations; guided by that term's own sketch, the search reaches it in more than
    8 (dev profile seed 5039), within GUIDED's."""
    a, b, c = ep.tensor("A", 0), ep.tensor("B", 2, format="csc"), ep.tensor("C", 2, format="coo")
    e = ep.sum(i, a * (b[i, j] + (-1.0)) * c[i, j])
    target = optimize(e, limits=LIMITS).expr
    opt = optimize(e, limits=GUIDED, sketch=sk.of(target))
    assert satisfies(opt.expr, sk.of(target)) and ep.equivalent(opt.expr, e)


def test_a_factorisation_sketch_gives_that_factorisation():
    s = sk.sum("j", sk.mul("A", sk.sum("k m", sk.mul("B", "?", "?"))))
    opt = optimize(CHAIN, sketch=s)
    assert satisfies(opt.expr, s) and not satisfies(CHAIN, s)
    assert ep.equivalent(opt.expr, CHAIN)


def test_sketches_run_in_turn_each_from_the_last_result():
    first = sk.contains(sk.sum("m", sk.mul("C", "x")))
    last = sk.sum("j", sk.mul("A", sk.materialised()))
    opt = optimize(CHAIN, sketches=[first, last])
    assert len(opt.searches) == 2 and satisfies(opt.expr, last)
    assert opt.stats["nodes with restarts"] == sum(x.nodes for x in opt.searches)
    # a restart's start term was a term of the last search's graph: counted once
    assert opt.stats["nodes"] == opt.searches[0].nodes + opt.searches[1].grown
    assert 0 < opt.searches[1].start_nodes < opt.searches[1].nodes


def test_extraction_is_restricted_to_the_sketch_not_the_cheapest_term():
    flat = sk.sum("j k m", sk.mul("A", "B", "C", "x"))     # the expensive written form
    opt = optimize(CHAIN, sketch=flat)
    assert satisfies(opt.expr, flat) and opt.cost_after > optimize(CHAIN).cost_after


def test_a_hole_is_satisfied_at_once_by_the_input():
    opt = optimize(CHAIN, sketch="?")
    assert opt.searches[0].iterations == 0 and satisfies(opt.expr, sk.of(CHAIN))
    assert cost(opt.expr) == cost(CHAIN)


def test_children_match_a_subset_of_the_operands():
    e = A[i, j] * B[i, j] * C[i, j]
    assert satisfies(e, sk.mul("C", "A")) and not satisfies(e, sk.mul("A", "A"))
    assert sk.mul(sk.mul("A", "B"), "C") == sk.mul("A", "B", "C")
    assert satisfies(ep.sum(j, ep.sum(k, A[i, j] * B[j, k])), sk.sum("j", sk.sum("k")))
    assert satisfies(ep.sum(j, ep.sum(k, A[i, j] * B[j, k])), sk.sum("j k"))


def test_an_unsatisfiable_sketch_names_the_part_that_matched():
    with pytest.raises(ep.SketchError, match=r"largest part some term matched: "
                                            r"sum\(m; mul\(C, x\)\).*not matched: "):
        optimize(CHAIN, sketch=sk.sum("j", sk.mul("x", sk.sum("m", sk.mul("C", "x")))))
    with pytest.raises(ep.SketchError, match="matches a subterm"):
        optimize(CHAIN, sketch=sk.sum("m", sk.mul("C", "x")))
    with pytest.raises(ep.SketchError, match="not a sketch"):
        optimize(CHAIN, sketch=3)
    with pytest.raises(ep.SketchError, match="not both"):
        optimize(CHAIN, sketch="?", sketches=["?"])


def test_explain_shows_each_search():
    opt = optimize(CHAIN, sketches=[sk.contains(sk.sum("m")), sk.sum("j", sk.mul("A", "?"))])
    text = opt.explain()
    assert "guided    2 sketch searches" in text
    assert "search 1  sketch contains(sum(m; ?)): satisfied after" in text
    assert "search 2  sketch sum(j; mul(A, ?))" in text and "e-nodes" in text


def test_a_lazy_program_is_optimized_whole_and_guided():
    import numpy as np
    from etchpy.lazy.optimize import leaf_inputs
    rng = np.random.default_rng(0)
    arrays = [rng.random(s) for s in ((6, 5), (5, 4), (4,))]
    a, b, v = map(ep.lazy, arrays)
    y = a @ b @ v
    opt = ep.optimize(y, sketch=sk.sum("?", sk.mul("X0", sk.materialised())))
    assert opt.dims and satisfies(opt.expr, sk.sum("?", sk.mul("X0", sk.materialised())))
    got = evaluate(opt.expr, backend="reference", **leaf_inputs(y))
    assert np.allclose(got, arrays[0] @ arrays[1] @ arrays[2])


def test_sum_push_to_splits_the_factors_into_components_in_one_step():
    """MTTKRP: Σ_{j,k,l,m} X·B·C·D·E wanted as Σ_{j,k} B·C·(Σ_{l,m} X·D·E): one
    sum-push-to (l and m moved, X, D, E one component), and the value is kept."""
    import numpy as np
    l2 = ep.Index("l")
    X = ep.tensor("X", 5)
    Bf, Cf, Df, Ef = (ep.tensor(n, 2) for n in ("Bf", "Cf", "Df", "Ef"))
    r = ep.Index("r")
    expr = ep.sum((j, k, l2, m), X[i, j, k, l2, m] * Bf[j, r] * Cf[k, r] * Df[l2, r]
                  * Ef[m, r])
    want = sk.sum("j k", sk.mul("Bf", "Cf", sk.sum("l m", sk.mul("X", "Df", "Ef"))))
    opt = optimize(expr, sketch=want)
    assert satisfies(opt.expr, want) and opt.rules_used == {"sum-push-to": 1}
    assert "sum-push-to" in opt.explain()
    rng = np.random.default_rng(1)
    ins = {"X": rng.random((2, 3, 2, 3, 2)), **{n: rng.random((d, 4)) for n, d in
                                                 (("Bf", 3), ("Cf", 2), ("Df", 3), ("Ef", 2))}}
    got = np.asarray(evaluate(opt.expr, backend="reference", **ins))
    ref = np.asarray(evaluate(expr, backend="reference", **ins))
    assert np.allclose(got, ref if got.shape == ref.shape else ref.T)


def test_sum_pull_to_flattens_nested_sums_in_one_step():
    """M ∘ ((A·B)·C) written nested, wanted as one Σ over j, k of M·A·B·C: one
    sum-pull-to, and the value is kept (reference backend)."""
    import numpy as np
    M = ep.tensor("M", 2)
    expr = M[i, m] * ep.sum(k, ep.sum(j, A[i, j] * B[j, k]) * C[k, m])
    want = sk.sum("j k", sk.mul("M", "A", "B", "C"))
    opt = optimize(expr, sketch=want)
    assert satisfies(opt.expr, want) and opt.rules_used.get("sum-pull-to") == 1
    rng = np.random.default_rng(2)
    ins = {"M": rng.random((2, 5)), "A": rng.random((2, 3)), "B": rng.random((3, 4)),
           "C": rng.random((4, 5))}
    got = np.asarray(evaluate(opt.expr, backend="reference", **ins))
    assert np.allclose(got, np.asarray(evaluate(expr, backend="reference", **ins)))


def test_demand_is_empty_once_satisfied_and_names_the_root_before():
    from etchpy.optimizer.egraph import EGraph
    from etchpy.optimizer.sketch.demand import demand
    from etchpy.optimizer.sketch.match import SketchMatch
    eg = EGraph(ep.semirings.real)
    root = eg.add_expr(CHAIN)
    want = sk.sum("j", sk.mul("A", "?"))
    assert eg.find(root) in demand(SketchMatch(eg, want), root)
    assert not demand(SketchMatch(eg, sk.of(CHAIN)), root)


def test_a_focus_that_offers_nothing_falls_back_to_the_whole_graph():
    from etchpy.optimizer.egraph import EGraph
    from etchpy.optimizer.rules import rules_for
    from etchpy.optimizer.saturate import saturate
    graphs = []
    for focus in (None, set):                 # set(): no class is ever focused
        eg = EGraph(ep.semirings.real)
        eg.add_expr(CHAIN)
        st = saturate(eg, rules_for(eg.sr), focus=focus)
        graphs.append((st.stop, eg.num_nodes(), len(eg.classes)))
        assert st.stop == "saturated"
    assert graphs[0][1:] == graphs[1][1:]



def test_aimed_growth_never_stops_short_of_saturation():
    """Matches left out of an aimed iteration are searched again: with a sketch no
    term satisfies, aimed growth saturates to the graph unguided growth gives."""
    from etchpy.optimizer.egraph import EGraph
    from etchpy.optimizer.rules import rules_for
    from etchpy.optimizer.saturate import saturate
    from etchpy.optimizer.sketch.demand import aimed, demand
    from etchpy.optimizer.sketch.match import SketchMatch
    from etchpy.tuning import Saturation
    never = sk.sum("m", sk.mul("C", "x"))         # a subterm, never the root
    sizes = []
    for guided in (False, True):
        eg = EGraph(ep.semirings.real)
        root = eg.add_expr(CHAIN)
        m_ = SketchMatch(eg, never)
        st = saturate(eg, rules_for(eg.sr), Saturation(patience=0),
                      focus=(lambda: demand(m_, root)) if guided else None,
                      aim=aimed if guided else None)
        sizes.append((st.stop, eg.num_nodes(), len(eg.classes)))
    assert sizes[0] == sizes[1] and sizes[0][0] == "saturated"


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(problems(max_indices=3, max_occurrences=3), st.data())
def test_the_incremental_matcher_agrees_with_one_from_scratch(p, data):
    """After every goal check of a saturation run, the tables kept up to date by
    SketchMatch.update() equal those of a SketchMatch built afresh."""
    from etchpy.optimizer.egraph import EGraph
    from etchpy.optimizer.rules import rules_for
    from etchpy.optimizer.saturate import saturate
    from etchpy.optimizer.sketch import walk
    from etchpy.optimizer.sketch.match import SketchMatch
    target = optimize(p.expr, semiring=p.semiring, limits=LIMITS).expr
    s = data.draw(st.sampled_from(derived_sketches(target) + [sk.contains("?")]))
    eg = EGraph(p.semiring)
    root = eg.add_expr(p.expr)
    kept, checks = SketchMatch(eg, s), []

    def compare() -> bool:
        kept.update()
        fresh = SketchMatch(eg, s)
        for t in walk(s):
            for c in eg.classes:
                assert kept.entry(c, t) == fresh.entry(c, t), (str(t), c)
        checks.append(kept.recomputed)
        return False
    saturate(eg, rules_for(eg.sr), EXHAUST, until=compare)
    assert checks and kept.satisfied(root) == SketchMatch(eg, s).satisfied(root)


EXHAUST = ep.tuning.Saturation(seconds=30.0, iterations=4, nodes=600)
