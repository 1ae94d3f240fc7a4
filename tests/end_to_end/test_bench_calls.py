"""bench.calls runs and writes its rows (timings themselves are not asserted): the
einsum, matvec and outside parts with a tiny time budget, the 3-D stencil builder
against a dense Laplacian, and the C call it times is the kernel's own."""
import json

import numpy as np
import pytest

calls = pytest.importorskip("bench.calls")

pytestmark = pytest.mark.usefixtures("shared_cache")


def test_the_parts_write_their_rows(tmp_path):
    out = tmp_path / "calls.json"
    assert calls.main(["--quick", "--only", "einsum,matvec,outside", "--seconds", "0.01",
                       "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    parts = {r["part"] for r in result["rows"]}
    assert parts == {"einsum", "statement", "matvec", "outside"}
    for r in result["rows"]:
        assert r["etchpy_s"] > 0
        assert r["part"] != "einsum" or r["ratio"] > 0


def test_stencil3_is_the_7_point_laplacian():
    A = calls.stencil3_csr(3)
    dense = A.toarray()
    assert A.shape == (27, 27) and A.has_canonical_format
    assert np.all(np.diag(dense) == 6) and dense.sum() == 6 * 27 - 2 * 3 * 2 * 9
    np.testing.assert_array_equal(dense, dense.T)


def test_c_call_is_the_kernel_with_its_arguments_prebuilt():
    import etchpy as ep
    import scipy.sparse as sp
    A = sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0], [4, 0, 5]]))
    kern = ep.compile("y[i] = A[i, j] * x[j]", formats={"A": "csr"})
    assert calls.c_call(kern, {"A": A, "x": np.ones(3)})() == 0


def test_the_coo_cg_and_checks_parts_write_their_rows():
    """bench/calls_sparse.py over two small matrices (the calls module's helpers, its
    matrices replaced): one row per matrix, ratios of positive times."""
    import types
    import scipy.sparse as sp
    sparse_parts = pytest.importorskip("bench.calls_sparse")
    small = [("2-D 5-point Poisson", calls.stencil_csr(4)),
             ("random rows", sp.random_array((30, 30), density=0.2, format="csr",
                                             random_state=0))]
    stub = types.SimpleNamespace(**{k: getattr(calls, k) for k in
                                    ("alternate", "cycling", "row", "say_row")},
                                 spmv_matrices=lambda quick: iter(small))
    said = []
    for part in (sparse_parts.part_coo, sparse_parts.part_cg, sparse_parts.part_checks):
        rows = part(True, 0.001, said.append, stub)
        assert len(rows) == 2 and all(r["ratio"] > 0 for r in rows)
    assert len(said) == 6
    S = sparse_parts.spd(small[1][1])
    assert abs(S - S.T).max() == 0 and S.has_canonical_format


def test_cpu_clock_times_the_thread_not_the_wall():
    """--cpu: the medians are thread CPU time (a sleeping call costs next to none of
    it, its whole sleep in wall time); wall time is the default."""
    import time
    nap = lambda: time.sleep(0.002)       # noqa: E731
    (cpu,) = calls.alternate([nap], 0.001, clock="cpu")
    (wall,) = calls.alternate([nap], 0.001, clock="wall")
    (default,) = calls.alternate([nap], 0.001)
    assert cpu < 0.001 <= min(wall, default)
    assert calls.parser().parse_args(["--cpu", "--json", "x"]).cpu
    assert not calls.parser().parse_args(["--json", "x"]).cpu
