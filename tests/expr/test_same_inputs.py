"""One input's factors of a product joined when the kernel is made (expr.same_inputs,
under Tuning.one_walk): `A[i,j]·[A[i,j] > t]` is one value predicate over A's
structure, its column read once; factors of other inputs, at other indices or
over a dense input stay as written; kernels of rewritten requests equal the
reference on every input kind and semiring, and with the knob off the request
is the expression as written."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.expr.compare import CompareVar
from etchpy.expr.same_inputs import same_inputs
from etchpy.expr.walk import accesses

pytestmark = pytest.mark.usefixtures("shared_cache")
# names the generated code uses among them
n, row, pos, out = ep.indices("n row pos out")


def _predicates(e):
    return [a.tensor for a in accesses(e) if isinstance(a.tensor, CompareVar)
            and a.tensor.kind == "value"]


def test_one_inputs_product_is_one_predicate_reading_its_column_once():
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    e = same_inputs(ep.sum(pos, A[row, pos] * (A[row, pos] > "t") * x[pos]))
    (pred,) = _predicates(e)
    assert [c[0] for c in pred.columns] == ["A"] and pred.weights == (0,)
    assert sorted(a.tensor.name for a in accesses(e) if a.tensor is not pred) == ["x"]
    two = same_inputs(A[row, pos] * (A[row, pos] > "t") * (A[row, pos] < "u"))
    (pred,) = _predicates(two)
    assert len(pred.columns) == 1 and pred.weights == (0,) and pred.params == ("t", "u")


@pytest.mark.parametrize("case", ["other input", "other indices", "dense", "a power"])
def test_factors_apart_stay_as_written(case):
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    D = ep.tensor("D", 2, "dense")
    e = {"other input": A[row, pos] * (B[row, pos] > "t"),
         "other indices": A[row, pos] * (A[pos, row] > "t"),
         "dense": D[row, pos] * (D[row, pos] > "t"),
         "a power": A[row, pos] * A[row, pos]}[case]
    assert same_inputs(e) == e


def _inputs(kind, rng, m):
    M = sp.random_array((m, m + 2), density=0.4, format="csr", random_state=rng,
                        data_sampler=lambda size: rng.standard_normal(size))
    return {"csr": M.tocsr(), "csc": M.tocsc(), "coo": M.tocoo(),
            "tensor": ep.Tensor.from_scipy(M.tocsr(), "csr")}[kind], M


@pytest.mark.parametrize("sr", ["real", "min_plus"])
@pytest.mark.parametrize("kind", ["csr", "csc", "coo", "tensor"])
def test_rewritten_kernels_equal_the_reference(kind, sr):
    fmt = "csr" if kind == "tensor" else kind
    A, x = ep.tensor("A", 2, fmt), ep.tensor("x", 1)
    rng = np.random.default_rng(3)
    exprs = [ep.sum(pos, A[n, pos] * (A[n, pos] > "t") * x[pos]),
             ep.sum(n, ep.sum(pos, (A[n, pos] <= "t") * A[n, pos])),
             A[out, pos] * (A[out, pos] >= "t") * (A[out, pos] < 0.5)]
    for e in exprs:
        on = ep.compile(e, semiring=sr, output="dense")
        off = ep.compile(e, semiring=sr, output="dense", tuning={"one_walk": False})
        assert on.request.expr != e and off.request.expr == e
        for m, t in ((7, 0.0), (9, -0.3), (7, 0.2)):
            a, M = _inputs(kind, rng, m)
            inputs = {"A": a, "x": rng.random(m + 2), "t": t}
            inputs = {k: v for k, v in inputs.items() if k in on._users}
            want = ep.evaluate(e, backend="reference", semiring=sr, **inputs)
            np.testing.assert_allclose(on(**inputs), want, rtol=1e-12)
            np.testing.assert_allclose(off(**inputs), want, rtol=1e-12)
