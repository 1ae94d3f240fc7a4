"""A replayed dense product with the one operation of the region that alone reads
it, in one call of the binder's product (Tuning.lazy_blas_epilogue,
codegen_templates/binder_blas.c.j2): lazy_product's epilogue equals numpy's
operation on numpy's product and declines what it does not cover before any
work; a replay fuses only a product read by that region alone, and gives
numpy's answers with the switch on and off, on new arrays, on arrays written in
place between calls (NaN and inf included)."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.lazy import c_nodes, replay

pytestmark = pytest.mark.usefixtures("shared_cache")

OFF = ep.Tuning(lazy_blas_epilogue=False)
PRODUCT = c_nodes.product()
needs_blas = pytest.mark.skipif(PRODUCT is None, reason="no binder or no BLAS here")


@needs_blas
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("flip", [False, True])
def test_the_epilogue_equals_numpys_operation_on_the_product(dtype, flip):
    rng = np.random.default_rng(0)
    for shape_b, tall in [((6, 3), 0), ((6,), 0), ((6, 2), 1)]:
        a = (rng.random((6, 6)) - 0.5).astype(dtype)
        b = rng.random(shape_b).astype(dtype)
        p = (a.T if flip else a) @ b
        e = rng.random(p.shape).astype(dtype)
        e.flat[0] = np.nan
        rtol = 1e-5 if dtype == np.float32 else 1e-12
        for op, arg, want in [(1, 0.0, np.maximum(p, 0)), (2, 0.25, np.minimum(p, 0.25)),
                              (3, e, p - e), (4, e, e - p), (5, e, p + e)]:
            got = PRODUCT(a, b, flip, tall, op, arg)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


@needs_blas
def test_max_and_min_keep_a_nan_of_the_product():
    a, b = np.array([[np.nan, 1.0], [1.0, -3.0]]), np.ones(2)
    for op, want in [(1, np.maximum(a @ b, 0.0)), (2, np.minimum(a @ b, 0.0))]:
        np.testing.assert_array_equal(PRODUCT(a, b, False, 0, op, 0.0), want)


@needs_blas
def test_the_epilogue_declines_what_it_does_not_cover():
    rng = np.random.default_rng(1)
    a, v = rng.random((4, 3)), rng.random(3)
    e = rng.random(4)
    for op, arg in [(1, 0), (1, np.float64(0.0)), (3, e[:3]), (3, e.astype(np.float32)),
                    (3, rng.random((4, 2))[:, 0]), (3, list(e)), (5, rng.random((4, 1))),
                    (6, e), (0, e)]:
        assert PRODUCT(a, v, False, 0, op, arg) is None
    assert PRODUCT(a, v, False, 0, 3) is None      # op without its operand


def mlp(F, X, W1, W2):
    return F.maximum(X @ W1, 0) @ W2


def clipped(F, X, W1, W2):
    return F.minimum(X @ W1, 0.5) @ W2


def residual(F, X, W, Y):
    return X.T @ (X @ W - Y)


def reversed_residual(F, X, W, Y):
    return X.T @ (Y - X @ W)


def summed(F, X, W, Y):
    return X.T @ (Y + X @ W)


def twice(F, X, W, Y):          # the product read twice: not fused
    P = X @ W
    return X.T @ (P - Y) + P.sum()


def _args(prog, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = (rng.random((100, 80)) - 0.5).astype(dtype)     # sizes whose plan is products
    if prog in (mlp, clipped):                           # and numpy regions
        return X, rng.standard_normal((80, 32)).astype(dtype), rng.standard_normal((32, 10)).astype(dtype)
    return X, rng.standard_normal((80, 10)).astype(dtype), rng.random((100, 10)).astype(dtype)


def _tape(prog, args, tuning=None):
    out = prog(ep, *(ep.lazy(x) for x in args))
    ep.compute(out, tuning=tuning)
    return replay.PROGRAMS.get((replay.signature([out])[0], True, 1, tuning))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("prog", [mlp, clipped, residual, reversed_residual, summed, twice])
@pytest.mark.parametrize("tuning", [None, OFF])
def test_a_replay_fuses_a_product_read_alone_and_equals_numpy(prog, tuning):
    tape = _tape(prog, _args(prog, 0), tuning)
    fused = tuning is None and PRODUCT is not None and prog is not twice
    assert (", tall, " in tape.run.text) == fused, tape.run.text
    args = _args(prog, 1)
    for seed in range(2, 6):
        got = ep.compute(prog(ep, *(ep.lazy(x) for x in args)), tuning=tuning)
        np.testing.assert_allclose(got, prog(np, *args), rtol=1e-10, atol=1e-12)
        new = _args(prog, seed)
        if seed == 4:       # numpy's warnings aside: a NaN and an inf follow numpy's
            new[0][3, 5], new[-1][2, 1] = np.nan, np.inf
        for old, x in zip(args, new):       # written in place between calls
            old[...] = x


@pytest.mark.parametrize("prog", [mlp, residual])
def test_float32_and_a_new_kind_of_input(prog):
    for dtype in (np.float32, np.float64):
        for seed in (0, 1, 2):
            args = _args(prog, seed, dtype)
            got = ep.compute(prog(ep, *(ep.lazy(x) for x in args)))
            assert got.dtype == dtype
            np.testing.assert_allclose(got, prog(np, *args), rtol=1e-4 if dtype == np.float32 else 1e-10)
    args = _args(prog, 3)
    args = (args[0], args[1], np.asfortranarray(args[2]))     # not C-contiguous: declined
    got = ep.compute(prog(ep, *(ep.lazy(x) for x in args)))
    np.testing.assert_allclose(got, prog(np, *args), rtol=1e-10)


def test_a_traced_function_replays_the_fused_step():
    f = ep.lazy.function(lambda X, W, Y: residual(ep, X, W, Y))
    for seed in range(3):
        args = _args(residual, seed)
        np.testing.assert_allclose(f(*args), residual(np, *args), rtol=1e-10)
    assert len(f.traces) == 1
