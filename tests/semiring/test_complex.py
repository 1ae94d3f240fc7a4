"""The complex semirings and the laws proofs_notes/complex.md relies on: a
commutative ring (check_axioms), conj a ring homomorphism, real and imag
additive, abs multiplicative, all four zero-keeping; and the refusals (an
ordered semiring or map meets complex numbers)."""
import itertools

import numpy as np
import pytest

import etchpy as ep
from etchpy import maps
from etchpy.semiring_laws import check_axioms

GAUSSIAN = [complex(a, b) for a, b in itertools.product((-2, 0, 1, 3), (-1, 0, 2))]
CX = (ep.semirings.complex, ep.semirings.complex64)


@pytest.mark.parametrize("sr", CX, ids=lambda s: s.name)
def test_complex_semirings_are_commutative_rings(sr):
    assert check_axioms(sr, GAUSSIAN) == []
    assert sr.negation and not sr.idempotent
    for a in GAUSSIAN:                       # additive inverses: a + (-1)·a = 0
        assert sr.add(sr.dtype.type(a), sr.mul(sr.dtype.type(-1), sr.dtype.type(a))) == 0


def test_conj_is_a_ring_homomorphism():
    conj = maps.MAPS["conj"].py
    for a, b in itertools.product(np.array(GAUSSIAN), repeat=2):
        assert conj(a + b, 0) == conj(a, 0) + conj(b, 0)
        assert conj(a * b, 0) == conj(a, 0) * conj(b, 0)
    assert conj(np.complex128(0), 0) == 0 and conj(np.complex128(1), 0) == 1


def test_real_and_imag_are_additive_abs_is_multiplicative():
    re, im, ab = (maps.MAPS[f].py for f in ("real", "imag", "abs"))
    for a, b in itertools.product(np.array(GAUSSIAN), repeat=2):
        assert re(a + b, 0) == re(a, 0) + re(b, 0)
        assert im(a + b, 0) == im(a, 0) + im(b, 0)
        assert np.isclose(ab(a * b, 0), ab(a, 0) * ab(b, 0))
        assert re(a, 0) + 1j * im(a, 0) == a


@pytest.mark.parametrize("fn", ["conj", "real", "imag", "abs"])
def test_complex_maps_keep_zero(fn):
    assert maps.keeps_zero(fn)
    assert maps.apply(fn, np.complex128(0)) == 0


def test_dtype_chooses_the_complex_semirings():
    assert ep.semirings.for_dtype(np.complex128) is ep.semirings.complex
    assert ep.semirings.for_dtype(np.complex64) is ep.semirings.complex64
    assert ep.semirings.get("complex") is ep.semirings.complex
    assert ep.semirings.complex.c_type() == "double _Complex"
    assert ep.semirings.complex.literal(2j) == 2j


def test_casts_into_and_out_of_complex():
    cx = ep.semirings.complex64
    assert cx.cast(np.array([1.0, 2.5])).dtype == np.complex64
    with pytest.raises(ep.InputError, match="input z"):       # does not survive float32 parts
        cx.cast(np.array([1 + 1e-12j, 1.0 + 0.1j], dtype=np.complex128), what="input z")
    with pytest.raises(ep.InputError, match=r"input w .*pass semiring=ep.semirings.complex"):
        ep.semirings.real.cast(np.array([1j]), what="input w")


def test_ordered_semirings_and_maps_refuse_complex():
    i, j = ep.indices("i j")
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    M, v = np.eye(3, dtype=complex) * 1j, np.ones(3, dtype=complex)
    with pytest.raises(ep.InputError, match=r"input A .*no order"):
        ep.evaluate(ep.sum(j, A[i, j] * x[j]), semiring="min_plus", A=M, x=v)
    with pytest.raises(ep.SemiringError, match="no order"):
        ep.Semiring("cmax", np.complex128, 0, 1, ("({a} > {b} ? {a} : {b})", np.maximum),
                    ("{a} * {b}", np.multiply))
    with pytest.raises(ep.SemiringError, match="'maximum' is not defined on complex"):
        ep.evaluate(ep.map("maximum", x[i], 0.0), x=v)


def test_value_comparisons_refuse_complex_but_index_comparisons_run():
    i, j = ep.indices("i j")
    A = ep.tensor("A", 2, format="csr")
    M = np.array([[1 + 1j, 0, 2j], [0, 3, 0]])
    kern = ep.compile(ep.sum(j, (A[i, j] >= 0.5) * A[i, j]))    # the variant's check
    for call in (lambda: kern(A=M), lambda: ep.evaluate(kern.request.expr, A=M, backend="streams")):
        with pytest.raises(ep.SemiringError, match="compares values.*no order"):
            call()
    got = ep.evaluate(ep.sum(j, (i < j) * A[i, j]), A=M)
    np.testing.assert_array_equal(got, [2j, 0])
