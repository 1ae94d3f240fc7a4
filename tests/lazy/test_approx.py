"""Approximations under an error budget (etchpy.lazy.approx): the measured error
never exceeds the budget on the samples, approximations stay out of exact
optimisation and ep.equivalent, off by default is exact, bad options are named."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import InputError
from etchpy.lazy.approx_search import Problem, genetic, greedy
from etchpy.lazy.approx_table import candidates, svd_ranks


def _net(seed=0, m=40, n=24, rank=4, noise=0.05):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n)) \
        + noise * rng.standard_normal((m, n))
    b = rng.standard_normal(n)
    X, Xs, Xh = rng.random((30, m)), rng.random((20, m)), rng.random((10, m))
    return W, b, X, Xs, Xh


@pytest.fixture(scope="module")
def program():
    W, b, X, Xs, Xh = _net()
    x = ep.lazy(X)
    y = ep.maximum(x @ ep.lazy(W, constant=True) + ep.lazy(b, constant=True), 0)
    return W, b, X, Xs, Xh, x, y


def test_off_by_default_is_exactly_the_exact_result(program):
    W, b, X, _, _, x, y = program
    plain = ep.maximum(ep.lazy(X) @ ep.lazy(W) + ep.lazy(b), 0)
    assert np.array_equal(y.compute(), plain.compute())
    assert "APPROX" not in y.explain()


@pytest.mark.parametrize("extractor", ["genetic", "greedy"])
@pytest.mark.parametrize("budget", [0.0, 0.02, 0.3])
def test_measured_error_never_exceeds_the_budget(program, extractor, budget):
    W, b, X, Xs, Xh, x, y = program
    a = ep.approximate(y, max_rel_error=budget, samples={x: Xs}, heldout={x: Xh},
                       extractor=extractor, time_limit=5)
    assert a.measured_error <= budget
    assert a.compiled_error <= budget or (a.genome == (0, 0) and a.compiled_error < 1e-12)
    assert a.heldout_error is not None and a.cost <= a.exact_cost
    exact = np.maximum(Xs @ W + b, 0)
    got = ep.approximate(y, max_rel_error=budget, samples={x: Xs}, extractor=extractor,
                         time_limit=5)
    assert got.genome == a.genome                    # seeded: the same choice again
    if budget == 0.3:
        assert a.cost < a.exact_cost                 # rank 4 + noise: an SVD pays off
    approx_on_samples = np.maximum(Xs @ _replacement(a) + b, 0)
    err = np.linalg.norm(approx_on_samples - exact) / np.linalg.norm(exact)
    assert err <= budget + 1e-12


def _replacement(a):
    """The dense value the chosen candidate of X1 (W) stands for."""
    cand = dict(a.choices)["X1"]
    if cand.kind == "svd":
        u, r = cand.node.args
        return u.value @ r.value
    return cand.node.value.toarray() if cand.kind == "prune" else cand.node.value


def test_result_says_it_is_approximated(program):
    _, _, X, Xs, _, x, y = program
    text = ep.explain(y, max_rel_error=0.3, samples={x: Xs}, extractor="greedy")
    assert text.startswith("APPROXIMATED") and "truncated SVD" in text
    out = ep.compute(y, max_rel_error=0.3, samples={x: Xs}, extractor="greedy")
    assert out.shape == (X.shape[0], 24)


def test_approximations_never_enter_exact_optimisation(program):
    W, b, X, Xs, _, x, y = program
    plain = ep.maximum(ep.lazy(X) @ ep.lazy(W) + ep.lazy(b), 0)
    assert ep.equivalent(y, plain)                   # constant changes nothing exact
    a = ep.approximate(y, max_rel_error=0.3, samples={x: Xs}, extractor="greedy")
    assert dict(a.choices)["X1"].kind != "exact"
    assert not ep.equivalent(a.arrays[0], y)        # an approximation is not equal
    # the exact program is untouched: same text, same leaves, exact explain
    assert repr(y) == repr(plain) and "APPROX" not in ep.explain(y)
    assert ep.equivalent(y, plain)


def test_an_approximation_runs_again_on_new_inputs_without_searching(program):
    """a.compute({x: new}) runs the chosen approximations on a new batch (any number
    of rows): the same as approximating a program written on that batch, whose
    seeded search picks the same choices; unknown, constant or mis-shaped operands
    are refused by name."""
    W, b, X, Xs, Xh, x, y = program
    a = ep.approximate(y, max_rel_error=0.3, samples={x: Xs}, extractor="greedy")
    assert dict(a.choices)["X1"].kind == "svd"
    np.testing.assert_allclose(a.compute({x: X}), a.compute())
    X_new = np.random.default_rng(5).random((7, X.shape[1]))
    got = a.compute({"X0": X_new})
    y_new = ep.maximum(ep.lazy(X_new) @ ep.lazy(W, constant=True)
                       + ep.lazy(b, constant=True), 0)
    again = ep.approximate(y_new, max_rel_error=0.3, samples={"X0": Xs}, extractor="greedy")
    assert again.genome == a.genome
    np.testing.assert_allclose(got, again.compute(), rtol=1e-10, atol=1e-12)
    exact = np.maximum(X_new @ W + b, 0)
    assert got.shape == exact.shape
    assert not np.allclose(got, exact)               # approximated, not exact
    w = [v for v in y.args[0].args[0].args if v.constant][0]
    for bad, match in [({w: W}, "X1 .* constant operand"), ({"X9": X_new}, "no operand"),
                       ({x: X_new[:, :3]}, "inputs: the sample for X0 has shape")]:
        with pytest.raises(InputError, match=match):
            a.compute(bad)


def test_bad_options_name_the_input(program):
    _, _, _, Xs, _, x, y = program
    with pytest.raises(InputError, match="max_rel_error"):
        ep.compute(y, max_rel_error=-0.1, samples={x: Xs})
    with pytest.raises(InputError, match="max_rel_error"):
        ep.approximate(y, max_rel_error=float("nan"), samples={x: Xs})
    with pytest.raises(InputError, match="needs samples"):
        ep.compute(y, max_rel_error=0.1)
    with pytest.raises(InputError, match="no sample for X0"):
        ep.approximate(y, max_rel_error=0.1, samples={})
    with pytest.raises(InputError, match="without max_rel_error"):
        ep.compute(y, samples={x: Xs})
    with pytest.raises(InputError, match="unknown option 'budget'"):
        ep.compute(y, budget=0.1)
    with pytest.raises(InputError, match="sample for X0 has shape"):
        ep.approximate(y, max_rel_error=0.1, samples={x: Xs[:, :3]})
    with pytest.raises(InputError, match="extractor"):
        ep.approximate(y, max_rel_error=0.1, samples={x: Xs}, extractor="milp")
    w = [a for a in y.args[0].args[0].args if a.constant][0]
    with pytest.raises(InputError, match="X1 .* constant operand"):
        ep.approximate(y, max_rel_error=0.1, samples={x: Xs, w: Xs})
    with pytest.raises(InputError, match="no operand named 'X7'"):
        ep.approximate(y, max_rel_error=0.1, samples={"X7": Xs})
    with pytest.raises(InputError, match="not an operand of this program"):
        ep.approximate(y, max_rel_error=0.1, samples={x: Xs, ep.lazy(Xs): Xs})
    by_name = ep.approximate(y, max_rel_error=0.3, samples={"X0": Xs}, extractor="greedy")
    assert by_name.measured_error <= 0.3


def test_side_table_rows():
    ranks = svd_ranks(784, 512)          # 512 - 9j (step ⌊log2 512⌋ = 9), cheaper than W
    assert ranks[:2] == [305, 296] and all((512 - k) % 9 == 0 for k in ranks)
    assert all(k * (784 + 512) < 784 * 512 for k in svd_ranks(784, 512))
    W = np.random.default_rng(1).standard_normal((60, 50)) * 1e-3
    W[::6, ::5] = 5.0                    # 100 large entries of 3000: pruning pays
    row = candidates(ep.lazy(W, constant=True))
    assert any(c.kind == "prune" for c in row)
    assert row[0].kind == "exact" and row[0].error == 0
    for c in row[1:]:
        if c.kind == "prune":
            kept = c.node.value.toarray()
            assert (np.abs(kept[kept != 0]) >= c.param * np.abs(W).max()).all()
            assert np.isclose(c.error, np.linalg.norm(W - kept) / np.linalg.norm(W))
    assert len(candidates(ep.lazy(np.ones(5), constant=True))) == 1   # vectors: exact only


def test_pruning_runs_on_the_sparse_kernels():
    rng = np.random.default_rng(2)
    W = 1e-4 * rng.standard_normal((40, 30))
    W[rng.integers(0, 40, 30), rng.integers(0, 30, 30)] = 1.0
    x = ep.lazy(rng.random((16, 40)))
    y = x @ ep.lazy(W, constant=True)
    a = ep.approximate(y, max_rel_error=0.01, samples={x: rng.random((8, 40))})
    chosen = dict(a.choices)["X1"]
    assert chosen.kind == "prune" and a.compiled_error <= 0.01
    assert "csr" in a.explain() and np.allclose(a.compute(), x.value @ W, atol=1e-2)


class _C:
    def __init__(self, error):
        self.error = error


@settings(max_examples=20)
@given(st.lists(st.lists(st.tuples(st.floats(0, 1), st.floats(1, 100)), min_size=1,
                         max_size=6), min_size=1, max_size=4),
       st.floats(0, 1), st.integers(0, 3))
def test_extractors_return_feasible_choices(table, budget, seed):
    """Any cost/error table (gene 0 exact: error 0): both extractors' choices are
    within the budget, errors adding up across genes."""
    genes = [[(0.0, 100.0)] + row for row in table]

    def score(genome):
        return (sum(genes[g][v][1] for g, v in enumerate(genome)),
                sum(genes[g][v][0] for g, v in enumerate(genome)))
    rows = [[_C(e) for e, _ in row] for row in genes]
    for extract in (greedy, lambda p: genetic(p, seed=seed)):
        problem = Problem(rows, score, budget, time_limit=5.0)
        genome = extract(problem)
        assert score(genome)[1] <= budget
        assert score(genome)[0] <= score(problem.exact())[0]


_SHAPES = {"x @ w": lambda m, n: (m, n), "x @ w.T": lambda m, n: (n, m),
           "(w @ x.T).T": lambda m, n: (n, m)}


@settings(max_examples=5)
@given(st.sampled_from(sorted(_SHAPES)), st.integers(6, 20), st.integers(6, 20),
       st.integers(1, 4), st.floats(0, 0.5), st.sampled_from(["genetic", "greedy"]),
       st.integers(0, 2 ** 16))
def test_budget_holds_for_products_in_any_orientation(form, m, n, rank, budget, extractor,
                                                      seed):
    """Random nearly-low-rank constants used as x @ w, x @ w.T or (w @ x.T).T: the
    error measured on the samples (reference and compiled) stays within the
    budget, and so does the approximated program's value recomputed here."""
    rng = np.random.default_rng(seed)
    shape = _SHAPES[form](m, n)
    W = rng.standard_normal((shape[0], rank)) @ rng.standard_normal((rank, shape[1]))
    W += 0.02 * rng.standard_normal(shape)
    X, Xs = rng.random((5, m)), rng.random((7, m))
    x, w = ep.lazy(X), ep.lazy(W, constant=True)
    y = {"x @ w": lambda: x @ w, "x @ w.T": lambda: x @ w.T,
         "(w @ x.T).T": lambda: (w @ x.T).T}[form]()
    a = ep.approximate(y, max_rel_error=budget, samples={x: Xs}, extractor=extractor)
    assert a.measured_error <= budget
    assert a.compiled_error <= budget or (a.genome == (0,) and a.compiled_error < 1e-12)
    (_, cand), = a.choices
    Wt = {"exact": lambda: W, "prune": lambda: cand.node.value.toarray(),
          "svd": lambda: cand.node.args[0].value @ cand.node.args[1].value}[cand.kind]()
    run = {"x @ w": lambda M: Xs @ M, "x @ w.T": lambda M: Xs @ M.T,
           "(w @ x.T).T": lambda M: (M @ Xs.T).T}[form]
    exact = run(W)
    assert np.linalg.norm(run(Wt) - exact) <= budget * np.linalg.norm(exact) + 1e-9
