"""Register blocks: a block of the output accumulated in a local array and
stored once, when the output is fresh; otherwise added into the output."""
import re

import numpy as np
import pytest

import etchpy as ep
from etchpy.testing import assert_same
from tuned import levels_on_interpreter, on_interpreter, random_csf, random_csr, tensor_levels

i, j, k, r = ep.indices("i j k r")

pytestmark = pytest.mark.usefixtures("shared_cache")


@pytest.mark.parametrize("semiring", ["real", "min_plus", "integer"])
@pytest.mark.parametrize("rank", [3, 4, 6, 8, 16, 32])
@pytest.mark.parametrize("threads", [1, 2])
def test_output_blocks_in_registers_equal_reference(semiring, rank, threads):
    """MTTKRP adds, over two contracted levels, into one block out[i, 0:rank]:
    with rank 4, 6, 8, 16 or 32 (tuning.block_sizes) the nest runs with the rank a constant and
    the block in a local array, stored into out once per i; with rank 3 the
    nest writes out directly. SpMM (one contracted level) takes the block too,
    as out is zero on entry and its one step visits each i once (FRESH); the
    same SpMM with a second term that adds into out in a step of its own does
    not. All agree with the reference, on C and on the interpreter."""
    sr = ep.semirings.get(semiring)
    i, j, k, r = ep.indices("i j k r")
    B = ep.tensor("B", 3, format="csf")
    C, D, X = ep.tensor("C", 2), ep.tensor("D", 2), ep.tensor("X", 2)
    A = ep.tensor("A", 2, format="csr")
    rng = np.random.default_rng(rank)
    coords = np.unique(rng.integers(0, 9, (3, 60)), axis=1)
    vals = rng.integers(1, 5, coords.shape[1]).astype(sr.dtype)
    Bt = ep.Tensor.from_coords(coords, vals, (9, 9, 9), "csf", semiring=sr)
    M = random_csr(12, 9, 40, 7)
    M.data = np.rint(M.data * 4 + 1)
    Cv, Dv, Xv = (rng.integers(0, 3, (9, rank)).astype(sr.dtype) for _ in range(3))
    Y, P, Q = ep.tensor("Y", 2), ep.tensor("P", 2, format="csr"), ep.tensor("Q", 2, format="csr")
    Yv = rng.integers(0, 3, (12, rank)).astype(sr.dtype)
    cases = [(ep.sum((j, k), B[i, j, k] * C[j, r] * D[k, r]), {"B": Bt, "C": Cv, "D": Dv},
              True),
             (ep.sum(j, A[i, j] * X[j, r]), {"A": M.astype(sr.dtype), "X": Xv}, True),
             (ep.sum(j, A[i, j] * X[j, r]) + Y[i, r], {"A": M.astype(sr.dtype), "X": Xv,
                                                      "Y": Yv}, False),
             # loops (j, i, k, r): the contracted j above i visits each out[i, :]
             # once per j, so the block under k (one contracted level) is not FRESH
             (ep.sum((j, k), P[j, i] * Q[i, k] * X[k, r]),
              {"P": random_csr(9, 12, 30, 8).astype(sr.dtype),
               "Q": random_csr(12, 9, 40, 9).astype(sr.dtype), "X": Xv}, False)]
    for e, inputs, blocked in cases:
        order = ("j", "i", "k", "r") if "P" in inputs else None
        kern = ep.compile(e, semiring=sr, threads=threads, order=order)
        assert ("if (dim_r == 16) {" in kern.c_source) == blocked, kern.explain()
        assert ("if (dim_r == 32) {" in kern.c_source) == blocked
        assert ("if (dim_r == 4) {" in kern.c_source) == blocked
        assert ("if (dim_r == 6) {" in kern.c_source) == blocked
        if blocked:
            assert re.search(r"out\[\(\(i_\w* \* (16|32)\) \+ r_t\w*\)\] = r_blk", kern.c_source)
        want = ep.evaluate(e, semiring=sr, backend="reference", **inputs)
        assert_same(kern(**inputs), want, sr, what=str(e))
        final, _, shape = on_interpreter(e, sr, None, inputs, threads)
        assert_same(final["out"].reshape(shape), want, sr, what=str(e))


