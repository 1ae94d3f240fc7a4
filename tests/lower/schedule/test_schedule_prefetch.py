"""The prefetch pass: gathered rows, rows that follow one another and the rows of
B that Gustavson's SpGEMM will read are prefetched ahead. Results do not change,
and the Imp interpreter checks every prefetched index."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.tuning import DEFAULT
from tuned import INTEL, csr_on_interpreter, on_interpreter, random_csr

i, j, k = ep.indices("i j k")
A_csr = ep.tensor("A", 2, format="csr")
x_vec = ep.tensor("x", 1)
SPMV = ep.sum(j, A_csr[i, j] * x_vec[j])

pytestmark = pytest.mark.usefixtures("shared_cache")


def test_gathered_rows_of_large_operands_are_prefetched():
    """SpMM gathers X[j,:] at A's column coordinates: the j loop prefetches the rows
    of the entries 16 ahead (crd read only inside A's crd), when X holds at least
    tuning.prefetch_min_bytes. A scalar gather (SpMV's x[j]) is left alone. Results do not
    change, in C (big X, prefetching) or on the interpreter, which checks that
    every prefetched index is inside its array."""
    X = ep.tensor("X", 2)
    spmm = ep.sum(j, A_csr[i, j] * X[j, k])
    src = ep.compile(spmm).c_source
    assert "if ((j_far && (131072 <= (dim_j * dim_k))) && ((j_q + 16) < A_pos1[A_dim0]))" in src
    assert "int64_t j_pf_at = (j_ahead * dim_k);" in src
    assert "EP_PREFETCH(&X_vals[j_pf_at + j_pf]);" in src
    assert "j_pf_n - 1" not in src           # a dense row: no last line of its own
    assert "rows of large operands prefetched ahead" in src
    off = ep.compile(SPMV, tuning=ep.Tuning(prefetch_values=0)).c_source   # values: their
    assert "EP_PREFETCH(&x_vals" not in off         # own pass (test_value_prefetch.py)
    M = random_csr(3000, 6000, 30000, 8)
    Xv = np.random.default_rng(2).random((6000, 32))          # 1.5 MB: prefetched
    np.testing.assert_allclose(ep.evaluate(spmm, A=M, X=Xv), M @ Xv, rtol=1e-12)
    near = DEFAULT.with_(prefetch_min_bytes=8, prefetch_distance=3)
    sr = ep.semirings.get("real")
    small, Xs = random_csr(30, 20, 90, 9), np.random.default_rng(3).random((20, 5))
    final, prog, _ = on_interpreter(spmm, sr, None, {"A": small, "X": Xs}, tuning=near)
    assert any(isinstance(u, ep.imp.Prefetch) for u in ep.imp.statements(prog.body))
    np.testing.assert_allclose(final["out"].reshape(30, 5), small @ Xs, rtol=1e-12)


def test_rows_that_follow_one_another_prefetch_their_arrays_ahead():
    """A csr level below a counter whose loop only adds up its values (SpMV's
    rows) prefetches its crd and values tuning.run_ahead entries past each row's start
    (every row: run_short 0 makes no test of a row's length, which cost the
    checked build's rows more than it saved; rows of at least run_short entries
    otherwise), not clamped (prefetch_past, below), and clamped to one past the
    end at every step in rows of at least run_long entries, when it holds at least
    run_min_entries entries. Other loops do not: a row
    gathered at another operand's coordinates (Gustavson's B[j,:]), a loop that
    writes (a transpose). Results do not change; the interpreter checks each
    prefetched index is inside its array or one past it, with a distance that
    reaches past the end of A's arrays."""
    src = ep.compile(SPMV, tuning=INTEL).c_source                          # (Intel's test)
    assert "if (524288 <= A_pos1[A_dim0]) {" in src      # once, before the rows (size_switch)
    assert "(j_end - j_q)) {\n" not in src.split("EP_PREFETCH_AHEAD(&A_crd1[j_q], 256);")[0]
    assert "if (4 <= (j_end - j_q)) {" in ep.compile(SPMV, tuning=INTEL.with_(run_short=4)).c_source
    for a in ("crd1", "vals"):     # at every step of a long row
        assert f"EP_PREFETCH(&A_{a}[ep_min((j_q + 256), A_pos1[A_dim0])]);" in src
    assert "if (32 <= (j_end - j_q)) {" in src
    assert "its arrays prefetched 256 ahead" in src
    B = ep.tensor("B", 2, format="csr")
    gus = ep.compile(ep.sum(j, A_csr[i, j] * B[j, k]), output="csr").c_source
    assert "EP_PREFETCH(&B_crd1[ep_min(" not in gus
    assert "ep_min((j_q + 256)" not in ep.compile(A_csr[i, j], output="csc").c_source
    rng = np.random.default_rng(5)
    M = random_csr(400, 300, 6000, 10)
    v = rng.random(300)
    np.testing.assert_allclose(ep.evaluate(SPMV, A=M, x=v), M @ v, rtol=1e-12)
    near = DEFAULT.with_(run_ahead=5, run_short=1, run_min_entries=0, run_long=3)
    sr = ep.semirings.get("real")
    for small in (random_csr(30, 20, 90, 9), sp.csr_matrix((12, 20)),
                  sp.csr_matrix(np.triu(np.ones((20, 20))))):
        xs = rng.random(20)
        final, prog, _ = on_interpreter(SPMV, sr, None, {"A": small, "x": xs}, tuning=near)
        assert any(isinstance(u, ep.imp.Prefetch) for u in ep.imp.statements(prog.body))
        np.testing.assert_allclose(final["out"], small @ xs, rtol=1e-12)


def test_a_rows_start_prefetches_its_arrays_ahead_unclamped():
    """tuning.prefetch_past: a row's start prefetches crd and values run_ahead
    entries past it with no clamp to the end, one EP_PREFETCH_AHEAD each (the
    distance added to the address as an integer: a prefetch past the arrays'
    end forms no pointer past them, and does not fault); off, clamped as at
    every step. The interpreter checks the row start's own index; results are
    the loop's, in C past the end of A's arrays too (the last rows, run_ahead
    entries before the end)."""
    src = ep.compile(SPMV, tuning=INTEL.with_(prefetch_values=0)).c_source  # (values far or
    for a in ("crd1", "vals"):                                             # not: twice more)
        assert src.count(f"EP_PREFETCH_AHEAD(&A_{a}[j_q], 256);") == 2    # lanes or not
    off = ep.compile(SPMV, tuning=INTEL.with_(prefetch_past=False, prefetch_values=0)).c_source
    assert "EP_PREFETCH_AHEAD(&" not in off
    assert off.count("EP_PREFETCH(&A_crd1[ep_min((j_q + 256), A_pos1[A_dim0])]);") == 4
    node = ep.imp.Prefetch("A_crd1", ep.imp.Var("q"), ahead=256)
    assert "+ 256 (may be past its end)" in ep.imp.show(node)
    M, v = random_csr(300, 200, 3000, 12), np.random.default_rng(6).random(200)
    forced = DEFAULT.with_(run_min_entries=0, run_ahead=1 << 20)   # every row past the end
    for t in (forced, forced.with_(prefetch_past=False)):
        np.testing.assert_allclose(ep.evaluate(SPMV, A=M, x=v, tuning=t), M @ v, rtol=1e-12)
        final, prog, _ = on_interpreter(SPMV, ep.semirings.get("real"), None,
                                        {"A": M, "x": v}, tuning=t)
        assert any(isinstance(u, ep.imp.Prefetch) for u in ep.imp.statements(prog.body))
        np.testing.assert_allclose(final["out"], M @ v, rtol=1e-12)

def test_gustavson_prefetches_the_rows_of_b_it_will_read():
    """Σ_j A[i,j]·B[j,k] locates B's row j at A's coordinates: when B is large, the
    j loop prefetches pos[j] of the entry 32 ahead, and the crd and vals of the
    row of the entry 16 ahead (from that pos). Results do not change, in C or on
    the interpreter, which checks that every prefetched index is inside its
    array (rows at the end of B, crd read only inside A's crd), a row's last
    value too."""
    B = ep.tensor("B", 2, format="csr")
    gus = ep.sum(j, A_csr[i, j] * B[j, k])
    src = ep.compile(gus, output="csr").c_source
    assert "EP_PREFETCH(&B_pos1[A_crd1[(j_q + 32)]]);" in src
    assert "EP_PREFETCH(&B_crd1[j_pf_at + j_pf]);" in src
    assert "EP_PREFETCH(&B_vals[j_pf_at_1 + j_pf_1]);" in src
    # a compressed row's last line as well (tuning.prefetch_row_end)
    assert "EP_PREFETCH(&B_vals[j_pf_at_1 + ep_max((j_pf_n_1 - 1), 0)]);" in src
    off = ep.compile(gus, output="csr", tuning=DEFAULT.with_(prefetch_row_end=False))
    assert "(j_pf_n_1 - 1)" not in off.c_source
    # B large enough: 1 MiB of its values and indices (tuning.prefetch_index_bytes), or values only
    assert "if (87381 <= B_pos1[B_dim0]) {" in src            # 1 MiB / (8 + 4)
    single = ep.compile(gus, output="csr", semiring="real32").c_source
    assert "if (131072 <= B_pos1[B_dim0]) {" in single        # 1 MiB / (4 + 4)
    values = ep.compile(gus, output="csr", semiring="real32",
                        tuning=DEFAULT.with_(prefetch_index_bytes=0)).c_source
    assert "if (262144 <= B_pos1[B_dim0]) {" in values
    M, N = random_csr(400, 300, 3000, 10), random_csr(300, 500, 150000, 11)  # N: 1.2 MB
    np.testing.assert_allclose(ep.evaluate(gus, output="csr", A=M, B=N).toarray(),
                               (M @ N).toarray(), rtol=1e-12)
    near = DEFAULT.with_(prefetch_min_bytes=8, prefetch_distance=2)
    sr = ep.semirings.get("real")
    small, Ns = random_csr(30, 20, 120, 12), random_csr(20, 25, 200, 13)
    last = sp.csr_array((np.ones(30), (np.arange(30), np.full(30, 19))), shape=(30, 20))
    small = (small + last).tocsr()          # the last row of B is read (pos[20])
    got = csr_on_interpreter(gus, sr, tuning=near, A=small, B=Ns)
    np.testing.assert_allclose(got.toarray(), (small @ Ns).toarray(), rtol=1e-12)


def test_rows_gathered_for_a_near_segment_are_not_prefetched():
    """A segment whose coordinates span at most 1/prefetch_near_share of the
    gathered dimension (a stencil's row) decides once, at its start, not to
    prefetch the rows it gathers; a wider one (a random row) or a row of one
    entry prefetches them. Share 0: no test. Results do not change whichever
    way a segment goes, in C and on the interpreter (which checks that the
    segment's ends are read inside A's crd: empty rows, rows of one entry)."""
    B = ep.tensor("B", 2, format="csr")
    gus = ep.sum(j, A_csr[i, j] * B[j, k])
    src = ep.compile(gus, output="csr").c_source
    assert "int j_far = !(((0 <= j_q) && (((j_q + 1) < j_end) && (j_end <= A_pos1[A_dim0])))" in src
    assert "* 8) <= dim_j)" in src and "if (j_far && ((j_q + 16) < A_pos1[A_dim0]))" in src
    assert "j_far" not in ep.compile(gus, output="csr",
                                     tuning=DEFAULT.with_(prefetch_near_share=0)).c_source
    n = 40
    band = sp.diags_array([np.ones(n - 1), 2 * np.ones(n), np.ones(n - 1)], offsets=[-1, 0, 1])
    wide = random_csr(n, n, 300, 14)
    one = sp.csr_array((np.ones(n // 2), (np.arange(0, n, 2), np.arange(n // 2))), shape=(n, n))
    sr = ep.semirings.get("real")
    forced = DEFAULT.with_(prefetch_min_bytes=8, prefetch_distance=2)
    kern = ep.compile(gus, output="csr", tuning=forced)
    for M in (sp.csr_array(band), wide, one):     # near, far, one entry a row
        want = (M @ wide).toarray()
        np.testing.assert_allclose(kern(A=M, B=wide).toarray(), want, rtol=1e-12)
        got = csr_on_interpreter(gus, sr, tuning=forced, A=M, B=wide)
        np.testing.assert_allclose(got.toarray(), want, rtol=1e-12)


@pytest.mark.parametrize("fmt", ["uniform_band", "banded", "blocks"])
def test_counted_runs_prefetch_their_whole_run_ahead(fmt):
    """A level read as counted pieces (a band, a row of blocks), whose loop gets
    no prefetch per step, prefetches at the start of each run of at least
    tuning.piece_short entries (8; the runs below set 1) the entry
    tuning.piece_ahead past its position and, in a run of more than 8, every
    8th after it within its Extent, up to tuning.run_lines lines, clamped to
    its arrays (run_lines=1: one prefetch, run_ahead past, as a segment's
    start: not clamped). Results do not
    change; the interpreter checks every prefetched index lies inside the
    array (or one past it)."""
    A = ep.tensor("A", 2, fmt)
    spmv = ep.sum(j, A[i, j] * x_vec[j])
    src = ep.compile(spmv).c_source
    assert "+ 512), " in src and "256)), " in src and "j_pf = (j_pf + 8);" in src
    assert "(8 <= (" in src and "if (8 < (" in src
    assert "each run's lines prefetched 512 ahead" in src
    one = ep.compile(spmv, tuning=DEFAULT.with_(run_lines=1)).c_source
    assert "j_pf" not in one and "prefetched 256 ahead" in one
    assert "EP_PREFETCH_AHEAD(&" in one and ", 256);" in one        # unclamped (prefetch_past)
    rng = np.random.default_rng(6)
    sr = ep.semirings.get("real")
    for lines in (2, 64):
        near = DEFAULT.with_(piece_ahead=3, run_lines=lines, run_short=1, run_min_entries=0,
                             piece_short=1)
        for d in (sp.random_array((30, 20), density=0.3, rng=rng).toarray(),
                  np.zeros((12, 20)), np.triu(np.ones((20, 20)))):
            t, xs = ep.Tensor.from_dense(d, fmt), rng.random(20)
            final, prog, _ = on_interpreter(spmv, sr, None, {"A": t, "x": xs}, tuning=near)
            if d.any():
                assert any(isinstance(u, ep.imp.Prefetch) for u in ep.imp.statements(prog.body))
            np.testing.assert_allclose(final["out"], d @ xs, rtol=1e-12)


def test_a_run_prefetches_only_the_arrays_its_loop_reads():
    """Row sums Σ_j A[i,j] never read j's coordinate: its crd is not prefetched
    (a prefetch no load follows only adds memory traffic), the values are; with
    Tuning(prefetch_read=False) both are, as before. SpMV reads both (x[j] at the
    coordinate). Results equal, in C and on the interpreter (which checks every
    prefetched index)."""
    sums = ep.sum(j, A_csr[i, j])
    src = ep.compile(sums).c_source
    assert "EP_PREFETCH_AHEAD(&A_vals[j_q], 256);" in src
    assert "PREFETCH_AHEAD(&A_crd1" not in src and "EP_PREFETCH(&A_crd1" not in src
    old = ep.compile(sums, tuning=ep.Tuning(prefetch_read=False)).c_source
    assert "EP_PREFETCH_AHEAD(&A_crd1[j_q], 256);" in old
    assert "EP_PREFETCH_AHEAD(&A_crd1[j_q], 256);" in ep.compile(SPMV).c_source
    M = random_csr(3000, 6000, 30000, 8)
    want = np.asarray(M.sum(axis=1)).ravel()
    for t in (DEFAULT, DEFAULT.with_(prefetch_read=False)):
        np.testing.assert_allclose(ep.evaluate(sums, A=M, tuning=t), want, rtol=1e-12)
    tiny = DEFAULT.with_(run_min_entries=0, run_ahead=3)
    small = random_csr(40, 50, 300, 3)
    final, prog, _ = on_interpreter(sums, ep.semirings.get("real"), None, {"A": small},
                                    tuning=tiny)
    np.testing.assert_allclose(final["out"], np.asarray(small.sum(axis=1)).ravel())


def test_a_register_blocks_narrow_rows_wait_for_prefetch_block_from():
    """Rows a register block gathers (SpMM's X[j,:] in the arm of 1..32 columns)
    that are under 4 lines are prefetched only from an operand of
    tuning.prefetch_block_from bytes (the host's: 32 MiB on AMD Zen, whose L3
    serves them faster than their prefetches; 0 elsewhere: prefetch_min_bytes,
    the C as it was); rows of 4 lines or more, the arm of any other width (not
    in registers) and a sparse output's gathers keep prefetch_min_bytes. Results
    do not change (the interpreter checks each prefetched index)."""
    X, U, V = ep.tensor("X", 2), ep.tensor("U", 2), ep.tensor("V", 2)
    spmm = ep.sum(j, A_csr[i, j] * X[j, k])
    zen = ep.compile(spmm, tuning=INTEL.with_(prefetch_block_from=32 << 20)).c_source
    assert "((((1 * 8) < 256) ? 4194304 : 131072) <= (dim_j * 1))" in zen
    assert "((((32 * 8) < 256) ? 4194304 : 131072) <= (dim_j * 32))" in zen
    assert "(131072 <= (dim_j * dim_k))" in zen
    assert "? 4194304 : " not in ep.compile(spmm, tuning=INTEL).c_source
    sddmm = ep.compile(ep.sum(k, A_csr[i, j] * U[i, k] * V[j, k]), output="csr",
                       tuning=INTEL.with_(prefetch_block_from=32 << 20)).c_source
    assert "rows of large operands prefetched ahead" in sddmm and "? 4194304 : " not in sddmm
    sr = ep.semirings.get("real")
    M, Xs = random_csr(30, 20, 90, 9), np.random.default_rng(3).random((20, 2))
    for least in (16, 1 << 20):         # prefetched, then not
        final, prog, _ = on_interpreter(spmm, sr, None, {"A": M, "X": Xs}, tuning=DEFAULT.with_(
            prefetch_min_bytes=8, prefetch_block_from=least, prefetch_distance=3))
        np.testing.assert_allclose(final["out"].reshape(30, 2), M @ Xs, rtol=1e-12)
