"""A table's copies in its other orders skip their per-call check, when asked
to (skip_unwritten=True), while nothing could have written the values since
the last one (Tensor.unwritten_mark: proofs_notes/unwritten.md), and follow
every write made through a Python reference all the same: through a fresh
`vals`, a reference held across calls, a view of it, the array owning its
memory, a memoryview, a ctypes pointer object, a strided view, a shallow copy
of the Tensor, or the column the table was built from. A write through a raw
address kept after its array is gone is not covered by the skip: by default
(skip_unwritten=False) every read compares, and sees it."""
import copy
import ctypes

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.runtime import unwritten
from etchpy.runtime.tensor import Tensor

ROWS = 12


def loaded(skip=True):
    rng = np.random.default_rng(7)
    cols = {"a": np.arange(ROWS), "b": rng.integers(0, 4, ROWS),
            "v": rng.random(ROWS), "w": rng.random(ROWS)}
    return ep.table(cols, ["a"], keys=["b"], values=["v", "w"], secondary=["b", "a"],
                    name="T", skip_unwritten=skip)


def by_b(T, value) -> np.ndarray:
    """The value summed per b code, read in the secondary order."""
    a, b = ep.indices("a b")
    kern = ep.compile(ep.sum(a, T.var(value, order=T.secondary)[a, b]), order=["b", "a"])
    return np.asarray(kern(T=T.tensor(value, order=T.secondary)))


def want(T, value) -> np.ndarray:
    return np.asarray(T.tensor(value).to_dense()).sum(axis=0)


def test_a_table_loaded_once_has_marks_and_its_copies_are_kept():
    T = loaded()
    assert T.relation("v").tensor.unwritten_mark() is not None
    first = T.tensor("v", order=T.secondary)
    assert T.tensor("v", order=T.secondary) is first      # nothing written: kept
    held = T.tensor("v").vals
    assert T.relation("v").tensor.unwritten_mark() is None
    del held
    assert T.relation("v").tensor.unwritten_mark() is not None


def _write(T, how, col, at, x, held):
    """Write x at position `at` of column col's storage values, `how`: each way
    of reaching their memory through a Python object. False when that way is
    not open now (its reference dropped)."""
    t = T.tensor(col)
    if how == "fresh":
        t.vals[at] = x
    elif how == "owner":                       # the array owning the memory
        t.vals.base[at] = x
    elif how == "memoryview":
        np.asarray(memoryview(t.vals))[at] = x
    elif how == "pointer":                     # a ctypes pointer object keeps the array
        ptr = t.vals.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
        ptr[at] = x
    elif how == "strided":
        np.lib.stride_tricks.as_strided(t.vals)[at] = x
    elif how == "shallow":                     # copy.copy of the Tensor is the Tensor
        copy.copy(t).vals[at] = x
    elif how in ("held", "view", "drop") and held[col] is not None:
        ref, view = held[col]
        if how == "view" and at >= 1:
            view[at - 1] = x
        else:
            ref[at] = x
        if how == "drop":                      # every reference gone after the write
            held[col] = None
    else:
        return False
    return True


WRITES = st.sampled_from(["fresh", "held", "view", "none", "drop", "owner", "memoryview",
                          "pointer", "strided", "shallow"])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(WRITES, st.sampled_from(["v", "w"]), st.integers(0, ROWS - 1),
                          st.floats(-5, 5)), max_size=8), st.booleans())
def test_the_copies_follow_every_write_in_place(steps, hold):
    """After each step (a write in one of the ways a reference to the values is
    had, or none), the query in the secondary order gives the storage order's
    answer. Without `hold`, no reference is held from the start (the marks set)."""
    T = loaded()
    coords, _ = T.tensor("v").to_coords()        # storage positions' b codes
    model = {c: T.tensor(c).vals.copy() for c in ("v", "w")}
    held = {c: (T.tensor(c).vals, T.tensor(c).vals[1:]) if hold else None for c in ("v", "w")}
    for how, col, at, x in steps:
        if not _write(T, how, col, at, x, held):
            x = model[col][at]
        model[col][at] = x
        for c in ("v", "w"):        # read twice: the second may skip its check
            expected = np.bincount(coords[1], weights=model[c], minlength=4)
            assert np.allclose(by_b(T, c), expected) and np.allclose(by_b(T, c), expected)


def test_a_write_then_every_reference_dropped_is_seen():
    """The write happens through a reference that is gone by the next call: the
    mark counted the handing out of `vals`, so the copy is checked and remade."""
    T = loaded()
    before = by_b(T, "v")
    ref = T.tensor("v").vals
    ref[:] = 2.0
    del ref
    assert not np.allclose(before, by_b(T, "v"))
    assert np.allclose(by_b(T, "v"), want(T, "v"))
    T.tensor("v").vals[0] = 100.0
    assert np.allclose(by_b(T, "v"), want(T, "v"))


