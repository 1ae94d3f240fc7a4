"""A boolean product as the unsigned minimum of its bytes (Tuning.bool_product_min,
c.bool_product; law in proofs_notes/bool_product.md): a 3×3 erosion's nine
shifted windows, a 1×7 row and a cross, dense, rle and csr operands, and a
product with a sum and an iso factor (factors that enter as their own test);
bytes other than 0 and 1 (any nonzero byte is true), where a bitwise and of the
bytes (2 & 1 = 0) would be wrong. Every answer numpy's, and the same with the
switch off, whose C keeps the one-⊗-at-a-time text."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.semiring import Semiring

from tests.streams.test_shift_runs import stencil

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j, k = ep.indices("i j k")
ON, OFF = {"bool_product_min": True}, {"bool_product_min": False}


def numpy_stencil(im, offsets):
    h, w = im.shape
    p = np.pad(im != 0, 3)
    out = np.ones((h, w), dtype=bool)
    for di, dj in offsets:
        out &= p[3 + di:3 + di + h, 3 + dj:3 + dj + w]
    return out


def odd_bytes(seed, shape):
    """A boolean image whose true bytes are 1, 2, 3, 128 or 255."""
    rng = np.random.default_rng(seed)
    u8 = np.where(rng.random(shape) < 0.8, rng.choice([1, 2, 3, 128, 255], shape), 0)
    return u8.astype(np.uint8).view(bool)


ELEMENTS = {"box 3×3": [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)],
            "row 1×7": [(0, b) for b in range(-3, 4)],
            "cross": [(-1, 0), (0, -1), (0, 0), (0, 1), (1, 0)]}


@pytest.mark.parametrize("name", ELEMENTS)
@pytest.mark.parametrize("fmt", ["dense", "rle"])
def test_stencils_on_and_off(name, fmt):
    im = odd_bytes(3, (37, 70))
    offs = ELEMENTS[name]
    want = numpy_stencil(im, offs)
    img = ep.tensor("img", 2, fmt)
    operand = im if fmt == "dense" else ep.Tensor.from_dense(im, fmt, semiring="boolean")
    texts = []
    for tune in (ON, OFF):
        kern = ep.compile(stencil(img, offs, *im.shape), semiring=ep.semirings.boolean,
                          tuning=tune)
        got = kern(img=operand)
        assert got.dtype == bool and (got.view(np.uint8) <= 1).all()
        np.testing.assert_array_equal(got, want)
        texts.append(kern.c_source)
    if fmt == "dense":
        assert "ep_and_min(" in texts[0] and "ep_and_min(" not in texts[1]


def test_bytes_not_a_bitwise_and():
    """2 and 1 are both true: their product is true (a bitwise and gives 0)."""
    a, b = ep.tensor("a", 1), ep.tensor("b", 1)
    x = np.array([2, 1, 0, 255, 128, 3], np.uint8).view(bool)
    y = np.array([1, 2, 5, 0, 128, 252], np.uint8).view(bool)
    kern = ep.compile(a[i] * b[i], semiring=ep.semirings.boolean, tuning=ON)
    assert "ep_and_min(" in kern.c_source
    np.testing.assert_array_equal(kern(a=x, b=y), [True, True, False, False, True, True])


def test_factors_that_are_not_bytes():
    """A Σ factor and a csr factor beside dense ones, switch on and off."""
    rng = np.random.default_rng(5)
    A, B, x = ep.tensor("A", 2, "csr"), ep.tensor("B", 2), ep.tensor("x", 1)
    a = rng.random((30, 40)) < 0.3
    bm = rng.random((30, 40)) < 0.7
    v = rng.random(40) < 0.5
    import scipy.sparse as sp
    want = (a & bm & v[None, :]).any(axis=1) & (bm & v[None, :]).any(axis=1)
    for tune in (ON, OFF):
        kern = ep.compile(ep.sum(j, A[i, j] * B[i, j] * x[j]) * ep.sum(k, B[i, k] * x[k]),
                          semiring=ep.semirings.boolean, tuning=tune)
        np.testing.assert_array_equal(kern(A=sp.csr_array(a), B=bm, x=v), want)


def test_only_the_builtin_spelling():
    """Another semiring over bytes whose ⊗ is spelled otherwise keeps its text."""
    sr = Semiring("bool_bits", np.bool_, False, True, ("(({a} | {b}) != 0)", np.logical_or),
                  ("({a} && {b})", np.logical_and), idempotent=True)
    a, b = ep.tensor("a", 1), ep.tensor("b", 1)
    kern = ep.compile(a[i] * b[i], semiring=sr, tuning=ON)
    assert "ep_and_min(" not in kern.c_source
    x = np.array([1, 0, 1], bool)
    np.testing.assert_array_equal(kern(a=x, b=x[::-1].copy()), [True, False, True])
