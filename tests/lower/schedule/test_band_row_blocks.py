"""Row blocks (lower/schedule/row_blocks.py): a dense output's rows, each a sum
over one band, a block of rows at a time over their shared columns, each row
given the sum of its own terms whatever its head, middle and tail (proofs_notes/
band.md, "Rows in blocks")."""
import numpy as np
import pytest

import etchpy as ep
from etchpy import imp
from etchpy.tuning import DEFAULT, FORCE
from tuned import run_lowered

i, j = ep.indices("i j")
x = ep.tensor("x", 1)


def blocked(prog) -> bool:
    return any(isinstance(u, imp.Comment) and "rows in blocks" in u.text
               for u in imp.statements(prog.body))


def shapes(rows, cols, seed):
    """Bands whose rows start and end anywhere: a triangle, a band, rows of
    varying starts and lengths (some empty), all inside rows × cols."""
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 5, (rows, cols)).astype(float)
    tri = np.triu(a)
    band = np.triu(np.tril(a, 3), -2)
    ragged = np.zeros_like(a)
    for r in range(rows):
        lo = rng.integers(0, cols + 1)
        hi = rng.integers(lo, cols + 1)
        ragged[r, lo:hi] = a[r, lo:hi]
    return {"triangle": tri, "band": band, "ragged": ragged}


@pytest.mark.parametrize("fmt", ["banded", "uniform_band"])
@pytest.mark.parametrize("rows, k_rows", [(0, 2), (7, 3), (13, 4)])
def test_every_row_its_own_sum(fmt, rows, k_rows):
    """Row counts below, at and between multiples of the block, each shape (a
    uniform band holds the band only), forced blocks (FORCE: every block over
    its shared columns, however few) and off: the dense product; integers, so
    the reassociated sums are exact."""
    for name, a in shapes(rows, 11, rows + k_rows).items():
        if fmt == "uniform_band" and name != "band":
            continue
        A = ep.tensor("A", 2, fmt)
        expr = ep.sum(j, A[i, j] * x[j])
        inputs = {"A": ep.Tensor.from_dense(a, fmt), "x": np.arange(1.0, 12.0)}
        for base, on in ((FORCE.with_(row_block=k_rows), True),
                         (DEFAULT.with_(row_block=k_rows), True),
                         (FORCE.with_(row_blocks=False), False)):
            got, prog = run_lowered(expr, ep.semirings.get("real"), None, inputs, 1, base)
            assert blocked(prog) == on
            np.testing.assert_array_equal(got, a @ inputs["x"])


@pytest.mark.parametrize("sr", ["min_plus", "integer"])
def test_other_semirings(sr):
    """The blocks' sums are ⊕ of the semiring (min-plus: a shortest step)."""
    semiring = ep.semirings.get(sr)
    a = shapes(10, 9, 5)["triangle"]
    dense = ep.tensor("D", 2)
    A = ep.tensor("A", 2, "banded")
    fill = semiring.zero
    held = np.where(a != 0, a, fill).astype(semiring.dtype)
    v = np.arange(1, 10).astype(semiring.dtype)
    want = ep.evaluate(ep.sum(j, dense[i, j] * x[j]), semiring=semiring, backend="reference",
                       D=held, x=v)
    t = ep.Tensor.from_dense(held, "banded", semiring=sr)
    got, prog = run_lowered(ep.sum(j, A[i, j] * x[j]), semiring, None, {"A": t, "x": v}, 1,
                            FORCE.with_(row_block=3))
    assert blocked(prog)
    np.testing.assert_array_equal(got, want)


def test_compiled_triangle():
    """The C kernel over an upper triangle long enough for the default blocks,
    with a row count that leaves a remainder, equals the dense product."""
    A = ep.tensor("A", 2, "banded")
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]))
    assert "rows in blocks" in kern.c_source
    n = 1100 + 5
    a = np.triu(np.random.default_rng(1).random((n, n)))
    v = np.random.default_rng(2).random(n)
    np.testing.assert_allclose(kern(A=ep.Tensor.from_dense(a, "banded"), x=v), a @ v,
                               rtol=1e-12)
