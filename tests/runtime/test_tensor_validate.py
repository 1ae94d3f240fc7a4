"""Tests of etchpy.runtime.tensor.Tensor.validate: malformed levels rejected,
non-unique levels and their singleton children, hand-built coo tensors."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from etchpy.errors import FormatError, InputError
from etchpy.formats import Compressed, Format
from etchpy.runtime.tensor import Tensor
from tensor_cases import SHAPES


# -- validate() -------------------------------------------------------------------------
def i64(*xs):
    return np.array(xs, dtype=np.int64)


CSR = Format.named("csr", 2)
COO = Format.named("coo", 2)
GOOD_CSR = ({}, {"pos": i64(0, 2, 3), "crd": i64(0, 2, 1)})


@pytest.mark.parametrize("fmt,levels,vals,message", [
    (CSR, ({}, {"pos": i64(0, 2), "crd": i64(0, 2)}), [1.0, 2.0], "pos has length 2"),
    (CSR, ({}, {"pos": i64(0, 2, 1), "crd": i64(0, 2)}), [1.0, 2.0], "nondecreasing"),
    (CSR, ({}, {"pos": i64(1, 2, 3), "crd": i64(0, 2, 1)}), [1.0] * 3, r"pos\[0\]"),
    (CSR, ({}, {"pos": i64(0, 2, 3), "crd": i64(0, 3, 1)}), [1.0] * 3, "out of range"),
    (CSR, ({}, {"pos": i64(0, 2, 3), "crd": i64(2, 0, 1)}), [1.0] * 3, "strictly increase"),
    (CSR, ({}, {"pos": i64(0, 2, 3), "crd": i64(1, 1, 1)}), [1.0] * 3, "strictly increase"),
    (CSR, GOOD_CSR, [1.0, 2.0], "vals has 2 entries"),
    (CSR, ({}, {"pos": i64(0, 2, 3), "crd": np.array([0, 2, 1], np.int16)}), [1.0] * 3,
     "int32 or int64"),
    (CSR, ({}, {"pos": i64(0, 2, 3)}), [1.0] * 3, "needs arrays"),
    (CSR, ({"crd": i64(0)}, GOOD_CSR[1]), [1.0] * 3, "dense level stores no arrays"),
    (CSR, (GOOD_CSR[1],), [1.0] * 3, "2 levels"),
    (COO, ({"pos": i64(0, 3), "crd": i64(0, 1, 0)}, {"crd": i64(0, 0, 1)}), [1.0] * 3,
     "not decrease"),
    (COO, ({"pos": i64(0, 3), "crd": i64(0, 1, 1)}, {"crd": i64(0, 2, 2)}), [1.0] * 3,
     r"duplicate coordinate \(1, 2\)"),
    (COO, ({"pos": i64(0, 3), "crd": i64(0, 1, 1)}, {"crd": i64(0, 2, 1)}), [1.0] * 3,
     r"unsorted within a run, \(1, 2\) is followed by \(1, 1\)"),
    (COO, ({"pos": i64(0, 3), "crd": i64(0, 1, 1)}, {"crd": i64(0, 2)}), [1.0] * 3,
     "one entry per parent"),
], ids=["short-pos", "pos-decreasing", "pos-start", "crd-range", "crd-unsorted",
        "crd-duplicate", "vals-length", "int16", "missing-crd", "dense-arrays",
        "level-count", "coo-decreasing", "coo-duplicate", "coo-unsorted",
        "singleton-length"])
def test_validate_rejects(fmt, levels, vals, message):
    with pytest.raises(InputError, match=message) as info:
        Tensor((2, 3), fmt, levels, np.array(vals), name="T")
    assert "'T'" in str(info.value)


# -- non-unique levels and their singleton children ---------------------------------------
@pytest.mark.parametrize("levels,message", [
    (["compressed-nonunique", "compressed"], "level 0 .* followed by a singleton"),
    (["compressed-nonunique", "dense"], "level 0 .* followed by a singleton"),
    (["compressed-nonunique"], "cannot be the last level"),
    (["dense", "compressed-nonunique"], "level 1 .* cannot be the last level"),
    (["compressed-nonunique", "singleton-nonunique"], "level 1 .* cannot be the last"),
    (["compressed-nonunique", "singleton-nonunique", "compressed"],
     "level 1 .* followed by a singleton"),
    (["compressed", "compressed-nonunique", "dense"], "level 1 .* followed by a singleton"),
    (["singleton"], "must sit under another level"),
    (["singleton", "compressed"], "must sit under another level"),
], ids=str)
def test_nonunique_level_must_be_followed_by_singleton(levels, message):
    with pytest.raises(FormatError, match=message):
        Format(levels)


def test_named_and_singleton_formats_still_construct():
    for order in range(1, 5):
        for name in ("coo", "csf", "dense"):
            assert Format.named(name, order).order == order
    for name in ("csr", "csc", "dcsr"):
        assert Format.named(name, 2).order == 2
    assert Format.named("coo", 1).levels == (Compressed(),)
    assert Format(["compressed-nonunique", "singleton"]).order == 2
    assert Format(["dense", "compressed-nonunique", "singleton-nonunique", "singleton",
                   "compressed"]).order == 5


NU_S = Format(["compressed-nonunique", "singleton"])
COO3 = Format.named("coo", 3)
NU_S_C = Format(["compressed-nonunique", "singleton", "compressed"])


@pytest.mark.parametrize("fmt,shape,levels,vals,message", [
    (NU_S, (1, 2), ({"pos": i64(0, 2), "crd": i64(0, 0)}, {"crd": i64(1, 1)}), [5.0, 7.0],
     r"level 1 \(singleton, mode 1\): duplicate coordinate \(0, 1\)"),
    (NU_S, (1, 2), ({"pos": i64(0, 2), "crd": i64(0, 0)}, {"crd": i64(1, 0)}), [5.0, 7.0],
     r"level 1 .*unsorted within a run, \(0, 1\) is followed by \(0, 0\)"),
    # coo of order 3: level 1 must not decrease within a level-0 run ...
    (COO3, (2, 3, 4), ({"pos": i64(0, 3), "crd": i64(1, 1, 1)}, {"crd": i64(0, 2, 1)},
                       {"crd": i64(0, 0, 0)}), [1.0] * 3,
     r"level 1 \(singleton-nonunique, mode 1\): coordinates unsorted within a run, "
     r"\(1, 2\) is followed by \(1, 1\).*must not decrease"),
    # ... and level 2 must strictly increase within a run of equal (level 0, level 1)
    (COO3, (2, 3, 4), ({"pos": i64(0, 3), "crd": i64(1, 1, 1)}, {"crd": i64(0, 2, 2)},
                       {"crd": i64(0, 3, 3)}), [1.0] * 3,
     r"level 2 \(singleton, mode 2\): duplicate coordinate \(1, 2, 3\)"),
    (COO3, (2, 3, 4), ({"pos": i64(0, 3), "crd": i64(1, 1, 1)}, {"crd": i64(0, 2, 2)},
                       {"crd": i64(0, 3, 1)}), [1.0] * 3,
     r"level 2 .*\(1, 2, 3\) is followed by \(1, 2, 1\).*strictly increase"),
    # A compressed level below the singleton hides the repeat from a listing of the
    # stored entries ((0, 1, 0) < (0, 1, 1)), but the singleton stream would still
    # emit coordinate 1 twice.
    (NU_S_C, (1, 2, 2), ({"pos": i64(0, 2), "crd": i64(0, 0)}, {"crd": i64(1, 1)},
                         {"pos": i64(0, 1, 2), "crd": i64(0, 1)}), [1.0, 2.0],
     r"level 1 .*duplicate coordinate \(0, 1\)"),
    (NU_S_C, (1, 2, 2), ({"pos": i64(0, 2), "crd": i64(0, 0)}, {"crd": i64(1, 0)},
                         {"pos": i64(0, 0, 1), "crd": i64(1)}), [1.0],
     r"level 1 .*unsorted within a run"),
], ids=["nu-s-duplicate", "nu-s-unsorted", "coo3-level1-unsorted", "coo3-level2-duplicate",
        "coo3-level2-unsorted", "nu-s-c-duplicate-hidden", "nu-s-c-unsorted-hidden"])
def test_singleton_order_within_parent_runs(fmt, shape, levels, vals, message):
    with pytest.raises(InputError, match=message) as info:
        Tensor(shape, fmt, levels, np.array(vals), name="T")
    assert "'T'" in str(info.value)


@pytest.mark.parametrize("fmt,shape,levels,vals,dense", [
    (NU_S, (1, 2), ({"pos": i64(0, 2), "crd": i64(0, 0)}, {"crd": i64(0, 1)}), [5.0, 7.0],
     [[5.0, 7.0]]),
    # runs end where the level-0 coordinate changes, so the singleton may restart
    (NU_S, (2, 2), ({"pos": i64(0, 2), "crd": i64(0, 1)}, {"crd": i64(1, 0)}), [5.0, 7.0],
     [[0.0, 5.0], [7.0, 0.0]]),
    # level 1 repeats within a level-0 run (non-unique), level 2 restarts per level-1 run
    (COO3, (2, 3, 4), ({"pos": i64(0, 4), "crd": i64(1, 1, 1, 1)}, {"crd": i64(0, 0, 2, 2)},
                       {"crd": i64(1, 3, 0, 2)}), [1.0, 2.0, 3.0, 4.0], None),
    (NU_S_C, (1, 3, 2), ({"pos": i64(0, 2), "crd": i64(0, 0)}, {"crd": i64(0, 2)},
                         {"pos": i64(0, 0, 2), "crd": i64(0, 1)}), [1.0, 2.0], None),
], ids=["nu-s", "nu-s-restart", "coo3", "nu-s-c"])
def test_singleton_runs_accepted(fmt, shape, levels, vals, dense):
    t = Tensor(shape, fmt, levels, np.array(vals), name="T")
    back = Tensor.from_coords(*t.to_coords(), shape, fmt)
    np.testing.assert_array_equal(back.to_dense(), t.to_dense())
    if dense is not None:
        np.testing.assert_array_equal(t.to_dense(), dense)


@pytest.mark.parametrize("order", [2, 3, 4])
def test_built_coo_tensors_validate(order):
    shape = SHAPES[order]
    rng = np.random.default_rng(order)
    coords = np.stack([rng.integers(0, n, size=40) for n in shape])
    coords = np.concatenate([coords, coords[:, :10]], axis=1)     # some duplicates
    t = Tensor.from_coords(coords, np.ones(50), shape, "coo")
    t.validate()
    expected = np.zeros(shape)
    np.add.at(expected, tuple(coords), 1.0)
    np.testing.assert_array_equal(t.to_dense(), expected)
    Tensor(shape, t.format, t.levels, t.vals).validate()
    if order == 2:
        m = sp.coo_array((np.ones(50), (coords[0], coords[1])), shape=shape)
        s = Tensor.from_scipy(m)
        assert s.format == Format.named("coo", 2)
        s.validate()
        np.testing.assert_array_equal(s.to_dense(), expected)
        Tensor.from_scipy(sp.csr_array(m), "coo").validate()


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 3), st.data())
def test_hand_built_coo_valid_iff_sorted_and_unique(order, data):
    """For coo every position holds a stored entry, so validate() must accept
    exactly the level arrays whose entries strictly increase lexicographically."""
    n = data.draw(st.integers(0, 6))
    shape = (2,) * order
    storage = np.array([data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
                        for _ in range(order)], dtype=np.int64).reshape(order, n)
    levels = ({"pos": i64(0, n), "crd": storage[0]},) + tuple(
        {"crd": storage[k]} for k in range(1, order))
    keys = [tuple(col) for col in storage.T]
    ok = all(a < b for a, b in zip(keys, keys[1:]))
    if ok:
        t = Tensor(shape, "coo", levels, np.ones(n))
        np.testing.assert_array_equal(t.to_coords()[0], storage)
    else:
        with pytest.raises(InputError, match="within a"):
            Tensor(shape, "coo", levels, np.ones(n))


def test_validate_accepts_good_and_the_unsafe_path_still_checks_bounds():
    """Skipping the order check (validate=False, or its name that says unsafe) still
    checks every bound a kernel relies on; only the order is the caller's promise."""
    t = Tensor((2, 3), CSR, GOOD_CSR, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(t.to_dense(), [[1, 0, 2], [0, 3, 0]])
    far = ({}, {"pos": GOOD_CSR[1]["pos"], "crd": i64(0, 10**9, 1)})
    unsorted = ({}, {"pos": GOOD_CSR[1]["pos"], "crd": i64(2, 0, 1)})
    for skip in ({"validate": False}, {"unsafe_skip_order_check": True}):
        with pytest.raises(InputError, match="vals has 1 entries"):
            Tensor((2, 3), CSR, GOOD_CSR, np.array([1.0]), **skip)
        with pytest.raises(InputError, match="1000000000"):
            Tensor((2, 3), CSR, far, np.ones(3), **skip)
        assert Tensor((2, 3), CSR, unsorted, np.ones(3), **skip).nnz == 3
    with pytest.raises(InputError, match="strictly increase"):
        Tensor((2, 3), CSR, unsorted, np.ones(3))
    t32 = Tensor((2, 3), CSR, ({}, {k: v.astype(np.int32) for k, v in GOOD_CSR[1].items()}),
                 np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(t32.to_dense(), t.to_dense())
