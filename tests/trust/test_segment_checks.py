"""Segments checked a block ahead (lower.schedule.segment_checks,
proofs_notes/validation.md): a full loop over a fused input's rows checks the
next `check_block` rows' indptr entries in a flat pass before opening them,
instead of a guard per row (or each row tests its own as it opens: Tuning.check_rows,
lower.schedule.row_checks). Whatever is written into a scipy input's indptr,
in any block, a call answers right or raises an InputError naming the input,
never reads outside the arrays (tests/trust/test_sanitizer.py runs this file
under ASan and UBSan)."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, strategies as st

import etchpy as ep
from etchpy.errors import InputError
from etchpy.lower.schedule import fused_checks, segment_checks
from tuned import INTEL_FACTS

SPMV = "y[i] = A[i,j] * x[j]"
GUARD = "(uint64_t)j_end < (uint64_t)j_q"       # the per-segment guard's test


def spmv(block, threads=None, **options):
    """The SpMV kernel checking its rows a block ahead (`row_checks` 0: not each
    row as it opens, the host's way on Intel: test_rows_checked.py), its C the
    one an Intel host's facts shape, on every host."""
    return ep.compile(SPMV, formats={"A": "csr"}, threads=threads, **options,
                      tuning={**INTEL_FACTS, "check_block": block, "row_checks": 0})


def test_a_full_loop_checks_its_rows_a_block_ahead_and_the_switch_restores_the_guard():
    ahead, guarded = spmv(1024).source("int32_t").c, spmv(0).source("int32_t").c
    assert "i_c_bad" in ahead and "+ 1024)" in ahead and GUARD not in ahead
    # the SpMV walk only adds into a dense output: its loops test each coordinate
    # with no branch (a bad one read as 0 and counted), so they keep one exit
    kernel = ahead[ahead.index("int etchpy_kernel("):]
    assert "? A_crd1[j_q] : 0)" in kernel and "break;" not in kernel
    assert "if (!((uint64_t)A_crd1[j_q] < (uint64_t)A_dim1)) break;" in guarded
    assert "i_c_bad" not in guarded and GUARD in guarded
    plain = ep.compile(SPMV, formats={"A": "csr"}, tuning={"fused_checks": False})
    assert "i_c_bad" not in plain.source("int32_t").c


@pytest.mark.parametrize("options", [{"semiring": "real32"}, {"semiring": "integer"},
                                     {"tuning": {"gather_sums": False}}])
def test_a_loop_switched_on_the_inputs_size_is_still_a_full_loop(options):
    """Without gathered sums (other value types, or switched off) the size
    switch puts the row loop apart from its counter's start (`i_c = 0; if
    (large) loop else loop`): each way is still a full loop, checked ahead."""
    tuning = {**INTEL_FACTS, "check_block": 1024, "row_checks": 0, **options.pop("tuning", {})}
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=tuning, **options)
    text = kern.source("int32_t").c
    kernel = text[text.index("int etchpy_kernel("):]
    assert kernel.count("i_c_bad") >= 4 and GUARD not in kernel and "break;" not in kernel


def test_serial_walks_count_bad_coordinates_once_and_threaded_walks_each():
    """The clamped walks of a serial kernel add their bad coordinates into one
    count, tested once after the loops (no test after each row); a walk inside a
    loop split across threads keeps its own count and test (blocks run on either
    thread). `check_count_once=False` gives every walk its own again."""
    kernel = spmv(1024).source("int32_t").c
    kernel = kernel[kernel.index("int etchpy_kernel("):]
    assert "input_bad = (input_bad + !j_q_ok" in kernel and "j_q_bad" not in kernel
    assert kernel.count("if (input_bad != 0)") == 1
    threaded = spmv(1024, threads=2).source("int32_t").c
    assert "input_bad" not in threaded and "j_q_bad" in threaded
    each = ep.compile(SPMV, formats={"A": "csr"}, tuning={**INTEL_FACTS, "check_count_once": False})
    text = each.source("int32_t").c
    assert "input_bad" not in text and "if (j_q_bad" in text


