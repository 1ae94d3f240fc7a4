"""One input's factors of a product joined when the kernel is made (expr.same_inputs,
under Tuning.one_walk): `A[i,j]·[A[i,j] > t]` is one value predicate over A's
structure, its column read once; factors of other inputs, at other indices or
over a dense input stay as written; kernels of rewritten requests equal the
reference on every input kind and semiring, and with the knob off the request
is the expression as written."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.expr.compare import CompareVar
from etchpy.expr.same_inputs import same_inputs
from etchpy.expr.walk import accesses
from etchpy.testing import INDEX_NAMES

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


@pytest.mark.parametrize("kind, sr", [("csr", "real"), ("csc", "min_plus"), ("coo", "real"),
                                      ("tensor", "min_plus")])   # the property: the rest
def test_rewritten_kernels_equal_the_reference(kind, sr):
    fmt = "csr" if kind == "tensor" else kind
    A, x = ep.tensor("A", 2, fmt), ep.tensor("x", 1)
    rng = np.random.default_rng(3)
    exprs = [ep.sum(pos, A[n, pos] * (A[n, pos] > "t") * x[pos]),
             ep.sum(n, ep.sum(pos, (A[n, pos] <= "t") * A[n, pos])),
             A[out, pos] * (A[out, pos] >= "t") * (A[out, pos] < 0.5),
             # one predicate twice (the same object): each joined, none dropped
             ep.sum(pos, (A[n, pos] <= "t") * ((A[n, pos] <= "t") * A[n, pos]) * x[pos])]
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


FORMATS = ("csr", "csc", "dcsr", "coo")
SEMIRINGS = ("real", "min_plus", "max_plus", "integer")


@st.composite
def one_input_products(draw):
    """A product of an input A, value predicates of it (1 or 2: constant or parameter
    bounds) and perhaps a vector, summed over some of its indices; index names
    from the pool the generated code uses; A drawn with explicit zeros, empty rows
    and values equal to a bound."""
    a, b = draw(st.permutations(INDEX_NAMES).map(lambda p: ep.indices(" ".join(p[:2]))))
    fmt, sr = draw(st.sampled_from(FORMATS)), draw(st.sampled_from(SEMIRINGS))
    A, x = ep.tensor("A", 2, fmt), ep.tensor("x", 1)
    tests, params = [], {}
    for k in range(draw(st.integers(1, 2))):
        op = draw(st.sampled_from(["<", "<=", ">", ">="]))
        bound = draw(st.sampled_from([0, 1, -1, f"t{k}"]))
        if isinstance(bound, str):
            params[bound] = draw(st.sampled_from([0, 1, -1, 0.5, np.int64(2)]))
        test = {"<": A[a, b] < bound, "<=": A[a, b] <= bound, ">": A[a, b] > bound,
                ">=": A[a, b] >= bound}[op]
        tests.append(test)
    body = A[a, b]
    for test in tests:
        body = body * test if draw(st.booleans()) else test * body
    shape = draw(st.sampled_from(["vector", "sum", "all", "matrix"]))
    e = {"vector": lambda: ep.sum(b, body * x[b]), "sum": lambda: ep.sum(b, body),
         "all": lambda: ep.sum((a, b), body), "matrix": lambda: body}[shape]()
    m, n = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    cells = draw(st.lists(st.sampled_from([0, 1, -1, 2, 3, None, None]), min_size=m * n,
                          max_size=m * n))
    dense = np.array([0 if c is None else c for c in cells], dtype=float).reshape(m, n)
    kept = np.array([c is not None for c in cells]).reshape(m, n)
    rows, cols = np.nonzero(kept)
    M = sp.coo_array((dense[rows, cols], (rows, cols)), shape=(m, n))
    inputs = {"A": getattr(M, f"to{fmt}")() if fmt in ("csr", "csc") else
              ep.Tensor.from_scipy(M, fmt) if fmt == "dcsr" else M,
              "x": np.arange(1, n + 1, dtype=float), **params}
    return e, sr, inputs


@settings(deadline=None)
@given(one_input_products())
def test_joined_products_equal_the_reference_and_the_kernel_as_written(problem):
    e, sr, inputs = problem
    on = ep.compile(e, semiring=sr)
    off = ep.compile(e, semiring=sr, tuning={"one_walk": False})
    inputs = {k: v for k, v in inputs.items() if k in on._users}
    if sr == "integer":
        inputs = {k: v.astype(np.int64) if type(v) is np.ndarray else v for k, v in
                  inputs.items()}
    want = np.asarray(ep.evaluate(e, backend="reference", semiring=sr, **inputs))
    for kern in (on, off):
        got = kern(**inputs)
        got = np.asarray(got.to_dense() if hasattr(got, "to_dense") else got)
        np.testing.assert_allclose(got, want, rtol=1e-12)
