"""Windows, A[i[lo:hi:s], j] (expr.windows, streams.window, runtime.windows).

The law of proofs_notes/windows.md: a window is the restriction and the shift,
⟦A through (lo, n, s)⟧(w) = ⟦A⟧(lo + w·s) where that is inside A, the
semiring's zero elsewhere; checked against numpy slicing of a zero-padded
array on every backend (the stream interpreter with its invariant checks on),
for every level kind (dense, compressed, singleton runs) and mode order. The
random problems of the central property draw windows too (tests/central.py)."""
import numpy as np
import pytest
import scipy.ndimage as ndi
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import ExpressionTypeError, InputError
from etchpy.testing import check_backends

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j = ep.indices("i j")
FORMATS = ("dense", "csr", "csc", "dcsr", "coo", "rle", "sparse_rle",
           ep.Format(["compressed", "dense"], (1, 0)), ep.Format(["dense", "runs"], (1, 0)))


def numpy_window(d: np.ndarray, specs) -> np.ndarray:
    """d read through windows ((lo, hi, step) per mode): the meaning to match."""
    out = d
    for ax, (lo, hi, s) in enumerate(specs):
        n = d.shape[ax]
        hi = n if hi is None else hi
        length = max(0, -((lo - hi) // s))
        c = lo + np.arange(length) * s
        inside = (c >= 0) & (c < n)
        shape = out.shape[:ax] + (length,) + out.shape[ax + 1:]
        piece = np.zeros(shape, dtype=d.dtype)
        at, src = [slice(None)] * out.ndim, [slice(None)] * out.ndim
        at[ax], src[ax] = np.flatnonzero(inside), c[inside]
        piece[tuple(at)] = out[tuple(src)]
        out = piece
    return out


def window(ix, lo, hi, s):
    return ix[lo:hi] if s == 1 else ix[lo:hi:s]


@settings(max_examples=25)
@given(st.sampled_from(FORMATS), st.integers(-3, 9), st.integers(0, 8), st.integers(1, 3),
       st.integers(-3, 9), st.integers(0, 8), st.integers(1, 3), st.data())
def test_a_window_is_the_restriction_and_the_shift(fmt, lo, n, s, lo2, n2, s2, data):
    dense = np.where(np.arange(54).reshape(6, 9) % 3 == 0, 0.0,
                     np.arange(54).reshape(6, 9) % 5 + 1.0)
    hi, hi2 = lo + n * s, lo2 + n2 * s2
    A = ep.tensor("A", 2, fmt)
    e = A[window(i, lo, hi, s), window(j, lo2, hi2, s2)]
    want = numpy_window(dense, [(lo, hi, s), (lo2, hi2, s2)])
    got = check_backends(e, {"A": dense})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fmt", ["csr", "dense"])
def test_sliced_spmv_equals_scipy_slice_then_multiply(fmt):
    M = sp.random(40, 30, density=0.3, format="csr", random_state=2)
    A, x = ep.tensor("A", 2, fmt), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A[i["lo":"hi"], j["lo2":"hi2":2]] * x[j]))
    src = M if fmt == "csr" else M.toarray()
    for lo, hi, lo2, hi2 in ((5, 20, 3, 13), (0, 40, 0, 30), (38, 45, -4, 6)):
        want = numpy_window(M.toarray(), [(lo, hi, 1), (lo2, hi2, 2)])
        v = np.arange(want.shape[1], dtype=float) + 1
        got = kern(A=src, x=v, lo=lo, hi=hi, lo2=lo2, hi2=hi2)
        np.testing.assert_allclose(got, want @ v)
    assert len(kern._libs) == 1          # one kernel for every value of the bounds


def erosion(img, h, w):
    e = None
    for di in range(3):
        for dj in range(3):
            a = img[i[di - 1:di - 1 + h], j[dj - 1:dj - 1 + w]]
            e = a if e is None else e * a
    return e


def test_erosion_is_nine_shifted_windows_with_scipy_border():
    rng = np.random.default_rng(0)
    im = rng.random((23, 31)) < 0.85
    e = erosion(ep.tensor("img", 2), *im.shape)
    want = ndi.binary_erosion(im, structure=np.ones((3, 3)), border_value=0)
    got = check_backends(e, {"img": im}, semiring=ep.semirings.boolean)
    np.testing.assert_array_equal(got, want)