@pytest.mark.parametrize("semiring", ["real", "min_plus", "integer"])
def test_fresh_tail_blocks_are_stored_not_added(semiring):
    """TTM into (i,j) fibers with a dense r tail: each appended fiber's block is
    zero and written by nothing but its Σ_k, so with r of extent 4, 6, 8, 16 or 32 the k
    loop adds into a local block that is then stored (the output is never read);
    other extents add into the output as before. One and two threads (rows within
    bounds, and counted), C and the Imp interpreter agree with the reference.
    A sum over two contracted levels under the fiber (Σ_{k,l}) still stores once
    per fiber, not once per k."""
    sr = ep.semirings.get(semiring)
    r_, l_ = ep.indices("r l")
    T = ep.tensor("T", 3, format="csf")
    U = ep.tensor("U", 4, format="csf")
    M, N = ep.tensor("M", 2), ep.tensor("N", 2)
    fibers = ep.Format([ep.Compressed(), ep.Compressed(), ep.Dense()])
    rng = np.random.default_rng(11)
    Tv = random_csf((12, 10, 20), 120, 4)    # small: the Imp interpreter runs each kernel
    coords = np.array([rng.integers(0, 5, 100), rng.integers(0, 4, 100),
                       rng.integers(0, 7, 100), rng.integers(0, 6, 100)])
    Uv = ep.Tensor.from_coords(coords, rng.integers(1, 4, 100).astype(float), (5, 4, 7, 6),
                               "csf")
    for R in (16, 32, 5):
        Mv = rng.integers(0, 4, (20, R)).astype(sr.dtype)
        Nv = rng.integers(0, 4, (7, R)).astype(sr.dtype)
        cases = [(ep.sum(k, T[i, j, k] * M[k, r_]), {"T": Tv, "M": Mv}),
                 (ep.sum((k, l_), U[i, j, k, l_] * N[k, r_]), {"U": Uv, "N": Nv})]
        for e, inputs in cases:
            inputs = {n: (v.astype(sr.dtype) if isinstance(v, np.ndarray) else v)
                      for n, v in inputs.items()}
            want = ep.evaluate(e, semiring=semiring, backend="reference", **inputs)
            for threads in (1, 2):
                kern = ep.compile(e, output=fibers, semiring=semiring, threads=threads,
                                  optimize=False)
                src = kern.c_source
                stored = re.findall(r"(\w+)\[\(\(out_p1 \* (4|8|16|32)\) \+ r_t\w*\)\] = (\w+)\[", src)
                assert {n for _, n, _ in stored} == {"4", "8", "16", "32"}, src
                assert all(not rhs.startswith("out") for *_, rhs in stored)
                got = kern(**inputs)
                np.testing.assert_array_equal(got.to_dense(), want)
                final, _, shape = on_interpreter(e, sr, kern.out_format, inputs, threads)
                for a, b in zip(levels_on_interpreter(final, kern.out_format, shape),
                                tensor_levels(got), strict=True):
                    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("semiring", ["real", "min_plus"])
