"""ep.evaluate called with inputs only (no option), the call a user's loop makes
(issue 39): it binds no option, finds compile's last kernel (statements.last_default)
and runs the plan that kernel's keyword call tries first (statements.last_call), with the
same results, checks and errors as `ep.compile(e)(**inputs)`; any option takes the
full path. ep.tensor's and an access's lookups of nodes made before (expr.nodes)."""
import inspect
from collections import namedtuple

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import EtchpyError, ExpressionTypeError, FormatError, InputError
from etchpy.expr import nodes

pytestmark = pytest.mark.usefixtures("shared_cache")

i, j, k = ep.indices("i j k")
OPTIONS = ("semiring", "backend", "output", "order", "out_indices", "check", "threads",
           "optimize", "optimizer_options", "tuning", "out")


def spmv(fmt="csr"):
    return ep.sum(j, ep.tensor("A", 2, format=fmt)[i, j] * ep.tensor("x", 1)[j])


def test_the_signature_shows_every_option():
    params = inspect.signature(ep.evaluate).parameters
    assert tuple(params)[0] == "e" and all(o in params for o in OPTIONS)
    assert params["backend"].default == "c" and params["out"].default is None


def matrices():
    A = sp.random(40, 30, density=0.2, format="csr", random_state=3)
    return {"csr": A, "csc": A.tocsc(), "coo": A.tocoo(), "csr float32": A.astype(np.float32),
            "Tensor": ep.Tensor.from_scipy(A, "csr"), "csr_matrix": sp.csr_matrix(A)}


@pytest.mark.parametrize("kind", list(matrices()))
@pytest.mark.parametrize("text", [False, True])
def test_new_vectors_each_call_agree_with_scipy_and_the_kernel(kind, text):
    A = matrices()[kind]
    ref = matrices()["csr"]
    rng = np.random.default_rng(4)
    e = "y[i] = A[i,j] * x[j]" if text else spmv()
    for n in range(6):                  # the first call compiles, the others find it
        x = rng.standard_normal(30).astype(A.dtype)
        y = ep.evaluate(e if text else spmv(), A=A, x=x)
        np.testing.assert_allclose(y, ref @ x.astype(np.float64), rtol=2e-5, atol=1e-5)
        assert y.dtype == A.dtype
    out = np.empty(40, dtype=A.dtype)
    assert ep.evaluate(e, A=A, x=x, out=out) is out
    np.testing.assert_allclose(out, y)


def test_errors_on_the_plain_call_are_the_keyword_calls():
    A = matrices()["csr"]
    e = spmv()
    ep.evaluate(e, A=A, x=np.ones(30))
    ep.evaluate(e, A=A, x=np.ones(30))                 # (the plan kept)
    for bad in (dict(A=A, x=np.ones(31)), dict(A=A), dict(A=A, x=np.ones(30), z=1.0)):
        with pytest.raises(InputError) as ours:
            ep.evaluate(e, **bad)
        with pytest.raises(InputError) as kernel:
            ep.compile(e)(**bad)
        assert str(ours.value) == str(kernel.value)
    with pytest.raises(TypeError):
        ep.evaluate(e, A, np.ones(30))
    np.testing.assert_allclose(ep.evaluate(e, A=A, x=np.ones(30)), A @ np.ones(30))


def test_options_and_tensors_named_like_them_take_the_full_path():
    A = matrices()["csr"]
    x = np.arange(30.0)
    np.testing.assert_allclose(ep.evaluate(spmv(), A=A, x=x, semiring="real"), A @ x)
    np.testing.assert_allclose(ep.evaluate(spmv(), A=A, x=x, backend="reference"), A @ x)
    np.testing.assert_allclose(ep.evaluate(spmv(), A=A, x=x, tuning="noopt"), A @ x)
    order = ep.sum(j, ep.tensor("A", 2, "csr")[i, j] * ep.tensor("order", 1)[j])
    with pytest.raises(EtchpyError, match="option order="):
        ep.evaluate(order, A=A, order=x)
    named_e = ep.sum(j, ep.tensor("A", 2, "csr")[i, j] * ep.tensor("e", 1)[j])
    np.testing.assert_allclose(ep.evaluate(named_e, A=A, e=x), A @ x)   # (positional-only)