def test_the_columns_given_to_the_table_are_not_its_values():
    """Writing the column the table was built from changes nothing (the table
    holds its own values), and the copies agree with the table."""
    cols = {"a": np.arange(4), "b": np.array([1, 0, 1, 0]), "v": np.arange(4.0)}
    T = ep.table(cols, ["a"], keys=["b"], values=["v"], secondary=["b", "a"], name="T")
    before = by_b(T, "v")
    cols["v"][:] = 50.0
    del cols
    assert np.allclose(by_b(T, "v"), before) and np.allclose(by_b(T, "v"), want(T, "v"))


def test_the_skip_is_off_by_default():
    """By default every read of another order compares: the same answers."""
    cols = {"a": np.arange(4), "b": np.array([1, 0, 1, 0]), "v": np.arange(4.0)}
    T = ep.table(cols, ["a"], keys=["b"], values=["v"], secondary=["b", "a"], name="T")
    assert not T.skip_unwritten
    assert np.allclose(by_b(T, "v"), [4.0, 2.0]) and np.allclose(by_b(T, "v"), [4.0, 2.0])
    T.tensor("v").vals[1] = 10.0
    assert np.allclose(by_b(T, "v"), [13.0, 2.0])       # row a=1 has b=0


def test_a_run_of_summed_levels_keeps_one_structure_and_no_values():
    """One walk reads a run of summed levels of two columns as one level: the
    collapsed inputs share their index arrays from call to call (the same
    objects, found aligned by identity), and nothing kept holds the values, so
    the columns' marks stay set."""
    rng = np.random.default_rng(5)
    cols = {"o": rng.integers(0, 5, 40), "n": rng.integers(0, 4, 40),
            "p": rng.integers(0, 4, 40), "a": rng.random(40), "b": rng.random(40)}
    T = ep.table(cols, ["o", "n", "p"], values=["a", "b"], name="T")
    o, n, p = ep.indices("o n p")
    A, B = T.var("a", name="A"), T.var("b", name="B")
    kern = ep.compile(ep.sum((n, p), A[o, n, p] * (B[o, n, p] < 0.5)), order=["o", "n", "p"])
    ta, tb = T.tensor("a"), T.tensor("b")
    dense_a, dense_b = ta.to_dense(), tb.to_dense()
    want = (dense_a * (dense_b < 0.5) * (dense_b != 0)).sum(axis=(1, 2))  # stored rows
    assert np.allclose(kern(A=ta, B=tb), want) and np.allclose(kern(A=ta, B=tb), want)
    memo_a, memo_b = (t.__dict__.get("_etchpy_collapsed", {}) for t in (ta, tb))
    assert memo_a and memo_a.keys() == memo_b.keys()
    for runs in memo_a:
        la, lb = memo_a[runs][2], memo_b[runs][2]
        assert all(x[k] is y[k] for x, y in zip(la, lb) for k in x)
    assert ta.unwritten_mark() is not None and tb.unwritten_mark() is not None


def test_a_raw_address_kept_past_its_array_is_seen_by_default():
    """The case the skip does not cover: an address taken from `vals`, the array
    dropped, then written (ctypes). The default compares on every read."""
    T = loaded(skip=False)
    by_b(T, "v")
    address = T.tensor("v").vals.ctypes.data            # the array is gone after this
    ctypes.c_double.from_address(address + 8 * 3).value = 1000.0
    assert np.allclose(by_b(T, "v"), want(T, "v")) and want(T, "v").max() >= 1000.0


def test_a_copy_in_another_order_cannot_be_written():
    T = loaded()
    kept = T.tensor("v", order=T.secondary)
    with pytest.raises(ValueError):
        kept.vals[0] = 5.0
    with pytest.raises(ValueError):
        kept.vals.setflags(write=True)
    assert np.allclose(by_b(T, "v"), want(T, "v"))


def test_reference_counts_are_measured_and_one_more_holder_clears_the_mark():
    """The holders a Tensor accounts for are measured on this interpreter
    (runtime.unwritten); one more, of the view or of the owner, clears the mark."""
    assert unwritten.calibrated(Tensor)
    t = loaded().relation("v").tensor
    assert t.unwritten_mark() is not None
    owner = t.vals.base
    assert t.unwritten_mark() is None
    del owner
    mark = t.unwritten_mark()
    assert mark is not None and copy.copy(t) is t and t.unwritten_mark() == mark
