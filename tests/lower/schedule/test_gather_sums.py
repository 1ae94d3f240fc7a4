"""Gathered sums (lower.schedule.gather_sums, Tuning.gather_sums): a walk that sums
vals[q]·x[crd[q]] becomes imp.GatherSum, run in SIMD lanes where the call's
GatherPick says so. proofs_notes/gather_sums.md: the node is the loop up to the
reassociation of its sum, reads only what the loop reads, and is checked as the
loop is. Matrices below take both picks: long rows, short rows of irregular
lengths (SIMD lanes) and short rows of one length (the loop below
Tuning.gather_from entries)."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp, lower, pipeline
from etchpy.errors import InputError
from tuned import on_interpreter

SPMV = "y[i] = A[i,j] * x[j]"


def stencil(g):
    one = sp.diags_array([-np.ones(g - 1), 2 * np.ones(g), -np.ones(g - 1)], offsets=[-1, 0, 1])
    return sp.csr_array(sp.kron(one, sp.eye_array(g)) + sp.kron(sp.eye_array(g), one))


def matrices():
    rng = np.random.default_rng(7)
    yield "long rows", sp.random_array((60, 80), density=0.4, random_state=rng, format="csr")
    yield "irregular short rows", sp.random_array((300, 300), density=0.01, random_state=rng,
                                                  format="csr")
    yield "regular short rows", stencil(12)
    rows = sp.random_array((40, 50), density=0.3, random_state=rng, format="lil")
    rows[3:9, :] = 0                                                # empty rows
    yield "empty rows", sp.csr_array(rows)
    yield "one row", sp.random_array((1, 64), density=0.5, random_state=rng, format="csr")
    yield "no entries", sp.csr_array((5, 7))


def c_text(semiring=None, tuning=None, formats=None):
    kern = ep.compile(SPMV, formats=formats or {"A": "csr"}, semiring=semiring, tuning=tuning)
    return pipeline.render_c(kern.compiled, "int32_t").c


def test_an_spmv_row_becomes_a_gathered_sum_over_float64_semirings_with_lanes():
    assert "ep_gather_sum(" in c_text() and "ep_gather_pick(" in c_text()
    assert "ep_gather_sum(" not in c_text(tuning=ep.Tuning(gather_sums=False))
    assert "ep_gather_sum(" not in c_text(tuning="noopt")
    for lanes in ("min_plus", "max_plus", "max_times"):
        assert "ep_gather_ext(" in c_text(semiring=lanes)
        assert "ep_gather_ext(" not in c_text(semiring=lanes, tuning="noopt")
    assert "ep_gather_sum(" in c_text(semiring="real32")          # float lanes
    for other in ("integer", "boolean"):
        text = c_text(semiring=other)
        assert "ep_gather_sum(" not in text and "ep_gather_ext(" not in text
    assert "ep_gather_sum(" not in c_text(formats={"A": "csc"})     # a scatter, not a sum


@pytest.mark.parametrize("idx", [np.int32, np.int64])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", list(dict(matrices())))
def test_gathered_sums_agree_with_scipy(case, threads, idx):
    A = dict(matrices())[case]
    A = sp.csr_array((A.data, A.indices.astype(idx), A.indptr.astype(idx)), shape=A.shape)
    kern = ep.compile(SPMV, formats={"A": "csr"}, threads=threads)
    rng = np.random.default_rng(1)
    for _ in range(3):                                      # a new x each call
        x = rng.standard_normal(A.shape[1])
        want = A @ x
        np.testing.assert_allclose(kern(A=A, x=x), want, rtol=1e-12, atol=1e-12)
        tensor = ep.Tensor.from_scipy(A, "csr")             # the build without checks
        np.testing.assert_allclose(kern(A=tensor, x=x), want, rtol=1e-12, atol=1e-12)


def rows_of(n, length, rng):
    """n rows of `length` distinct random columns each (one length: the pick's threshold)."""
    cols = np.sort(rng.integers(0, 4 * n - length, (n, length)), axis=1) + np.arange(length)
    return sp.csr_array((rng.standard_normal(n * length), cols.ravel(),
                         np.arange(0, n * length + 1, length)), shape=(n, 4 * n))


def test_the_pick_takes_real_rows_of_one_length_from_tuning_gather_from():
    intel = ep.Tuning(gather_from=6, gather_from_far=5, gather_ragged_from=0)  # host_facts' Intel
    assert "ep_gather_pick(A_pos1, A_dim0, A_far ? 5 : 6, 0);" in c_text(tuning=intel)  # far: gather_from_far
    assert "ep_gather_pick(A_pos1, A_dim0, 11, 30);" in c_text(
        tuning=ep.Tuning(gather_from=11, gather_from_far=0, gather_ragged_from=30,
                         gather_ragged_far=0, gather_mild_far=0))   # far ragged rows: off
    assert "ep_gather_pick(A_pos1, A_dim0, 0, 0);" in c_text(semiring="min_plus")  # chunk rule
    rng = np.random.default_rng(4)
    for length in (5, 6, 10):
        A = rows_of(200, length, rng)
        x = rng.standard_normal(A.shape[1])
        for least in (6, 11):                               # lanes, then the loop, for rows of 10
            kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=ep.Tuning(gather_from=least))
            for given in (A, ep.Tensor.from_scipy(A, "csr")):
                np.testing.assert_allclose(kern(A=given, x=x), A @ x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("idx", [np.int32, np.int64])
@pytest.mark.parametrize("case", ["long rows", "irregular short rows", "empty rows"])
def test_float32_lanes_agree_with_scipy(case, idx):
    A = dict(matrices())[case].astype(np.float32)
    A = sp.csr_array((A.data, A.indices.astype(idx), A.indptr.astype(idx)), shape=A.shape)
    kern = ep.compile(SPMV, formats={"A": "csr"})          # real32, chosen by the dtype
    x = np.random.default_rng(2).standard_normal(A.shape[1]).astype(np.float32)
    want = A.astype(np.float64) @ x.astype(np.float64)
    for given in (A, ep.Tensor.from_scipy(A, "csr")):       # checked and unchecked builds
        got = kern(A=given, x=x)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [float, np.float32])
