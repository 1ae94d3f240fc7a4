"""A temporary written by one step that stores each of its cells once is not
filled with zeros first (lower.driver._lower_step, under Tuning.first_store, the
output's rule: DenseTarget.own): its allocation has no fill and its writes are
stores. The interpreter fills such an array with garbage, so a step that only
added into it would go wrong."""
import numpy as np
import pytest

import etchpy as ep
from etchpy import imp, semirings
from etchpy.tuning import DEFAULT
from tuned import random_csr, run_plan_program

i, j, k = ep.indices("i j k")
A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
x = ep.tensor("x", 1)
NESTED = ep.sum(j, A[i, j] * ep.sum(k, B[j, k] * x[k]))

pytestmark = pytest.mark.usefixtures("shared_cache")


def interpreted(expr, sr, inputs, tuning):
    """The compiled kernel's program (its plan keeps the written nesting) run on
    the Imp interpreter: (the dense output, the program)."""
    compiled = ep.compile(expr, semiring=sr, tuning=tuning).compiled
    prog = compiled.build(False)
    final, _ = run_plan_program(expr, compiled.plan, prog, sr, inputs)
    return final[prog.output.arrays["vals"]], prog


def temp_allocs(prog):
    return [s for s in imp.statements(prog.body)
            if isinstance(s, imp.Alloc) and s.array.startswith("tmp")]


@pytest.mark.parametrize("sr", ["real", "min_plus", "max_times"])
def test_a_temporary_stored_once_a_cell_is_not_filled(sr):
    """The inner SpMV's temporary t[j] (every j once, the rows of B) is allocated
    without a fill and stored, not added into; with first_store off it is filled
    with the zero and added into. Both give the product on the interpreter."""
    semiring = semirings.get(sr)
    rng = np.random.default_rng(7)
    a, b, v = random_csr(30, 20, 150, 1), random_csr(20, 25, 120, 2), rng.random(25)
    want = ep.evaluate(NESTED, A=a, B=b, x=v, semiring=sr, backend="reference")
    for tuning, fill in ((DEFAULT, None), (DEFAULT.with_(first_store=False),
                                           imp.Const(semiring.zero, "value"))):
        got, prog = interpreted(NESTED, semiring, {"A": a, "B": b, "x": v}, tuning)
        allocs = temp_allocs(prog)
        assert allocs and all(s.fill == fill for s in allocs)
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-12)
    src = ep.compile(NESTED, semiring=sr).c_source
    assert "tmp_vals = (ep_val_t *)ep_malloc(" in src and "ep_calloc" not in src.split(
        "tmp_vals =")[1].split(";")[0]


def test_a_temporary_a_step_adds_into_more_than_once_a_cell_is_filled():
    """t[j] = Σ_i A[i,j]·x[i] (a scatter down A's rows: a cell gets several
    products) keeps its zero fill and its additions."""
    scatter = ep.sum(i, A[i, j] * x[i])
    expr = ep.sum(j, B[k, j] * scatter)
    a, b, v = random_csr(20, 15, 100, 3), random_csr(10, 15, 60, 4), np.arange(20.0)
    got, prog = interpreted(expr, semirings.get("real"), {"A": a, "B": b, "x": v}, DEFAULT)
    allocs = temp_allocs(prog)
    assert allocs and all(s.fill is not None for s in allocs)
    np.testing.assert_allclose(got, b @ (a.T @ v), rtol=1e-12)
