"""Sparse rows filled on threads: rows within a bound are moved into place, the
others counted first and then filled; the arrays equal one thread's."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp
from tuned import (as_scipy, csr_on_interpreter, levels_on_interpreter, on_interpreter,
                   random_csf, random_csr, tensor_levels)

i, j, k = ep.indices("i j k")
A_csr = ep.tensor("A", 2, format="csr")

pytestmark = pytest.mark.usefixtures("shared_cache")


@pytest.mark.parametrize("semiring", ["real", "min_plus", "boolean"])
def test_threads_fill_sparse_rows(semiring):
    """csr outputs on two threads. Element-wise: each row's column stream bounds its
    entries (A+B: both lengths; A∘B: the shorter), the bounds are summed into
    ranges of scratch arrays, rows fill their ranges on threads and are then copied
    into place.
    Gustavson (workspace): each row's distinct touched columns are counted first,
    pos is their prefix sum, and every row then fills its own range."""
    sr = ep.semirings.get(semiring)
    rng = np.random.default_rng(3)
    M = random_csr(2500, 400, 20000, 1)
    N = random_csr(2500, 400, 20000, 2)
    P = random_csr(400, 700, 6000, 4)
    for m in (M, N, P):
        m.data = rng.integers(1, 5, m.nnz).astype(sr.dtype)
    M = M.tolil()
    M[100:300] = 0                                    # empty rows: ranges of length 0
    M = sp.csr_array(M.tocsr())
    M.eliminate_zeros()
    B = ep.tensor("B", 2, format="csr")
    exprs = {"add": A_csr[i, j] + B[i, j], "mul": A_csr[i, j] * B[i, j],
             "gus": ep.sum(j, A_csr[i, j] * B[j, k])}
    kerns = {name: ep.compile(e, output="csr", threads=2, semiring=semiring)
             for name, e in exprs.items()}
    for name in ("add", "mul"):
        assert "rows bounded, filled on 2 threads, then moved" in kerns[name].c_source
    assert "rows counted, then filled, on 2 threads" in kerns["gus"].c_source
    operands = {"add": dict(A=M, B=N), "mul": dict(A=M, B=N), "gus": dict(A=M, B=P)}
    for name, kern in kerns.items():
        got = as_scipy(kern(**operands[name]))
        want = as_scipy(ep.evaluate(exprs[name], semiring=semiring, output="csr",
                                    **operands[name]))
        np.testing.assert_array_equal(got.indptr, want.indptr)
        np.testing.assert_array_equal(got.indices, want.indices)
        np.testing.assert_array_equal(got.data, want.data)
    # the same threaded programs on the Imp interpreter (small inputs)
    small = {name: sp.csr_array(m[90:130, :60] if m is not P else m[:60, :50])
             for name, m in (("M", M), ("N", N), ("P", P))}
    for name, a, b in (("add", "M", "N"), ("mul", "M", "N"), ("gus", "M", "P")):
        got = csr_on_interpreter(kerns[name].expr, sr, threads=2, A=small[a], B=small[b])
        want = as_scipy(kerns[name](A=small[a], B=small[b]))
        for part in ("indptr", "indices", "data"):
            np.testing.assert_array_equal(getattr(got, part), getattr(want, part))


@pytest.mark.parametrize("semiring, counted", [("real", False), ("min_plus", True)])
def test_threads_fill_doubly_compressed_and_tailed_rows(semiring, counted):
    """Outputs whose first level is compressed (dcsr, TTM's fibers), or that end
    in dense levels (a tail), filled on 2 and 3 threads: a compressed first level
    appends one coordinate per iteration of the outer loop, so rows are the
    iterations. Rows filled within bounds are moved into place when every row
    met its bound (TTM, A·x: the rows are an operand's segments) and copied,
    tail blocks and all, when some did not (an intersection). With `counted`
    every such output takes the counting pass instead. The arrays equal one
    thread's, and the reference's values, on C and on the Imp interpreter."""
    tuning = ep.Tuning(bounded_rows=not counted)   # counted: every row counted first
    sr = ep.semirings.get(semiring)
    r_ = ep.indices("r")[0]
    T, S = ep.tensor("T", 3, format="csf"), ep.tensor("S", 2, format="dcsr")
    T2 = ep.tensor("T", 3, format=ep.Format([ep.Dense(), ep.Compressed(), ep.Compressed()]))
    M, x = ep.tensor("M", 2), ep.tensor("x", 1)
    G = ep.tensor("G", 2, format="csr")
    D = ep.tensor("D", 2, format="dcsr")
    fibers = ep.Format([ep.Compressed(), ep.Compressed(), ep.Dense()])
    rows = ep.Format([ep.Dense(), ep.Compressed(), ep.Dense()])
    rng = np.random.default_rng(7)
    Tv, T2v = random_csf((40, 30, 20), 700, 1), random_csf((40, 30, 20), 700, 1, T2.format)
    Sv = ep.Tensor.from_scipy(random_csr(30, 20, 90, 2), "dcsr")
    Dv = ep.Tensor.from_coords(np.array([rng.integers(0, 50, 300) * 3, rng.integers(0, 60, 300)]),
                               rng.integers(1, 5, 300).astype(float), (150, 60), "dcsr")
    Mv, xv = rng.integers(0, 3, (20, 6)).astype(float), rng.integers(0, 3, 60).astype(float)
    Gv = random_csr(150, 60, 3000, 3)
    cases = [  # expression, output, inputs, moved into place (exact bounds)?
        (ep.sum(k, T[i, j, k] * M[k, r_]), fibers, {"T": Tv, "M": Mv}, True),
        (ep.sum(k, T[i, j, k] * S[j, k] * M[k, r_]), fibers, {"T": Tv, "S": Sv, "M": Mv}, False),
        (ep.sum(k, T2[i, j, k] * M[k, r_]), rows, {"T": T2v, "M": Mv}, True),
        (D[i, j] * x[j], "dcsr", {"D": Dv, "x": xv}, True),
        (D[i, j] * G[i, j], "dcsr", {"D": Dv, "G": Gv}, False)]
    for e, fmt, inputs, exact in cases:
        inputs = {n: v.astype(sr.dtype) if isinstance(v, np.ndarray) else v
                  for n, v in inputs.items()}
        # rows on threads keep an empty row (proofs_notes/empty_rows.md): so does the
        # serial kernel compared with, with empty_rows_back off
        serial = ep.compile(e, output=fmt, semiring=semiring,
                            tuning=ep.Tuning(empty_rows_back=False))(**inputs)
        want = ep.evaluate(e, semiring=semiring, backend="reference", **inputs)
        np.testing.assert_array_equal(serial.to_dense(), want)
        for threads in (2, 3):
            kern = ep.compile(e, output=fmt, semiring=semiring, threads=threads,
                              tuning=tuning)
            assert ("rows counted" if counted else "rows bounded") in kern.c_source
            assert (" = move " in imp.show(kern.program.body)) == (not counted)
            got = kern(**inputs)
            for a, b in zip(tensor_levels(got), tensor_levels(serial), strict=True):
                np.testing.assert_array_equal(a, b)
        if not counted:     # was every row's bound met, so the scratch was moved?
            bd = np.diff(on_interpreter(e, sr, kern.out_format, inputs, 2, tuning)[0]["bd_starts"])
            assert (bd == np.diff(serial.levels[1]["pos"])).all() == exact
        final, _, shape = on_interpreter(e, sr, kern.out_format, inputs, 2, tuning)
        for a, b in zip(levels_on_interpreter(final, kern.out_format, shape),
                        tensor_levels(serial), strict=True):
            np.testing.assert_array_equal(a, b)
