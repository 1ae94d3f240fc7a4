"""bench complex (bench/structure_complex.py): each case's etchpy call equals its
scipy call on the small sizes (no time is asserted)."""
import numpy as np
import pytest

structure_complex = pytest.importorskip("bench.structure_complex")

pytestmark = pytest.mark.usefixtures("shared_cache")


def test_every_complex_case_agrees_with_scipy():
    for rows in structure_complex.cases(quick=True).values():
        for label, ours, theirs in rows:
            got, want = ours(), theirs()
            if hasattr(want, "toarray"):
                assert got.has_sorted_indices, label
                got, want = got.toarray(), want.toarray()
            want_dtype = {"f64": np.float64, "f32": np.float32}.get(label[-3:], np.complex128)
            assert got.dtype == want_dtype, label
            rtol = 1e-5 if want_dtype == np.float32 else 1e-12
            np.testing.assert_allclose(got, want, rtol=rtol, err_msg=label)


def test_the_operator_is_the_shifted_laplacian():
    P = structure_complex.shifted_poisson(4, shift=0.5)
    assert P.shape == (16, 16) and P.nnz == 16 + 2 * 2 * 4 * 3
    np.testing.assert_allclose(P.diagonal(), 4 + 0.5j)
