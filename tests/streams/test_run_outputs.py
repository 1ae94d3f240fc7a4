"""Run-length outputs written as runs (lower/targets/runs.py, proofs_notes/runs.md):
an element-wise product or sum of run operands into an `rle` output is one run
per overlap, equal neighbours merged, the cells no loop writes runs of the
zero. Every backend (the Imp program too) agrees with the dense reference on
every semiring, with the run passes on and off, and the runs are the ones
packing the dense result gives."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.expr.walk import tensors
from etchpy.testing import check_backends
from pairing import paired

from tests.streams.test_runs import NO_REPEAT, SEMIRINGS, image

i, j, k = ep.indices("i j k")


def t(name, fmt="rle", order=2):
    return ep.tensor(name, order, format=fmt)


CASES = {
    "sum": lambda: t("A")[i, j] + t("B")[i, j],
    "product": lambda: t("A")[i, j] * t("B")[i, j],
    "blend": lambda: t("A")[i, j] * t("B")[i, j] + t("A")[i, j],
    "runs x dense": lambda: t("A")[i, j] * t("D", "dense")[i, j],
    "runs x csr": lambda: t("A")[i, j] * t("C", "csr")[i, j],
    "csr alone": lambda: t("C", "csr")[i, j] + t("C", "csr")[i, j],
    "vector": lambda: t("A", order=1)[j] * t("B", order=1)[j],
    "order 3": lambda: t("A", order=3)[k, i, j] + t("B", order=3)[k, i, j],
}


def inputs(sr, expr):
    def sparse(a):
        return np.where(np.arange(a.size).reshape(a.shape) % 3 == 0, a, sr.zero)
    made = {"A": image(sr), "B": image(sr, seed=1), "D": image(sr, seed=2),
            "C": sparse(image(sr, seed=3))}
    out = {}
    for name in tensors(expr):
        order = next(acc.tensor.order for acc in _accesses(expr) if acc.tensor.name == name)
        a = made[name]
        out[name] = a[0] if order == 1 else np.stack([a, a[::-1]]) if order == 3 else a
    return out


def _accesses(expr):
    from etchpy.expr.walk import accesses
    return accesses(expr)


@pytest.mark.parametrize("case, sr", paired(sorted(CASES), SEMIRINGS + [NO_REPEAT],
                                            always=("real", NO_REPEAT.name)))
def test_run_outputs_equal_the_reference(sr, case):
    expr = CASES[case]()
    for runs in (True, False):
        check_backends(expr, inputs(sr, expr), semiring=sr, backends=("streams", "c", "imp"),
                       output="rle", tuning={"runs": runs})


@pytest.mark.parametrize("case", sorted(CASES))
def test_run_outputs_are_maximal_runs(case):
    """The runs written are those packing the dense result makes (equal
    neighbours merged, the zero's runs included)."""
    expr = CASES[case]()
    sr = ep.semirings.real
    got = ep.evaluate(expr, output="rle", **inputs(sr, expr))
    packed = ep.Tensor.from_dense(got.to_dense(), got.format)
    for mine, theirs in zip(got.levels, packed.levels):
        for role in mine:
            assert np.array_equal(mine[role], theirs[role]), (case, role)
    assert np.array_equal(got.vals, packed.vals)


def test_an_rle_output_is_written_a_run_at_a_time():
    """One write per overlap of the two run lists: the kernel writes runs (no
    coordinate records), and the piece's end is the run's end."""
    src = ep.compile(CASES["sum"](), output="rle").c_source
    assert "out_rend1" in src and "out_crd" not in src
    assert "one piece per overlap" in src and "out_rend1[out_runs] = j_m" in src
