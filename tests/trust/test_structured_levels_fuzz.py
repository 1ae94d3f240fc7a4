"""Malformed arrays of the structured level kinds given to ep.Tensor (checked and
unsafe_skip_order_check), and window bounds and bin counts given at call time:
the right answer or an InputError naming the input or parameter, never a
generic error, a crash or a wrong answer (issue 26's fuzz covers dense,
compressed and singleton levels: tests/trust/test_fuzz.py). Each draw packs a
valid tensor, then writes one entry of one level array (a bad value, a swap, a
step), shortens or lengthens it."""
import numpy as np
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import InputError

KINDS = ["rle", "sparse_rle", "banded", "uniform_band", "blocks", "bytemap", "hash"]
BAD = [-1, 0, 1, 2, 3, 7, 99, 2**31 - 1, 2**31, -(2**31), 2**62]
i, j = ep.indices("i j")
_KERNELS = {}


def kernel(kind, semiring):
    if (kind, semiring) not in _KERNELS:
        Q, x = ep.tensor("Q", 2, format=kind), ep.tensor("x", 1)
        e = ep.sum(j, Q[i, j] * x[j])
        _KERNELS[kind, semiring] = e, ep.compile(e, semiring=semiring, name=f"lv_{kind}")
    return _KERNELS[kind, semiring]


@st.composite
def written_levels(draw):
    kind = draw(st.sampled_from(KINDS))
    semiring = draw(st.sampled_from(["real", "min_plus"]))
    sr = ep.semirings.get(semiring)
    shape = (draw(st.integers(1, 4)), draw(st.integers(1, 6)))
    stored = draw(st.lists(st.booleans(), min_size=shape[0] * shape[1],
                           max_size=shape[0] * shape[1]))
    dense = np.where(np.reshape(stored, shape), 1.0 + np.arange(shape[0] * shape[1]).reshape(
        shape) % 3, sr.zero)
    t = ep.Tensor.from_dense(dense, kind, semiring=sr)
    levels = [{k: np.array(a, dtype=np.int64) for k, a in lv.items()} for lv in t.levels]
    at, name = draw(st.sampled_from([(k, n) for k, lv in enumerate(levels) for n in lv]))
    a = levels[at][name]
    how = draw(st.sampled_from(["value", "swap", "step", "shorter", "longer"]))
    q = draw(st.integers(0, max(len(a) - 2, 0)))
    if how == "value" and len(a):
        a[q] = draw(st.sampled_from(BAD))
    elif how == "swap" and len(a) > 1:
        a[q], a[q + 1] = a[q + 1], a[q]
    elif how == "step" and len(a):
        a[q] += draw(st.sampled_from([-1, 1]))
    elif how in ("shorter", "longer"):
        a = a[:-1] if how == "shorter" else np.append(a, a[-1:] if len(a) else [0])
    levels[at][name] = a
    return kind, semiring, shape, levels, np.array(t.vals), draw(st.booleans())


@settings(max_examples=40)
@given(written_levels())
def test_written_level_arrays_are_answered_or_refused(draw):
    kind, semiring, shape, levels, vals, unsafe = draw
    sr = ep.semirings.get(semiring)
    e, kern = kernel(kind, semiring)
    x = np.arange(1.0, shape[1] + 1)
    try:
        q = ep.Tensor(shape, kind, levels, vals, fill=sr.zero, name="Q",
                      unsafe_skip_order_check=unsafe)
        got = kern(Q=q, x=x)
    except InputError as err:
        assert "'Q'" in str(err) or "Q" in str(err).split(":")[0], err
        return
    if unsafe:          # an order broken under the unsafe flag has no specified answer
        try:
            ep.Tensor(shape, kind, levels, vals, fill=sr.zero, name="Q")
        except InputError:
            return
    want = ep.evaluate(e, backend="reference", semiring=semiring, Q=q, x=x)
    np.testing.assert_allclose(got, want)


A = ep.tensor("A", 2, format="csr")
WINDOW = ep.sum(j, A[i["lo":"hi":"s"], j] * ep.tensor("x", 1)[j])
BINS = ep.sum((i, j), ep.onehot(ep.indices("b")[0], ep.tensor("I", 2, format="rle")[i, j], "n"))
M = np.arange(30.0).reshape(6, 5) % 4
PARAM = (st.integers(-8, 12) | st.sampled_from([2**31, -(2**31) - 1, 2**62, 2**63, -(2**63) - 1])
         | st.sampled_from([1.5, None, "3", True, np.int32(2), np.float64(2.0)]))


def is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


@settings(max_examples=40)
@given(lo=PARAM, span=st.integers(-3, 12) | PARAM, s=PARAM)
def test_window_bounds_given_at_call_time(lo, span, s):
    """hi is lo + span for a small integer span, else span itself where that is
    not an integer or too large to allocate at all: a window is never a
    legitimately huge output that the machine may overcommit and then kill."""
    if is_int(span) and abs(span) < 100:
        hi = int(lo) + int(span) if is_int(lo) else span
    else:
        hi = lo if is_int(span) and abs(span) < 2**61 and is_int(lo) else span
    kern = ep.compile(WINDOW, name="fuzz_window")
    try:
        got = kern(A=M, x=np.ones(5), lo=lo, hi=hi, s=s)
    except InputError as err:
        assert any(f"parameter {p}" in str(err) or "window" in str(err)
                   for p in ("lo", "hi", "s")), err
        return
    except MemoryError:
        assert max(abs(int(lo)), abs(int(hi))) >= 2**31
        return
    assert is_int(lo) and is_int(hi) and is_int(s) and s > 0
    rows = M.sum(axis=1)
    want = [rows[r] if 0 <= r < 6 else 0.0 for r in range(int(lo), int(hi), int(s))]
    np.testing.assert_allclose(got, want)


@settings(max_examples=25)
@given(n=st.integers(-2, 9) | PARAM.filter(lambda v: not is_int(v) or v < 0 or v > 2**62),
       values=st.lists(st.sampled_from([0.0, 1.0, 2.5, 3.0, -1.0, np.nan, np.inf,
                                                 2.0**40, 7.0]), min_size=4, max_size=4))
def test_bin_counts_and_values_out_of_range(n, values):
    img = np.array(values).reshape(2, 2)
    kern = ep.compile(BINS, name="fuzz_bins")
    try:
        got = kern(I=img, n=n)
    except InputError as err:
        assert "parameter n" in str(err), err
        return
    except MemoryError:
        assert int(n) >= 2**31
        return
    assert is_int(n) and n > 0
    v = img.ravel()
    ok = np.isfinite(v) & (v == np.floor(v)) & (v >= 0) & (v < int(n))
    want = np.bincount(v[ok].astype(np.int64), minlength=int(n))[:int(n)]
    np.testing.assert_array_equal(got, want)
