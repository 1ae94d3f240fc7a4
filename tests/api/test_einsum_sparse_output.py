"""ep.einsum's output where none is given (einsum_calls.default_output): csr where the
output has two indices and every operand is sparse, as scipy's products are, or a sparse
operand holds exactly the output's indices (a scaling, a mask, SDDMM); dense otherwise,
and whatever `output=` says when given."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep


def _pair(fmt="csr", seed=0):
    rng = np.random.default_rng(seed)
    a = sp.random_array((7, 6), density=0.3, format=fmt, random_state=rng)
    b = sp.random_array((6, 5), density=0.3, format=fmt, random_state=rng)
    return a, b


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("spec, peer", [
    ("ij,jk->ik", lambda a, b: a @ b),
    ("ik,jk->ij", lambda a, b: a @ a.T),
    ("ij->ji", lambda a, b: a.T),
    ("ij,ij->ij", lambda a, b: a.multiply(a)),
])
def test_sparse_operands_give_a_csr_matrix(fmt, spec, peer):
    a, b = _pair(fmt)
    ops = (a, b) if spec == "ij,jk->ik" else (a, a) if "," in spec else (a,)
    for _ in range(2):                  # the first call and the prepared one
        got = ep.einsum(spec, *ops)
        assert sp.issparse(got) and got.format == "csr", type(got)
        np.testing.assert_allclose(got.toarray(), peer(a, b).toarray(), rtol=1e-12)


def test_a_dense_operand_or_a_vector_out_stays_dense():
    a, b = _pair()
    for got, want in [(ep.einsum("ij,jk->ik", a, b.toarray()), a @ b.toarray()),
                      (ep.einsum("ij,j->i", a, np.ones(6)), a @ np.ones(6)),
                      (ep.einsum("ij->i", a), a.sum(axis=1)),
                      (ep.einsum("ij,ij->", a, a), (a.multiply(a)).sum()),
                      (ep.einsum("ij,jk->ik", a, b, output="dense"), (a @ b).toarray())]:
        assert not sp.issparse(got) and np.ndim(got) == np.ndim(want)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_sparse_tensors_and_a_named_output_are_kept():
    a, b = _pair()
    ta, tb = ep.Tensor.from_scipy(a), ep.Tensor.from_scipy(b)
    got = ep.einsum("ij,jk->ik", ta, tb)
    dense = got.to_dense() if hasattr(got, "to_dense") else got.toarray()
    np.testing.assert_allclose(dense, (a @ b).toarray(), rtol=1e-12)
    assert not isinstance(got, np.ndarray)
    d = ep.Tensor.from_dense(b.toarray())
    assert isinstance(ep.einsum("ij,jk->ik", ta, d), np.ndarray)
    got = ep.einsum("ij,jk->ik", a, b, output="csc")
    assert got.format == "csc"
    np.testing.assert_allclose(got.toarray(), (a @ b).toarray(), rtol=1e-12)


@pytest.mark.parametrize("spec, peer", [
    ("ij,j->ij", lambda a, d, u, v: a.multiply(d[None, :6])),
    ("i,ij->ij", lambda a, d, u, v: a.multiply(d[:7, None])),
    ("ij,ij->ij", lambda a, d, u, v: a.multiply(u @ v.T)),
    ("ij,ik,jk->ij", lambda a, d, u, v: a.multiply(u @ v.T)),
    ("ji,j->ij", lambda a, d, u, v: a.multiply(d[None, :6])),
])
def test_a_sparse_operand_over_the_outputs_indices_gives_csr(spec, peer):
    """A product with a dense operand whose result is zero wherever a sparse operand
    over exactly its indices is (a scaling, a mask, SDDMM) is a csr matrix."""
    a, _ = _pair()
    rng = np.random.default_rng(3)
    d, u, v = rng.random(7), rng.random((7, 4)), rng.random((6, 4))
    ops = {"ij,j->ij": (a, d[:6]), "i,ij->ij": (d, a), "ij,ij->ij": (a, u @ v.T),
           "ij,ik,jk->ij": (a, u, v), "ji,j->ij": (a.T, d[:6])}[spec]
    got = ep.einsum(spec, *ops)
    assert sp.issparse(got) and got.format == "csr", type(got)
    np.testing.assert_allclose(got.toarray(), np.asarray(peer(a, d, u, v).toarray()), rtol=1e-12)
