"""A located factor that is zero unless a test holds (a marker probe of a sparse
filter) guards the loops below it (etchpy.streams.hoist): the guarded kernel
equals the dense reference, under real and min_plus, on the C and stream
backends, with the switch on and off; the test is found only where it reads
nothing of the levels below."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy import imp
from etchpy.streams import hoist

i, j, k = ep.indices("i j k")
A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
M = ep.tensor("M", 1, "csf")
# M is probed through a marker (its level is walked again for each i); k lies below j
EXPR = ep.sum((j, k), A[i, j] * M[j] * B[j, k])
ON, OFF = ep.Tuning(), ep.Tuning(hoist_probes=False)


def _tensor(a, fmt, zero):
    keep = np.nonzero(a != zero)
    return ep.Tensor.from_coords(np.array(keep), a[keep], a.shape, fmt)


def _reference(a, m, b, sr):
    if sr == "real":
        return (a * m[None, :]) @ b.sum(axis=1)
    return np.min(a[:, :, None] + m[None, :, None] + b[None, :, :], axis=(1, 2))


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16), sr=st.sampled_from(["real", "min_plus"]))
def test_a_guarded_probe_equals_the_reference(seed, sr):
    rng = np.random.default_rng(seed)
    zero = 0.0 if sr == "real" else np.inf
    sparse = lambda shape, p: np.where(rng.random(shape) < p,
                                       rng.integers(1, 5, shape).astype(float), zero)
    a, m, b = sparse((5, 6), 0.5), sparse(6, 0.4), sparse((6, 4), 0.5)
    inputs = {"A": _tensor(a, "csr", zero), "M": _tensor(m, "csf", zero),
              "B": _tensor(b, "csr", zero)}
    want = _reference(a, m, b, sr)
    for backend, tuning in (("c", ON), ("streams", ON), ("c", OFF)):
        got = ep.evaluate(EXPR, **inputs, semiring=sr, backend=backend, tuning=tuning,
                          optimize=False, order=["i", "j", "k"])
        np.testing.assert_array_equal(got, want)


def test_the_test_guards_the_loop_below_and_only_when_on():
    on = ep.compile(EXPR, optimize=False, order=["i", "j", "k"], tuning=ON).c_source
    off = ep.compile(EXPR, optimize=False, order=["i", "j", "k"], tuning=OFF).c_source
    assert "guarded by the located test" in on
    assert "guarded by the located test" not in off


def test_zero_unless_finds_only_tests_that_read_nothing_below():
    zero = imp.Const(0.0, "value")
    t = imp.Var("t")
    probe = imp.Select(imp.eq(imp.Load("mark", t), imp.Var("stamp")), imp.Load("wv", t), zero)
    assert hoist.zero_unless(probe, 0.0) == probe.cond
    assert hoist.zero_unless(imp.Ring("mul", imp.Var("x"), probe), 0.0) == probe.cond
    assert hoist.zero_unless(imp.Ring("add", imp.Var("x"), probe), 0.0) is None
    assert hoist.zero_unless(imp.Select(probe.cond, imp.Var("x"), imp.Var("y")), 0.0) is None
    inner = ep.streams.replicate(imp.Names(), "k", imp.Var("n"), probe)
    assert hoist.zero_unless(inner, 0.0) == probe.cond
    reads_k = imp.Select(imp.eq(imp.Var(inner.state[0][0]), t), imp.Var("x"), zero)
    below = ep.streams.replicate(imp.Names(), "k", imp.Var("n"), reads_k)
    assert hoist.zero_unless(below, 0.0) is None


def test_a_segment_filter_guards_the_lines_of_each_order():
    """Σ_{o,c,l} O[o,c]·Seg[c]·L[o,l]: orders of customers in a segment (a sparse
    filter probed per order) and their lines: the lines of the other orders are
    never visited, and the answer is the same."""
    rng = np.random.default_rng(1)
    o_c = np.zeros((8, 5))
    o_c[np.arange(8), rng.integers(0, 5, 8)] = 1.0
    seg = np.array([1.0, 0, 0, 1.0, 0])
    lines = np.where(rng.random((8, 6)) < 0.5, rng.integers(1, 9, (8, 6)), 0).astype(float)
    o, c, l = ep.indices("o c l")
    Oc, Ln, Sg = ep.tensor("O", 2, "csr"), ep.tensor("L", 2, "csr"), ep.tensor("S", 1, "csf")
    kern = ep.compile(ep.sum((o, c, l), Oc[o, c] * Sg[c] * Ln[o, l]), optimize=False,
                      order=["o", "c", "l"])
    assert "guarded by the located test" in kern.c_source
    got = kern(O=_tensor(o_c, "csr", 0.0), S=_tensor(seg, "csf", 0.0),
               L=_tensor(lines, "csr", 0.0))
    assert got == pytest.approx(float((o_c @ seg) @ lines.sum(axis=1)))


def test_a_union_of_guarded_ranges_is_located_by_the_levels_below():
    """Σ_{j,k} (A[i,j] - B[i,j]·w[i])·D[j,k] (TPC-H Q9's rev - qty·cost): below
    the union over j, each operand is a guarded range over k, and their union
    locates (combinators.guard, union_by_skipping), so D's row is walked and the
    union located, not leapfrogged with it; the value is the reference's."""
    rng = np.random.default_rng(5)
    a = np.where(rng.random((4, 6)) < 0.5, rng.integers(1, 5, (4, 6)), 0).astype(float)
    b = np.where(rng.random((4, 6)) < 0.5, rng.integers(1, 5, (4, 6)), 0).astype(float)
    w = rng.integers(1, 4, 4).astype(float)
    d = np.where(rng.random((6, 5)) < 0.5, rng.integers(1, 5, (6, 5)), 0).astype(float)
    Am, Bm, Dm = (ep.tensor(n, 2, "csr") for n in "ABD")
    W = ep.tensor("W", 1)
    expr = ep.sum((j, k), (Am[i, j] - Bm[i, j] * W[i]) * Dm[j, k])
    kern = ep.compile(expr, optimize=False, order=["i", "j", "k"])
    assert "locate into [union" in kern.c_source
    inputs = {"A": _tensor(a, "csr", 0.0), "B": _tensor(b, "csr", 0.0), "W": w,
              "D": _tensor(d, "csr", 0.0)}
    want = (a - b * w[:, None]) @ d.sum(axis=1)
    np.testing.assert_allclose(kern(**inputs), want)
    got = ep.evaluate(expr, **inputs, backend="streams", optimize=False, order=["i", "j", "k"])
    np.testing.assert_allclose(got, want)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16), t=st.integers(0, 5))
