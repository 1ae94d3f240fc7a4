"""The law of sparse outputs (lower.produced, proofs_notes/produced.md): a sparse
output stores an entry exactly where some product was produced, in C and on the
Imp interpreter, on 1 and 2 threads, under every tuning preset, through plan
temporaries. The oracle is the expression evaluated in the boolean semiring
over the inputs' stored patterns (a dense input stores every cell); against
scipy, the pattern (indptr, indices) is compared, not only the values."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import etchpy as ep
from etchpy import tuning
from etchpy.errors import OrderError
from etchpy.expr.nodes import Access, free_indices
from etchpy.expr.walk import accesses
from etchpy.semiring import semirings
from etchpy.testing import dense_value, formats_for, imp_evaluate, problems
from tuned import as_scipy, random_csr

i, j, k, r = ep.indices("i j k r")
PRESETS = [tuning.DEFAULT, tuning.NOOPT, tuning.FORCE, tuning.FORCE_HASH]


def produced(e, inputs: dict, sr) -> np.ndarray:
    """Where some product is produced: e in the boolean semiring over the supports."""
    fmts = {a.tensor.name: a.tensor.format for a in accesses(e) if isinstance(a, Access)}
    pats = {n: stored(ep.Tensor.from_dense(np.asarray(a), fmts[n], semiring=sr), np.shape(a))
            for n, a in inputs.items()}
    return np.asarray(ep.evaluate(e, semiring="boolean", backend="reference", **pats), bool)


def reference(e, inputs: dict, sr) -> np.ndarray:
    return np.asarray(ep.evaluate(e, semiring=sr, backend="reference", **inputs))


def in_format(want: np.ndarray, fmt) -> np.ndarray:
    """The cells an output of format fmt stores for the products `want`: the cells
    that packing the products' coordinates in fmt stores (Tensor.from_coords).
    Beyond the products these are: a position of its last sparse level brings every
    cell of the located levels below it (a dense tail, as TTM's (i, j) fibers bring
    their r block); a level that stores every coordinate of its fibres
    (formats.level's every_coordinate, a run list) every cell below a stored
    parent, a dense row with no product included; a band every cell between its
    fibre's lowest and highest coordinate (a uniform band: between the lowest and
    highest over all its fibres, in every fibre)."""
    coords = np.array(np.nonzero(want)).reshape(want.ndim, -1)
    packed = ep.Tensor.from_coords(coords, np.ones(coords.shape[1]), want.shape, fmt)
    return stored(packed, want.shape)


def stored(x, shape) -> np.ndarray:
    """The cells a result stores (explicit zeros included)."""
    out = np.zeros(shape, bool)
    if isinstance(x, ep.Tensor):
        coords, _ = x.to_coords()
        out[tuple(coords)] = True
    elif sp.issparse(x):
        coo = sp.coo_matrix(x)
        out[coo.row, coo.col] = True
    else:
        out[...] = True
    return out


def _sparse_output(f) -> bool:
    """A sparse output format (an unnamed csc included: tests/runtime/test_unnamed_output)."""
    return not f.is_dense


@pytest.mark.heavy
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_pattern_is_the_products(data):
    p = data.draw(problems(allow_literals=False, min_free=1))
    free = free_indices(p.expr)
    fmt = data.draw(formats_for(len(free)).filter(_sparse_output), label="output")
    tuned = data.draw(st.sampled_from(PRESETS), label="tuning")
    want = in_format(produced(p.expr, p.inputs, p.semiring), fmt)
    if fmt.drops_fill:          # a sparse run list: no cell of the zero, product or not
        want = want & (reference(p.expr, p.inputs, p.semiring) != p.semiring.zero)
    ran = 0
    for threads in (1, 2):
        try:
            got = ep.evaluate(p.expr, semiring=p.semiring, output=fmt, threads=threads,
                              tuning=tuned, **p.inputs)
        except OrderError:
            continue
        ran += 1
        assert (stored(got, want.shape) == want).all(), (p, fmt, threads)
    event(f"ran on {ran} thread counts")
    if ran:
        got = imp_evaluate(p.expr, p.inputs, semiring=p.semiring, output=fmt, tuning=tuned)
        assert (stored(got, want.shape) == want).all(), (p, fmt, "imp")


FILLED = {   # format, A's entries, the cells stored
    "rle": (lambda: ep.Tensor.from_dense(np.eye(1), "rle").format, [(0, 0)], np.ones((3, 3))),
    "banded": (lambda: ep.Format(["compressed", "banded"], (1, 0)), [(0, 0), (2, 0)],
               np.array([[1, 0, 0], [1, 0, 0], [1, 0, 0]])),
}


@pytest.mark.parametrize("case", sorted(FILLED))
def test_outputs_storing_more_than_the_products(case):
    """A[i,j] into formats that store cells no product made (dev profile seeds
    5005 and 5006 drew these; the oracle listed the products only): under rle
    (dense, runs) every row is a stored fibre of the dense level and its run list
    covers every column, rows with no product included; a band stores every cell
    between its fibre's lowest and highest coordinate."""
    make, cells, stores = FILLED[case]
    a = np.zeros((3, 3))
    for c in cells:
        a[c] = 1.0
    fmt, A = make(), ep.tensor("A", 2, format="csr")
    want = in_format(produced(A[i, j], {"A": a}, semirings.real), fmt)
    assert (want == stores.astype(bool)).all()
    for threads in (1, 2):
        got = ep.evaluate(A[i, j], output=fmt, threads=threads, A=sp.csr_array(a))
        assert (stored(got, (3, 3)) == want).all()


