"""A call's given output (`out=`) through its call plan (runtime.given_out,
runtime.call_plans, the C binder's plans): after a first call, calls with out=
run by the kernel's plan, write the result into `out` and return it, with the
answers of a call without it; an `out` the plan cannot take (another shape or
dtype, not C-contiguous, read-only, sharing memory with an input) is answered
by the general path, which raises the InputError; a kernel that clears its
output by calloc clears a given one itself."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import InputError
from etchpy.runtime.call_plans import MISS
from etchpy.runtime import given_out
from etchpy.runtime.given_out import out_apart

pytestmark = pytest.mark.usefixtures("shared_cache")

SPMV = "y[i] = A[i, j] * x[j]"
BINDER = ({}, {"call_binder": False})       # the C binder's plans, then Python's


def _inputs(kind, rng, n=40):
    A = sp.random_array((n, n + 3), density=0.2, format="csr", random_state=int(rng.integers(99)))
    A = {"dense": A.toarray(), "csr": A, "tensor": ep.Tensor.from_scipy(A, "csr")}[kind]
    return A, rng.random(n + 3)


@pytest.mark.parametrize("tuning", BINDER)
@pytest.mark.parametrize("kind", ["dense", "csr", "tensor"])
def test_calls_with_out_run_by_the_plan(kind, tuning):
    kern = ep.compile(SPMV, formats={"A": "dense" if kind == "dense" else "csr"}, tuning=tuning)
    rng = np.random.default_rng(3)
    A, x = _inputs(kind, rng)
    out = np.full(40, np.nan)
    assert kern(A=A, x=x, out=out) is out                 # the general path, then a plan
    first = kern._first
    assert first is not None
    for _ in range(3):                                    # a new x, and new arrays, each call
        A, x = _inputs(kind, rng)
        want = (A.to_scipy() if kind == "tensor" else A) @ x
        out[:] = 7.0
        assert first({"A": A, "x": x}, out) is out        # the plan answers with out
        np.testing.assert_allclose(out, want, rtol=1e-12)
        out[:] = np.nan
        assert kern(A=A, x=x, out=out) is out
        np.testing.assert_allclose(out, want, rtol=1e-12)


@pytest.mark.parametrize("tuning", BINDER)
def test_outs_the_plan_cannot_take_get_the_general_paths_error(tuning):
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=tuning)
    A, x = _inputs("csr", np.random.default_rng(5))
    kern(A=A, x=x, out=np.empty(40))
    bad = {"shape": np.empty(41), "dtype": np.empty(40, np.float32),
           "order": np.empty(80)[::2], "read-only": np.empty(40)}
    bad["read-only"].flags.writeable = False
    for what, out in bad.items():
        assert kern._first({"A": A, "x": x}, out) is MISS, what
        with pytest.raises(InputError, match="out must"):
            kern(A=A, x=x, out=out)
    y = np.empty(43)
    with pytest.raises(InputError, match="shares memory"):
        ep.compile("y[i] = A[i, j] * x[j]", formats={"A": "csr"}, tuning=tuning)(
            A=sp.csr_array(np.eye(43)), x=y, out=y)
    buf = np.empty(90)
    assert out_apart(buf[:40], {"A": A, "x": buf[40:83]})
    assert not out_apart(buf[:40], {"A": A, "x": buf[3:46]})        # overlaps x
    assert not out_apart(A.data[:5], {"A": A, "x": x})               # A's values
    assert not out_apart(np.empty(40), {"A": A, "x": list(x)})       # a kind not listed
    assert out_apart(np.empty(40), {"A": ep.Tensor.from_scipy(A, "csr"), "x": x, "t": 2.0})


def test_a_sparse_output_refuses_out_after_its_plan():
    kern = ep.compile("C[i, j] = A[i, k] * B[k, j]", formats={"A": "csr", "B": "csr", "C": "csr"})
    A = sp.random_array((20, 20), density=0.2, format="csr", random_state=1)
    kern(A=A, B=A)
    with pytest.raises(InputError, match="dense output"):
        kern(A=A, B=A, out=np.empty((20, 20)))


def test_a_calloc_cleared_output_is_cleared_when_given():
    """A scatter into a dense output (Σ_i A[i, j] of a csr matrix by rows) relies
    on calloc's zeros for a fresh output: a given one holding garbage is cleared."""
    kern = ep.compile("y[j] = A[i, j]", formats={"A": "csr"})
    rng = np.random.default_rng(2)
    A, _ = _inputs("csr", rng)
    kern(A=A)
    for _ in range(2):
        out = np.full(43, 123.0)
        assert kern(A=A, out=out) is out
        np.testing.assert_allclose(out, A.sum(axis=0), rtol=1e-12)


