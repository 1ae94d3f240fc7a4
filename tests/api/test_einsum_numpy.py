"""ep.einsum's routes after its first call (runtime.einsum_calls): one numpy
operand under the default semiring is numpy's einsum itself (its views included),
and a kernel's prepared call on numpy operands is its call plan made in C
(runtime.binder) where that covers it. Both answer as np.einsum on the corpus,
over dtypes, on new operands every call; bad operands are still refused."""
import json
import pathlib

import numpy as np
import pytest

import etchpy as ep
from etchpy import api
from etchpy.runtime import binder, einsum_calls
from etchpy.tuning import Tuning

pytestmark = pytest.mark.usefixtures("shared_cache")

CORPUS = json.loads((pathlib.Path(__file__).parent.parent / "expr" /
                     "einsum_specs.json").read_text())
SINGLE = [(s, tuple(sh[0])) for s, sh, ok in CORPUS if ok and len(sh) == 1]
SEVERAL = [(s, [tuple(x) for x in sh]) for s, sh, ok in CORPUS if ok and len(sh) > 1]
DTYPES = [np.float64, np.float32, np.int64, np.complex128, np.bool_]


def entry(spec, *ops, **options):
    key = einsum_calls.einsum_key(spec, ops, options.get("semiring"),
                                  options.get("output"), "c", options.get("tuning"))
    return api._einsum_calls.get(key)


def operand(rng, shape, dtype):
    values = rng.random(shape) * 3
    if np.dtype(dtype).kind == "c":
        return (values + 1j * rng.random(shape)).astype(dtype)
    return (values > 1.5 if dtype is np.bool_ else values).astype(dtype)


def same(got, want):
    assert type(got) is type(want) and np.shape(got) == np.shape(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spec, shape", SINGLE, ids=[repr(s) for s, _ in SINGLE])
def test_one_operand_is_numpys_einsum(spec, shape, dtype):
    rng = np.random.default_rng(3)
    for _ in range(3):                  # the first call, then prepared ones on new arrays
        a = operand(rng, shape, dtype)
        want = np.einsum(spec, a)
        got = ep.einsum(spec, a)
        same(got, want)
        assert np.shares_memory(got, a) == np.shares_memory(want, a)
    assert not isinstance(entry(spec, a), einsum_calls.KernelCall)


def test_one_operand_calls_of_other_shapes_and_dtypes_are_keyed_apart():
    """The inline key of one numpy operand (spec, dtype, shape) finds only its own
    call: a new shape or dtype after a first call answers as numpy, as do a
    scalar and an operand that is not an ndarray."""
    rng = np.random.default_rng(5)
    for spec in ("ii->", "ij->j", "ijk->kij"):
        for shape in ((3, 3, 3), (4, 4, 4), (2, 2, 2)):
            for dtype in (np.float64, np.int64, np.float32):
                a = operand(rng, shape[:len(spec.split("->")[0])], dtype)
                same(ep.einsum(spec, a), np.einsum(spec, a))
    same(ep.einsum("->", np.float64(2.5)), np.einsum("->", np.float64(2.5)))
    np.testing.assert_allclose(ep.einsum("ij->", [[1.0, 2.0], [3.0, 4.0]]), 10.0)


def test_views_are_numpys():
    a = np.arange(12.0).reshape(3, 4)
    t = ep.einsum("ij->ji", a)
    assert np.shares_memory(t, a) and t.shape == (4, 3) and t[1, 2] == a[2, 1]
    sq = np.arange(9.0).reshape(3, 3)
    ep.einsum("ii->i", sq)[:] = 0.0             # np.einsum's writeable diagonal view
    assert np.trace(sq) == 0.0 and sq[0, 1] == 1.0


@pytest.mark.parametrize("options, a", [
    ({"semiring": "real"}, np.ones((3, 4))),
    ({"semiring": ep.semirings.min_plus}, np.ones((3, 4))),
    ({"tuning": Tuning(numpy_einsum=False)}, np.ones((3, 4))),
    ({"tuning": "noopt"}, np.ones((3, 4))),
    ({}, np.ones((3, 4), np.int32)),            # computed in int64, as a kernel does
    ({}, np.ones((3, 4), np.float16)),
])
def test_other_operands_and_options_run_their_kernel(options, a):
    for _ in range(2):
        got = ep.einsum("ij->i", a, **options)
    assert isinstance(entry("ij->i", a, **options), einsum_calls.KernelCall)
    minimum = options.get("semiring") is ep.semirings.min_plus
    np.testing.assert_allclose(got, a.min(axis=1) if minimum else a.sum(axis=1))


# a ninth of the corpus's many-operand specs in float64 (a kernel each), and a few in
# every dtype: each (spec, dtype) compiles a kernel. What this checks is the prepared
# call (its second and third calls hit); the corpus's own compiled samples
# (tests/expr/test_einsum_corpus.py) check more specs' kernels.
MIXED = [(s, sh, np.float64) for s, sh in SEVERAL[::9]] + [
    (s, sh, d) for s, sh in SEVERAL[4::45] for d in DTYPES[1:]]


@pytest.mark.parametrize("spec, shapes, dtype", MIXED,
                         ids=[f"{s!r} {np.dtype(d)}" for s, _, d in MIXED])
def test_prepared_kernel_calls_answer_as_numpy(spec, shapes, dtype):
    rng = np.random.default_rng(4)
    for _ in range(3):
        ops = [operand(rng, s, dtype) for s in shapes]
        want = np.einsum(spec, *ops)
        got = ep.einsum(spec, *ops)
        if np.dtype(dtype).kind == "b":      # numpy's bool einsum is or-and, as ours
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-4)
        assert np.shape(got) == np.shape(want)


@pytest.mark.skipif(binder.module() is None, reason="no C binder on this machine")
def test_a_prepared_kernel_call_is_its_plan_in_c():
    a, b = np.ones((3, 4)), np.ones((3, 4))
    for _ in range(2):
        ep.einsum("ij,ij->ij", a, b)
    call = entry("ij,ij->ij", a, b)
    assert isinstance(call, einsum_calls.KernelCall)
    assert call.fixed.func is binder.module().call_in_order
    c = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(ep.einsum("ij,ij->ij", c, c.T.copy().T), c * c)
    np.testing.assert_array_equal(ep.einsum("ij,ij->ij", c, b), c)


@pytest.mark.parametrize("spec, ops", [
    ("ij->i", [np.ones((3, 4), dtype=object)]),
    ("ij->i", [np.array([["a", "b"]])]),
    ("ij,jk->ik", [np.ones((3, 4)), np.ones((5, 2))]),
    ("ii->i", [np.ones((3, 4))]),
])
def test_bad_operands_are_refused_before_and_after_a_prepared_call(spec, ops):
    good = [np.ones((3, 3)) for _ in ops]
    ep.einsum(spec, *good)
    for _ in range(2):
        with pytest.raises(ep.InputError):
            ep.einsum(spec, *ops)