@pytest.mark.parametrize("tuned", [tuning.DEFAULT, tuning.NOOPT], ids=["default", "noopt"])
def test_a_sparse_run_list_stores_no_cell_of_the_zero(tuned):
    """(Σ_i A[i])·B[j] into sparse_rle, B's cells 2 and 3 zero: every cell is a
    product, but a sparse run list stores no run of the zero, whether written as
    runs (one step) or as coordinate records packed after the call (NOOPT plans
    two steps; it stored the zeros: dev profile seed 5013)."""
    A, B = ep.tensor("A", 1, format="csf"), ep.tensor("B", 1)
    e = ep.sum(i, A[i]) * B[j]
    inputs = {"A": np.array([1.0, 2.0, 0.0]), "B": np.array([1.0, 2.0, 0.0, 0.0, -2.0])}
    want = [True, True, False, False, True]
    for threads in (1, 2):
        got = ep.evaluate(e, output="sparse_rle", threads=threads, tuning=tuned, **inputs)
        assert stored(got, (5,)).tolist() == want
    got = imp_evaluate(e, inputs, output="sparse_rle", tuning=tuned)
    assert stored(got, (5,)).tolist() == want


def _scipy_pattern(m):
    m = sp.csr_matrix(m)
    m.sort_indices()
    return m.indptr.tolist(), m.indices.tolist()


def _as_csr(x):
    return sp.csr_matrix(as_scipy(x))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("out", ["csr", "csc", "dcsr", "coo"])
@pytest.mark.parametrize("sr", ["real", "min_plus", "boolean"])
def test_a_times_b_transposed_has_scipys_pattern(threads, out, sr):
    """A·Bᵀ over csr inputs: scipy's indptr and indices exactly (the values are
    positive, so no sum cancels to zero, which scipy would drop)."""
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    M, N = random_csr(300, 280, 900, 1), random_csr(310, 280, 900, 2)
    if sr == "boolean":
        M, N = M.astype(bool), N.astype(bool)
    kern = ep.compile(ep.sum(j, A[i, j] * B[k, j]), output=out, threads=threads,
                      semiring=semirings.get(sr))
    got = kern(A=M, B=N)
    want = sp.csr_matrix(M.astype(float)) @ sp.csr_matrix(N.astype(float)).T
    assert _scipy_pattern(stored(got, want.shape)) == _scipy_pattern(want)


CASES = {
    "A·Bᵀ": (lambda A, B: ep.sum(j, A[i, j] * B[k, j]), lambda M, N: M @ N.T),
    "A·B": (lambda A, B: ep.sum(j, A[i, j] * B[j, k]), lambda M, N: M @ N),
    "A+B": (lambda A, B: A[i, k] + B[i, k], lambda M, N: M + N),
    "A∘B": (lambda A, B: A[i, k] * B[i, k], lambda M, N: M.multiply(N)),
    "A+Bᵀ": (lambda A, B: A[i, k] + B[k, i], lambda M, N: M + N.T),
    "Aᵀ·B": (lambda A, B: ep.sum(j, A[j, i] * B[j, k]), lambda M, N: M.T @ N),
}


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=st.sampled_from(sorted(CASES)), fa=st.sampled_from(["csr", "csc", "dcsr", "coo"]),
       fb=st.sampled_from(["csr", "csc", "dcsr", "coo"]),
       out=st.sampled_from(["csr", "csc", "dcsr", "coo"]), threads=st.sampled_from([1, 2]),
       tuned=st.sampled_from(PRESETS), seed=st.integers(0, 10**6))
def test_products_and_sums_have_scipys_pattern(case, fa, fb, out, threads, tuned, seed):
    """Sparse products and sums over mixed formats: scipy's pattern exactly."""
    make, peer = CASES[case]
    A, B = ep.tensor("A", 2, format=fa), ep.tensor("B", 2, format=fb)
    M, N = random_csr(40, 40, 60, seed), random_csr(40, 40, 60, seed + 1)
    try:
        got = ep.evaluate(make(A, B), output=out, threads=threads, tuning=tuned, A=M, B=N)
    except OrderError:
        return
    want = peer(M, N)
    assert _scipy_pattern(stored(got, want.shape)) == _scipy_pattern(want)
    np.testing.assert_allclose(dense_value(got, semirings.real), want.toarray())


