"""The sparse run-length level (formats/sparse_runs.py; proofs_notes/runs.md,
"Sparse run lists"): runs of equal values with the fill between them, read as
a RunList with starts. Every backend agrees with the dense reference on every
semiring, with the run passes on and off; packing merges equal neighbours
that meet; malformed arrays are refused naming the tensor."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import InputError
from etchpy.expr.walk import tensors
from etchpy.testing import check_backends, stored_values
from pairing import paired

i, j = ep.indices("i j")
SEMIRINGS = ep.semirings.all()
NO_REPEAT = ep.Semiring("real_no_repeat", np.float64, 0.0, 1.0, ("{a} + {b}", np.add),
                        ("{a} * {b}", np.multiply))
FMT = "sparse_rle"


@st.composite
def images(draw, sr, shape=(4, 19)):
    """Rows of runs (lengths 1..7), each the fill or a sample value of `sr`:
    long gaps, runs that meet, equal runs apart."""
    values = stored_values(sr) + [sr.zero, sr.zero]
    rows = []
    for _ in range(shape[0]):
        row = []
        while len(row) < shape[1]:
            v = values[draw(st.integers(0, len(values) - 1))]
            row += [v] * draw(st.integers(1, 7))
        rows.append(row[:shape[1]])
    return np.array(rows, dtype=sr.dtype)


def sp(name, order=2):
    return ep.tensor(name, order, format=FMT)


CASES = {
    "row sums": lambda: ep.sum(j, sp("A")[i, j]),
    "column sums": lambda: ep.sum(i, sp("A")[i, j]),
    "total": lambda: ep.sum((i, j), sp("A")[i, j]),
    "sparse runs x sparse runs": lambda: ep.sum(j, sp("A")[i, j] * sp("B")[i, j]),
    "sparse runs x runs": lambda: ep.sum(j, sp("A")[i, j] * ep.tensor("B", 2, format="rle")[i, j]),
    "sparse runs x dense": lambda: ep.sum((i, j), sp("A")[i, j] * ep.tensor("B", 2)[i, j]),
    "sparse runs x csr": lambda: ep.sum(j, sp("A")[i, j] * ep.tensor("B", 2, format="csr")[i, j]),
    "spmv": lambda: ep.sum(j, sp("A")[i, j] * ep.tensor("x", 1)[j]),
    "blend": lambda: sp("A")[i, j] * sp("B")[i, j] + sp("A")[i, j],
    "union": lambda: sp("A")[i, j] + ep.tensor("B", 2, format="rle")[i, j],
    "sparse union row sums": lambda: ep.sum(j, sp("A")[i, j] + sp("B")[i, j]),
}
UNIONS = {     # law 7 on fixed rows (test_a_sum_of_sparse_run_lists_is_one_piece_per_stretch)
    "sparse union": lambda: sp("A")[i, j] + sp("B")[i, j],
    "sparse union row sums": CASES["sparse union row sums"],
    "sparse union x sparse runs": lambda: ep.sum(j, (sp("A")[i, j] + sp("B")[i, j])
                                                 * sp("A")[i, j]),
}


def inputs_for(expr, a, b, sr):
    given_ = {"A": a, "B": b, "x": b[0]}
    return {n: v for n, v in given_.items() if n in set(tensors(expr))}


@pytest.mark.parametrize("case, sr", paired(sorted(CASES), SEMIRINGS + [NO_REPEAT],
                                            always=("real", NO_REPEAT.name)))
@settings(max_examples=4, deadline=None)
@given(data=st.data())
def test_sparse_run_reads_equal_the_reference(sr, case, data):
    expr = CASES[case]()
    a, b = data.draw(images(sr)), data.draw(images(sr))
    runs = data.draw(st.booleans())
    check_backends(expr, inputs_for(expr, a, b, sr), semiring=sr, backends=("streams", "c"),
                   tuning={"runs": runs})


@pytest.mark.parametrize("output, sr", paired([FMT, "rle"], SEMIRINGS, per_case=4))
@settings(max_examples=3, deadline=None)
@given(data=st.data())
def test_sparse_run_outputs_equal_the_reference(sr, output, data):
    """Outputs in either run format, elementwise and transposed, on the C, the
    stream interpreter and the Imp interpreter."""
    a, b = data.draw(images(sr)), data.draw(images(sr))
    for expr in (sp("A")[i, j] * sp("B")[i, j] + sp("A")[i, j],
                 ep.sum(j, sp("A")[i, j]), sp("A")[j, i]):
        check_backends(expr, inputs_for(expr, a, b, sr), semiring=sr,
                       backends=("streams", "c", "imp"), output=output)


@pytest.mark.parametrize("sr", SEMIRINGS, ids=lambda s: s.name)
@settings(max_examples=3, deadline=None)
@given(data=st.data())
def test_sparse_run_outputs_are_written_as_the_runs_packing_gives(sr, data):
    """Law 4 for a sparse run list: an output in storage order is written a run
    at a time (output mode spans: no coordinate records), no run of the fill,
    equal neighbours that meet merged: the arrays packing the result gives."""
    a, b = data.draw(images(sr)), data.draw(images(sr))
    for expr in (sp("A")[i, j] * sp("B")[i, j] + sp("A")[i, j], ep.sum(j, sp("A")[i, j]),
                 sp("A")[i, j] + ep.tensor("B", 2, format="rle")[i, j]):
        kernel = ep.compile(expr, semiring=sr, output=FMT)
        assert "spans" in kernel.explain()
        got = kernel(**inputs_for(expr, a, b, sr))
        want = ep.evaluate(expr, semiring=sr, backend="reference", **inputs_for(expr, a, b, sr))
        packed = ep.Tensor.from_dense(want, FMT, semiring=sr)
        for role in ("rseg", "rbeg", "rend"):
            assert list(got.levels[-1][role]) == list(packed.levels[-1][role]), role
        assert np.array_equal(got.vals, packed.vals, equal_nan=sr.dtype.kind == "f")


def test_a_sum_over_sparse_runs_is_taken_once_per_run():
    """The row sum multiplies each run's value by its length and never visits
    the fill between runs; a semiring without repeat adds cell by cell."""
    real = ep.compile(CASES["row sums"]()).c_source
    assert "(double)(" in real and "_rbeg1" in real
    assert "(double)(" not in ep.compile(CASES["row sums"](), semiring=NO_REPEAT).c_source


def test_a_product_of_sparse_run_lists_is_one_piece_per_overlap():
    """Law 6 of proofs_notes/runs.md: sparse runs times sparse runs (or dense
    runs) is summed once per overlap of their runs, the gaps skipped whole,
    on every semiring with repeat; with the runs pass off it leapfrogs."""
    for case in ("sparse runs x sparse runs", "sparse runs x runs"):
        src = ep.compile(CASES[case]()).c_source
        assert "one piece per overlap, gaps skipped whole" in src and "(double)(" in src
        off = ep.compile(CASES[case](), tuning={"runs": False}).c_source
        assert "one piece per overlap" not in off
    a = np.array([[0, 2, 2, 2, 0, 0, 5, 5, 0, 1]] * 2, dtype=float)
    b = np.array([[3, 3, 0, 4, 4, 4, 4, 0, 0, 1], [0] * 10], dtype=float)
    expr = CASES["sparse runs x sparse runs"]()
    for sr in (ep.semirings.real, ep.semirings.min_plus):
        av, bv = (np.where(x == 0, sr.zero, x).astype(sr.dtype) for x in (a, b))
        check_backends(expr, {"A": av, "B": bv}, semiring=sr, backends=("streams", "c"))


def test_a_sum_of_sparse_run_lists_is_one_piece_per_stretch():
    """Law 7 of proofs_notes/runs.md: sparse runs plus sparse runs is one piece
    per stretch held by the same runs (a row sum multiplies each piece's value
    by its length), gaps of both skipped whole, on every semiring with repeat;
    with the runs pass off it merges cell by cell."""
    src = ep.compile(CASES["sparse union row sums"]()).c_source
    assert "one piece per stretch held by the same runs" in src and "(double)(" in src
    off = ep.compile(CASES["sparse union row sums"](), tuning={"runs": False}).c_source
    assert "one piece per stretch" not in off
    a = np.array([[0, 2, 2, 2, 0, 0, 5, 5, 0, 1], [0] * 10, [7] * 10], dtype=float)
    b = np.array([[3, 3, 0, 4, 4, 4, 4, 0, 0, 1], [0, 0, 1, 1, 0, 0, 0, 0, 2, 2], [0] * 10],
                 dtype=float)
    for case in UNIONS:
        for sr in (ep.semirings.real, ep.semirings.min_plus, ep.semirings.max_times):
            av, bv = (np.where(x == 0, sr.zero, x).astype(sr.dtype) for x in (a, b))
            check_backends(UNIONS[case](), {"A": av, "B": bv}, semiring=sr,
                           backends=("streams", "c", "imp"))


def test_packing_merges_equal_neighbours_that_meet():
    img = np.array([[0, 3, 3, 0, 3, 5], [2, 2, 2, 2, 2, 2], [0] * 6], dtype=float)
    t = ep.Tensor.from_dense(img, FMT)
    assert list(t.levels[1]["rseg"]) == [0, 3, 4, 4]
    assert list(t.levels[1]["rbeg"]) == [1, 4, 5, 0]
    assert list(t.levels[1]["rend"]) == [3, 5, 6, 6]
    assert list(t.vals) == [3, 3, 5, 2]
    assert np.array_equal(t.to_dense(), img)
    coo = ep.Tensor.from_coords([[0, 0, 0, 1], [2, 3, 5, 5]], [3.0, 3.0, 3.0, 1.0], (2, 6), FMT)
    assert list(coo.levels[1]["rbeg"]) == [2, 5, 5] and list(coo.levels[1]["rend"]) == [4, 6, 6]


@pytest.mark.parametrize("shape", [(3, 7), (1, 1), (4, 0), (0, 5), (2, 3, 6), (9,), (0,)])
def test_packing_from_dense_rows_is_packing_from_coordinates(shape):
    a = np.random.default_rng(len(shape)).integers(0, 3, shape).astype(float)
    rows = ep.Tensor.from_dense(a, FMT)
    nz = np.nonzero(a)
    coords = ep.Tensor.from_coords(np.array(nz).reshape(len(shape), -1), a[nz], shape, FMT)
    for role in ("rseg", "rbeg", "rend"):
        assert list(rows.levels[-1][role]) == list(coords.levels[-1][role])
    assert list(rows.vals) == list(coords.vals)
    assert np.array_equal(rows.to_dense(), a)


@pytest.mark.parametrize("rbeg, rend, message", [
    ([0, 2], [3, 5], "before the end"), ([1, 4], [1, 6], "at least one coordinate"),
    ([1, 4], [3, 7], "at least one coordinate"), ([-1, 4], [3, 6], "at least one"),
    ([1], [3, 6], "rbeg has 1 entries")])
def test_malformed_sparse_runs_are_refused_naming_the_array(rbeg, rend, message):
    levels = ({}, {"rseg": np.array([0, len(rend)]), "rbeg": np.array(rbeg),
                   "rend": np.array(rend)})
    with pytest.raises(InputError, match=message) as err:
        ep.Tensor((1, 6), ep.Format(["dense", "sparse_runs"]), levels, np.ones(len(rend)),
                  name="img")
    assert "img" in str(err.value)


def test_a_sparse_run_level_is_the_last_level():
    with pytest.raises(ep.FormatError, match="last level"):
        ep.Format(["sparse_runs", "dense"])


def test_the_exported_header_describes_the_runs(tmp_path):
    _, header = ep.export_c(CASES["row sums"](), "rows", tmp_path)
    text = " ".join(w for w in header.read_text().split() if w != "*")
    assert "(sparse_runs, " in text and "coordinates in no run hold the fill" in text
