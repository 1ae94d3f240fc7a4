"""plan.algorithms: per-level intersection ways and markers chosen from fibre
statistics; every forced choice (right or wrong for the data) stays correct."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy import api, imp, lower, streams
from etchpy.expr.walk import tensors
from etchpy.plan import algorithms as algos
from etchpy.plan import plan as planning
from etchpy.plan.convert import kernel_tensors
from etchpy.plan.cost import Stats
from etchpy.testing import assert_same, check_backends, problems, run_plan_imp
from etchpy.tuning import DEFAULT, Tuning

pytestmark = pytest.mark.usefixtures("shared_cache")

i, j, k = ep.indices("i j k")
A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
D = ep.tensor("D", 2)


def _decide(e, fibers, dims, nnz=None, order=None, tuning=DEFAULT):
    plan = planning.make_plan(e, order=order)
    return algos.choose(plan, Stats(dims, nnz or {}, tuning=tuning), fibers, tuning), plan


def _rows(name, fibres, longest, mean):
    """One measured row of a csr tensor's level 1."""
    return (name, 1, fibres, fibres, longest, mean)


def test_skewed_fibres_gallop():
    chosen, plan = _decide(A[i, j] * B[i, j], (_rows("A", 100, 5, 4.0),
                                                 _rows("B", 100, 500, 400.0)),
                           {"i": 100, "j": 1000})
    step = chosen.for_step(plan.steps[0])
    assert set(step.intersections(plan.steps[0].body).values()) == {"gallop"}
    assert "gallop: mean fibres 4 vs 400" in "\n".join(chosen.lines())


def test_balanced_fibres_merge():
    chosen, plan = _decide(A[i, j] * B[i, j], (_rows("A", 100, 7, 5.0),
                                                 _rows("B", 100, 8, 6.0)),
                           {"i": 100, "j": 1000})
    assert chosen.for_step(plan.steps[0]).intersections(plan.steps[0].body) == {"j": "merge"}
    assert "merge: mean fibres 5 and 6" in "\n".join(chosen.lines())


def test_short_fibres_keep_the_per_pair_choice_that_intersects_them_at_once():
    chosen, plan = _decide(A[i, j] * B[i, j], (_rows("A", 100, 3, 3.0),
                                                 _rows("B", 100, 4, 3.0)),
                           {"i": 100, "j": 1000})
    assert chosen.for_step(plan.steps[0]).intersections(plan.steps[0].body) == {"j": "per pair"}
    assert "short" in chosen.lines()[0]
    off, plan = _decide(A[i, j] * B[i, j], (_rows("A", 100, 3, 3.0), _rows("B", 100, 4, 3.0)),
                        {"i": 100, "j": 1000}, tuning=Tuning(short_intersect=False))
    assert off.for_step(plan.steps[0]).intersections(plan.steps[0].body) == {"j": "merge"}


def test_mixed_or_estimated_fibres_keep_the_per_pair_choice():
    mixed, plan = _decide(A[i, j] * B[i, j], (_rows("A", 100, 900, 5.0),
                                               _rows("B", 100, 8, 6.0)),
                          {"i": 100, "j": 1000})
    assert mixed.for_step(plan.steps[0]).intersections(plan.steps[0].body) == {"j": "per pair"}
    assert "mixed" in mixed.lines()[0]
    guessed, plan = _decide(A[i, j] * B[i, j], (), {})
    assert guessed.for_step(plan.steps[0]).intersections(plan.steps[0].body) == {
        "j": "per pair"}
    assert "estimated" in guessed.lines()[0]


def test_marker_when_it_pays_and_not_when_its_fill_dominates():
    e, order = ep.sum(j, A[i, j] * B[k, j]), ("i", "k", "j")
    pays, plan = _decide(e, (_rows("A", 1000, 50, 40.0), _rows("B", 1000, 50, 40.0)),
                         {"i": 1000, "j": 2000, "k": 1000}, {"A": 4e4, "B": 4e4}, order)
    assert pays.for_step(plan.steps[0]).marker("A", 1) is True
    loses, plan = _decide(e, (_rows("A", 10, 4, 4.0), _rows("B", 10, 400, 400.0)),
                          {"i": 10, "j": 10**7, "k": 10}, {"A": 40, "B": 4000}, order)
    step = loses.for_step(plan.steps[0])
    assert step.marker("A", 1) is False
    assert step.intersections(plan.steps[0].body) == {"j": "gallop"}    # then intersected
    assert any("no marker" in ln for ln in loses.lines())


