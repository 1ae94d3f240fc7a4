"""Scatters priced (plan.scatter, Tuning.scatter_weight): of two nestings of equal
work, the one that reads a sparse input in its stored order and sums into a
register is planned, not the one that adds into a dense temporary at the
positions the walk finds; the weight at 0 prices them alike again."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.plan.scatter import scatters, walks_sparse

pytestmark = pytest.mark.usefixtures("shared_cache")

i, j, k = ep.indices("i j k")


def _scattering(kern):
    plan = kern.plan
    return [s.target for s in plan.steps if s.target in plan.temps and scatters(s)]


def _inputs(fmt, n=400, per_row=40):
    rng = np.random.default_rng(3)
    A = sp.random(n, n, density=per_row / n, format=fmt, random_state=4)
    return A, rng.random(n), rng.random(n)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("text", ["s = x[i] * A[i, j] * y[j]", "s = y[j] * A[i, j] * x[i]"])
def test_a_bilinear_form_reads_the_stored_order_without_a_scatter(fmt, text):
    A, x, y = _inputs(fmt)
    kern = ep.compile(text, formats={"A": fmt})
    assert np.isclose(kern(A=A, x=x, y=y), x @ (A @ y))
    assert _scattering(kern) == []


def test_the_weight_at_zero_leaves_the_tie_to_the_written_scatter():
    """The string front end nests Σ_i first (tmp[j] ⊕= x[i]·A[i,j]): a scatter
    over a csr A, kept when scatters are not priced."""
    A, x, y = _inputs("csr")
    kern = ep.compile("s = x[i] * A[i, j] * y[j]", formats={"A": "csr"},
                      tuning={"scatter_weight": 0.0})
    assert np.isclose(kern(A=A, x=x, y=y), x @ (A @ y))
    assert _scattering(kern) == ["tmp"]


def test_walks_sparse_follows_how_the_loop_finds_its_points():
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    x, D = ep.tensor("x", 1), ep.tensor("D", 2)
    assert walks_sparse(A[i, j], "j") and not walks_sparse(A[i, j], "i")   # i: located
    assert walks_sparse(A[i, j] * x[j], "j")                   # x looked up
    assert walks_sparse(x[i], "i") is False and walks_sparse(x[i], "j") is None
    assert walks_sparse(A[i, j] + B[i, j], "j")                # a union of two walks
    assert not walks_sparse(A[i, j] + D[i, j], "j")            # D holds every position
    assert walks_sparse(A[i, k] * D[k, j], "j") is False       # a dense inner loop


def test_explain_shows_the_expression_of_the_tie_compiled():
    """The optimizer's own term sums columns first; the plan model picks the
    rows-first alternative of its tie (pipeline._cheapest_rewrite), and explain()'s
    expression line is that one, not the optimizer's chosen form."""
    A, x, y = _inputs("csr")
    kern = ep.compile("s = x[i] * A[i, j] * y[j]", formats={"A": "csr"})
    assert np.isclose(kern(A=A, x=x, y=y), x @ (A @ y))
    line = next(ln.strip() for ln in kern.explain().splitlines() if "expression:" in ln)
    assert line == "expression: Σ_i x[i]·(Σ_j A[i,j]·y[j])"
    assert "optimized" in kern.explain() and "Σ_j y[j]·(Σ_i A[i,j]·x[i])" in kern.explain()
    assert kern.c_source.splitlines()[2].strip() == "* " + line


def test_a_row_written_at_each_walked_record_is_a_scatter():
    """scatters: the walked loop's index and every index inside it are the
    target's (a row a record), not when a sum runs inside the walk."""
    from etchpy.plan.plan import make_plan
    b, c = ep.indices("b c")
    X, V, W = ep.tensor("X", 3, "csf"), ep.tensor("V", 2), ep.tensor("W", 2)
    (step,) = make_plan(ep.sum(j, V[j, b] * X[i, j, k]), (i, k, b)).steps
    assert step.order == ("i", "j", "k", "b") and scatters(step)
    (step,) = make_plan(ep.sum(k, W[k, c] * X[i, j, k]), (i, j, c)).steps
    assert step.order[-2:] == ("k", "c") and not scatters(step)
