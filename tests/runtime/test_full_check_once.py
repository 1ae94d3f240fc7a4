"""Index arrays two scipy inputs share, both checked in full before the call, are
checked once (Tuning.check_twins_once; proofs_notes/validation.md, "One full check
of shared arrays"): C = A ⊙ B over one pattern, csr or coo inputs. A second input over the same
memory (the same object, another csr object over the same arrays, views of them)
skips its pass and NaN scan in the C binder, the Python plan and the general path;
anything else is checked: a prefix of the arrays, another extent, a copy (but in the
C binder, which compares a copy's bytes and skips its pass where they are equal). A bad
pattern shared by both, or written in place between calls, is still refused."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.runtime import checks

MUL = "C[i, j] = A[i, j] * B[i, j]"
CSR = {"A": "csr", "B": "csr"}
COO = {"A": "coo", "B": "coo"}


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """The kernel through the C binder, the Python plan, and the general path alone
    (one build: these knobs do not change the C), in the session's shared cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ETCHPY_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
        kerns = [ep.compile(MUL, output="csr", formats=fmt, tuning=ep.Tuning(**knobs))
                 for fmt in (CSR, COO)
                 for knobs in ({}, {"call_binder": False}, {"call_plans": False})]
        for kern, m in zip(kerns, [_matrix()] * 3 + [sp.coo_array(_matrix())] * 3):
            kern(A=m, B=m)                          # built (and the binder) once
        yield kerns


def _matrix(n=30, seed=5):
    m = sp.csr_array(sp.random_array((n, n), density=0.15, format="csr", random_state=seed)
                     + sp.eye_array(n))
    m.sort_indices()
    return m


def _short(m):
    """`m`'s arrays, one entry short (the same addresses): malformed, so made
    without scipy's constructor, which refuses it."""
    out = _shares(m)
    out.indices, out.data = m.indices[:-1], m.data[:-1]
    return out


def _shares(m, data=None):
    """A csr array over `m`'s index arrays (views of them), its own values."""
    return sp.csr_array((m.data * 3 - 1 if data is None else data, m.indices[:], m.indptr[:]),
                        shape=m.shape)


def test_shared_patterns_answer_as_the_dense_reference(kernels):
    M = _matrix()
    for kern in kernels[:3]:
        for B in (M, _shares(M), M.copy(), _shares(M), M):    # a plan made, then each case
            want = M.toarray() * B.toarray()
            np.testing.assert_allclose(kern(A=M, B=B).toarray(), want, rtol=1e-12)


def test_a_bad_pattern_shared_by_both_is_refused(kernels):
    for kern in kernels[:3]:
        M = _matrix()
        kern(A=M, B=_shares(M))                    # the plans made on good arrays
        kern(A=M, B=_shares(M))
        M.indices[4] = M.shape[1] + 3              # out of range, in both inputs' arrays
        with pytest.raises(ep.InputError, match="tensor 'A'"):
            kern(A=M, B=_shares(M))


def test_arrays_written_in_place_between_calls_are_checked_again(kernels):
    for kern in kernels[:3]:
        M = _matrix()
        B = _shares(M)
        for _ in range(2):
            kern(A=M, B=B)
        row = M.indptr[2]
        M.indices[row], M.indices[row + 1] = M.indices[row + 1], M.indices[row]   # unsorted
        M.has_sorted_indices = True    # scipy's flag left stale, as a user's write leaves it
        got = kern(A=M, B=B)           # canonicalised by the general path, as ever
        np.testing.assert_allclose(got.toarray(), M.toarray() * B.toarray(), rtol=1e-12)


def test_a_prefix_of_the_same_arrays_is_not_counted_as_checked(kernels):
    for kern in kernels[:3]:
        M = _matrix()
        for _ in range(2):
            kern(A=M, B=_shares(M))
        with pytest.raises(ep.InputError, match="tensor 'B'"):
            kern(A=M, B=_short(M))


def test_nan_in_shared_values_is_refused_once_scanned(kernels):
    kern = ep.compile(MUL, output="csr", formats=CSR, semiring="min_plus")   # NaN refused
    M = _matrix()
    kern(A=M, B=M)
    bad = M.copy()
    bad.data[3] = np.nan
    for B in (bad, _shares(bad, bad.data[:])):
        with pytest.raises(ep.InputError, match="input A contains NaN"):
            kern(A=bad, B=B)
        with pytest.raises(ep.InputError, match="input B contains NaN"):
            kern(A=M, B=_shares(M, bad.data))       # M's pattern, other values: scanned


