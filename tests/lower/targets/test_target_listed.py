"""The listed target (lower/targets/listed.py): a coo-style output (a repeating
segment level over levels of one child per parent, under located levels) whose
loops visit its levels in storage order is written in order into its own
arrays, where it was written as records for the runtime to sort and combine.
Against the dense reference on C and on the Imp interpreter (which fills what
a program allocates without a fill with garbage), and its arrays the canonical
ones Tensor.from_coords packs."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.testing.oracles import check_backends

i, j, k = ep.indices("i j k")
A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
T = ep.tensor("T", 3, format="csf")
ROWS_OF_COO = ep.Format([ep.Dense(), ep.Compressed(unique=False), ep.Singleton()])

pytestmark = pytest.mark.usefixtures("shared_cache")


def _matrix(n, m, seed, empty_rows=()):
    M = sp.random(n, m, 0.15, format="lil", random_state=seed)
    for r in empty_rows:
        M[r] = 0
    M = sp.csr_array(M.tocsr())
    M.data += 1.0                     # no cancellation: every product is an entry
    return M


def _same_arrays(got, want):
    assert got.format == want.format
    for a, b in zip(got.levels, want.levels):
        assert a.keys() == b.keys()
        for role in a:
            np.testing.assert_array_equal(a[role], b[role])
    np.testing.assert_array_equal(got.vals, want.vals)


@pytest.mark.parametrize("case, semiring", [
    ("add", "real"), ("add", "min_plus"), ("inner", "real"), ("inner", "boolean"),
    ("rows_of_coo", "real"), ("rows_of_coo", "min_plus"), ("empty", "real")])
def test_a_listed_output_equals_the_dense_reference(semiring, case):
    """The sum of two csr matrices as coo; an inner-product SpGEMM (loops i, j, k:
    the sum under the output's levels) as coo; a csf tensor into (dense,
    compressed-nonunique, singleton), empty slices among its rows (their segment
    starts carried forward); an output with no entry."""
    M, N = _matrix(40, 30, 1, empty_rows=(0, 7, 39)), _matrix(40, 30, 2, empty_rows=(7,))
    if case == "add":
        expr, inputs, order, fmt = A[i, j] + B[i, j], {"A": M, "B": N}, None, "coo"
    elif case == "inner":
        expr, inputs, order, fmt = ep.sum(k, A[i, k] * B[j, k]), {"A": M, "B": N}, (i, j, k), "coo"
    elif case == "rows_of_coo":
        dense = np.zeros((5, 6, 7))
        dense[[0, 0, 2, 2, 4], [1, 1, 0, 5, 5], [3, 6, 0, 0, 2]] = [1.0, 2.0, 3.0, 4.0, 5.0]
        expr, fmt, order = T[i, j, k], ROWS_OF_COO, None
        inputs = {"T": ep.Tensor.from_dense(dense, "csf")}
    else:
        expr, order, fmt = A[i, j] * B[i, j], None, "coo"
        inputs = {"A": M, "B": sp.csr_array((40, 30))}
    sr = ep.semirings.get(semiring)
    if semiring == "boolean":
        inputs = {n: (v.to_dense() if isinstance(v, ep.Tensor) else v.toarray()) != 0
                  for n, v in inputs.items()}
    kern = ep.compile(expr, output=fmt, order=order, semiring=sr)
    assert kern.program.output.mode == "listed"
    want = check_backends(expr, inputs, semiring=sr, order=order, output=fmt,
                          backends=("c", "imp"))
    got = kern(**inputs)
    stored = np.nonzero(want != sr.zero)
    _same_arrays(got, ep.Tensor.from_coords(np.array(stored), want[stored], want.shape,
                                            kern.program.output.format, semiring=sr))


def test_loops_out_of_the_storage_order_still_write_records():
    """csc A into coo: the loops run over columns first, so the records are out of
    order and the coords target writes them (the runtime sorts them)."""
    At = ep.tensor("A", 2, format="csc")
    M = _matrix(20, 15, 4)
    kern = ep.compile(At[i, j], output="coo")
    assert kern.program.output.mode == "coords"
    check_backends(At[i, j], {"A": sp.csc_array(M)}, output="coo", backends=("c", "imp"))


def test_on_two_threads_a_listed_output_is_the_same():
    M, N = _matrix(300, 200, 5, empty_rows=range(100, 140)), _matrix(300, 200, 6)
    check_backends(A[i, j] + B[i, j], {"A": M, "B": N}, output="coo", threads=2,
                   backends=("c",))
