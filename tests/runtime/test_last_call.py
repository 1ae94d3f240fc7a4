"""A kernel keeps its last call's binding for the next call on the same inputs
(runtime.last_call): the kept call is used only when every input is the same
object with the same layout, reads the inputs' current values, runs the checks
that depend on values again, and never holds large inputs alive."""
import gc
import weakref

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.testing import assert_same, problems
from tuned import random_csr

i, j = ep.indices("i j")
A = ep.tensor("A", 2)
x = ep.tensor("x", 1)

pytestmark = pytest.mark.usefixtures("shared_cache")

# a call plan (runtime.call_plans, tried before the kept call) would answer the calls
# on numpy arrays and Tensors below: these tests count the kept call's own hits
NO_PLANS = {"call_plans": False}


def test_the_same_arrays_again_reuse_the_binding_and_read_new_values():
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]), name="kept_matvec", tuning=NO_PLANS)
    M, v = np.arange(12.0).reshape(3, 4), np.ones(4)
    np.testing.assert_allclose(kern(A=M, x=v), M @ v)
    np.testing.assert_allclose(kern(A=M, x=v), M @ v)
    assert kern._kept.hits == 1
    M[1, 2] = 100.0                         # written in place: seen by the next call
    v *= 3
    np.testing.assert_allclose(kern(A=M, x=v), M @ v)
    assert kern._kept.hits == 2
    np.testing.assert_allclose(kern(x=v, A=M), M @ v)   # another order: bound afresh
    assert kern._kept.hits == 2
    w = v.copy()                            # another object: bound afresh
    np.testing.assert_allclose(kern(A=M, x=w), M @ w)
    assert kern._kept.hits == 2


def test_a_reshaped_array_is_bound_again():
    """An array reshaped in place is the same object with a new layout: a kept call
    would run with the old sizes."""
    kern = ep.compile(ep.sum(j, A[i, j]), name="kept_rowsum", tuning=NO_PLANS)
    M = np.arange(24.0).reshape(4, 6)
    np.testing.assert_allclose(kern(A=M), M.sum(axis=1))
    M.shape = (6, 4)
    np.testing.assert_allclose(kern(A=M), M.sum(axis=1))
    M.shape = (24,)
    with pytest.raises(ep.InputError, match="A"):
        kern(A=M)


def test_nan_written_in_place_is_refused_again():
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]), semiring="min_plus", name="kept_nan",
                      tuning=NO_PLANS)
    M, v = np.zeros((3, 4)), np.zeros(4)
    kern(A=M, x=v)
    kern(A=M, x=v)
    assert kern._kept.hits == 1
    v[2] = np.nan
    with pytest.raises(ep.InputError, match="input x contains NaN"):
        kern(A=M, x=v)


def test_bool_arrays_and_copies_are_bound_on_every_call():
    """A bool array whose bytes are not 0 or 1 is bound as a copy (truth values), an
    int array into a real kernel as a cast copy: a kept copy would miss writes."""
    b = ep.tensor("b", 1)
    kern = ep.compile(ep.sum(i, b[i]), semiring="boolean", name="kept_bool")
    raw = np.array([0, 2, 0], dtype=np.uint8)
    flags = raw.view(np.bool_)
    assert bool(kern(b=flags)) is True
    raw[1] = 0
    assert bool(kern(b=flags)) is False
    total = ep.compile(ep.sum(i, x[i]), semiring="real", name="kept_cast")
    ints = np.array([1, 2, 3])
    assert total(x=ints) == 6
    ints[0] = 10
    assert total(x=ints) == 15
    assert kern._kept.hits == 0 and total._kept.hits == 0


def test_a_tensor_is_kept_and_its_layout_checked_again():
    kern = ep.compile(ep.sum(j, ep.tensor("A", 2, format="csr")[i, j] * x[j]), tuning=NO_PLANS)
    S = random_csr(20, 10, 50, 3)
    T, v = ep.Tensor.from_scipy(S, "csr"), np.arange(10.0)
    want, hits = S @ v, kern._kept.hits     # (kernels are shared by the tests here)
    np.testing.assert_allclose(kern(A=T, x=v), want)
    T.vals[:] *= 2                          # (T may share S's arrays)
    np.testing.assert_allclose(kern(A=T, x=v), 2 * want)
    assert kern._kept.hits == hits + 1
    T.vals.shape = (1, len(T.vals))         # its layout changed in place
    with pytest.raises(ep.InputError, match="changed in place"):
        kern(A=T, x=v)


def test_scipy_inputs_are_bound_on_every_call():
    kern = ep.compile(ep.sum(j, ep.tensor("A", 2, format="csr")[i, j] * x[j]))
    S, v = random_csr(20, 10, 50, 4), np.arange(10.0)
    hits = kern._kept.hits
    for _ in range(2):
        np.testing.assert_allclose(kern(A=S, x=v), S @ v)
    S.data = S.data * 2                     # scipy's arrays can be rebound
    np.testing.assert_allclose(kern(A=S, x=v), S @ v)
    assert kern._kept.hits == hits


def test_large_inputs_are_not_held_and_small_ones_only_until_the_next_call():
    kern = ep.compile(ep.sum(i, x[i]))
    big = np.ones(1 << 18)                  # 2 MiB: more than a kept call holds
    gone = weakref.ref(big)
    assert kern(x=big) == 1 << 18
    del big
    gc.collect()
    assert gone() is None
    small = np.ones(8)
    kept = weakref.ref(small)
    kern(x=small)
    del small
    gc.collect()
    assert kept() is not None               # kept for the next call ...
    kern(x=np.ones(3))
    gc.collect()
    assert kept() is None                   # ... and let go by it


def test_the_knob_turns_it_off():
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]), name="kept_off",
                      tuning={"keep_last_call": False})
    M, v = np.arange(12.0).reshape(3, 4), np.ones(4)
    for _ in range(3):
        np.testing.assert_allclose(kern(A=M, x=v), M @ v)
    assert kern._kept.hits == 0
    small = ep.compile(ep.sum(j, A[i, j] * x[j]), name="kept_small",
                       tuning={"keep_call_bytes": 64})       # M holds 96 bytes
    for _ in range(3):
        np.testing.assert_allclose(small(A=M, x=v), M @ v)
    assert small._kept.hits == 0


@settings(max_examples=40)
@given(problems(), st.booleans())
def test_a_kept_call_equals_the_reference_after_writes(p, as_tensors):
    """Random problems over every semiring, inputs as numpy arrays or Tensors in
    their declared formats: the call again (kept where it may be) and the call
    after every input's values were changed in place equal the reference."""
    sr, ins = p.semiring, dict(p.inputs)
    if as_tensors:
        ins = {n: ep.Tensor.from_dense(v, p.formats[n], semiring=sr, name=n)
               for n, v in ins.items()}
    kern = ep.compile(p.expr, semiring=sr)
    want = ep.evaluate(p.expr, semiring=sr, backend="reference", **ins)
    assert_same(kern(**ins), want, sr, str(p))
    assert_same(kern(**ins), want, sr, str(p))
    for v in ins.values():                      # every value changed, in place:
        vals = v.vals if isinstance(v, ep.Tensor) else v.reshape(-1)
        vals[:] = np.where(vals == sr.zero, sr.one, sr.zero)     # zero <-> one, rest zero
    want = ep.evaluate(p.expr, semiring=sr, backend="reference", **ins)
    assert_same(kern(**ins), want, sr, f"{p} after writes")
