"""Format conversions as planned steps (plan.convert, runtime.planned).

Without a user order no well-typed expression is refused: an input no loop
order walks as declared is read converted (csr <-> csc, a permuted coo or csf,
or dense), and every backend agrees with the dense reference. A conversion is
priced by the cost model, shown by explain() and in the C banner, gives no
PerformanceWarning, and is kept across calls only for an ep.Tensor.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.expr.nodes import Index, TensorVar
from etchpy.expr.nodes import sum as ep_sum
from etchpy.imp import Names
from etchpy.plan.convert import Converter
from etchpy.plan.cost import Stats
from etchpy.plan.plan import make_plan
from etchpy.runtime import planned
from etchpy.testing import check_backends, formats_for, problems, sparse_arrays
from etchpy.tuning import NOOPT
from tuned import random_csr

pytestmark = pytest.mark.usefixtures("shared_cache")

POOL = ("pos", "row", "out", "n", "i", "j")
BACKENDS = ("streams", "c", "imp")


@settings(max_examples=15, deadline=None)
@given(problems(index_names=POOL))
def test_every_random_expression_is_planned_and_agrees(p):
    """Random sums of products over mixed formats and semirings: planned without
    an order, and every backend equals the reference."""
    make_plan(p.expr)
    check_backends(p.expr, p.inputs, semiring=p.semiring, backends=BACKENDS)


@st.composite
def crossed(draw):
    """A[a,b] ∘ B[b,a] (∘ is · or +) under a Σ over some of a, b, with A and B in
    random formats: storage orders that often cross."""
    a, b = (Index(n) for n in draw(st.permutations(POOL))[:2])
    sizes = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    A = TensorVar("A", 2, draw(formats_for(2)))
    B = TensorVar("B", 2, draw(formats_for(2)))
    e = A[a, b] * B[b, a] if draw(st.booleans()) else A[a, b] + B[b, a]
    summed = draw(st.sampled_from([(), (a,), (b,), (a, b)]))
    if summed:
        e = ep_sum(summed, e)
    sr = draw(st.sampled_from([ep.semirings.real, ep.semirings.min_plus,
                               ep.semirings.boolean]))
    inputs = {"A": draw(sparse_arrays(sizes, sr)), "B": draw(sparse_arrays(sizes[::-1], sr))}
    return e, inputs, sr


@settings(max_examples=15, deadline=None)
@given(crossed())
def test_crossed_storage_orders_are_converted_and_agree(case):
    e, inputs, sr = case
    make_plan(e)
    check_backends(e, inputs, semiring=sr, backends=BACKENDS)
    check_backends(e, inputs, semiring=sr, backends=("c",), tuning=NOOPT)


i, j, k = ep.indices("i j k")
A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
TRACE = ep.sum((i, j), A[i, j] * B[j, i])


def test_trace_of_a_product_converts_one_input_and_matches_scipy():
    M, N = random_csr(60, 50, 400, 1), random_csr(50, 60, 400, 2)
    kern = ep.compile(TRACE)
    (conv,) = kern.plan.conversions
    assert conv.source in ("A", "B") and conv.format.name == "csc"
    with warnings.catch_warnings():
        warnings.simplefilter("error", ep.PerformanceWarning)   # planned: no warning
        got = kern(A=M, B=N)
    assert got == pytest.approx(float(M.multiply(N.T).sum()))
    explained = kern.explain()
    assert "convert" in explained and "no loop order walks" in explained


def test_a_plus_b_transposed_into_csr_is_one_fused_nest_and_matches_scipy():
    M, N = random_csr(70, 70, 500, 3), random_csr(70, 70, 500, 4)
    kern = ep.compile(A[i, j] + B[j, i], output="csr")
    assert len(kern.plan.steps) == 1 and len(kern.plan.conversions) == 1
    got = kern(A=M, B=N)
    want = (M + N.T).tocsr()
    assert abs(got - want).max() == 0
    assert kern.program.output.mode != "coords"        # written in order, not sorted


def test_a_dense_output_takes_one_nest_per_term_without_converting():
    kern = ep.compile(A[i, j] + B[j, i])
    assert len(kern.plan.steps) == 2 and not kern.plan.conversions


def test_a_user_order_is_kept_and_refused_when_it_cannot_walk():
    with pytest.raises(ep.OrderError, match="convert"):
        ep.compile(TRACE, order=("i", "j"))


def test_an_ep_tensor_keeps_its_conversion_a_scipy_input_does_not():
    """A Tensor's converted structure is made once and kept on the Tensor; its
    values, which may be written in place, are gathered on every call. A scipy
    input is converted again on every call."""
    M, N = random_csr(40, 40, 300, 5), random_csr(40, 40, 300, 6)
    kern = ep.compile(TRACE)
    conv = kern.plan.conversions[0]
    other_name = "A" if conv.source == "B" else "B"
    src, other = (N, M) if conv.source == "B" else (M, N)
    T = ep.Tensor.from_scipy(src)
    args = {conv.source: T, other_name: other}
    first = kern(**args)
    assert first == pytest.approx(float(M.multiply(N.T).sum()))
    kept = T.__dict__["_etchpy_planned"][conv.format]
    assert kern(**args) == first
    assert T.__dict__["_etchpy_planned"][conv.format] is kept     # made once
    T.vals[:] *= 3                                                 # values in place
    assert kern(**args) == pytest.approx(3 * first)
    # a scipy input may change between calls: it is converted again each time
    S = src.copy()
    args[conv.source] = S
    before = kern(**args)
    S.data *= 2
    assert kern(**args) == pytest.approx(2 * before)


@settings(max_examples=20, deadline=None)
@given(crossed())
def test_a_tensor_input_gives_what_its_arrays_give(case):
    """Every input passed as an ep.Tensor (conversions kept on it) gives the
    same result as the numpy arrays, twice."""
    e, inputs, sr = case
    kern = ep.compile(e, semiring=sr)
    want = kern(**inputs)
    tensors = {n: ep.Tensor.from_dense(v, "csr", semiring=sr) for n, v in inputs.items()}
    for _ in range(2):
        assert np.array_equal(np.asarray(kern(**tensors)), np.asarray(want))


def test_explain_and_the_exported_header_name_the_conversion(tmp_path):
    c_path, h_path = ep.export_c(TRACE, "trace_ab", tmp_path)
    header = h_path.read_text()
    assert "convert:" in header and "csc" in header
    conv = ep.Kernel(TRACE).plan.conversions[0]   # planned from the hints, as export_c
    assert f"{conv.name}_crd1" in header      # the kernel takes the converted arrays


def test_a_transposed_product_converts_when_the_cost_model_says_so():
    """A·Bᵀ into csr with both csr: the only order walking both as declared is the
    inner product over every (i, k); converting B to csc gives Gustavson, priced
    far cheaper. Tuning(conversions=True), the default, converts; with it False
    the inner product stays, and the kernel takes the declared formats."""
    e = ep.sum(j, A[i, j] * B[k, j])
    M, N = random_csr(50, 40, 200, 7), random_csr(50, 40, 200, 8)
    kern = ep.Kernel(e, output="csr", tuning={"conversions": True})
    assert [c.format.name for c in kern.plan.conversions] == ["csc"]
    assert kern.plan.steps[0].order == ("i", "j", "k")
    got = kern(A=M, B=N)
    assert abs(got - (M @ N.T)).max() < 1e-12
    plain = ep.Kernel(e, output="csr", tuning={"conversions": False})
    assert not plain.plan.conversions
    assert [c.format.name for c in ep.Kernel(e, output="csr").plan.conversions] == ["csc"]
    assert abs(plain(A=M, B=N) - (M @ N.T)).max() < 1e-12


def test_dense_is_a_candidate_for_a_small_or_nearly_full_input():
    """The converter offers dense for a small or nearly full input (priced per
    element), only a permuted format for a large sparse one; a dense
    conversion binds as the dense array."""
    small = Stats(dims={"i": 8, "j": 8}, nnz={"B": 60})
    large = Stats(dims={"i": 10**5, "j": 10**5}, nnz={"B": 10**6})
    acc = B[j, i]
    ways = Converter(Names(), small, False).ways(acc, ("i", "j"), small)
    assert [c.format.name for _, c in ways] == ["csc", "dense"]
    ways = Converter(Names(), large, False).ways(acc, ("i", "j"), large)
    assert [c.format.name for _, c in ways] == ["csc"]
    (_, dense), = [w for w in Converter(Names(), small, False).ways(acc, ("i", "j"), small)
                   if w[1].format.is_dense]
    N = random_csr(8, 8, 40, 11)
    bound = planned.bind(N, dense.tensor, ep.semirings.real)
    np.testing.assert_array_equal(bound.roles["vals"].reshape(8, 8), N.toarray())


@pytest.mark.parametrize("output", ["csr", "dense"])
def test_a_product_algorithm_is_chosen_by_cost_when_conversions_are_on(output):
    """AᵀB with both csr walks as declared only as an outer product (j, i, k).
    Into csr its records would be sorted afterwards: with conversions on, A is
    read as csc and the product runs row by row (Gustavson). Into a dense
    output the outer product scatters at no such cost and stays."""
    e = ep.sum(j, A[j, i] * B[j, k])
    kern = ep.compile(e, output=output, tuning={"conversions": True})
    M, N = random_csr(30, 40, 200, 9), random_csr(30, 35, 200, 10)
    if output == "csr":
        assert [c.source for c in kern.plan.conversions] == ["A"]
        assert kern.plan.steps[0].order == ("i", "j", "k")
        assert abs(kern(A=M, B=N) - (M.T @ N)).max() < 1e-12
    else:
        assert not kern.plan.conversions and kern.plan.steps[0].order == ("j", "i", "k")
        np.testing.assert_allclose(kern(A=M, B=N), (M.T @ N).toarray())