def test_check_once_skips_only_the_same_memory_and_extents():
    M = _matrix()
    calls = []
    real = checks.check_compressed

    def counted(*args):
        calls.append(args)
        return real(*args)

    ip, ix, dv = M.indptr, M.indices, M.data
    seen = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(checks, "check_compressed", counted)
        assert checks.check_once(seen, ip, ix, dv, 30, 30) == ((0, 0), False)
        assert checks.check_once(seen, ip[:], ix[:], dv, 30, 30) == ((0, 0), True)
        assert checks.check_once(seen, ip, ix, dv * 2, 30, 30) == ((0, 0), False)
        assert len(calls) == 1
        checks.check_once(seen, ip, ix[:-1], dv, 30, 30)         # a prefix
        checks.check_once(seen, ip, ix, dv, 30, 31)              # another extent
        checks.check_once(seen, ip.copy(), ix, dv, 30, 30)       # a copy
        checks.check_once(None, ip, ix, dv, 30, 30)              # the knob off: no list
        assert len(calls) == 5


def _coo_shares(m, rows=None):
    """A coo array over `m`'s coordinate arrays (views; the first `rows` entries)."""
    n = m.nnz if rows is None else rows
    return sp.coo_array((m.data[:n] * 3 - 1, (m.coords[0][:n], m.coords[1][:n])), shape=m.shape)


def test_coo_inputs_over_one_pattern_are_checked_once(kernels):
    for kern in kernels[3:]:
        M = sp.coo_array(_matrix())
        for B in (M, _coo_shares(M), sp.coo_array(M.copy()), _coo_shares(M, M.nnz - 1),
                  _coo_shares(M), M):
            want = M.toarray() * B.toarray()
            np.testing.assert_allclose(kern(A=M, B=B).toarray(), want, rtol=1e-12)
        k = 7                                  # written in place: out of order, then out of range
        M.coords[1][k], M.coords[1][k + 1] = M.coords[1][k + 1], M.coords[1][k]
        B = _coo_shares(M)
        np.testing.assert_allclose(kern(A=M, B=B).toarray(), M.toarray() * B.toarray(),
                                   rtol=1e-12)
        M.coords[1][k] = M.shape[1] + 2        # seen through B's views too
        with pytest.raises(ep.InputError, match="'A'"):
            kern(A=M, B=B)


def test_a_csc_transpose_over_the_same_arrays_is_checked_once(kernels):
    """B = A.T, a csc array over A's csr arrays: the same compressed level (its
    extents compared per layout), so A's pass stands for B's."""
    expr, fmt = "C[i, j] = A[i, j] * B[j, i]", {"A": "csr", "B": "csc"}
    for knobs in ({}, {"call_binder": False}, {"call_plans": False}):
        kern = ep.compile(expr, output="csr", formats=fmt, tuning=ep.Tuning(**knobs))
        M = sp.csr_array(sp.random_array((40, 30), density=0.15, format="csr", random_state=2))
        M.sort_indices()
        for B in (M.T, sp.csc_array(M.T.copy()), M.T):
            np.testing.assert_allclose(kern(A=M, B=B).toarray(), M.toarray() * B.toarray().T,
                                       rtol=1e-12)
        M.indices[5] = M.shape[1] + 1          # seen through B = M.T as well
        with pytest.raises(ep.InputError, match="tensor 'A'"):
            kern(A=M, B=M.T)


def test_a_copy_of_the_pattern_is_compared_by_its_bytes(kernels):
    """B over a copy of A's pattern (a mass and a stiffness matrix of one mesh):
    the C binder takes index arrays of A's bytes as checked by A's pass; a byte
    apart, B is checked in full. A coordinate of the copy out of range is refused
    naming B; two swapped in a row (scipy's flag left stale) are canonicalised."""
    for kern in kernels[:3]:
        M = _matrix()
        C = M.copy()
        C.data = C.data * 2 + 1
        np.testing.assert_allclose(kern(A=M, B=C).toarray(), M.toarray() * C.toarray(),
                                   rtol=1e-12)
        far = M.copy()
        far.indices[-1] = M.shape[1] + 2
        with pytest.raises(ep.InputError, match="tensor 'B'"):
            kern(A=M, B=far)
        swapped = M.copy()
        row = swapped.indptr[4]
        swapped.indices[row], swapped.indices[row + 1] = (swapped.indices[row + 1],
                                                          swapped.indices[row])
        swapped.has_sorted_indices = True
        np.testing.assert_allclose(kern(A=M, B=swapped).toarray(),
                                   M.toarray() * swapped.toarray(), rtol=1e-12)
