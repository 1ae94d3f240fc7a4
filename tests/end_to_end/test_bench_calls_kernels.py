"""bench.calls_kernels (the `kernels` part of `python -m bench calls`) makes every
case of its survey, and runs one (each compiled kernel costs a cold compile) on a
small real matrix, comparing each answer with scipy's before timing it: one row
per case, positive CPU and wall ratios (timings themselves are not asserted)."""
import numpy as np
import pytest

kernels = pytest.importorskip("bench.calls_kernels")
pytest.importorskip("skfem")

pytestmark = pytest.mark.usefixtures("shared_cache")


def test_the_kernels_part_writes_a_row_per_case():
    A = kernels.fem_p1(2)
    rng = np.random.default_rng(0)
    names = [c[0] for c in kernels.cases(A, rng) + kernels.sparse_cases(A, rng)]
    assert names == ["SpMM X of 1 column", "SpMM X of 4 columns", "SpMM X of 10 columns",
                     "SpMM X of 16 columns", "SpMVᵀ (csr)", "row sums",
                     "sum of all entries", "x·(A y)", "A+B same pattern", "A∘B same pattern",
                     "A+B other pattern", "A∘B other pattern", "A·A (SpGEMM)"]
    said = []
    rows = kernels.part_kernels(True, 0.001, said.append, None, source=[("P1", 1_000, A)],
                                only={"row sums"})
    assert [r["kernel"] for r in rows] == ["row sums"] and len(said) == 2
    assert all(r["ratio"] > 0 and r["wall_ratio"] > 0 for r in rows)


def test_the_survey_matrices_are_canonical_and_the_other_pattern_differs():
    A = kernels.fem_p1(2)
    B = kernels.other_pattern(A)
    assert A.has_canonical_format and B.has_canonical_format and A.nnz == B.nnz
    assert (abs(A) != abs(B)).nnz > 0
    np.testing.assert_allclose(A.toarray(), A.toarray().T, atol=1e-12)
