"""Plain sums in SIMD lanes (lower.schedule.gather_sums with Tuning.plain_sum_lanes):
a walk that sums a segment's values alone, `acc := acc ⊕ vals[q]` (row sums
Σ_j A[i,j], a sum of all entries), becomes an imp.GatherSum without `dense`: C's
lanes add the values (ep_gather_sum / ep_gather_ext given x NULL, no gather),
where the pick says so (ragged rows of any length; rows of one length from
Tuning.plain_sum_from). The sum is the loop's up to its reassociation
(proofs_notes/gather_sums.md); the coordinates are checked as the loop checks
them."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp, pipeline
from etchpy.tuning import of as tuning_of
from etchpy.errors import InputError
from tuned import on_interpreter

ROWS, TOTAL = "y[i] = A[i,j]", "s = A[i,j]"
OFF = ep.Tuning(plain_sum_lanes=False)


def c_text(text, semiring=None, tuning=None):
    """The C of text (a total's rows walked one by one: no flat walk, test_flat_walks)."""
    tuning = tuning_of(tuning).with_(flat_walks=False) if tuning != "noopt" else tuning
    kern = ep.compile(text, formats={"A": "csr"}, semiring=semiring, tuning=tuning)
    return pipeline.render_c(kern.compiled, "int32_t").c


def test_a_row_sum_and_a_total_become_plain_lanes_only_where_switched_on():
    for text in (ROWS, TOTAL):
        assert "A_crd1, NULL," in c_text(text) and "ep_gather_pick(A_pos1, A_dim0, 5, 1)" in \
            c_text(text)
        assert "A_crd1, NULL," in c_text(text, tuning=ep.Tuning(plain_sum_from=9))
        assert "ep_gather_pick(A_pos1, A_dim0, 9, 1)" in c_text(
            text, tuning=ep.Tuning(plain_sum_from=9))
        assert "NULL" not in c_text(text, tuning=OFF).split("int etchpy_kernel(")[1]
        assert "ep_gather" not in c_text(text, tuning="noopt").split("int etchpy_kernel(")[1]
        assert "ep_gather_ext(" in c_text(text, semiring="max_times")
    spmv = c_text("y[i] = A[i,j] * x[j]")       # a gathered sum keeps its own thresholds
    assert "NULL" not in spmv.split("int etchpy_kernel(")[1]


def matrices():
    rng = np.random.default_rng(11)
    yield "long rows", sp.random_array((50, 90), density=0.5, random_state=rng, format="csr")
    yield "ragged short rows", sp.random_array((400, 300), density=0.008, random_state=rng,
                                               format="csr")
    cols = np.sort(rng.integers(0, 200, (120, 6)), axis=1) + np.arange(6)
    yield "rows of 6", sp.csr_array((rng.standard_normal(720) + 3, cols.ravel(),
                                     np.arange(0, 721, 6)), shape=(120, 210))
    yield "rows of 2", sp.csr_array((rng.random(200) + 1, np.tile([3, 9], 100),
                                     np.arange(0, 201, 2)), shape=(100, 12))
    lil = sp.random_array((40, 70), density=0.4, random_state=rng, format="lil")
    lil[5:15, :] = 0
    yield "empty rows", sp.csr_array(lil)
    yield "no entries", sp.csr_array((6, 4))


def _reference(A, semiring, total):
    A = sp.csr_array(A)
    if semiring in ("real", "real32"):
        out = np.asarray(A.sum(axis=1), dtype=np.float64).ravel()
        return out.sum() if total else out
    pick = {"min_plus": (np.minimum, np.inf), "max_times": (np.maximum, 0.0)}[semiring]
    out = np.full(A.shape[0], pick[1])
    for r in range(A.shape[0]):
        seg = A.data[A.indptr[r]:A.indptr[r + 1]]
        if len(seg):
            out[r] = pick[0].reduce(seg)
    return pick[0].reduce(out, initial=pick[1]) if total else out


@pytest.mark.parametrize("semiring", ["real", "real32", "min_plus", "max_times"])
@pytest.mark.parametrize("text", [ROWS, TOTAL])
def test_plain_sums_agree_with_the_loop_and_scipy(semiring, text):
    """Real sums with int32 and int64 indices, on one and two threads; the other
    semirings with int32 indices on one (their lanes differ in ⊕ alone)."""
    dtype = np.float32 if semiring == "real32" else np.float64
    kerns = [ep.compile(text, formats={"A": "csr"}, semiring=semiring, tuning=t)
             for t in (None, OFF)]
    if semiring == "real":
        kerns.append(ep.compile(text, formats={"A": "csr"}, semiring=semiring, threads=2))
    for idx in (np.int32, np.int64) if semiring == "real" else (np.int32,):
        for name, A in matrices():
            A = sp.csr_array((np.abs(A.data).astype(dtype) + 0.5, A.indices.astype(idx),
                              A.indptr.astype(idx)), shape=A.shape)
            want = _reference(A.astype(np.float64), semiring, text == TOTAL)
            tol = 1e-4 if dtype == np.float32 else 1e-12
            for kern in kerns:
                for given in (A, ep.Tensor.from_scipy(A, "csr")):    # checked and not
                    got = np.asarray(kern(A=given), dtype=np.float64)
                    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)


@pytest.mark.parametrize("text", [ROWS, TOTAL])
def test_a_coordinate_outside_a_row_is_refused_by_the_lanes(text):
    kern = ep.compile(text, formats={"A": "csr"})
    for where in (0, 7, 8, 30):                     # the first and later chunks, a tail
        for bad in (-1, 90, 2**31 - 1):
            A = sp.csr_array((np.arange(1, 50 * 90 + 1).reshape(50, 90) % 5 * (
                np.arange(90) % 2 == 0)).astype(float))     # 36 or more entries a row
            assert A.indptr[6] - A.indptr[5] > where
            A.indices[A.indptr[5] + where] = bad
            with pytest.raises(InputError, match="A"):
                kern(A=A)


def test_the_interpreter_runs_a_plain_sum_as_its_loop():
    i, j = ep.indices("i j")
    A = ep.tensor("A", 2, format="csr")
    M = sp.random_array((25, 40), density=0.5, random_state=2, format="csr")
    final, prog, _ = on_interpreter(ep.sum(j, A[i, j]), ep.semirings.real, None,
                                    {"A": ep.Tensor.from_scipy(M, "csr")})
    sums = [s for s in imp.statements(prog.body) if isinstance(s, imp.GatherSum)]
    assert sums and all(s.dense is None for s in sums)
    np.testing.assert_allclose(final["out"], M.sum(axis=1), rtol=1e-12)