def test_erosion_loop_tests_no_operand():
    """The nine windows' product is one counted loop over the intersection of their
    ranges: its body loads the nine operands and tests none of them."""
    kern = ep.compile(erosion(ep.tensor("img", 2), 64, 64), semiring=ep.semirings.boolean)
    src = kern.c_source
    body = src[src.rindex("while (j_w"):]
    body = body[:body.index("}")]
    assert body.count("_vals[") == 9 and "if (" not in body and "?" not in body


def test_a_window_of_a_sparse_output_step():
    """Windows of csr operands into a csr output (a product of two windows)."""
    M = sp.random(12, 12, density=0.4, format="csr", random_state=3)
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    e = A[i[2:10], j[1:9]] * B[i[0:8], j[4:12]]
    got = ep.evaluate(e, A=M, B=M, output="csr").toarray()
    d = M.toarray()
    np.testing.assert_allclose(got, d[2:10, 1:9] * d[0:8, 4:12])


def test_bad_windows_are_refused_naming_what_is_wrong():
    with pytest.raises(ExpressionTypeError, match="window"):
        i[3]
    with pytest.raises(ExpressionTypeError, match="positive"):
        i[0:5:0]
    with pytest.raises(ExpressionTypeError, match="lo must be an int"):
        i[0.5:5]
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A[i["lo":"hi"], j[0:10]] * x[j]))
    M = sp.random(30, 25, density=0.3, format="csr", random_state=1)
    with pytest.raises(InputError, match=r"A \(read through a window\).*x"):
        kern(A=M, x=np.ones(9), lo=2, hi=5)
    with pytest.raises(InputError, match="parameter lo .* must be one integer"):
        kern(A=M, x=np.ones(10), lo=1.5, hi=5)
    with pytest.raises(InputError, match="hi"):
        kern(A=M, x=np.ones(10), lo=1)


@pytest.mark.parametrize("fmt", ["csr", "dense", "csc"])
def test_a_bound_may_be_a_parameter_plus_a_constant(fmt):
    """i["lo+1":"hi-1"]: one kernel for every value, called with changing bounds,
    inside the operand and past it on either side (the fill outside)."""
    M = sp.random(40, 30, density=0.3, format="csr", random_state=4)
    A, x = ep.tensor("A", 2, fmt), ep.tensor("x", 1)
    e = ep.sum(j, A[i["lo+1":"hi-1"], j["lo2-2":"hi2+3"]] * x[j])
    kern = ep.compile(e)
    src = {"csr": M, "csc": M.tocsc(), "dense": M.toarray()}[fmt]
    for lo, hi, lo2, hi2 in ((5, 20, 3, 13), (0, 40, 2, 27), (36, 48, -6, 4), (-9, 3, 25, 40),
                             (5, 20, 3, 13), (10, 10, 0, 0)):
        want = numpy_window(M.toarray(), [(lo + 1, hi - 1, 1), (lo2 - 2, hi2 + 3, 1)])
        v = np.arange(want.shape[1], dtype=float) + 1
        got = kern(A=src, x=v, lo=lo, hi=hi, lo2=lo2, hi2=hi2)
        np.testing.assert_allclose(got, want @ v)
    assert len(kern._libs) == 1
    bounds = dict(lo=3, hi=17, lo2=1, hi2=11)
    n = numpy_window(M.toarray(), [(4, 16, 1), (-1, 14, 1)]).shape[1]
    check_backends(e, {"A": src, "x": np.ones(n), **bounds})


def test_offset_bounds_are_spelled_one_way_and_named_apart():
    assert i["lo + 1":"hi-0"] == i["lo+1":"hi"]
    A = ep.tensor("A", 1)
    names = {A[i[b:]].tensor.name for b in ("lo+1", "lo1", "q2lo1", "lo-1", "lo")}
    assert len(names) == 5
    assert A[i["lo+1":]].tensor.params == ("lo",)


def test_bad_offset_bounds_are_refused_naming_them():
    for bad in ("lo*2", "lo+1.5", "1+lo", "lo+"):
        with pytest.raises(ExpressionTypeError, match="parameter plus or minus"):
            i[bad:5]
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A[i["lo+2":"hi"], j] * x[j]))
    M = sp.random(30, 25, density=0.3, format="csr", random_state=1)
    with pytest.raises(InputError, match="missing parameter lo"):
        kern(A=M, x=np.ones(25), hi=5)
    with pytest.raises(InputError, match="parameter lo .* must be one integer"):
        kern(A=M, x=np.ones(25), lo=0.5, hi=5)
