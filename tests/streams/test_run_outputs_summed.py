"""Run-length outputs written as runs when loops are summed inside the output's
levels, or the output's mode order is permuted (lower/targets/runs.py,
runs_writable; proofs_notes/runs.md law 4): a row sum into an rle vector, a
sum over the last mode into an rle matrix, column runs of a csc or transposed
operand. Every backend (the Imp program too) agrees with the dense reference on
every semiring, the kernel writes runs (output mode spans), and the runs are
those packing the dense result gives."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.expr.walk import tensors
from etchpy.testing import assert_same, check_backends
from pairing import paired

from tests.streams.test_runs import NO_REPEAT, SEMIRINGS, image

i, j, k = ep.indices("i j k")
COLUMNS = ep.Format(["dense", "runs"], (1, 0))       # column runs
SPARSE_COLUMNS = ep.Format(["dense", "sparse_runs"], (1, 0))


def t(name, fmt="rle", order=2):
    return ep.tensor(name, order, format=fmt)


CASES = {     # name: (expression, output format, its indices in order)
    "row sums": lambda: (ep.sum(j, t("A")[i, j]), "rle", None),
    "row sums of a product": lambda: (ep.sum(j, t("A")[i, j] * t("B")[i, j]), "rle", None),
    "spmv": lambda: (ep.sum(j, t("C", "csr")[i, j] * t("x", "dense", 1)[j]), "rle", None),
    "last mode summed": lambda: (ep.sum(k, t("T", "rle", 3)[i, j, k]), "rle", None),
    "column runs of csc": lambda: (t("C", "csc")[i, j], COLUMNS, None),
    "transposed runs": lambda: (t("A")[j, i] + t("B")[j, i], COLUMNS, (i, j)),
    "column sums of csc": lambda: (ep.sum(i, t("C", "csc")[i, j]), "rle", None),
}


def inputs(sr, expr):
    a, b = image(sr), image(sr, seed=1)
    c = np.where(np.arange(a.size).reshape(a.shape) % 3 == 0, image(sr, seed=3), sr.zero)
    made = {"A": a, "B": b, "C": c, "x": b[0], "T": np.stack([a, b, a[::-1]]),
            "D": image(sr, shape=(a.shape[1], 7), seed=4)}
    return {n: made[n] for n in tensors(expr)}


def mode(expr, out, out_indices=None):
    return ep.compile(expr, output=out, out_indices=out_indices).program.output.mode


@pytest.mark.parametrize("case, sr", paired(sorted(CASES), SEMIRINGS + [NO_REPEAT],
                                            always=("real", NO_REPEAT.name)))
def test_summed_and_permuted_run_outputs_equal_the_reference(sr, case):
    expr, out, order = CASES[case]()
    given = inputs(sr, expr)
    want = ep.evaluate(expr, semiring=sr, backend="reference", out_indices=order, **given)
    for runs in (True, False):
        tuning = {"runs": runs}
        if order is None:
            check_backends(expr, given, semiring=sr, backends=("streams", "c", "imp"),
                           output=out, tuning=tuning)
            continue
        for backend in ("streams", "c"):        # the reference in the indices' order
            got = ep.evaluate(expr, semiring=sr, backend=backend, output=out,
                              out_indices=order, tuning=tuning, **given)
            assert_same(got, want, sr, f"{case} on {backend}")


@pytest.mark.parametrize("case", sorted(CASES))
def test_they_are_written_as_maximal_runs(case):
    expr, out, order = CASES[case]()
    assert mode(expr, out, order) == "spans", case
    got = ep.evaluate(expr, output=out, out_indices=order,
                      **inputs(ep.semirings.real, expr))
    packed = ep.Tensor.from_coords(*_entries(got.to_dense()), got.shape, got.format)
    for mine, theirs in zip(got.levels, packed.levels):
        for role in mine:
            assert np.array_equal(mine[role], theirs[role]), (case, role)
    assert np.array_equal(got.vals, packed.vals)


def _entries(a):
    nz = np.nonzero(a)
    return np.array(nz).reshape(a.ndim, -1), a[nz]


def test_out_of_order_writes_are_computed_dense_and_packed():
    """A sum over an outer loop (column sums of row runs) or a transpose into
    row runs is computed into a dense array and packed after the call (the
    output stores every cell anyway); a sparse run output written out of order
    writes coordinate records, packed after the call, and in order its runs."""
    assert mode(ep.sum(i, t("A")[i, j]), "rle") == "dense"
    assert mode(t("A")[j, i], "rle", (i, j)) == "dense"
    assert mode(t("A")[j, i], "sparse_rle", (i, j)) == "coords"
    assert mode(t("C", "csc")[i, j], SPARSE_COLUMNS) == "spans"
    a = image(ep.semirings.real)
    got = ep.evaluate(ep.sum(i, t("A")[i, j]), A=a, output="rle")
    assert got.format == ep.Format.named("rle", 1)
    assert np.array_equal(got.to_dense(), a.sum(axis=0))


CASES_PACKED = {
    "column sums": lambda: (ep.sum(i, t("A")[i, j]), "rle", None),
    "transpose": lambda: (t("A")[j, i] * t("B")[j, i], "rle", (i, j)),
    "product": lambda: (ep.sum(k, t("A")[i, k] * t("D", "dense")[k, j]), "rle", None),
}


@pytest.mark.parametrize("sr", SEMIRINGS, ids=lambda s: s.name)
@pytest.mark.parametrize("case", sorted(CASES_PACKED))
def test_packed_run_outputs_equal_the_reference(sr, case):
    expr, out, order = CASES_PACKED[case]()
    given = inputs(sr, expr)
    want = ep.evaluate(expr, semiring=sr, backend="reference", out_indices=order, **given)
    for backend in ("streams", "c"):
        got = ep.evaluate(expr, semiring=sr, backend=backend, output=out, out_indices=order,
                          **given)
        assert got.format == ep.Format.named("rle", got.order)
        assert_same(got, want, sr, f"{case} on {backend}")
