"""Run-length outputs through the C binder (runtime.outputs.grown_kind's rle
layout, binder_outputs.c.j2): a blend written as runs answers, from the binder's
plan, exactly what the kernel's general path answers (the same rseg, rend and
values, which are packing's: proofs_notes/runs.md law 4) on every built-in
semiring (bool's inputs bound by the Python plan), row and column runs; its index arrays are the kernel's own buffers,
read-only, and cannot be made writeable again; with `call_binder` off the Python
plan answers the same, its index arrays immutable copies."""
import gc

import numpy as np
import pytest

import etchpy as ep
from etchpy.runtime import binder
from etchpy.runtime.call_plans import MISS
from etchpy.runtime.tensor import frozen

from tests.streams.test_runs import SEMIRINGS, image

pytestmark = [pytest.mark.usefixtures("shared_cache"),
              pytest.mark.skipif(binder.module() is None, reason="no binder on this machine")]

i, j = ep.indices("i j")
COLUMNS = ep.Format(["dense", "runs"], mode_order=(1, 0))


def _blend(sr, fmt="rle", **tuning):
    A, B = (ep.tensor(n, 2, format=fmt) for n in "AB")
    return ep.compile(A[i, j] * B[i, j] + A[i, j], output=fmt, semiring=sr, tuning=tuning)


def _inputs(sr, fmt="rle", shape=(5, 23)):
    a, b = image(sr, shape), image(sr, shape, seed=1)
    a[1] = sr.zero                                  # a row of one run of the zero
    return {n: ep.Tensor.from_dense(x, fmt, semiring=sr) for n, x in (("A", a), ("B", b))}


def _same(got, want):
    assert type(got) is ep.Tensor and got.shape == want.shape and got.format == want.format
    assert got.fill == want.fill or (np.isnan(got.fill) and np.isnan(want.fill))
    for role in ("rseg", "rend"):
        a, b = got.levels[1][role], want.levels[1][role]
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(got.vals, want.vals)


@pytest.mark.parametrize("sr", SEMIRINGS, ids=lambda s: s.name)
def test_rle_outputs_from_the_binder_answer_as_the_general_path(sr):
    kern = _blend(sr)
    for shape in ((5, 23), (7, 3)):
        ins = _inputs(sr, shape=shape)
        first = kern(**ins)                          # a new kind: the general path
        # the binder's plan (bool inputs are bound in Python: truth_values' check)
        assert (type(kern._plan).__name__ == "partial") == (sr.dtype != np.bool_)
        again = kern._plan(ins)
        assert again is not MISS
        for got in (again, kern(**ins)):
            _same(got, first)
        packed = ep.Tensor.from_dense(first.to_dense(), "rle", semiring=sr)
        _same(first, packed)                         # maximal runs, as packing's


def test_column_runs_from_the_binder():
    kern = _blend("real", COLUMNS)
    ins = _inputs(ep.semirings.get("real"), COLUMNS, (6, 9))
    first = kern(**ins)
    got = kern._plan(ins)
    assert got is not MISS and len(got.levels[1]["rseg"]) == 9 + 1
    _same(got, first)
    want = ins["A"].to_dense() * ins["B"].to_dense() + ins["A"].to_dense()
    np.testing.assert_array_equal(got.to_dense(), want)


def test_the_binders_index_arrays_are_sealed_and_outlive_the_kernel():
    kern = _blend("real")
    ins = _inputs(ep.semirings.get("real"))
    kern(**ins)
    got = kern(**ins)
    want = got.to_dense()
    del kern
    gc.collect()
    for role in ("rseg", "rend"):
        a = got.levels[1][role]
        assert not a.flags.writeable and not frozen(a)      # kept: not a bytes copy
        with pytest.raises(ValueError):
            a.flags.writeable = True
    got.vals[:] += 1.0                               # the values stay writeable
    np.testing.assert_array_equal(got.to_dense(), want + 1.0)


def test_without_the_binder_the_python_plan_answers_the_same():
    sr = ep.semirings.get("min_plus")
    on, off = _blend(sr), _blend(sr, call_binder=False)
    ins = _inputs(sr)
    for _ in range(2):
        got, want = off(**ins), on(**ins)
        _same(got, want)
    assert type(off._plan).__name__ != "partial" and type(on._plan).__name__ == "partial"
    assert all(frozen(a) for a in got.levels[1].values())