def test_last_call_is_the_keyword_call_of_the_last_kernel_only():
    from etchpy.runtime import statements
    from etchpy.runtime.call_plans import MISS
    A = matrices()["csr"]
    e = spmv()
    kern = ep.compile(e)
    for n in range(3):
        x = np.full(30, float(n))
        np.testing.assert_array_equal(statements.last_call(e, None, {"A": A, "x": x}),
                                      kern(A=A, x=x))
    assert statements.last_call(spmv("csc"), None, {"A": A, "x": x}) is MISS
    assert statements.last_call(e, {"A": "csr"}, {"A": A, "x": x}) is MISS
    with pytest.raises(InputError):
        statements.last_call(e, None, {"A": A, "x": np.ones(2)})
    ep.compile(spmv("csc"))                             # another kernel compiled last
    assert statements.last_call(e, None, {"A": A, "x": x}) is MISS


def test_tensor_lookups_keep_the_checks_of_plain_arguments():
    a = ep.tensor("A", 2, "csr")
    assert ep.tensor("A", 2, format="csr") is a
    assert ep.tensor("A", 2, "csr", iso=0) == a                 # equal arguments: equal
    with pytest.raises(ExpressionTypeError):
        ep.tensor("A", 2.0, "csr")                              # an equal key, not an int
    assert ep.tensor("A", True).order is True                   # (as before: not kept)
    with pytest.raises((FormatError, ExpressionTypeError, TypeError)):
        ep.tensor("A", 2, ["csr"])                              # does not hash: as before
    for n in range(1100):                   # more than the table holds: it starts over
        ep.tensor(f"T{n}", 1)
    assert len(nodes._TENSORS) <= 1024
    assert ep.tensor("A", 2, "csr") == a and ep.tensor("A", 2, "csr") is ep.tensor("A", 2, "csr")


def test_access_keys_for_one_two_and_more_indices():
    t2, t1, t3 = ep.tensor("B", 2), ep.tensor("v", 1), ep.tensor("C", 3)
    Pair = namedtuple("Pair", "p q")
    assert t2[i, j] is t2[(i, j)] is t2[Pair(i, j)]
    assert t1[i] is t1[(i,)]
    assert t3[i, j, k] is t3[i, j, k] and t3[i, j, k] != t3[i, k, j]
    assert t2[i, j] is not t2[j, i]
    with pytest.raises(ExpressionTypeError):
        t2[i]
    with pytest.raises(ExpressionTypeError):
        t1["i"]


@pytest.mark.parametrize("kind", ["csr", "csc", "coo", "Tensor"])
def test_einsum_of_a_sparse_operand_runs_the_kernel_s_first_plan(kind):
    """ep.einsum's kernel call (einsum_calls.KernelCall) on sparse operands tries the
    plan the kernel's keyword call tries first, else that call: the same answers and
    errors, new vectors each call."""
    A = matrices()[kind]
    ref = matrices()["csr"]
    rng = np.random.default_rng(7)
    for n in range(4):
        x = rng.standard_normal(30)
        np.testing.assert_allclose(ep.einsum("ij,j->i", A, x), ref @ x, rtol=1e-12)
        w = rng.standard_normal(40)
        np.testing.assert_allclose(ep.einsum("ji,j->i", A, w), ref.T @ w, rtol=1e-12)
    with pytest.raises(InputError):
        ep.einsum("ij,j->i", A, np.ones(31))
    np.testing.assert_allclose(ep.einsum("ij,j->i", A, x), ref @ x, rtol=1e-12)
