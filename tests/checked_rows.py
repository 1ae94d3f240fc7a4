"""Rows of one length and the bad inputs a checked SpMV must refuse, shared by
the tests of coordinates checked before their block (tests/end_to_end/
test_checks_first.py, test_checks_first_long.py)."""
import numpy as np
import pytest
import scipy.sparse as sp

from etchpy.errors import InputError


def rows_of(length: int, n: int = 40, cols: int = 50, seed: int = 3):
    """A csr of n rows of `length` random sorted columns each."""
    rng = np.random.default_rng(seed)
    crd = np.concatenate([np.sort(rng.choice(cols, length, replace=False)) for _ in range(n)])
    pos = np.arange(n + 1) * length
    return sp.csr_array((rng.random(n * length) + 0.5, crd.astype(np.int32), pos), (n, cols))


def answers_or_refuses(kern, M, length, rows, bads, descending=True, repeated=True):
    """kern(A=M, x=v) is M @ v; a bad coordinate at the middle of each row of
    `rows`, and (descending) row pointers that go back, raise an InputError naming
    A; a reversed row (and, repeated, a repeated coordinate) sums as scipy's."""
    v = np.arange(M.shape[1]) % 7 + 1.0
    np.testing.assert_allclose(kern(A=M, x=v), M @ v)
    for row in rows:
        for bad in bads:
            R = M.copy()
            R.indices[R.indptr[row] + length // 2] = bad
            with pytest.raises(InputError, match="A"):
                kern(A=R, x=v)
    if descending:
        P = M.copy()
        P.indptr[20] = P.indptr[22]
        with pytest.raises(InputError, match="A"):
            kern(A=P, x=v)
    U = M.copy()
    U.indices[U.indptr[5]:U.indptr[6]] = U.indices[U.indptr[5]:U.indptr[6]][::-1].copy()
    if repeated:
        U.indices[U.indptr[9] + 1] = U.indices[U.indptr[9]]
    np.testing.assert_allclose(kern(A=U, x=v), U.toarray() @ v)
