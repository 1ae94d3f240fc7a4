"""A libm map of dense inputs made once as a temporary (plan/map_temps.py, Tuning
map_temps, map_temp_ratio). `Σ_j A[i,j]·exp(d[j])` plans `tmp_map[j] = exp(d[j])`
first; maps the step reaches no more often than they have cells, maps of sparse
inputs or of temporaries, and maps that are not libm calls stay in their step.
Kernels answer as numpy and the dense reference with the pass on, off and forced,
under every semiring that has the map, for dense and sparse outputs, index names
the generated code uses."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import ExpressionTypeError

row, pos, n = ep.indices("row pos n")
A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
M, d, x = ep.tensor("M", 2), ep.tensor("d", 1), ep.tensor("x", 1)
OFF = ep.Tuning(map_temps=False)


def _plan(e, tuning=None, **options):
    return ep.compile(e, tuning=tuning, **options).compiled.plan


def _targets(plan):
    return [s.target for s in plan.steps]


def test_a_map_along_the_inner_index_is_made_first():
    e = ep.sum(pos, A[row, pos] * ep.exp(d[pos]))
    plan = _plan(e)
    assert [t[:7] for t in _targets(plan)] == ["tmp_map", "out"]
    first = plan.steps[0]
    assert first.out == ("pos",) and first.bound == () and "exp(d[pos])" in str(first.body)
    assert "tmp_map" in str(plan.steps[1].body) and "exp" not in str(plan.steps[1].body)
    assert _targets(_plan(e, OFF)) == ["out"]


@pytest.mark.parametrize("e", [
    ep.sum(pos, M[row, pos] * ep.exp(M[row, pos])),    # reached once a cell
    ep.sum(pos, A[row, pos] * ep.exp(A[row, pos])),    # a map of a sparse input
    ep.sum(pos, A[row, pos] * ep.sqrt(d[pos])),        # not a libm call
])
def test_maps_that_do_not_pay_or_may_not_move_stay(e):
    assert _targets(_plan(e)) == ["out"]


def test_of_nested_maps_the_inner_one_is_made():
    """exp(2d + log d): the log is made first; the exp, which holds a map, stays."""
    plan = _plan(ep.sum(pos, A[row, pos] * ep.exp(d[pos] * 2.0 + ep.log(d[pos]))))
    assert [t[:7] for t in _targets(plan)] == ["tmp_map", "out"]
    assert "log" in str(plan.steps[0].body) and "exp" in str(plan.steps[1].body)


def _matrix(rows, cols, seed):
    m = sp.random_array((rows, cols), density=0.3, format="csr", random_state=seed)
    m = sp.csr_array(m.toarray() * (np.arange(rows) % 4 != 2)[:, None])    # empty rows
    m.data = np.arange(m.nnz) % 5 + 1.0
    return m


CASES = {   # name: (expression, numpy's answer from (A, B, M, d, x), output)
    "Aexp(d)": (ep.sum(pos, A[row, pos] * ep.exp(d[pos])),
                lambda a, b, m, dv, xv: a @ np.exp(dv), "dense"),
    "Aᵀlog(d)": (ep.sum(row, A[row, pos] * ep.log(d[row])),
                 lambda a, b, m, dv, xv: a.T @ np.log(dv), "dense"),
    "M∘exp(d[pos])": (M[row, pos] * ep.exp(d[pos]),
                      lambda a, b, m, dv, xv: m * np.exp(dv)[None, :], "dense"),
    "A∘exp(x[pos]) csr": (A[row, pos] * ep.exp(x[pos]),
                          lambda a, b, m, dv, xv: (a.multiply(np.exp(xv)[None, :])).toarray(),
                          "csr"),
    "A + exp(x[pos])": (A[row, pos] + ep.exp(x[pos]),
                        lambda a, b, m, dv, xv: a.toarray() + np.exp(xv)[None, :], "dense"),
    "Σ A·B·exp(d)": (ep.sum(pos, A[row, pos] * B[row, pos] * ep.exp(d[pos] * 0.5)),
                     lambda a, b, m, dv, xv: a.multiply(b) @ np.exp(dv * 0.5), "dense"),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("tuning", [None, OFF, "noopt", "force"])
@pytest.mark.parametrize("shape", [(9, 7), (0, 3), (4, 0), (1, 1)])
def test_kernels_answer_as_numpy(name, tuning, shape):
    e, want, output = CASES[name]
    a, b = _matrix(*shape, 1), _matrix(*shape, 2)
    rng = np.random.default_rng(3)
    m, dv, xv = rng.random(shape), rng.random(shape[1]) + 0.5, rng.random(shape[1]) - 0.5
    if "log(d[row])" in str(e):
        dv = rng.random(shape[0]) + 0.5
    given = {k: v for k, v in dict(A=a, B=b, M=m, d=dv, x=xv).items() if f"{k}[" in str(e)}
    got = ep.evaluate(e, output=output, tuning=tuning, **given)
    got = got.toarray() if hasattr(got, "toarray") else got
    np.testing.assert_allclose(got, want(a, b, m, dv, xv), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("name", [s.name for s in ep.semirings.all()])
def test_every_semiring_with_the_map_answers_as_the_reference(name):
    """The numeric float and complex semirings compute it; the others refuse exp by
    name."""
    sr = ep.semirings.get(name)
    e = ep.sum(pos, A[row, pos] * ep.exp(d[pos]))
    numeric = sr.add.render("a", "b") == "a + b" and sr.mul.render("a", "b") == "a * b"
    if not (numeric and np.dtype(sr.dtype).kind in "fc"):   # no exp: refused by name
        with pytest.raises((ExpressionTypeError, ep.SemiringError), match="exp"):
            ep.compile(e, semiring=sr)
        return
    kern = ep.compile(e, semiring=sr)
    a, dv = _matrix(6, 5, 4), np.arange(5) % 3 * 0.5
    assert _targets(kern.compiled.plan)[0].startswith("tmp_map")
    want = ep.evaluate(e, semiring=sr, backend="reference", A=a, d=dv)
    for tuning in (None, OFF):
        got = ep.evaluate(e, semiring=sr, tuning=tuning, A=a, d=dv)
        np.testing.assert_allclose(np.asarray(got, dtype=complex),
                                   np.asarray(want, dtype=complex), rtol=1e-6)