@pytest.mark.parametrize("count_once", [True, False])
@pytest.mark.parametrize("bad", [9, -1, 2**31 - 1])
def test_a_bad_coordinate_in_any_row_is_refused_either_way(count_once, bad):
    m = matrix(30, 5)
    x = np.arange(1.0, 10.0)
    kern = ep.compile(SPMV, formats={"A": "csr"},
                      tuning={"check_count_once": count_once, "gather_sums": False})
    for at in (0, m.nnz // 2, m.nnz - 1):
        c = m.copy()
        c.indices[at] = bad
        with pytest.raises(InputError, match="'A'"):
            kern(A=c, x=x)
    np.testing.assert_allclose(kern(A=m, x=x), m @ x)


def test_rows_picked_by_a_sparse_operand_keep_the_guard_per_row():
    """v's coordinates pick the rows A opens: no loop runs over all of A's rows,
    so a pass over all of them would add work; each segment is checked as it opens."""
    kern = ep.compile("y[j] = v[i] * A[i,j]",
                      formats={"A": "csr", "v": ep.Format(["compressed"])})
    prog = kern.compiled.program
    levels = list(fused_checks.candidates(prog).values())
    assert [lv.tensor for lv in levels] == ["A"]
    assert segment_checks.plan(prog, levels) == []
    c = kern.source("int32_t").c
    assert "(uint64_t)j_end_1 < (uint64_t)j_q_1" in c and "_bad" not in c


def test_a_threaded_loop_checks_its_blocks_ahead_and_raises_a_flag():
    """A scipy input of a kernel split across threads is checked by the kernel
    too: the rows' loop runs over blocks of rows, each block's indptr tested
    first (its first start too, blocks running in any order), and each block of
    the C split reports in its own slot, raised after the loop."""
    kern = spmv(1024, threads=2)
    assert kern.compiled.checked.fused == {"A"}
    c = kern.source("int32_t").c
    assert "input_error_slots[" in c and "*input_error_slot = input_error;" in c
    assert "(A_pos1[i_c_lo] < 0)" in c and "i_c_bad" in c and GUARD not in c
    assert "? A_crd1[j_q] : 0)" in c
    guarded = spmv(0, threads=2).source("int32_t").c
    assert GUARD in guarded and "input_error_slots[" in guarded
    plain = ep.compile(SPMV, formats={"A": "csr"}, threads=2, tuning={"fused_checks": False})
    assert "input_error" not in plain.source("int32_t").c


def matrix(rows, seed):
    m = sp.random(rows, 9, density=0.4, format="csr", random_state=seed)
    m.sort_indices()
    return sp.csr_matrix(m)


def canonical(m):
    """m's matrix when its arrays describe one, else None."""
    p, q = np.asarray(m.indptr), np.asarray(m.indices)
    if (len(p) != m.shape[0] + 1 or p[0] != 0 or np.any(np.diff(p) < 0) or p[-1] != len(q)
            or (len(q) and (q.min() < 0 or q.max() >= m.shape[1]))):
        return None
    c = sp.csr_matrix((m.data.copy(), q.copy(), p.copy()), shape=m.shape)
    c.sum_duplicates()
    return c


KERNELS = {(block, None): spmv(block) for block in (1, 2, 3, 7, 1024, 0)}
KERNELS |= {(block, 2): spmv(block, threads=2) for block in (1024, 0)}   # blocks of 1-2 rows
KERNELS |= {("rows", lanes): ep.compile(SPMV, formats={"A": "csr"}, tuning={   # each row tests
    "check_rows": True, "gather_sums": lanes}) for lanes in (True, False)}    # its own (row_checks)


@given(rows=st.integers(1, 40), seed=st.integers(0, 2**16),
       block=st.sampled_from(sorted(KERNELS, key=str)),
       where=st.floats(0, 1), how=st.sampled_from(["down", "past_nnz", "negative", "huge",
                                                   "last_short", "index_at_dim",
                                                   "index_negative", "index_huge"]))
def test_indptr_written_in_any_block_is_answered_or_refused(rows, seed, block, where, how):
    m, kern = matrix(rows, seed), KERNELS[block]
    x = np.arange(1.0, 10.0)
    np.testing.assert_allclose(kern(A=m, x=x), m @ x)
    p, nnz = m.indptr, len(m.indices)
    r = min(int(where * rows), rows - 1) + 1            # an inner or the last indptr entry
    match how:
        case "down":
            p[r] = p[r - 1] - 1
        case "past_nnz":
            p[r] = nnz + 3
        case "negative":
            p[r] = -2
        case "huge":
            p[r] = 2**30
        case "last_short":
            p[r] = max(p[r] - 1, 0)
        case "index_at_dim" | "index_negative" | "index_huge" if nnz:
            m.indices[min(int(where * nnz), nnz - 1)] = {"index_at_dim": 9, "index_negative": -1,
                                                         "index_huge": 2**31 - 1}[how]
    fixed = canonical(m)
    try:
        got = kern(A=m, x=x)
    except InputError as err:
        assert fixed is None, err
        assert "'A'" in str(err) or "input A" in str(err), err
        return
    assert fixed is not None, "a malformed input was accepted"
    np.testing.assert_allclose(got, fixed @ x)
