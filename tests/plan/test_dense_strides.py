"""Dense operands read in storage order (plan.strides): a loop order that reads a
dense operand's runs along its last axis but its outer axes out of storage order
costs more than the one that streams it (`out_of_order`), so the planner takes the
storage order where both are otherwise alike; small operands (in cache) and loose
temporaries are not charged, and with `access_order` off the heuristic order stays.
A dense target written against its storage order innermost pays too (less than an
operand read against it)."""
from dataclasses import replace

import numpy as np
import pytest

import etchpy as ep
from etchpy.plan import plan as planning
from etchpy.plan.cost import Stats, nest_cost
from etchpy.plan.strides import out_of_order
from etchpy.tuning import DEFAULT

i, j, k, l = ep.indices("i j k l")
A, B = ep.tensor("A", 3, "dense"), ep.tensor("B", 3, "dense")
C = ep.tensor("C", 2, "dense")
CUBE = {"i": 100, "j": 100, "k": 100}


def _order(e, out, dims, tuning=DEFAULT):
    plan = planning.make_plan(e, out, stats=Stats(dims=dims, tuning=tuning))
    return plan.steps[-1].order


@pytest.mark.parametrize("body", [A[i, j, k] * B[i, j, k], A[i, j, k] * C[i, k]],
                         ids=["ijk,ijk->j", "ijk,ik->j"])
@pytest.mark.parametrize("dims", [CUBE, {"i": 1000, "j": 100, "k": 10},
                                  {"i": 10, "j": 100, "k": 1000}])
def test_a_sum_over_outer_axes_reads_its_operands_in_storage_order(body, dims):
    """Output first, (j, i, k), would jump a plane for every run of k."""
    assert _order(ep.sum((i, k), body), (j,), dims) == ("i", "j", "k")


def test_without_access_order_the_heuristic_order_stays():
    off = replace(DEFAULT, access_order=False)
    assert _order(ep.sum((i, k), A[i, j, k] * B[i, j, k]), (j,), CUBE, off) == ("j", "i", "k")


def test_operands_in_cache_and_runs_read_in_order_are_not_charged():
    small = Stats(dims={"i": 10, "j": 10, "k": 10})
    big = Stats(dims=CUBE)
    assert out_of_order(A[i, j, k], ("j", "i", "k"), small) == 0   # 1000 cells
    assert out_of_order(A[i, j, k], ("j", "i", "k"), big) == 1
    assert out_of_order(A[i, j, k], ("i", "j", "k"), big) == 0
    assert out_of_order(A[i, j, k], ("j", "k", "i"), big) == 0     # strided: priced apart
    assert out_of_order(A[i, j, k] * B[i, j, k], ("j", "i", "k"), big) == 2
    assert out_of_order(A[i, j, k], ("j", "i", "k"), big, loose=frozenset({"A"})) == 0
    Acm = ep.tensor("Acm", 3, ep.Format.dense(3, mode_order=(2, 1, 0)))
    assert out_of_order(Acm[i, j, k], ("j", "i", "k"), big) == 0   # its last axis is i
    assert out_of_order(Acm[i, j, k], ("k", "j", "i"), big) == 0


def test_a_target_written_against_its_order_pays_per_record():
    """`ijk,jl->ilk`: looping l innermost (the order of appearance) writes out[i,l,k]
    a row of k apart each record; k innermost writes it in order."""
    M = ep.tensor("M", 2, "dense")
    dims = {"i": 100, "j": 100, "k": 100, "l": 100}
    assert _order(ep.sum(j, A[i, j, k] * M[j, l]), (i, l, k), dims)[-1] == "k"
    big = Stats(dims=dims)
    body = A[i, j, k] * M[j, l]
    extra = (nest_cost(body, ("i", "j", "k", "l"), big, out=("i", "l", "k"))
             - nest_cost(body, ("i", "j", "k", "l"), big, out=("i", "k", "l")))
    assert extra == pytest.approx(DEFAULT.contiguous_weight * 100 ** 4)


def test_an_operand_read_in_order_outweighs_a_target_written_against_it():
    """A Fortran-order operand is read along its first axis and the C-order target
    written against its order, rather than the operand read a plane apart a record."""
    F = ep.tensor("F", 3, ep.Format.dense(3, mode_order=(2, 1, 0)))
    x = ep.tensor("x", 1, "dense")
    assert _order(ep.sum(k, F[i, j, k] * x[k]), (i, j), CUBE)[-1] == "i"


def test_the_charge_is_the_records_times_the_contiguous_weight():
    big = Stats(dims=CUBE)
    body = A[i, j, k] * B[i, j, k]
    extra = nest_cost(body, ("j", "i", "k"), big) - nest_cost(body, ("i", "j", "k"), big)
    assert extra == pytest.approx(2 * DEFAULT.contiguous_weight * 100 ** 3)


@pytest.mark.parametrize("spec,shape", [("ijk,ijk->j", (40, 30, 20)),
                                        ("ijk,ik->j", (30, 40, 25)),
                                        ("ijkl,ijkl->jl", (9, 8, 7, 6))])
def test_the_storage_order_kernel_agrees_with_numpy(spec, shape):
    rng = np.random.default_rng(3)
    dims = dict(zip("ijkl", shape))
    ops = [rng.random([dims[c] for c in s]) for s in spec.split("->")[0].split(",")]
    np.testing.assert_allclose(ep.einsum(spec, *ops), np.einsum(spec, *ops), rtol=1e-12)