def test_a_scalar_output_given_as_a_zero_dimensional_array():
    kern = ep.compile("s = x[i] * x[i]")
    x = np.arange(5.0)
    assert kern(x=x) == 30.0
    out = np.empty(())
    for _ in range(2):
        assert kern(x=x, out=out) is out and out[()] == 30.0


def _spans(draw_ints):
    """One buffer and views of it, strided and reversed, and arrays apart."""
    buf = np.arange(64.0)
    a, b, step = draw_ints
    views = [buf[a:a + 8], buf[b::step], buf[::-step][:5], buf[a:a], np.arange(8.0)]
    return buf, views


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 56), st.integers(0, 56), st.integers(1, 9), st.data())
def test_the_binders_out_test_is_the_python_one(a, b, step, data):
    """binder_outputs.c.j2's out_apart answers as given_out.apart_in_python for
    numpy arrays (views of one buffer, strided, reversed, empty), numbers, scipy
    csr, csc and coo arrays over those views and ep.Tensors over them, and leaves
    a kind it does not list (a list: -1) to it."""
    from etchpy.runtime import binder
    ep.compile(SPMV, formats={"A": "csr"})(A=sp.csr_array(np.eye(3)), x=np.ones(3))
    test = binder.out_test()
    if test is None:
        pytest.skip("no C binder on this machine")
    buf, views = _spans((a, b, step))
    pick = lambda: views[data.draw(st.integers(0, len(views) - 1))]     # noqa: E731
    full = lambda: views[data.draw(st.sampled_from([0, 1, 2, 4]))][:1]   # noqa: E731
    out = pick()
    idx = np.arange(8, dtype=np.int64)
    kinds = {
        "array": pick(), "number": data.draw(st.sampled_from([2, 2.5, np.float32(1), True])),
        "csr": sp.csr_array((full(), idx[:1], np.array([0, 1], np.int64)), shape=(1, 8)),
        "csc": sp.csc_array((buf[40:41], idx[:1], np.array([0, 1], np.int64)), shape=(8, 1)),
        "coo": sp.coo_array((full(), (idx[:1], idx[:1])), shape=(8, 8)),
        "tensor": ep.Tensor.from_scipy(sp.csr_array(np.eye(3)), "csr"),
        "tensor over buf": ep.Tensor((8,), ep.Format(["compressed"]), [{"pos": np.array([0, 1]), "crd": idx[:1]}],
                                     full()),
        "list": [1.0, 2.0],
    }
    names = data.draw(st.lists(st.sampled_from(sorted(kinds)), min_size=1, max_size=4, unique=True))
    inputs = {n: kinds[n] for n in names}
    got = test(out, inputs, ep.Tensor)
    if "list" in names and got != 0:
        assert got == -1 and not given_out.apart_in_python(out, inputs)
    else:
        assert got == int(given_out.apart_in_python(out, inputs)), (names, got)
    assert out_apart(out, inputs) == given_out.apart_in_python(out, inputs)
    assert test(list(out), inputs, ep.Tensor) == 0          # no ndarray: not apart
