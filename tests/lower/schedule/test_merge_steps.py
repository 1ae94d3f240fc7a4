"""Union merges check their scipy inputs in their own steps (lower.schedule.
merge_steps, Tuning.merge_steps; proofs_notes/validation.md, "Checks in a
union's steps"): the kernel refuses exactly the malformed segments."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.runtime import calling

ADD = "C[i, j] = A[i, j] + B[i, j]"
CSR = {"A": "csr", "B": "csr"}


def kernel_rc(kern, values):
    """The return code of the checked build's C function on `values`."""
    runner, lib, types, function, in_args, bound, out_shape, _, _ = kern._make(values, None)
    args = list(in_args)
    runner._output_args(args, None, out_shape, bound, lib, types)
    return function(*args)


def stepped(kern) -> bool:
    return "_prev = -1;" in kern.c_source


def test_which_merges_are_checked_in_their_steps():
    """A + B into csr (one thread or two); off: the block checks ahead; into a
    dense output the coordinate is an address: the checks ahead."""
    assert stepped(ep.compile(ADD, output="csr", formats=CSR))
    assert stepped(ep.compile(ADD, output="csr", formats=CSR, threads=2))
    off = ep.compile(ADD, output="csr", formats=CSR, tuning={"merge_steps": False})
    assert not stepped(off) and off.compiled.checked.fused == {"A", "B"}
    dense = ep.compile("C[i, j] = A[i, j] + B[i, j]", formats=CSR)
    assert not stepped(dense)


def _well_formed(m) -> bool:
    p, q = m.indptr, m.indices
    return all(np.all(np.diff(q[p[r]:p[r + 1]]) > 0) for r in range(len(p) - 1)) and (
        len(q) == 0 or (q.min() >= 0 and q.max() < m.shape[1]))


@pytest.mark.parametrize("text, names, threads", [
    (ADD, "AB", 1), (ADD, "AB", 2), ("C[i, j] = A[i, j] + B[i, j] + D[i, j]", "ABD", 1)])
def test_refuses_exactly_the_malformed_segments(text, names, threads):
    """Random coordinates written into random rows (in range or not, in order
    or not), of two operands or three (a union of a union): the kernel returns
    CHECK_FAILED exactly when a segment is out of order or out of range, and
    its answer is the sum otherwise."""
    kern = ep.compile(text, output="csr", formats=dict.fromkeys(names, "csr"), threads=threads)
    assert stepped(kern)
    rng = np.random.default_rng(threads)
    seen = set()
    for trial in range(30):
        Ms = [sp.random_array((9, 7), density=0.4, format="csr", random_state=int(s))
              for s in rng.integers(1 << 30, size=len(names))]
        M = Ms[trial % len(names)]
        for _ in range(int(rng.integers(1, 3))):
            if M.nnz:
                M.indices[rng.integers(M.nnz)] = rng.integers(-3, 10)
        good = all(_well_formed(m) for m in Ms)
        seen.add(good)
        values = dict(zip(names, Ms))
        assert kernel_rc(kern, values) == (0 if good else calling.CHECK_FAILED), (trial, values)
        if good:
            np.testing.assert_allclose(kern(**values).toarray(), sum(m.toarray() for m in Ms))
    assert seen == {True, False}


def test_extreme_int64_coordinates_are_refused():
    """Coordinates near ±2^62 and ±2^63 (int64 index arrays) in order within
    their segment, or after a smaller one: refused, never taken as in range."""
    kern = ep.compile(ADD, output="csr", formats=CSR)
    for bad in ([0, 2**62], [2**62 + 1, 3], [-2**63, 2], [1, 2**63 - 1], [2, -2**63 + 1],
                [3, 2, 2**62 + 5]):
        n = len(bad)
        A = sp.csr_array((np.ones(n), np.array(bad, np.int64), np.array([0, n], np.int64)),
                         shape=(1, 8))
        B = sp.csr_array((np.ones(1), np.array([5], np.int64), np.array([0, 1], np.int64)),
                         shape=(1, 8))
        assert kernel_rc(kern, {"A": A, "B": B}) == calling.CHECK_FAILED, bad
        with pytest.raises(ep.InputError, match="'A'"):
            kern(A=A, B=B)


@pytest.mark.parametrize("threads, ahead", [(1, True), (2, True), (1, False)])
def test_bounds_checked_a_block_ahead_refuse_every_bad_indptr(threads, ahead):
    """Tuning.merge_bounds_ahead: a merge whose segments a full loop over the rows
    opens has no bounds test a row; each block of rows' indptr is tested first
    (segment_checks.block_loop). Indptr decreasing, beyond nnz or negative, in
    the first block of rows or a later one: refused (CHECK_FAILED, then an
    InputError naming the input), as with the test a row (off)."""
    kern = ep.compile(ADD, output="csr", formats=CSR, threads=threads,
                      tuning={"merge_bounds_ahead": ahead})
    assert stepped(kern) and ("(uint64_t)j_end <" in kern.c_source) != ahead
    n = 2500                    # rows: blocks of 1024 (Tuning.check_block)
    B = sp.random_array((n, 40), density=0.1, format="csr", random_state=1)
    for row in (3, 1500):
        for how in ("decreasing", "beyond", "negative", "beyond_decreasing"):
            A = sp.random_array((n, 40), density=0.1, format="csr", random_state=row)
            p = A.indptr
            match how:
                case "decreasing":
                    p[row + 1] = p[row] - 1
                case "beyond":
                    p[row + 1:n] = A.nnz + 3       # rising, then down to nnz at the end
                case "negative":
                    p[row] = -4
                case "beyond_decreasing":
                    p[row + 1] = 2 ** 30
            assert kernel_rc(kern, {"A": A, "B": B}) == calling.CHECK_FAILED, (row, how)
            with pytest.raises(ep.InputError, match="'A'"):
                kern(A=A, B=B)
    good = sp.random_array((n, 40), density=0.1, format="csr", random_state=7)
    np.testing.assert_allclose(kern(A=good, B=B).toarray(), (good + B).toarray())