P, L3, S = ep.tensor("P", 2, "csr"), ep.tensor("L", 3, "csf"), ep.tensor("S", 2, "csr")
n, t = ep.indices("n t")


def _keyed_case(tuning=DEFAULT, parents=25, dim=2000):
    """Σ P[i,n]·L[i,t,j]·S[n,j] in order (i, n, t, j): S's fibre of n is walked
    again for each t and entered again for each i, its few parents alternating
    (a supplier-by-nation level probed per order, TPC-H Q5)."""
    e = ep.sum((n, t, j), P[i, n] * L3[i, t, j] * S[n, j])
    fibers = (("P", 1, 20000, 20000, 1, 1.0), ("L", 1, 20000, 20000, 4, 4.0),
              ("L", 2, 80000, 80000, 1, 1.0), ("S", 1, parents, parents, 450, 400.0))
    return _decide(e, fibers, {"i": 20000, "n": parents, "t": 4, "j": dim},
                   {"P": 2e4, "L": 8e4, "S": 400.0 * parents}, ("i", "n", "t", "j"), tuning)


def test_a_keyed_marker_when_a_few_parents_are_entered_again_and_again():
    chosen, plan = _keyed_case()
    assert chosen.for_step(plan.steps[0]).marker("S", 1) == algos.KEYED
    assert any("keyed marker: keyed" in ln for ln in chosen.lines())
    off, plan = _keyed_case(Tuning(keyed_markers=False))
    assert off.for_step(plan.steps[0]).marker("S", 1) is False
    big, plan = _keyed_case(Tuning(keyed_marker_cells=25 * 2000 - 1))    # cells past the cap
    assert big.for_step(plan.steps[0]).marker("S", 1) is not algos.KEYED
    many, plan = _keyed_case(parents=20000)                 # a parent per entry: no gain
    assert many.for_step(plan.steps[0]).marker("S", 1) != algos.KEYED


def test_a_keyed_marker_compiled_equals_the_per_parent_one_and_none():
    rng = np.random.default_rng(5)
    rows, parents, dim = 300, 6, 40
    p = sp.csr_array((np.ones(rows), (np.arange(rows), rng.integers(0, parents, rows))),
                     shape=(rows, parents))
    coords = np.stack([np.repeat(np.arange(rows), 3), np.tile(np.arange(3), rows),
                       rng.integers(0, dim, 3 * rows)])
    lt = ep.Tensor.from_coords(coords, rng.random(3 * rows), (rows, 3, dim), "csf")
    s = sp.random_array((parents, dim), density=0.3, format="csr", random_state=4)
    e = ep.sum((n, t, j), P[i, n] * L3[i, t, j] * S[n, j])
    want = np.einsum("in,itj,nj->i", p.toarray(), lt.to_dense(), s.toarray())
    for tuning in (DEFAULT, Tuning(keyed_markers=False), Tuning(markers=False)):
        kern = ep.compile(e, order=["i", "n", "t", "j"], tuning=tuning)
        for _ in range(2):                           # planned again on measured fibres
            got = kern(P=p, L=lt, S=s)
        assert np.allclose(got, want)
        assert ("keyed marker: keyed" in kern.explain()) == (tuning is DEFAULT)


def test_a_marker_nothing_would_probe_is_not_made():
    chosen, plan = _decide(ep.sum(j, A[i, j] * D[k, j]), (), {}, order=("i", "k", "j"))
    assert chosen.for_step(plan.steps[0]).marker("A", 1) is False
    assert "never probed" in chosen.lines()[0]
    # a product with a dense side still locates: B's rows probe A's marker
    chosen, plan = _decide(ep.sum(j, A[i, j] * D[i, j] * B[k, j]), (), {},
                           order=("i", "k", "j"))
    assert chosen.for_step(plan.steps[0]).marker("A", 1) is True


def test_switch_off_decides_nothing():
    off = Tuning(algorithm_choice=False)
    chosen, plan = _decide(A[i, j] * B[i, j], (_rows("A", 100, 5, 4.0),
                                                 _rows("B", 100, 500, 400.0)),
                           {"i": 100, "j": 1000}, tuning=off)
    assert chosen == algos.NONE and chosen.for_step(plan.steps[0]) is None


