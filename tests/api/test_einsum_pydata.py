"""ep.einsum on pydata `sparse` operands: an array of any order whose fill value is
0 is read as a coo tensor over its coordinates (expr.einsum._infer_format), never
made dense (a GCXS of more than two axes is made coo on each call, with a
PerformanceWarning), and its calls are prepared once per type, dtype, shape, layout and
fill (runtime.einsum_calls); a fill value the semiring cannot read is refused;
an operand changed in place between calls gives the right answer or an
InputError naming it."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.api import _calls

sparse = pytest.importorskip("sparse")

pytestmark = pytest.mark.usefixtures("shared_cache")

SPECS = [("ijk,jr,kr->ir", 3), ("ijk,k->ij", 3), ("ijk->", 3), ("ijk->i", 3), ("ijk->kj", 3),
         ("ijkl,l->ijk", 4), ("i,i->", 1), ("i->i", 1), ("ij,jk->ik", 2), ("ijk,ijk->", 3),
         ("ijklm,m->i", 5)]


def _dense_operands(spec, shape, rng):
    sizes = dict(zip(spec.split(",")[0].split("-")[0], shape))
    sizes.update({c: 3 for c in "rkm" if c not in sizes})
    terms = spec.split("->")[0].split(",")[1:]
    return [rng.random([sizes[c] for c in t]) for t in terms]


@pytest.mark.parametrize("spec,order", SPECS)
@pytest.mark.parametrize("fmt", ["coo", "gcxs"])
def test_a_pydata_operand_of_any_order_stays_sparse(spec, order, fmt):
    rng = np.random.default_rng(order)
    shape = (5, 6, 7, 4, 3)[:order]
    S = sparse.random(shape, density=0.3, random_state=order, format=fmt)
    rest = _dense_operands(spec, shape, rng)
    if spec == "ijk,ijk->":
        rest = [S]                              # the same object twice: one tensor
    want = np.einsum(spec, S.todense(), *[r if isinstance(r, np.ndarray) else r.todense()
                                         for r in rest])
    with warnings.catch_warnings():
        # a coo is read as it is; an n-d gcxs (no etchpy layout) is made coo each
        # call, and says so
        warnings.simplefilter("error" if fmt == "coo" or order == 2 else "ignore")
        for _ in range(3):                      # the first call, then the prepared one
            got = ep.einsum(spec, S, *rest)
            got = got.toarray() if sp.issparse(got) else got
            np.testing.assert_allclose(got, want, atol=1e-12)


def test_calls_are_prepared_once_and_keyed_by_layout_and_fill():
    M = sp.random_array((9, 8), density=0.3, format="csr", random_state=1)
    v = np.arange(8.0)
    kinds = [sparse.COO.from_scipy_sparse(M), sparse.GCXS.from_scipy_sparse(M),
             sparse.GCXS(sparse.COO.from_scipy_sparse(M), compressed_axes=(1,))]
    _calls.clear()          # (a cache of 256 calls, cleared when full, as other tests fill it)
    start = len(_calls)
    for S in kinds:
        np.testing.assert_allclose(ep.einsum("ij,j->i", S, v), M @ v)
    before = len(_calls)
    assert before == start + 3                   # three layouts, three prepared calls
    for S in kinds:                              # each kind's call found, new vectors too
        np.testing.assert_allclose(ep.einsum("ij,j->i", S, v + 1), M @ (v + 1))
    assert len(_calls) == before
    filled = sparse.COO(kinds[0].coords, kinds[0].data, shape=M.shape, fill_value=1.0)
    with pytest.raises(ep.InputError, match="T0.*fill_value"):   # implicit entries of 1
        ep.einsum("ij,j->i", filled, v)


def test_an_operand_changed_in_place_is_read_again_or_refused():
    S = sparse.random((4, 5, 6), density=0.4, random_state=2)
    x = np.arange(6.0)
    np.testing.assert_allclose(ep.einsum("ijk,k->ij", S, x), np.einsum("ijk,k->ij",
                                                                      S.todense(), x))
    S.coords[:, [0, -1]] = S.coords[:, [-1, 0]]         # out of order, flags now stale
    np.testing.assert_allclose(ep.einsum("ijk,k->ij", S, x), np.einsum("ijk,k->ij",
                                                                      S.todense(), x))
    np.testing.assert_allclose(ep.einsum("ijk->", S), S.data.sum())
    S.coords[2, 0] = 6                                  # outside mode 2
    for spec, more in (("ijk,k->ij", [x]), ("ijk->", [])):  # (a total reads no coordinate)
        with pytest.raises(ep.InputError, match="T0"):
            ep.einsum(spec, S, *more)


def test_a_result_of_two_indices_out_of_sparse_operands_is_csr():
    S = sparse.random((5, 6, 7), density=0.3, random_state=3)
    got = ep.einsum("ijk->ij", S)
    assert sp.issparse(got) and got.format == "csr"
    np.testing.assert_allclose(got.toarray(), S.todense().sum(axis=2))
    dense = ep.einsum("ijk,k->ij", S, np.ones(7))       # a dense operand: dense
    assert isinstance(dense, np.ndarray)
