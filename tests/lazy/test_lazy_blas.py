"""A replay's dense products by one BLAS call from the binder (Tuning.lazy_c_blas,
codegen_templates/binder_blas.c.j2): lazy_product equals numpy's matmul where it
covers the operands and declines (None) elsewhere; a replayed program gives
numpy's answers with the switch on and off, on new arrays, on arrays written in
place between calls, and on another shape or dtype."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.lazy import c_nodes, replay

pytestmark = pytest.mark.usefixtures("shared_cache")

OFF = ep.Tuning(lazy_c_blas=False)
PRODUCT = c_nodes.product()
needs_blas = pytest.mark.skipif(PRODUCT is None, reason="no binder or no BLAS here")


def logistic(F, X, w, y):
    return X.T @ (1 / (1 + F.exp(-(X @ w))) - y)


def _data(seed, m=40, n=30, k=1, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = (rng.random((m, n)) / n).astype(dtype)
    w = rng.standard_normal((n, k) if k > 1 else n).astype(dtype)
    y = rng.random((m, k) if k > 1 else m).astype(dtype)
    return X, w, y


@needs_blas
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_product_equals_numpys_matmul_where_it_covers_the_operands(dtype):
    rng = np.random.default_rng(0)
    for r, c, n in [(7, 5, None), (5, 7, 3), (1, 1, None), (3, 1, 2), (1, 4, 1)]:
        a = rng.random((r, c)).astype(dtype)
        for flip in (False, True):
            k = r if flip else c
            b = rng.random(k if n is None else (k, n)).astype(dtype)
            got, want = PRODUCT(a, b, flip), (a.T if flip else a) @ b
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.flags.c_contiguous
            np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


@needs_blas
def test_the_product_declines_what_it_does_not_cover():
    rng = np.random.default_rng(1)
    a, v = rng.random((4, 3)), rng.random(3)
    for args in [(a[:, :2], v[:2]), (a.T, rng.random(4)), (a, v.astype(np.float32)),
                 (a.astype(np.int64), v.astype(np.int64)), (a, v[::-1][::2]), (a, rng.random(5)),
                 (np.zeros((0, 3)), v), (a, np.zeros((3, 0))), (a, list(v)),
                 (a.astype(">f8"), v), (a, rng.random((3, 2))[:, :1]), (a, np.float64(1.0))]:
        assert PRODUCT(*args, False) is None


def _tape(prog, args, tuning=None):
    out = prog(ep, *(ep.lazy(x) for x in args))
    ep.compute(out, tuning=tuning)
    return replay.PROGRAMS.get((replay.signature([out])[0], True, 1, tuning))


@pytest.mark.parametrize("tuning", [None, OFF])
def test_a_replay_with_and_without_blas_equals_numpy(tuning, prog=logistic, k=1):
    tape = _tape(prog, _data(0, k=k), tuning)
    assert ("blas(" in tape.run.text) == (tuning is None and PRODUCT is not None)
    args = _data(1, k=k)
    for seed in range(2, 5):
        got = ep.compute(prog(ep, *(ep.lazy(x) for x in args)), tuning=tuning)
        np.testing.assert_allclose(got, prog(np, *args), rtol=1e-12)
        new = _data(seed, k=k)
        for old, x in zip(args, new):       # written in place between calls
            old[...] = x


def test_another_shape_or_dtype_replays_its_own_program(tuning=None):
    for m, n, dtype in [(40, 30, np.float64), (25, 35, np.float64), (40, 30, np.float32)]:
        for seed in (0, 1):
            args = _data(seed, m, n, dtype=dtype)
            got = ep.compute(logistic(ep, *(ep.lazy(x) for x in args)), tuning=tuning)
            want = logistic(np, *args)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-4 if dtype == np.float32 else 1e-12)


@needs_blas
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_tall_call_equals_numpys_matmul(dtype):
    """lazy_product's fourth argument (Tuning.lazy_blas_tall): a thin result over an
    operand of at least that many bytes is made with the long extent as BLAS's M
    and transposed into place (a itself, not flipped, only over an inner extent of
    at least 128 and 8 times the result's columns); wide results, vectors and
    smaller operands as before."""
    rng = np.random.default_rng(3)
    for r, c, n in [(7, 5, 3), (60, 40, 2), (33, 70, 5), (20, 20, 20), (9, 6, 12), (8, 8, 1),
                    (20, 130, 3), (140, 9, 2), (30, 128, 16)]:     # a long inner extent
        a = rng.random((r, c)).astype(dtype)
        for flip in (False, True):
            b = rng.random((r if flip else c, n)).astype(dtype)
            want = (a.T if flip else a) @ b
            for tall in (1, a.nbytes, a.nbytes + 1, 0):
                got = PRODUCT(a, b, flip, tall)
                assert got.dtype == want.dtype and got.shape == want.shape
                assert got.flags.c_contiguous
                np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    assert PRODUCT(a, b, False, 2, 3) is None


def softmax(F, X, V, Y):
    E = F.exp(X @ V)
    return X.T @ (E / E.sum(axis=1, keepdims=True) - Y)


@pytest.mark.parametrize("tall", [0, 1])
def test_a_replay_with_the_tall_call_equals_numpy(tall):
    tuning = ep.Tuning(lazy_blas_tall=tall)
    tape = _tape(softmax, _data(0, k=4), tuning)
    assert ("tall)" in tape.run.text) == (PRODUCT is not None)
    assert tape.run.__globals__["tall"] == tall
    args = _data(1, k=4)
    for seed in range(2, 5):
        got = ep.compute(softmax(ep, *(ep.lazy(x) for x in args)), tuning=tuning)
        np.testing.assert_allclose(got, softmax(np, *args), rtol=1e-12)
        for old, x in zip(args, _data(seed, k=4)):       # written in place between calls
            old[...] = x
