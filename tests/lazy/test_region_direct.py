"""A numpy region calls a map's ufunc itself, its out positional
(Tuning.lazy_region_direct, etchpy.lazy.region_code): the same ufunc calls on
the same operands as the map's numpy form (etchpy.maps), so the same bits as
with the switch off, and numpy's answer, for every map a region calls that
way, on float64, float32 and integer operands."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.lazy import replay

pytestmark = pytest.mark.usefixtures("shared_cache")

OFF = ep.Tuning(lazy_region_direct=False)

PROGRAMS = {
    "sigmoid": lambda F, a, b: 1 / (1 + F.exp(-a)) - b,
    "log sqrt abs": lambda F, a, b: F.log(1 + F.abs(a)) + F.sqrt(F.abs(b)),
    "relu clip": lambda F, a, b: F.maximum(a, 0) + F.minimum(b, 0.5),
    "recip": lambda F, a, b: 1 / (a + 2.0) * b,
}


def _args(dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "i":
        return rng.integers(-5, 5, (20, 7)).astype(dtype), rng.integers(0, 5, (20, 7)).astype(dtype)
    return (rng.standard_normal((20, 7)).astype(dtype), rng.random((20, 7)).astype(dtype))


def _regions(prog, args, tuning):
    out = prog(ep, *(ep.lazy(x) for x in args))
    ep.compute(out, tuning=tuning)
    tape = replay.PROGRAMS.get((replay.signature([out])[0], True, 1, tuning))
    return [fn.text for _, fn in tape.steps if hasattr(fn, "text")]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_direct_calls_give_the_bits_of_the_maps_numpy_forms(name, dtype):
    prog = PROGRAMS[name]
    texts = _regions(prog, _args(dtype, 0), None)
    assert texts and not any("out=" in t for t in texts), texts
    assert any("out=" in t for t in _regions(prog, _args(dtype, 0), OFF))
    with np.errstate(all="ignore"):
        for seed in (1, 2, 3):
            args = _args(dtype, seed)
            got = ep.compute(prog(ep, *(ep.lazy(x) for x in args)))
            off = ep.compute(prog(ep, *(ep.lazy(x) for x in args)), tuning=OFF)
            np.testing.assert_array_equal(got, off)
            assert got.dtype == off.dtype
            np.testing.assert_allclose(got, prog(np, *args), rtol=1e-6 if dtype == np.float32 else 1e-13)


def test_a_registered_maps_one_call_is_read_from_maps():
    """lazy/ keeps no table of maps' ufuncs: a map registered with `ufunc` is
    called directly by a region (u(x)), one without it through its numpy form
    (py(x, arg)), both with numpy's answer."""
    from etchpy import maps
    x = np.random.default_rng(0).standard_normal((20, 7))
    prog = lambda F, a, b: np.cbrt(a) + b      # np.cbrt on lazy arrays builds the map
    for name, u, form in (("cbrt_direct", (np.cbrt, None), False), ("cbrt_form", None, True)):
        maps.register(maps.MapFn(name, "cbrt({x})", None,
                                 lambda x, a, out=None: np.cbrt(x, out=out), numpy_name="cbrt",
                                 keeps_finite=True, writes_out=True, ufunc=u))
        try:
            texts = _regions(prog, (x, x + 1), None)
            assert texts and any("(env[0], " in t for t in texts) == form, texts
            assert any("(env[0])" in t for t in texts) != form, texts
            got = ep.compute(prog(np, ep.lazy(x), ep.lazy(x + 1)))
            np.testing.assert_allclose(got, np.cbrt(x) + x + 1, rtol=1e-13)
        finally:
            maps.unregister(name)
