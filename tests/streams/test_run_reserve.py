"""A run output's row reserves its cells of runs once (tuning.runs_reserve,
proofs_notes/runs.md law 9): a row holds at most as many runs as cells, so the
pushes in it store without a capacity check; a push compares with the last
run's value kept in a variable (tuning.runs_last). The Imp interpreter checks every
store against the array's length, so with no first allocation to spare
(initial_capacity and first_capacity_limit 0) a bound one short fails on the
rows whose runs never merge (as many runs as cells); rows that all merge, rows
no loop enters and outputs of order 3 are checked beside, on and off."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.testing import check_backends

i, j, k = ep.indices("i j k")
TIGHT = {"initial_capacity": 0, "first_capacity_limit": 0}
SHAPE = (4, 9)


def distinct(shape=SHAPE):
    """No two neighbours equal and no zero: a blend with zeros has one run per cell."""
    return np.arange(1, np.prod(shape) + 1, dtype=np.float64).reshape(shape)


def images():
    rows = distinct()
    mixed = rows.copy()
    mixed[1] = 5.0                       # one row all merged
    mixed[2, 3:7] = 0.0                  # a run of the zero inside a row
    halves = np.zeros(SHAPE)
    halves[:, :4] = 1.0                  # two runs per row
    return {"never merge": (rows, np.zeros(SHAPE)),
            "all merge": (np.full(SHAPE, 2.0), np.full(SHAPE, 3.0)),
            "mixed": (mixed, halves)}


def rle(name, fmt="rle", order=2):
    return ep.tensor(name, order, format=fmt)


KNOBS = [{"runs_reserve": True, "runs_last": True}, {"runs_reserve": False, "runs_last": False},
         {"runs_reserve": True, "runs_last": False}]


@pytest.mark.parametrize("case", sorted(images()))
@pytest.mark.parametrize("out", ["rle", "sparse_rle"])
@pytest.mark.parametrize("knobs", range(len(KNOBS)))
def test_run_outputs_fit_the_row_reservation(case, out, knobs):
    """Every case, on and off (runs_last: a push compares with the last run's
    value held in a variable, which must be the one stored, across the row's
    gap runs of the zero and from one row to the next)."""
    a, b = images()[case]
    expr = rle("A")[i, j] + rle("B")[i, j]
    check_backends(expr, {"A": a, "B": b}, backends=("imp", "c"), output=out,
                   tuning={**TIGHT, **KNOBS[knobs]})


def test_a_row_of_distinct_cells_is_as_many_runs_as_cells():
    """The bound is met: a tighter one would be too small for these rows."""
    a, b = images()["never merge"]
    I, M = rle("A"), rle("B")
    got = ep.compile(I[i, j] + M[i, j], output="rle", tuning=TIGHT)(
        A=ep.Tensor.from_dense(a, "rle"), B=ep.Tensor.from_dense(b, "rle"))
    assert len(got.vals) == a.size
    assert np.array_equal(got.to_dense(), a)


@pytest.mark.parametrize("knobs", range(len(KNOBS)))
def test_rows_no_loop_enters_and_order_3(knobs):
    """A product with a csr operand skips its empty rows (each one run of the
    zero) and the cells between its entries (gaps, runs of the zero between
    runs of one value); an order-3 output's rows are its first two axes together."""
    a = distinct((5, 7))
    c = np.where((np.arange(35).reshape(5, 7) % 2 == 0) & (np.arange(5)[:, None] % 2 == 1),
                 3.0, 0.0)
    tuning = {**TIGHT, **KNOBS[knobs]}
    product = rle("A")[i, j] * ep.tensor("C", 2, format="csr")[i, j]
    for a in (a, np.full(a.shape, 2.0)):      # equal values either side of a gap: no merge
        check_backends(product, {"A": a, "C": c}, backends=("imp", "c"), output="rle",
                       tuning=tuning)
    cube = np.stack([distinct((3, 6)), np.ones((3, 6))])
    check_backends(rle("A", order=3)[k, i, j] + rle("B", order=3)[k, i, j],
                   {"A": cube, "B": cube[::-1].copy()}, backends=("imp", "c"),
                   output="rle", tuning=tuning)


@pytest.mark.parametrize("out", ["rle", "sparse_rle"])
def test_pushes_check_no_capacity_when_the_row_reserved(out):
    """On: one reservation per row, none per push; off: a check at each push."""
    a, b = images()["mixed"]
    src = {}
    for reserve in (True, False):
        kern = ep.compile(rle("A")[i, j] + rle("B")[i, j], output=out,
                          tuning={"runs_reserve": reserve})
        kern(A=ep.Tensor.from_dense(a, "rle"), B=ep.Tensor.from_dense(b, "rle"))
        src[reserve] = kern.c_source
    assert "(out_runs + 1) > out_vals_cap" not in src[True]
    assert "(out_runs + dim_j) > out_vals_cap" in src[True]
    assert "(out_runs + 1) > out_vals_cap" in src[False]
    assert "(out_runs + dim_j)" not in src[False]