def test_a_temporary_keeps_the_pattern():
    """A plan with temporaries: out[i,k] = Σ_j (Σ_r A[i,r]·C[r,j]) · B[k,j] with a
    dense C is planned through a dense temporary, which keeps flags of where a
    product was written, so the output holds A·C·Bᵀ's pattern."""
    A, B, C = (ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr"),
               ep.tensor("C", 2, format="dense"))
    M, N = random_csr(30, 30, 20, 5), random_csr(30, 30, 20, 6)
    D = np.zeros((30, 30))
    D[np.arange(30), np.arange(30)] = 2.0          # C's cells are all stored
    e = ep.sum(j, ep.sum(r, A[i, r] * C[r, j]) * B[k, j])
    for threads in (1, 2):
        kern = ep.compile(e, output="csr", threads=threads)
        got = kern(A=M, B=N, C=D)
        want = produced(e, {"A": M.toarray(), "B": N.toarray(), "C": D}, semirings.real)
        assert (stored(got, want.shape) == want).all()
        assert want.sum() < want.size


def test_a_scalar_temporary_with_no_product():
    """Σ_i (Σ_j (Σ_i A[i,j])·B)·A[i,j]·C with A empty: a scalar temporary that got
    no product, so the output holds nothing (it held a zero)."""
    A = ep.tensor("A", 2, format="csf")
    B, C = ep.tensor("B", 0, format="dense"), ep.tensor("C", 0)
    e = ep.sum(i, ep.sum(j, ep.sum(i, A[i, j]) * B) * A[i, j] * C)
    for threads in (1, 2):
        got = ep.evaluate(e, output="csf", threads=threads, A=np.zeros((1, 1)),
                          B=np.array(0.0), C=np.array(0.0))
        assert got.to_coords()[1].size == 0


def test_a_times_b_transposed_on_the_interpreter():
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    M, N = random_csr(40, 40, 60, 3), random_csr(40, 40, 60, 4)
    got = imp_evaluate(ep.sum(j, A[i, j] * B[k, j]), {"A": M, "B": N}, output="csr")
    assert _scipy_pattern(stored(got, (40, 40))) == _scipy_pattern(M @ N.T)


def test_a_computed_zero_is_an_entry():
    """A sum of products equal to the semiring's zero is still an entry (the law
    is structural; scipy would drop such a numeric zero)."""
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    M = sp.csr_matrix(np.array([[1.0, -1.0], [0.0, 0.0]]))
    N = sp.csr_matrix(np.array([[1.0, 1.0], [0.0, 0.0]]))
    got = ep.evaluate(ep.sum(j, A[i, j] * B[k, j]), A=M, B=N, output="csr")
    assert stored(got, (2, 2)).tolist() == [[True, False], [False, False]]
    assert _as_csr(got).toarray()[0, 0] == 0.0


@pytest.mark.parametrize("out", ["csr", "csc", "dcsr", "coo"])
@pytest.mark.parametrize("sr", ["real", "real32", "min_plus"])
def test_a_product_with_a_literal_zero_keeps_a_stored_nan(out, sr):
    """NaN·0 is NaN: where a semiring allows NaN, A[i,j]·0 stores A's entries
    (the C output dropped them, the stream interpreter kept them); elsewhere a
    zero literal annihilates, and the backends agree on the values."""
    s = ep.semirings.get(sr)
    M = np.array([[np.nan if s.allows_nan else 4.0, 1.0, 0.0], [0.0, 2.0, 0.0]])
    A = ep.tensor("A", 2, format="csr")
    res = {be: ep.evaluate(A[i, j] * s.zero, A=sp.csr_array(M.astype(s.dtype)), semiring=sr,
                           output=out, backend=be) for be in ("c", "streams")}
    vals = {be: dense_value(r, s) for be, r in res.items()}
    assert np.array_equal(vals["c"], vals["streams"], equal_nan=True)
    if s.allows_nan:
        assert (stored(res["c"], M.shape) == stored(res["streams"], M.shape)).all()
        assert stored(res["c"], M.shape).sum() == 3 and np.isnan(vals["c"][0, 0])


def test_always_producing_levels_keep_no_flag():
    """A union or an intersection walked on its stored side produces at each of
    its states, and a dense inner level at each cell: no flag, no rollback."""
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    x, D = ep.tensor("x", 1), ep.tensor("D", 2)
    for e in (A[i, j] + B[i, j], A[i, j] * B[i, j], ep.sum(r, A[i, j] * D[j, r] * x[r])):
        assert "made" not in ep.compile(e, output="csr").c_source
