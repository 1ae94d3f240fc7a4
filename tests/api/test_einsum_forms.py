"""ep.einsum on operand kinds and forms beside the matmul and numpy dispatch of
tests/api/test_einsum_calls.py: scalar operands keyed by type, dot products along
a trailing batch run by the compiled kernel."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.expr.einsum import einsum_parts
from etchpy.runtime import einsum_calls
from etchpy.runtime.matmul import InOrder, recipe
from test_einsum_calls import entry


@pytest.mark.parametrize("scalars", [(2.0, 3.5), (np.float64(2.0), np.float64(-1.0)), (2, 7),
                                     (np.float32(2.0), np.float32(0.5)), (True, False)])
def test_a_scalar_operand_is_keyed_by_its_type_and_read_each_call(scalars):
    """A Python or numpy scalar beside a scipy matrix: one prepared call per
    scalar type, its value read on every call."""
    A = sp.csr_array(np.array([[1.0, 0.0], [2.0, 3.0]]))
    for c in scalars:
        got = ep.einsum("ij,->ij", A, c)
        assert sp.issparse(got) and np.array_equal(got.toarray(), A.toarray() * c)
        assert isinstance(entry("ij,->ij", A, c), einsum_calls.KernelCall)
    assert einsum_calls.einsum_key("ij,->ij", (A, scalars[0]), None, None, "c", None) == \
        einsum_calls.einsum_key("ij,->ij", (A, scalars[1]), None, None, "c", None)


@pytest.mark.parametrize("spec, shapes, product", [
    ("ij,ij->j", ((6, 5), (6, 5)), False), ("ijk,ijk->k", ((3, 4, 5), (3, 4, 5)), False),
    ("ijk,ijk->jk", ((3, 4, 5), (3, 4, 5)), False), ("ij,ji->j", ((4, 4), (4, 4)), False),
    ("ij,ij->i", ((6, 5), (6, 5)), False), ("bij,bij->b", ((2, 3, 4), (2, 3, 4)), False),
    ("bij,bjk->bik", ((2, 3, 4), (2, 4, 5)), True), ("bij,bj->bi", ((2, 3, 4), (2, 4)), True),
    ("ijk,j->ik", ((3, 4, 5), (4,)), False), ("ijk,ik->j", ((3, 4, 5), (3, 5)), False),
    ("ij,ji->", ((4, 4), (4, 4)), False), ("ijk,k->ij", ((3, 4, 5), (5,)), True),
    ("ijk,kl->ijl", ((3, 4, 5), (5, 6)), True)])
def test_dot_products_along_a_batch_are_not_matmul(spec, shapes, product):
    """Column sums of a product (`ij,ij->j`) as matmul would be a batch of dot products
    over strided columns, and row dot products (`ij,ij->i`) a batch of 1×k by k×1
    products: both run the compiled kernel, which walks the rows in order; so does a
    matrix-vector product whose operand would be copied to merge axes apart
    (`ijk,j->ik`); batched matrix products, matrix-vector products of operands as
    they lie and matrix products stay matmul."""
    rng = np.random.default_rng(7)
    ops = [rng.random(s) for s in shapes]
    parts = einsum_parts(spec, ops)
    assert (recipe(parts.names, [ix.name for ix in parts.out], shapes) is not None) == product
    np.testing.assert_allclose(ep.einsum(spec, *ops), np.einsum(spec, *ops))


def _layouts(a, layout, rng):
    """`a`'s values held as a C array, in Fortran order, as a transposed view of a C
    array (reversed axes) or as a stepped view of a larger array."""
    if layout == "F":
        return np.asfortranarray(a)
    if layout == "T":
        return np.ascontiguousarray(a.T).T
    if layout == "V":
        big = rng.random(tuple(2 * n for n in a.shape))
        big[tuple(slice(None, None, 2) for _ in a.shape)] = a
        return big[tuple(slice(None, None, 2) for _ in a.shape)]
    return a


@pytest.mark.parametrize("layout", ["C", "F", "T", "V"])
@pytest.mark.parametrize("spec, shapes", [
    ("ijk,ijk->", ((3, 4, 5), (3, 4, 5))), ("ijk,jk->i", ((3, 4, 5), (4, 5))),
    ("ijk,ij->k", ((3, 4, 5), (3, 4))), ("ijk,k->ij", ((3, 4, 5), (5,))),
    ("ijkl,kl->ij", ((2, 3, 4, 5), (4, 5))), ("bij,bj->bi", ((2, 3, 4), (2, 4))),
    ("ijk,kl->ijl", ((3, 4, 5), (5, 6))), ("ijkl,jm->imkl", ((2, 3, 4, 5), (3, 6)))])
def test_a_vector_product_of_operands_in_other_orders_runs_the_kernel(spec, shapes, layout):
    """A product with a vector side over an operand of more than two axes reads each
    operand once: matmul's reshape of an operand not in C order would copy it first,
    so such calls run the compiled kernel, which reads it where it lies
    (matmul.InOrder); C-order operands keep matmul, matrix products keep it in any
    order (the copy is amortised)."""
    rng = np.random.default_rng(11)
    ops = [_layouts(rng.random(s), layout, rng) for s in shapes]
    np.testing.assert_allclose(ep.einsum(spec, *ops), np.einsum(spec, *ops), rtol=1e-12)
    call = entry(spec, *ops)
    vector = spec not in ("ijk,kl->ijl", "ijkl,jm->imkl")
    assert isinstance(call, InOrder) == vector
    if vector and layout != "C":
        assert call.made is not None


def test_in_order_calls_the_product_for_c_order_and_makes_the_kernel_once():
    made, calls = [], []
    product = lambda a, b: calls.append("product") or "p"            # noqa: E731

    def kernel():
        made.append(1)
        return lambda a, b: calls.append("kernel") or "k"

    run = InOrder(product, kernel)
    c, f = np.ones((2, 3, 4)), np.asfortranarray(np.ones((2, 3, 4)))
    assert [run(c, c), run(c, f), run(f, c), run(c, c), run(f, f)] == list("pkkpk")
    assert calls == ["product", "kernel", "kernel", "product", "kernel"] and made == [1]


def _zeros(layout):
    """A 3×3 matrix with an explicit 0 on a stored diagonal, in `layout`."""
    Z = sp.dia_array((np.array([[0.0, 1.0, 2.0], [3.0, 0.0, 5.0]]), [0, 1]), shape=(3, 3))
    return Z.asformat(layout)


@pytest.mark.parametrize("layout", ["dia", "bsr", "lil", "dok"])
def test_scipys_other_layouts_are_read_as_csr_never_made_dense(layout):
    """A scipy dia (what `sp.diags` returns), bsr, lil or dok operand is a csr tensor,
    made csr by scipy's own conversion each call (warned), never a dense one: a
    tridiagonal matrix of 2e5 rows (320 GB dense) runs; explicit zeros on a stored
    diagonal read as what they are under min_plus (the semiring's own path)."""
    n = 200_000 if layout in ("dia", "bsr") else 2_000
    D = sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(n, n)).asformat(layout)
    x = np.random.default_rng(0).random(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ep.PerformanceWarning)   # (converted each call)
        np.testing.assert_allclose(ep.einsum("ij,j->i", D, x), D @ x)
        got = ep.einsum("ij,j->i", Z := _zeros(layout), np.ones(3), semiring="min_plus")
    i, j = ep.indices("i j")
    want = ep.evaluate(ep.sum(j, ep.tensor("A", 2, format="csr")[i, j] * ep.tensor("x", 1)[j]),
                       semiring="min_plus", backend="reference", A=Z, x=np.ones(3))
    np.testing.assert_allclose(got, want)
