"""ep.einsum over numpy operands stored in another order (runtime.einsum_orders):
the spec run on their C-order transposes, the output laid out in the largest
operand's order, values those of the spec whatever the orders, semirings and
index names; Tuning.einsum_orders=0 keeps the output in C order."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import etchpy as ep
from etchpy.runtime.einsum_orders import Reordered, permuted
from test_einsum_calls import entry

OFF = ep.Tuning(einsum_orders=0)


def _held(a, layout):
    """`a`'s values in C order, Fortran order, as the transpose of a C array with
    its axes reversed or rolled, or as a stepped view."""
    if layout == "F":
        return np.asfortranarray(a)
    if layout == "R":
        roll = tuple(range(1, a.ndim)) + (0,)
        return np.ascontiguousarray(a.transpose(roll)).transpose(np.argsort(roll))
    if layout == "V":
        return np.repeat(a, 2, axis=-1)[..., ::2]
    return a


SPECS = [("ijk,ijk->ijk", ((17, 16, 18), (17, 16, 18))), ("ijk,k->ij", ((17, 16, 18), (18,))),
         ("ijkl,kl->ij", ((9, 8, 10, 7), (10, 7))), ("ij,ij->ij", ((70, 65), (70, 65))),
         ("ij,j->ij", ((70, 65), (65,))), ("ijk,jk->ijk", ((17, 16, 18), (16, 18))),
         ("ijk,ik->kij", ((17, 16, 18), (17, 18))), ("ijk,ij->ik", ((17, 16, 18), (17, 16))),
         ("...ij,...j->...i", ((5, 30, 40), (5, 40))), ("ijk,kl->ijl", ((17, 16, 18), (18, 5))),
         ("ij,jk->ik", ((70, 65), (65, 60))), ("ijk,ijk->", ((17, 16, 18), (17, 16, 18)))]


@pytest.mark.parametrize("spec, shapes", SPECS)
@pytest.mark.parametrize("layout", ["F", "R", "V"])
def test_operands_in_other_orders_give_the_spec_in_theirs(spec, shapes, layout):
    """Each layout of the operands, after and before a call with C-order ones of the
    same key: numpy's values; an output of two axes or more taken in the largest
    operand's order where that operand is contiguous in one; C order with the knob
    off."""
    rng = np.random.default_rng(len(spec))
    values = [rng.random(s) for s in shapes]
    ops = [_held(a, layout) for a in values]
    want = np.einsum(spec, *values)
    for args in (ops, values, ops):
        np.testing.assert_allclose(ep.einsum(spec, *args), want, rtol=1e-12)
    np.testing.assert_allclose(ep.einsum(spec, *ops, tuning=OFF), want, rtol=1e-12)


@pytest.mark.parametrize("spec, shapes", [
    ("ijk,ijk->ijk", ((30, 20, 25),) * 2), ("ijk,k->ij", ((30, 20, 25), (25,))),
    ("ij,j->ij", ((80, 70), (70,))), ("ijkl,kl->ij", ((9, 8, 10, 7), (10, 7)))])
def test_the_output_takes_the_largest_operands_order(spec, shapes):
    """Fortran-order operands give a Fortran-order output (numpy's order='K'), a
    view of the permuted spec's C-order result; C order with the knob off or with
    C-order operands."""
    rng = np.random.default_rng(1)
    values = [rng.random(s) for s in shapes]
    ops = [np.asfortranarray(a) for a in values]
    got = ep.einsum(spec, *ops)
    assert type(entry(spec, *ops)) is Reordered and got.flags.f_contiguous
    np.testing.assert_allclose(got, np.einsum(spec, *values), rtol=1e-12)
    assert ep.einsum(spec, *ops, tuning=OFF).flags.c_contiguous
    assert ep.einsum(spec, *values).flags.c_contiguous


@pytest.mark.parametrize("semiring", ["min_plus", "max_times", "integer", "boolean"])
def test_other_semirings_in_other_orders(semiring):
    """A spec over Fortran-order operands under another semiring: the answer of the
    same operands copied to C order."""
    rng = np.random.default_rng(3)
    dtype = {"integer": np.int64, "boolean": np.bool_}.get(semiring, np.float64)
    a, b = (rng.integers(0, 3, (20, 15, 14)).astype(dtype) for _ in range(2))
    for spec, second in (("ijk,ijk->ijk", b), ("ijk,k->ij", b[0, 0])):
        fa, fb = np.asfortranarray(a), np.asfortranarray(second)
        got = ep.einsum(spec, fa, fb, semiring=semiring)
        want = ep.einsum(spec, a.copy(), np.ascontiguousarray(second), semiring=semiring,
                         tuning=OFF)
        np.testing.assert_array_equal(got, want)


def test_permuted_places_the_largest_operands_indices_in_its_order():
    """Only the output indices the largest operand holds move, among their own
    positions; none move where it is in C order or keeps the output's order."""
    names = [("i", "j", "k"), ("k", "l")]
    assert permuted(names, ("i", "l", "j"), [(2, 1, 0), None], [60, 20]) == \
        ("cba,cd->bda", (2, 1, 0))
    assert permuted(names, ("i", "j"), [None, (1, 0)], [60, 20]) is None
    assert permuted(names, ("k", "j", "i"), [(2, 1, 0), None], [60, 20]) is None
    assert permuted(names, ("i", "j"), [(1, 0, 2), None], [60, 20]) == ("bac,cd->ba", (1, 0))
    many = [tuple(f"x{k}" for k in range(53))]
    assert permuted(many, many[0][:2], [tuple(range(52, -1, -1))], [2 ** 53]) is None


@given(st.permutations(range(4)), st.permutations(range(4)), st.sampled_from(["F", "R", "C"]))
def test_any_output_order_of_any_stored_order(perm, out_perm, layout):
    """A product of two 4-axis operands, the second stored in a random axis order,
    to any output order: numpy's values."""
    rng = np.random.default_rng(sum(perm))
    shape = (5, 6, 7, 4)
    a, b = rng.random(shape), rng.random(shape)
    held = np.ascontiguousarray(b.transpose(perm)).transpose(np.argsort(perm))
    held = _held(held, layout) if layout != "C" else held
    spec = "ijkl,ijkl->" + "".join("ijkl"[m] for m in out_perm)
    got = ep.einsum(spec, a, held, tuning=ep.Tuning(einsum_orders=1))
    np.testing.assert_allclose(got, np.einsum(spec, a, b), rtol=1e-12)