def test_a_row_test_read_below_its_level_guards_that_level_once(seed, t):
    """Σ_{l,c} (V[o,l] < t)·O[o,c], loop order o, l, c (Q12's line tests above
    its order's attributes): the test reads nothing of c's level, so c's level
    is entered only where it holds (combinators.guard: one flag, the level still
    walked as stored), not tested at each c; the value is the reference's."""
    rng = np.random.default_rng(seed)
    v = np.where(rng.random((6, 5)) < 0.5, rng.integers(1, 6, (6, 5)), 0).astype(float)
    oc = np.where(rng.random((6, 4)) < 0.5, rng.integers(1, 4, (6, 4)), 0).astype(float)
    V, Oc = ep.tensor("V", 2, "csr"), ep.tensor("O", 2, "csr")
    expr = ep.sum((j, k), (V[i, j] < "t") * Oc[i, k])
    inputs = {"V": _tensor(v, "csr", 0.0), "O": _tensor(oc, "csr", 0.0), "t": float(t)}
    want = ((v != 0) & (v < t)).sum(axis=1) * oc.sum(axis=1)
    kern = ep.compile(expr, optimize=False, order=["i", "j", "k"])
    assert "k_g = (" in kern.c_source and "while (k_g && " in kern.c_source
    np.testing.assert_allclose(kern(**inputs), want)
    for backend, tuning in (("streams", ON), ("c", OFF)):
        got = ep.evaluate(expr, **inputs, backend=backend, tuning=tuning, optimize=False,
                          order=["i", "j", "k"])
        np.testing.assert_allclose(got, want)
