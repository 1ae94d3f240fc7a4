"""An expression rebuilt in the caller's loop (issue 39): ep.compile finds the kernel
made for an equal expression by one lookup of its structural key, and the memo of
each tensor's checked format (expr.nodes._checked) keeps what would tell kernels apart;
`ep.tensor` of plain arguments gives one object, and the same expression object
compiled again is found by identity (runtime.statements.last_args)."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.expr.nodes import Lit, Map, _checked
from etchpy.expr.walk import float_bits, literal_bits, subexprs
from etchpy.runtime import jsondata
from etchpy.runtime.kernel_cache import KERNELS

pytestmark = pytest.mark.usefixtures("shared_cache")

i, j = ep.indices("i j")


def spmv(fmt="csr", scale=None, name="A", order=2):
    a, x = ep.tensor(name, order, format=fmt), ep.tensor("x", 1)
    body = a[i, j] * x[j] if scale is None else a[i, j] * x[j] * scale
    return ep.sum(j, body)


def test_a_rebuilt_expression_finds_its_kernel_and_keeps_one_entry():
    kern = ep.compile(spmv())
    before = len(KERNELS)
    assert ep.compile(spmv()) is kern and len(KERNELS) == before
    KERNELS.clear()
    ep.compile(spmv())
    assert len(KERNELS) == 1            # the expression's key only (no text key)
    A = sp.random(7, 5, density=0.4, format="csr", random_state=1)
    x = np.arange(5.0)
    np.testing.assert_allclose(ep.evaluate(spmv(), A=A, x=x), A @ x)


@pytest.mark.parametrize("other", [dict(fmt="csc"), dict(fmt="dense"), dict(name="B"),
                                   dict(scale=2.0), dict(scale=-0.0)])
def test_a_changed_expression_gets_another_kernel(other):
    assert ep.compile(spmv(**other)) is not ep.compile(spmv())
    assert ep.compile(spmv(**other)) is ep.compile(spmv(**other))


def test_signed_zero_literals_key_apart():
    assert ep.compile(spmv(scale=0.0)) is not ep.compile(spmv(scale=-0.0))


@pytest.mark.parametrize("option", [dict(tuning="noopt"), dict(semiring="min_plus"),
                                    dict(threads=2), dict(output="coo")])
def test_a_changed_option_gets_another_kernel(option):
    assert ep.compile(spmv(), **option) is not ep.compile(spmv())


def test_checked_formats_are_kept_per_name_order_and_format():
    assert ep.tensor("A", 2, format="csr").format is ep.tensor("A", 2, "csr").format
    assert ep.tensor("A", 2, format="csc").format != ep.tensor("A", 2, "csr").format
    assert ep.tensor("A", 1, format="dense").format.order == 1
    assert ep.tensor("A", 3, format="dense").format.order == 3
    named = ep.Format([ep.Dense(), ep.Compressed()], name="mine")
    assert ep.tensor("A", 2, format=named).format is named    # a Format: as given
    assert ep.tensor("A", True).format.order == 1             # bool order: unkept path
    hits = _checked.cache_info().hits
    ep.TensorVar("A", 2, "csr")
    assert _checked.cache_info().hits == hits + 1


def test_plain_tensors_are_one_object_and_others_are_not():
    assert ep.tensor("A", 2, format="csr") is ep.tensor("A", 2, "csr")
    assert ep.tensor("A", 2, "csr") is not ep.tensor("A", 2, "csc")
    assert ep.tensor("A", 2, "csr") is not ep.tensor("A", 2, "csr", iso=True)
    named = ep.Format([ep.Dense(), ep.Compressed()], name="mine")
    assert ep.tensor("A", 2, format=named) == ep.tensor("A", 2, format=named)
    assert ep.tensor("A", True).order is True               # (not the order-1 tensor's)


def test_kept_hashes_do_not_travel():
    """A node's hash is kept on it once worked out; pickling and jsondata leave it out
    (strings hash differently in another process)."""
    e = spmv(scale=2.0)
    hash(e)
    for node in (e, e.body.a.a, e.body.a.a.tensor, e.index):
        assert "_hash" in vars(node)
        assert "_hash" not in vars(pickle.loads(pickle.dumps(node)))
        assert "_hash" not in jsondata.dumps(node)
        assert pickle.loads(pickle.dumps(node)) == node
        assert hash(pickle.loads(pickle.dumps(node))) == hash(node)


def test_the_same_expression_object_finds_its_kernel_by_identity():
    e = spmv(scale=0.0)
    kern = ep.compile(e)
    assert ep.compile(e) is kern
    assert ep.compile(spmv(scale=-0.0)) is not kern     # equal, but not the same kernel
    assert ep.compile(e) is kern
    KERNELS.clear()                                     # (a cleared cache: made again)
    again = ep.compile(e)
    assert again is not kern and ep.compile(e) is again
    assert ep.compile(e, semiring="min_plus") is not again


@pytest.mark.parametrize("args", [("1A", 2, "csr"), ("out", 1), ("tmp_x", 1), ("A", -1),
                                  ("A", 1, "csr"), ("A", 2, "nope"), ("A", 2.0, "csr")])
def test_a_bad_tensor_is_refused_every_time(args):
    for _ in range(2):                  # (an error is not kept: raised again)
        with pytest.raises((ep.errors.ExpressionTypeError, ep.errors.FormatError)):
            ep.tensor(*args)


def test_literal_bits_in_the_order_of_subexprs():
    def by_walk(e):
        return tuple(float_bits(x.value if isinstance(x, Lit) else x.arg)
                     for x in subexprs(e)
                     if isinstance(x, Lit) or isinstance(x, Map) and x.arg is not None)
    x = ep.tensor("x", 1)
    for e in [spmv(), spmv(scale=-0.0) + 1.5,
              ep.map("minimum", 2 * ep.map("maximum", x[i] + 7, -0.0), 4.0),
              ep.sum(j, (spmv(scale=0.5) + 3) * ep.tensor("z", 1)[j]) * -2.0]:
        assert literal_bits(e) == by_walk(e)


def test_free_indices_in_order_of_first_appearance():
    k = ep.indices("k")[0]
    a, x, z = ep.tensor("A", 2), ep.tensor("x", 1), ep.tensor("z", 1)
    assert (a[i, j] * x[j]).free == (i, j)
    assert (x[j] * a[i, j] + z[k]).free == (j, i, k)
    assert ep.sum(j, ep.map("maximum", a[i, j] * 2.0, 0.0) * x[j]).free == (i,)
    assert ep.sum((i, j), a[i, j]).free == () and (3 * x[i]).free == (i,)
    with pytest.raises(ep.errors.ExpressionTypeError):
        ep.sum(k, a[i, j])


def test_evaluate_finds_compiles_last_kernel_only_while_it_holds(monkeypatch):
    """ep.evaluate with default options asks runtime.statements.last_default, not
    compile: the same expression object (or text and input formats), the same output,
    build environment, thread default and KERNELS' generation, else compile runs."""
    from etchpy.runtime import statements
    for name in ("ETCHPY_NUM_THREADS", "CFLAGS"):
        monkeypatch.delenv(name, raising=False)
    A = sp.random(7, 5, density=0.4, format="csr", random_state=2)
    x = np.arange(5.0)
    e = spmv()
    np.testing.assert_allclose(ep.evaluate(e, A=A, x=x), A @ x)
    kern = statements.last_default(e, None, "dense")
    assert kern is ep.compile(e) and statements.last_default(spmv(), None, "dense") is kern
    assert statements.last_default(e, None, "coo") is None
    assert statements.last_default(e, {"A": "csr"}, "dense") is None
    for name, value in (("ETCHPY_NUM_THREADS", "2"), ("CFLAGS", "-O1")):
        monkeypatch.setenv(name, value)
        assert statements.last_default(e, None, "dense") is None
        monkeypatch.delenv(name)
        assert statements.last_default(e, None, "dense") is kern
    KERNELS.clear()
    assert statements.last_default(e, None, "dense") is None
    np.testing.assert_allclose(ep.evaluate(e, A=A, x=x), A @ x)
    text = "y[i] = A[i,j] * x[j]"
    np.testing.assert_allclose(ep.evaluate(text, A=A, x=x), A @ x)
    assert statements.last_default(text, {"A": "csr"}, "dense") is not None
    assert statements.last_default(text, {"A": "csc"}, "dense") is None
    np.testing.assert_allclose(ep.evaluate(text, A=A.tocsc(), x=x), A @ x)