def test_other_extents_run_in_overlapping_strips_of_registers(semiring):
    """An extent of the block's axis outside tuning.block_sizes (5, 7, 10, 13, 20, 37)
    runs in strips of the widest of tuning.block_strips not above it, the last
    strip moved back to end at the extent (its cells stored twice, the same sums):
    SpMM, MTTKRP (two contracted levels) and TTM into fibres with a dense tail, on
    one and two threads, on C and the Imp interpreter, agree with the reference.
    Off (block_strips=()), no strip is written; an output added into by a second
    step (not fresh) never takes strips."""
    sr = ep.semirings.get(semiring)
    rng = np.random.default_rng(5)
    A, X, Y = ep.tensor("A", 2, format="csr"), ep.tensor("X", 2), ep.tensor("Y", 2)
    B, C, D = ep.tensor("B", 3, format="csf"), ep.tensor("C", 2), ep.tensor("D", 2)
    M = random_csr(11, 9, 45, 3)
    M.data = np.rint(M.data * 4 + 1)
    Bt = random_csf((8, 9, 7), 70, 6)
    fibers = ep.Format([ep.Compressed(), ep.Compressed(), ep.Dense()])
    for R in (5, 7, 10, 13, 20, 37):
        def dense(n):
            return rng.integers(0, 4, (n, R)).astype(sr.dtype)
        cases = [(ep.sum(j, A[i, j] * X[j, r]), {"A": M.astype(sr.dtype), "X": dense(9)},
                  None, True),
                 (ep.sum((j, k), B[i, j, k] * C[j, r] * D[k, r]),
                  {"B": Bt, "C": dense(9), "D": dense(7)}, None, True),
                 (ep.sum(k, B[i, j, k] * D[k, r]), {"B": Bt, "D": dense(7)}, fibers, True),
                 (ep.sum(j, A[i, j] * X[j, r]) + Y[i, r],
                  {"A": M.astype(sr.dtype), "X": dense(9), "Y": dense(11)}, None, False)]
        for e, inputs, out, strips in cases:
            want = ep.evaluate(e, semiring=sr, backend="reference", **inputs)
            # two threads at two widths, strips off at two: their code does not turn on R
            for threads, tuning in ((1, None), *[(2, None)] * (R in (7, 37)),
                                    *[(1, ep.Tuning(block_strips=()))] * (R in (5, 20))):
                kern = ep.compile(e, semiring=sr, output=out, threads=threads, tuning=tuning,
                                  optimize=False)
                assert ("a strip of 8 values of r" in kern.c_source) == (
                    strips and tuning is None), (R, str(e))
                got = kern(**inputs)
                assert_same(got if out is None else got.to_dense(), want, sr, what=str(e))
            if R in (5, 13):             # (the interpreter: the strips' Imp itself)
                final, _, shape = on_interpreter(e, sr, kern.out_format, inputs, 1)
                if out is None:
                    assert_same(final["out"].reshape(shape), want, sr, what=str(e))
                    continue
                for a, b in zip(levels_on_interpreter(final, kern.out_format, shape),
                                tensor_levels(got), strict=True):
                    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("R", [5, 10, 37])
def test_a_block_that_is_the_whole_output_takes_no_strips(R):
    """Column sums Σ_j X[j,r]·C[j,r] walked (j, r): the block over r is the whole
    output, and a strip would walk X and C again a band of columns at a time; the
    extents of tuning.block_sizes keep their block, the others the plain loop."""
    X, C = ep.tensor("X", 2), ep.tensor("C", 2)
    rng = np.random.default_rng(2)
    x, c = rng.random((30, R)), rng.random((30, R))
    kern = ep.compile(ep.sum(j, X[j, r] * C[j, r]), optimize=False, order=("j", "r"))
    assert "a strip of" not in kern.c_source and "(32 values) in registers" in kern.c_source
    np.testing.assert_allclose(kern(X=x, C=c), np.einsum("jr,jr->r", x, c))


@pytest.mark.parametrize("R", [5, 13, 40])
def test_a_nest_whose_every_read_indexes_the_block_takes_no_strips(R):
    """Σ_j X[i,j,r]·C[i,j,r] walked (i, j, r): each output row is a block, but every
    read indexes r, so a strip would share nothing and read the rows R values apart
    (blocks._shared); the plain row-order loop runs. SpMM's strips (A's row read
    above r's loop) stay, as the test above checks."""
    X, C = ep.tensor("X", 3), ep.tensor("C", 3)
    rng = np.random.default_rng(R)
    x, c = rng.random((4, 6, R)), rng.random((4, 6, R))
    kern = ep.compile(ep.sum(j, X[i, j, r] * C[i, j, r]), optimize=False, order=("i", "j", "r"))
    assert "a strip of" not in kern.c_source
    np.testing.assert_allclose(kern(X=x, C=c), np.einsum("ijr,ijr->ir", x, c))
