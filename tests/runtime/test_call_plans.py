"""Call plans (runtime.call_plans): a call on inputs of a kind the kernel ran before
skips the general path, and answers exactly as it does: the same values and dtype,
the same errors, the same re-planning per size class, and inputs changed in place
between calls give the right answer or an InputError."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.runtime.call_plans import MISS, CallPlans

pytestmark = pytest.mark.usefixtures("shared_cache")

SPMV = "y[i] = A[i, j] * x[j]"


def _planned(kern, **inputs):
    """The kernel's result for `inputs` by its current plan, which must answer."""
    got = kern._plan(inputs)
    assert got is not MISS, "the plan missed"
    return got


def _matrix(fmt="csr", idx=np.int32, dtype=np.float64, n=30, seed=0):
    A = sp.random_array((n, n + 3), density=0.2, format=fmt, random_state=seed, dtype=dtype)
    A.indptr, A.indices = A.indptr.astype(idx), A.indices.astype(idx)
    return A


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("idx", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_plan_answers_as_the_general_path_and_scipy(fmt, idx, dtype):
    kern = ep.compile(SPMV, formats={"A": fmt})
    A = _matrix(fmt, idx, dtype)
    rng = np.random.default_rng(1)
    first = rng.random(A.shape[1]).astype(dtype)
    want = ep.compile(SPMV, formats={"A": fmt}, tuning={"keep_last_call": False})(A=A, x=first)
    got = kern(A=A, x=first)
    assert got.dtype == want.dtype
    for _ in range(3):                       # a new x, and a new matrix, every call
        x = rng.random(A.shape[1]).astype(dtype)
        B = _matrix(fmt, idx, dtype, seed=int(rng.integers(100)))
        for y in (_planned(kern, A=B, x=x), kern(A=B, x=x)):
            assert y.dtype == want.dtype
            np.testing.assert_allclose(y, B @ x, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_dense_inputs_new_arrays_each_call():
    kern = ep.compile(SPMV)
    rng = np.random.default_rng(2)
    kern(A=rng.random((4, 4)), x=rng.random(4))
    for _ in range(3):
        M, v = rng.random((4, 4)), rng.random(4)
        np.testing.assert_allclose(_planned(kern, A=M, x=v), M @ v)
        np.testing.assert_allclose(kern(A=M, x=v), M @ v)


def test_other_kinds_take_the_general_path_and_agree():
    kern = ep.compile(SPMV, formats={"A": "csr"})
    A = _matrix()
    x = np.random.default_rng(3).random(2 * A.shape[1])
    kern(A=A, x=x[: A.shape[1]].copy())
    strided = x[::2]                          # not C-contiguous: the plan misses
    assert kern._plan(dict(A=A, x=strided)) is MISS
    np.testing.assert_allclose(kern(A=A, x=strided), A @ strided)
    T = ep.Tensor.from_scipy(A, "csr")        # another type: another kind
    np.testing.assert_allclose(kern(A=T, x=strided.copy()), A @ strided)
    np.testing.assert_allclose(kern(A=A.astype(np.float32), x=strided.astype(np.float32)),
                               A @ strided, rtol=1e-5)
    np.testing.assert_allclose(kern(A=A, x=strided.copy()), A @ strided)


def test_wrong_shapes_are_named_as_before():
    kern = ep.compile(SPMV, formats={"A": "csr"})
    A = _matrix()
    kern(A=A, x=np.ones(A.shape[1]))
    with pytest.raises(ep.InputError, match="j"):
        kern(A=A, x=np.ones(A.shape[1] + 1))
    with pytest.raises(ep.InputError, match="x"):
        kern(A=A, x=np.ones((A.shape[1], 1)))
    with pytest.raises(ep.InputError, match="missing|unknown|B"):
        kern(A=A, B=np.ones(A.shape[1]))


def test_unsorted_and_duplicate_entries_canonicalised_as_before():
    kern = ep.compile(SPMV, formats={"A": "csr"}, semiring="min_plus")
    plain = ep.compile(SPMV, formats={"A": "csr"}, semiring="min_plus",
                       tuning={"keep_last_call": False})
    good = sp.csr_array((np.array([1.0, 2.0, 3.0]), np.array([0, 1, 2]), np.array([0, 2, 3])),
                        shape=(2, 3))
    x = np.array([1.0, 5.0, 2.0])
    kern(A=good, x=x)
    assert kern._plan is not None
    dup = sp.csr_array((np.array([4.0, 1.0, 3.0]), np.array([1, 1, 2]), np.array([0, 2, 3])),
                       shape=(2, 3))
    unsorted = sp.csr_array((np.array([2.0, 1.0, 3.0]), np.array([1, 0, 2]),
                             np.array([0, 2, 3])), shape=(2, 3))
    for M in (dup, unsorted):
        got, want = kern(A=M, x=x.copy()), plain(A=M, x=x.copy())
        np.testing.assert_array_equal(got, want)


def test_arrays_changed_in_place_between_calls():
    kern = ep.compile(SPMV, formats={"A": "csr"})
    A = _matrix()
    x = np.ones(A.shape[1])
    kern(A=A, x=x)
    A.data *= 2.0                              # values: read afresh
    np.testing.assert_allclose(kern(A=A, x=x.copy()), A @ x)
    A.data = A.data * 3.0                      # an array rebound: its own C argument
    np.testing.assert_allclose(kern(A=A, x=x.copy()), A @ x)
    A.data.shape = (1, len(A.data))            # reshaped in place: refused as before
    with pytest.raises(ep.InputError, match="A"):
        kern(A=A, x=x.copy())
    A.data.shape = (A.data.size,)
    A.indices[3] = A.shape[1] + 5              # out of range: found by the kernel
    with pytest.raises(ep.InputError, match="A"):
        kern(A=A, x=x.copy())
    B = _matrix(seed=4)
    kern(A=B, x=x.copy())
    B.indptr[1:] = B.indptr[-1] + 7            # beyond the entries: refused
    with pytest.raises(ep.InputError, match="A"):
        kern(A=B, x=x.copy())
    C = _matrix(seed=5)
    kern(A=C, x=x.copy())
    C.data = C.data[:-1]                        # scipy lets arrays be rebound
    with pytest.raises(ep.InputError, match="A"):
        kern(A=C, x=x.copy())


def test_nan_refused_on_every_call():
    kern = ep.compile(SPMV, formats={"A": "csr"}, semiring="min_plus")
    A = _matrix()
    kern(A=A, x=np.zeros(A.shape[1]))
    x = np.zeros(A.shape[1])
    x[1] = np.nan
    with pytest.raises(ep.InputError, match="input x contains NaN"):
        kern(A=A, x=x)
    A.data[0] = np.nan
    with pytest.raises(ep.InputError, match="input A contains NaN"):
        kern(A=A, x=np.zeros(A.shape[1]))


def test_a_new_size_class_plans_again():
    """Sizes beyond the plan's size class miss it: the general path plans for them,
    as it would for a kernel seeing them first."""
    kern = ep.compile(SPMV, formats={"A": "csr"})
    small, large = _matrix(n=20), _matrix(n=700, seed=6)
    kern(A=small, x=np.ones(small.shape[1]))
    plan = kern._plan
    assert plan(dict(A=large, x=np.ones(large.shape[1]))) is MISS
    np.testing.assert_allclose(kern(A=large, x=np.ones(large.shape[1])),
                               large @ np.ones(large.shape[1]))
    fresh = ep.compile(SPMV, formats={"A": "csr"})
    fresh(A=large, x=np.ones(large.shape[1]))
    assert kern.c_source == fresh.c_source
    assert kern._plan is not plan


def test_plans_hold_small_arrays_till_the_next_call_and_follow_their_knobs():
    """A plan's Python (call_binder off) holds the C arguments made from the last
    call's arrays (so the arrays) only while they hold ≤ keep_call_bytes, and lets
    go of them at the next call on other arrays; it never holds a scipy matrix
    itself. (The binder holds nothing: tests/runtime/test_binder.py.)"""
    import gc
    import weakref
    kern = ep.compile(SPMV, formats={"A": "csr"}, name="plans_hold_little",
                      tuning={"call_binder": False})
    A, x = _matrix(n=300), np.ones(303)
    kern(A=A, x=x)
    assert kern._plan is not None
    gone = (weakref.ref(A), weakref.ref(A.data), weakref.ref(x))
    kern(A=A, x=x)
    del A, x
    gc.collect()
    assert gone[0]() is None and gone[1]() is not None and gone[2]() is not None
    kern(A=_matrix(n=300, seed=9), x=np.ones(303))
    gc.collect()
    assert gone[1]() is None and gone[2]() is None
    tight = ep.compile(SPMV, formats={"A": "csr"}, name="plans_hold_nothing",
                       tuning={"keep_call_bytes": 64, "call_binder": False})
    B = _matrix()
    tight(A=B, x=np.ones(33))
    tight(A=B, x=np.ones(33))
    data = weakref.ref(B.data)
    del B
    gc.collect()
    assert data() is None
    off = ep.compile(SPMV, formats={"A": "csr"}, tuning={"call_plans": False})
    C = _matrix()
    off(A=C, x=np.ones(33))
    off(A=C, x=np.ones(33))
    assert off._plan is None and not off._plans


def test_tensor_inputs_new_and_changed():
    kern = ep.compile(SPMV, formats={"A": "csr"}, name="plans_tensors")
    A = _matrix()
    x = np.ones(A.shape[1])
    kern(A=ep.Tensor.from_scipy(A, "csr"), x=x)
    T = ep.Tensor.from_scipy(2 * A, "csr")
    np.testing.assert_allclose(_planned(kern, A=T, x=x.copy()), 2 * A @ x)
    T.vals[:] = 1.0                             # values: read afresh
    np.testing.assert_allclose(_planned(kern, A=T, x=x), (A != 0) @ x)
    np.testing.assert_allclose(kern(A=T, x=x), (A != 0) @ x)
    T.vals.shape = (1, len(T.vals))            # its layout changed in place
    with pytest.raises(ep.InputError, match="changed in place"):
        kern(A=T, x=x)
    F = ep.Tensor.from_scipy(A.astype(np.float32), "csr")      # another dtype: general path
    np.testing.assert_allclose(kern(A=F, x=x.astype(np.float32)), A @ x, rtol=1e-5)


def test_a_tensor_of_another_stored_entries_class_plans_again():
    kern = ep.compile(SPMV, formats={"A": "csr"}, name="plans_tensor_class")
    sparse_one = sp.random_array((40, 40), density=0.02, format="csr", random_state=1)
    dense_one = sp.random_array((40, 40), density=0.9, format="csr", random_state=2)
    x = np.ones(40)
    kern(A=ep.Tensor.from_scipy(sparse_one, "csr"), x=x)
    T = ep.Tensor.from_scipy(dense_one, "csr")
    assert kern._plan(dict(A=T, x=x)) is MISS          # its size class is another
    np.testing.assert_allclose(kern(A=T, x=x), dense_one @ x)
    np.testing.assert_allclose(_planned(kern, A=T, x=x), dense_one @ x)


def test_inputs_of_one_kind_in_two_size_classes_keep_a_plan_each():
    """One kernel called in turn on inputs of two shapes (a chain's steps) keeps a
    plan per size class under the one key: after the first calls, no call makes a
    plan again (a plan was once made and compiled on every call here)."""
    from etchpy.runtime.call_plans import plan_key
    i, j, k = ep.indices("i j k")
    # names no other test's kernel has: ep.compile shares a kernel (and its plans)
    # with every earlier compile of the same expression in this process
    A, B = ep.tensor("Lplans", 2), ep.tensor("Rplans", 2)
    mm = ep.compile(ep.sum(j, A[i, j] * B[j, k]))
    rng = np.random.default_rng(3)
    small = {"Lplans": rng.random((6, 40)), "Rplans": rng.random((40, 3))}
    large = {"Lplans": rng.random((300, 6)), "Rplans": rng.random((6, 3))}
    for _ in range(3):
        for ins in (small, large):
            np.testing.assert_allclose(mm(**ins), ins["Lplans"] @ ins["Rplans"])
    kept = mm._plans[plan_key(small)]
    assert len(kept) == 2
    for _ in range(5):
        for ins in (small, large):
            np.testing.assert_allclose(mm(**ins), ins["Lplans"] @ ins["Rplans"])
    assert mm._plans[plan_key(small)] == kept     # the same plan objects, none made again


def test_call_with_a_dict_answers_as_a_keyword_call():
    """Kernel.call_with(inputs): its plan first, else the full call; the same
    values, in-place changes read afresh, the same errors naming the input."""
    kern = ep.compile(SPMV, formats={"A": "csr"})
    A = _matrix(seed=6)
    x = np.random.default_rng(2).random(A.shape[1])
    first = kern.call_with({"A": A, "x": x})         # no plan yet: the full call
    np.testing.assert_allclose(first, A @ x)
    assert kern._plan is not None
    for _ in range(2):
        x = x + 1.0                                    # a new array each call
        np.testing.assert_allclose(kern.call_with({"A": A, "x": x}), A @ x)
    A.data *= 2.0
    np.testing.assert_allclose(kern.call_with({"A": A, "x": x}), kern(A=A, x=x))
    with pytest.raises(ep.InputError, match="j"):
        kern.call_with({"A": A, "x": np.ones(A.shape[1] + 1)})
    with pytest.raises(ep.InputError, match="missing|unknown|B"):
        kern.call_with({"A": A, "B": x})
    A.indices[3] = A.shape[1] + 5
    with pytest.raises(ep.InputError, match="A"):
        kern.call_with({"A": A, "x": x})



def test_a_plan_goes_first_unless_a_shared_walk_could_take_its_call():
    """A kernel tries its plan before anything else (`_plan_first`, call_plans._use)
    only where no call the plan accepts is one a shared walk runs (runtime.shared:
    ep.Tensor inputs, when the expression has a walk at all); plans check each
    input's exact type, so a plan for other types never takes a Tensor call."""
    A = _matrix()
    spmv = ep.compile(SPMV, formats={"A": "csr"})
    spmv(A=A, x=np.ones(A.shape[1]))
    assert spmv._plan is not None and spmv._plan_first     # an SpMV has no shared walk

    class Plans(CallPlans):
        request, _plans, _identities = spmv.request, {}, False
    k, plan = Plans(), object()
    k._use(plan, ("A", "B", ep.Tensor, ep.Tensor))       # before the walk is worked out
    assert k._plan is plan and not k._plan_first and k._first is None
    k._walk = ((("A", "B"),), ("A", "B"), False)        # the expression has a walk
    k._use(plan, ("A", "B", ep.Tensor, ep.Tensor))      # any Tensor may change it: the
    assert not k._plan_first and k._first not in (None, plan)   # guard of small ones
    k._identities = True                                # (a kernel with identities: none)
    k._use(plan, ("A", "B", ep.Tensor, ep.Tensor))
    assert not k._plan_first and k._first is None
    k._use(plan, ("A", "B", ep.Tensor, np.ndarray))
    assert not k._plan_first and k._first is None
    k._identities = False
    k._use(plan, ("A", "B", sp.csr_array, np.ndarray))
    assert k._plan_first and k._first is plan
    k._walk = ((("A", "B"),), ("A", "B"), True)         # only inputs over one structure
    k._use(plan, ("A", "B", ep.Tensor, ep.Tensor))      # change it: the plan first when
    assert not k._plan_first and k._first not in (None, plan)   # they are apart (guarded)
    k._walk = None                                      # none: every plan goes first
    k._use(plan, ("A", "B", ep.Tensor, ep.Tensor))
    assert k._plan_first and k._first is plan