@pytest.mark.parametrize("where", [0, 7, 8, 15, 25, 29])  # lanes of the first and second
@pytest.mark.parametrize("bad", [-1, 80, 2**31 - 1])     # chunks, and the tails
def test_a_coordinate_outside_a_long_row_is_refused(where, bad, dtype):
    A = sp.csr_array((np.arange(1, 60 * 80 + 1).reshape(60, 80) % 7 * (
        np.arange(80) % 3 == 0)).astype(dtype))             # 27 entries a row
    A.indices[A.indptr[5] + where] = bad
    kern = ep.compile(SPMV, formats={"A": "csr"})
    with pytest.raises(InputError, match="A"):
        kern(A=A, x=np.ones(80, dtype=dtype))


def test_an_unsorted_row_with_repeats_is_summed_as_its_canonical_form():
    A = sp.random_array((30, 40), density=0.5, random_state=3, format="csr")
    want_matrix = A.copy()
    for r in range(A.shape[0]):
        seg = slice(A.indptr[r], A.indptr[r + 1])
        A.indices[seg] = A.indices[seg][::-1]
        A.data[seg] = A.data[seg][::-1]
    A.indices[A.indptr[2] + 1] = A.indices[A.indptr[2]]      # a repeat
    want_matrix = sp.csr_array((A.data, A.indices, A.indptr), shape=A.shape)
    x = np.arange(40.0)
    got = ep.compile(SPMV, formats={"A": "csr"})(A=A, x=x)
    np.testing.assert_allclose(got, want_matrix.toarray() @ x, rtol=1e-12)


def test_the_interpreter_runs_a_gathered_sum_as_its_loop():
    i, j = ep.indices("i j")
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    expr = ep.sum(j, A[i, j] * x[j])
    M = sp.random_array((20, 30), density=0.4, random_state=5, format="csr")
    v = np.linspace(-1, 1, 30)
    final, prog, _ = on_interpreter(expr, ep.semirings.real, None,
                                    {"A": ep.Tensor.from_scipy(M, "csr"), "x": v})
    assert any(isinstance(s, imp.GatherSum) for s in imp.statements(prog.body))
    np.testing.assert_allclose(final["out"], M @ v, rtol=1e-12)
    assert lower.Program is type(prog)