def test_explain_shows_the_choice_made_from_the_inputs():
    a = sp.random(200, 2000, density=0.002, format="csr", random_state=1)
    b = sp.random(200, 2000, density=0.3, format="csr", random_state=2)
    kern = ep.compile(ep.sum((i, j), A[i, j] * B[i, j]))
    got = kern(A=a, B=b)
    assert np.isclose(float(got), a.multiply(b).sum())
    text = kern.explain()
    assert "algorithms (per intersected level" in text and "gallop: mean fibres" in text
    assert "(gallop: planned)" in text
    plain = ep.compile(ep.sum((i, j), A[i, j] * B[i, j]),
                       tuning=Tuning(algorithm_choice=False))
    assert np.isclose(float(plain(A=a, B=b)), float(got))
    assert "algorithms (per" not in plain.explain()


def _lowered_and_run(e, sr, inputs, chosen_of):
    """(the Imp program's output, ⟦stream⟧ summed) of e's plan with the decisions
    `chosen_of(plan)`, on the interpreters (streams checked step by step)."""
    plan = planning.make_plan(e)
    chosen = chosen_of(plan)
    out, plan, bound, sizes = run_plan_imp(e, inputs, sr, plan, algorithms=chosen)
    for step in plan.steps if not plan.temps else ():    # the streams, checked
        machine = imp.Machine(sr, api.imp_env(bound, sizes))
        low = streams.Lowerer(sr, {n: streams.array_names(n, t.format)
                                   for n, t in bound.items()}, imp.Names(),
                              algorithms=chosen.for_step(step))
        if step.target == "out":
            s = streams.lower_step(sr, low.bindings, step.body, step.order, step.bound,
                                   lowerer=low)
            streams.run_stream(s, machine, {}, check=True)
    return out


WAYS = [(w, m) for w in ("merge", "gallop", "per pair", None) for m in (True, False, None)] \
    + [(w, algos.KEYED) for w in ("merge", None)]


@pytest.mark.parametrize("way,marker", WAYS)
@settings(max_examples=15)
@given(p=problems())
def test_every_forced_choice_equals_the_reference(way, marker, p):
    sr = p.semiring
    want = ep.evaluate(p.expr, semiring=sr, backend="reference", **p.inputs)
    got = _lowered_and_run(p.expr, sr, p.inputs,
                           lambda plan: algos.forced(plan, way, marker))
    assert_same(got, want, sr, what=f"{way}, marker {marker}: {p.expr}")


HUGE = 10.0 ** 12
FORCING = {"merge": Tuning(fibre_spread=HUGE, gallop_ratio=10 ** 12),
           "gallop": Tuning(fibre_spread=HUGE, gallop_ratio=1),
           "per pair": Tuning(fibre_spread=0.0),
           "marker probes free": Tuning(marker_probe=0.0, fibre_spread=HUGE, gallop_ratio=1),
           "marker probes dear": Tuning(marker_probe=HUGE, fibre_spread=HUGE,
                                  gallop_ratio=10 ** 12)}


@settings(max_examples=12)
@given(p=problems(max_indices=3), name=st.sampled_from(sorted(FORCING)))
def test_compiled_c_under_each_forcing_tuning_equals_the_reference(p, name):
    """The C kernel plans from the inputs' measured fibres; these thresholds force
    one way whatever they are."""
    check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("c",),
                   tuning=FORCING[name])


@pytest.mark.parametrize("way", ["merge", "gallop", "per pair"])
def test_a_forced_way_is_the_one_lowered_and_is_right_on_skewed_rows(way):
    rng = np.random.default_rng(3)
    a = (rng.random((6, 40)) < 0.05) * rng.random((6, 40))
    b = (rng.random((6, 40)) < 0.9) * rng.random((6, 40))
    e = A[i, j] * B[i, j]
    got = _lowered_and_run(e, ep.semirings.real, {"A": a, "B": b},
                           lambda plan: algos.forced(plan, way, None))
    assert np.allclose(got, a * b)
    plan = planning.make_plan(e)
    prog = lower.lower_plan(plan, ep.semirings.real, kernel_tensors(plan, tensors(e)), None,
                            algorithms=algos.forced(plan, way, None))
    text = "\n".join(prog.streams_text)
    assert {"merge": "] (planned)", "gallop": "(gallop: planned)",
            "per pair": "leapfrog when one is"}[way] in text
