"""Loop orders: a union no order walks is planned one step per term or one
fused step reading a converted input, whichever costs less; a user order that
walks an input against its storage order says what to convert; the reference
needs no order."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.testing import check_backends
from tuned import random_csr

i, j = ep.indices("i j")
A_csr = ep.tensor("A", 2, format="csr")

pytestmark = pytest.mark.usefixtures("shared_cache")


@pytest.mark.parametrize("output", ["dense", "csr"])
def test_a_union_no_order_walks_is_planned_one_step_per_term(output):
    """A + Aᵀ with A csr: no single loop order walks both accesses as declared.
    Into a dense output the planner gives each term its own step (and its own
    order); into a csr output, whose records several steps would have to sort,
    one step reading A converted to csc for Aᵀ is cheaper. A Σ over such a
    union is distributed first, Σ_i (a + b) = Σ_i a + Σ_i b, also over a term
    without i."""
    M = random_csr(40, 40, 300, 6)
    D = M.toarray()
    sym = A_csr[i, j] + A_csr[j, i]
    kern = ep.compile(sym, output=output)
    if output == "dense":
        assert [s.order for s in kern.plan.steps] == [("i", "j"), ("j", "i")]
        assert not kern.plan.conversions
    else:
        assert [s.order for s in kern.plan.steps] == [("i", "j")]
        assert [c.format.name for c in kern.plan.conversions] == ["csc"]
    got = kern(A=M)
    np.testing.assert_allclose(got if output == "dense" else got.toarray(), D + D.T)
    check_backends(sym, {"A": M}, output=output)
    check_backends(ep.sum(i, sym), {"A": M})
    v = ep.tensor("v", 1)        # a term without i is added once per value of i
    check_backends(ep.sum(i, sym + v[j]), {"A": M, "v": np.arange(40.0)})


def test_a_user_order_against_storage_order_says_what_to_convert():
    B = ep.tensor("B", 2, format="csr")
    with pytest.raises(ep.OrderError, match="convert B"):
        ep.compile(ep.sum((i, j), A_csr[i, j] * B[j, i]), order=("i", "j"))


def test_reference_semantics_needs_no_loop_order():
    """The dense specification evaluates what no loop order walks (the
    optimizer's tests compare rewrites on it)."""
    B = ep.tensor("B", 2, format="csr")
    M, N = random_csr(20, 30, 100, 7), random_csr(30, 20, 100, 8)
    got = ep.evaluate(ep.sum((i, j), A_csr[i, j] * B[j, i]), A=M, B=N, backend="reference")
    assert got == pytest.approx(float((M.toarray() * N.toarray().T).sum()))
    with pytest.raises(ep.OrderError):
        ep.evaluate(ep.sum((i, j), A_csr[i, j] * B[j, i]), A=M, B=N, backend="streams",
                    order=("i", "j"))
