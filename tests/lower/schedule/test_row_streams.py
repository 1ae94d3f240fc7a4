"""Row streams (lower/schedule/row_streams.py): a dense output's rows over counted
runs run as interleaved chunks, each row once, whatever the row count's remainder
(proofs_notes/band.md, "Rows in several streams")."""
import numpy as np
import pytest

import etchpy as ep
from etchpy import imp
from etchpy.tuning import DEFAULT, FORCE
from tuned import run_lowered

i, j = ep.indices("i j")
x = ep.tensor("x", 1)
SR = ep.semirings.get("real")


def interleaved(prog) -> bool:
    return any(isinstance(u, imp.Comment) and "interleaved streams" in u.text
               for u in imp.statements(prog.body))


def band(rows, cols, seed):
    rng = np.random.default_rng(seed)
    return np.triu(np.tril(rng.random((rows, cols)), 2), -1)


@pytest.mark.parametrize("fmt", ["banded", "uniform_band", "blocks"])
@pytest.mark.parametrize("rows, count, base", [(0, 4, DEFAULT), (3, 4, FORCE), (7, 3, DEFAULT),
                                               (9, 2, FORCE)])
def test_every_row_once_on_the_interpreter(fmt, rows, count, base):
    """Each row count (below, at and between multiples of the chunk count) gives
    the dense product, with the pass on; with it off the program has no chunks."""
    a = band(rows, 6, rows + count)
    A = ep.tensor("A", 2, fmt)
    expr = ep.sum(j, A[i, j] * x[j])
    inputs = {"A": ep.Tensor.from_dense(a, fmt), "x": np.arange(1.0, 7.0)}
    got, prog = run_lowered(expr, SR, None, inputs, 1, base.with_(row_stream_count=count))
    assert interleaved(prog)
    np.testing.assert_allclose(got, a @ inputs["x"], rtol=1e-12)
    off, prog = run_lowered(expr, SR, None, inputs, 1, base.with_(row_streams=False))
    assert not interleaved(prog)
    np.testing.assert_allclose(off, a @ inputs["x"], rtol=1e-12)


def test_only_rows_over_counted_runs():
    """csr rows (no counted runs), a count of 1 and threads keep their loops."""
    A = ep.tensor("A", 2, "csr")
    a = band(8, 6, 0)
    _, prog = run_lowered(ep.sum(j, A[i, j] * x[j]), SR, None,
                          {"A": ep.Tensor.from_dense(a, "csr"), "x": np.ones(6)})
    assert not interleaved(prog)
    B = ep.tensor("A", 2, "banded")
    inputs = {"A": ep.Tensor.from_dense(a, "banded"), "x": np.ones(6)}
    _, prog = run_lowered(ep.sum(j, B[i, j] * x[j]), SR, None, inputs, 1,
                          DEFAULT.with_(row_stream_count=1))
    assert not interleaved(prog)
    _, prog = run_lowered(ep.sum(j, B[i, j] * x[j]), SR, None, inputs, 2)
    assert not interleaved(prog) and any(isinstance(u, imp.ParallelFor)
                                         for u in imp.statements(prog.body))


def test_compiled_kernel_rows_in_streams():
    """The C kernel over a band with more rows than the chunks times a few, and a
    row count with a remainder, equals scipy's product."""
    A = ep.tensor("A", 2, "uniform_band")
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]))
    assert "interleaved streams" in kern.c_source
    for rows in (23,):
        a = band(rows, rows, rows)
        v = np.random.default_rng(rows).random(rows)
        np.testing.assert_allclose(kern(A=ep.Tensor.from_dense(a, "uniform_band"), x=v),
                                   a @ v, rtol=1e-12)
