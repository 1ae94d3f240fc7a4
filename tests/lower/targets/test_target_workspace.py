"""The workspace target (Gustavson's rows): a dense accumulator, or a hash table
past tuning.hash_workspace_dim; each row's columns leave sorted and free of
duplicates."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.expr.nodes import free_indices
from etchpy.testing import assert_same, problems
from etchpy.tuning import DEFAULT, FORCE_HASH
from tuned import csr_on_interpreter, tuned_kernel

i, j, k = ep.indices("i j k")

pytestmark = pytest.mark.usefixtures("shared_cache")


@pytest.mark.heavy
@settings(max_examples=25)
@given(problems(max_indices=3, min_free=1), st.sampled_from(["csr", "csc", "dcsr", "csf"]))
def test_hash_workspace_outputs_match_reference(p, fmt):
    """With every workspace forced to be a hash table (tuning.FORCE_HASH)."""
    out = free_indices(p.expr)
    if len(out) != 2:
        fmt = "csf"
    want = ep.evaluate(p.expr, semiring=p.semiring, backend="reference", **p.inputs)
    got = tuned_kernel(p.expr, FORCE_HASH, semiring=p.semiring, output=fmt)(**p.inputs)
    assert_same(got, want, p.semiring, what=str(p.expr))


@pytest.mark.parametrize("forced", [True, False])
def test_hash_workspace_spgemm_grows_and_sorts(forced):
    """Rows touching up to ~900 columns: the 256-slot table rehashes twice or more.
    The kernel is built with the dense workspace only; a dimension past the limit
    makes it return 3, and the call goes to a second build that has the table."""
    tuning = DEFAULT.with_(hash_workspace_dim=0) if forced else DEFAULT
    rng = np.random.default_rng(11)
    A = sp.random_array((40, 60), density=0.2, format="csr", rng=rng)
    B = sp.random_array((60, 5000), density=0.02, format="csr", rng=rng)
    Ac, Bc = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    kern = tuned_kernel(ep.sum(j, Ac[i, j] * Bc[j, k]), tuning, output="csr")
    assert kern.program.output.mode == "workspace"
    assert "hs_keys" not in kern.c_source and "ep_hash" not in kern.c_source
    assert f"if (dim_k > {tuning.hash_workspace_dim}) return 3;" in kern.c_source
    assert f"dense while |k| <= {tuning.hash_workspace_dim}" in kern.explain()
    C = kern(A=A, B=B)
    assert (kern._larger is not None) == forced
    if forced:
        assert "hs_keys" in kern._larger.c_source and "return 3" not in kern._larger.c_source
    for r_ in range(40):
        assert np.all(np.diff(C.indices[C.indptr[r_]:C.indptr[r_ + 1]]) > 0)
    np.testing.assert_allclose(C.toarray(), (A @ B).toarray(), rtol=1e-12)


def test_huge_output_dimension_uses_a_hash_workspace():
    """2^23 + 17 columns: a dense accumulator would allocate ~200 MB per call; the
    hash table holds only the touched columns."""
    n = 2**23 + 17
    rng = np.random.default_rng(5)
    A = sp.csr_array((rng.random(300), (rng.integers(0, 30, 300), rng.integers(0, 50, 300))),
                     shape=(30, 50))
    B = sp.csr_array((rng.random(2000), (rng.integers(0, 50, 2000), rng.integers(0, n, 2000))),
                     shape=(50, n))
    Ac, Bc = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    C = ep.evaluate(ep.sum(j, Ac[i, j] * Bc[j, k]), A=A, B=B, output="csr")
    ref = (A @ B).tocsr()
    ref.sum_duplicates()
    assert C.shape == (30, n)
    np.testing.assert_array_equal(C.indptr, ref.indptr)
    np.testing.assert_array_equal(C.indices, ref.indices)
    np.testing.assert_allclose(C.data, ref.data, rtol=1e-12)


@pytest.mark.parametrize("n, per_row", [(300, 120), (100000, 40), (4_000_000, 40), (50, 3)])
def test_gustavson_spgemm_workspace_sorts_rows(n, per_row):
    """Rows long enough for the bitset readback (within one summary word, and across
    many), spread wide enough for quicksort, and tiny."""
    rng = np.random.default_rng(n)
    rows = 20
    A = sp.csr_array((rng.random(rows * 3), (np.repeat(np.arange(rows), 3),
                                            rng.integers(0, 30, rows * 3))), shape=(rows, 30))
    B = sp.csr_array((rng.random(30 * per_row), (np.repeat(np.arange(30), per_row),
                                                rng.integers(0, n, 30 * per_row))),
                     shape=(30, n))
    Ac, Bc = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    kern = ep.compile(ep.sum(j, Ac[i, j] * Bc[j, k]), output="csr")
    assert kern.program.output.mode == "workspace"
    C = kern(A=A, B=B)
    ref = (A @ B).tocsr()
    ref.sort_indices()
    for r_ in range(rows):
        row = C.indices[C.indptr[r_]:C.indptr[r_ + 1]]
        assert np.all(np.diff(row) > 0), "rows must be sorted without duplicates"
    # compared sparse: a dense 20 x 4,000,000 copy would cost 640 MB per side
    np.testing.assert_array_equal(C.indptr, ref.indptr)
    np.testing.assert_array_equal(C.indices, ref.indices)
    np.testing.assert_allclose(C.data, ref.data, rtol=1e-12)


def test_a_first_touch_stores_and_the_flush_leaves_the_cell():
    """tuning.first_store: the dense workspace's first touch of a cell stores the
    product (the cell held the semiring's zero, and 0 ⊕ v = v), a later touch
    adds; the flush no longer resets the cells it moves out, and the workspace
    is neither filled nor kept between calls. The Imp interpreter fills such an
    array with garbage, so a read before the first store goes wrong there (C
    runs it in every other SpGEMM test; NOOPT's C has it off)."""
    e = ep.sum(j, ep.tensor("A", 2, format="csr")[i, j] * ep.tensor("B", 2, format="csr")[j, k])
    sr, off = ep.semirings.get("min_plus"), DEFAULT.with_(first_store=False)
    on_src, off_src = (ep.compile(e, output="csr", semiring=sr, tuning=t).c_source
                       for t in (DEFAULT, off))
    stored = "ws_vals[k_] = (A_vals[j_q] + B_vals[k_q_1]);"
    assert stored in on_src and stored not in off_src
    assert "ws_vals[ws_k] = " not in on_src and "ws_vals[ws_k] = INFINITY;" in off_src
    assert "ep_take_kept((size_t)ws_vals_cap" not in on_src
    assert "ep_take_kept((size_t)ws_vals_cap" in off_src
    rng = np.random.default_rng(40)
    A = sp.random_array((14, 14), density=0.25, format="csr", rng=rng)
    dense = A.toarray()
    for name, ref in (("real", dense @ dense), ("min_plus", np.min(
            np.where(dense == 0, np.inf, dense)[:, :, None]
            + np.where(dense == 0, np.inf, dense)[None, :, :], axis=1))):
        got = csr_on_interpreter(e, ep.semirings.get(name), A=A, B=A)
        out = np.full(ref.shape, 0.0 if name == "real" else np.inf)
        out[got.nonzero()] = got.data
        np.testing.assert_allclose(out, ref, rtol=1e-12)
