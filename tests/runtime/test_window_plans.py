"""Windows on the call plans (runtime.window_steps): a kernel reading an operand
through a window with parameter bounds keeps a plan for calls of that kind; the
plan works the window out from each call's bounds, checks what the general path
checks, and misses (the general path then words the error) for anything else."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError
from etchpy.runtime import binder, window_rows
from etchpy.runtime.call_plans import MISS
from etchpy.runtime.window_steps import RowsWindowStep, TensorWindowStep

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j = ep.indices("i j")


def reference(e, **inputs):
    return ep.evaluate(e, backend="reference", **inputs)


@pytest.mark.parametrize("fmt", ["csr", "dense", "csc"])
def test_changing_bounds_run_through_the_plan_and_equal_the_reference(fmt):
    M = sp.random_array((60, 45), density=0.2, format="csr", random_state=5)
    src = {"csr": M, "dense": M.toarray(), "csc": M.tocsc()}[fmt]
    A, x = ep.tensor("A", 2, fmt), ep.tensor("x", 1)
    e = ep.sum(j, A[i["lo":"hi"], j["lo2+1":"hi2-1"]] * x[j])
    kern = ep.compile(e)
    rng = np.random.default_rng(0)
    for _ in range(12):
        lo, lo2 = (int(v) for v in rng.integers(-8, 40, 2))
        hi, hi2 = lo + int(rng.integers(0, 30)), lo2 + 18        # j's length stays 16
        inputs = dict(A=src, x=rng.random(16), lo=lo, hi=hi, lo2=lo2, hi2=hi2)
        want = reference(e, **inputs)
        np.testing.assert_allclose(kern(**inputs), want, rtol=1e-12)
        planned = kern._by_plan(inputs)
        if planned is not MISS:
            np.testing.assert_allclose(planned, want, rtol=1e-12)
    assert kern._plans, "no plan was kept for the windowed calls"
    inputs = dict(A=src, x=np.ones(16), lo=3, hi=20, lo2=4, hi2=22)
    kern(**inputs)
    assert kern._plan(inputs) is not MISS      # the same kind again: the plan runs it
    assert len(kern._libs) <= 2                # one kernel (checked and trusted builds)


def test_a_plan_misses_bad_bounds_and_the_general_path_names_them():
    M = sp.random_array((30, 20), density=0.3, format="csr", random_state=6)
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A[i["lo":"hi"], j] * x[j]))
    kern(A=M, x=np.ones(20), lo=2, hi=9)
    assert kern._plans
    with pytest.raises(InputError, match="parameter lo .* must be one integer"):
        kern(A=M, x=np.ones(20), lo=2.5, hi=9)
    with pytest.raises(InputError, match="x"):
        kern(A=M, x=np.ones(19), lo=2, hi=9)
    assert kern._plan(dict(A=M, x=np.ones(20), lo=np.int64(2), hi=9)) is not None


def test_a_windows_rows_changed_in_place_are_checked_again():
    """The rows a csr window reads are checked on every call through the plan:
    unsorted columns written into them are canonicalised or refused by the
    general path, never read as they are."""
    d = np.arange(1.0, 49.0).reshape(8, 6)
    M = sp.csr_array(d)
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    e = ep.sum(j, A[i["lo":"hi"], j] * x[j])
    kern = ep.compile(e)
    v = np.arange(6.0)
    np.testing.assert_allclose(kern(A=M, x=v, lo=1, hi=5), d[1:5] @ v)
    kern(A=M, x=v, lo=1, hi=5)
    row = slice(M.indptr[2], M.indptr[3])
    M.indices[row] = M.indices[row][::-1].copy()      # row 2 unsorted, same entries
    M.data[row] = M.data[row][::-1].copy()
    try:
        got = kern(A=M, x=v, lo=1, hi=5)
    except InputError:
        return
    np.testing.assert_allclose(got, d[1:5] @ v)


def test_a_window_of_a_dense_operand_outside_it_reads_zeros_through_the_plan():
    d = np.random.default_rng(2).random((10, 7))
    A, x = ep.tensor("A", 2), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A[i["lo-3":"lo+3"], j] * x[j]))
    v = np.ones(7)
    for lo in (0, 2, 5, 9, 12, -4, 5):
        padded = np.zeros((30, 7))
        padded[10:20] = d
        want = padded[10 + lo - 3:10 + lo + 3] @ v
        np.testing.assert_allclose(kern(A=d, x=v, lo=lo), want, rtol=1e-12)
    assert kern._plans


def test_a_plan_made_in_c_takes_its_inputs_in_the_callers_order():
    """binder.in_order's positional calls follow the order of the call the plan was
    made from, not the order of the kernel's own tensors."""
    from etchpy.runtime import binder, fixed_calls
    if binder.module() is None:
        return                    # the Python plans take their inputs by name
    A, x = ep.tensor("A", 2), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]))
    a, v = np.arange(12.0).reshape(3, 4), np.arange(4.0)
    assert list(kern.tensors)[0] == "A"
    kern(x=v, A=a)
    call = fixed_calls.make(kern, ("x", "A"), (v, a))
    assert call is not None
    w = np.arange(4.0, 8.0)
    np.testing.assert_allclose(call(w, a), a @ w)


def test_the_window_rows_check_codes():
    def check(indptr, indices, r0, r1, minor=5, dtype=np.int32):
        return window_rows.check(np.array(indptr, dtype), np.array(indices, dtype), r0, r1,
                                 minor)
    ip, ix = [0, 2, 2, 5], [1, 3, 0, 2, 4]
    assert check(ip, ix, 0, 3) == 0 and check(ip, ix, 1, 1) == 0
    assert check(ip, [1, 3, 0, 9, 4], 0, 3) == 4 and check(ip, [1, 3, 0, 9, 4], 0, 2) == 0
    assert check(ip, [1, 3, 0, 4, 2], 2, 3) == 5 and check(ip, [1, 3, 0, 4, 2], 0, 2) == 0
    assert check(ip, [1, -1, 0, 2, 4], 0, 1, dtype=np.int64) == 4
    assert check([0, 3, 2, 5], ix, 1, 2) == 2                    # a pointer decreases
    assert check([0, 2, 2, 9], ix, 2, 3) == 2                    # beyond nnz
    assert window_rows.rows((4, 5, 20, 30, 3, -2, 1, 1), 2, 0, 20) == (3, 7)
    assert window_rows.rows((4, 5, 20, 30, 18, 0, 1, 1), 2, 0, 20) == (18, 20)


@pytest.mark.parametrize("in_c", [True, False])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_a_window_plan_checks_only_the_rows_it_reads(fmt, in_c):
    """A scipy csr/csc window's step (window_steps.RowsWindowStep, or the binder's
    window reader) checks the rows (csc: columns) the window reads in C on every
    call: a coordinate out of range there is refused naming the operand; one
    outside them is never read."""
    M = sp.random_array((40, 30), density=0.3, format="csr", random_state=8)
    M = M if fmt == "csr" else M.T.tocsc()
    A, x = ep.tensor("A", 2, fmt), ep.tensor("x", 1)
    win = A[i["lo":"hi"], j] if fmt == "csr" else A[j, i["lo":"hi"]]
    e = ep.sum(j, win * x[j])
    kern = ep.compile(e, tuning={"call_binder": in_c})
    v = np.arange(30.0)
    for _ in range(3):
        got = kern(A=M, x=v, lo=5, hi=15)
    if in_c and binder.module() is not None:
        assert kern._plan.windows and binder.in_order(kern._plan) is None
    else:
        steps = [s for k, s in kern._plan.__globals__.items() if k.startswith("step")]
        assert any(isinstance(s, RowsWindowStep) for s in steps)
    np.testing.assert_allclose(got, reference(e, A=M, x=v, lo=5, hi=15))
    D = M.copy()
    D.indices[D.indptr[30 if fmt == "csr" else 25]] = 10 ** 6     # a row the window skips
    np.testing.assert_allclose(kern(A=D, x=v, lo=5, hi=15), got)
    assert kern._plan(dict(A=D, x=v, lo=5, hi=15)) is not MISS
    D.indices[D.indptr[7]] = 10 ** 6                                # a row it reads
    assert kern._plan(dict(A=D, x=v, lo=5, hi=15)) is MISS
    with pytest.raises(InputError, match="A"):
        kern(A=D, x=v, lo=5, hi=15)


@pytest.mark.parametrize("fmt", ["csr", "csc", "dense"])
def test_the_binders_window_takes_steps_offsets_and_integers(fmt):
    """Bounds with offsets and steps, in and out of the operand, through the plan
    (in C where the binder builds) against the reference; numpy's integer scalars
    run through it as ints do; a bound that is no integer (a float, numpy's bool)
    misses the plan and the general path answers."""
    M = sp.random_array((50, 40), density=0.25, format="csr", random_state=9)
    src = {"csr": M, "csc": M.T.tocsc(), "dense": M.toarray()}[fmt]
    A, x = ep.tensor("A", 2, fmt), ep.tensor("x", 1)
    win = (A[j["c":"c+12"], i["lo-1":"hi":"st"]] if fmt == "csc"
           else A[i["lo-1":"hi":"st"], j["c":"c+12"]])
    e = ep.sum(j, win * x[j])
    kern = ep.compile(e)
    rng = np.random.default_rng(3)
    for _ in range(14):
        lo, hi, st, c = (int(rng.integers(-6, 55)), int(rng.integers(-3, 60)),
                         int(rng.integers(1, 4)), int(rng.integers(-5, 35)))
        inputs = dict(A=src, x=rng.random(12), lo=lo, hi=hi, st=st, c=c)
        want = reference(e, **inputs)
        np.testing.assert_allclose(kern(**inputs), want, rtol=1e-12, atol=1e-12)
        planned = kern._by_plan(inputs)
        if planned is not MISS:
            np.testing.assert_allclose(planned, want, rtol=1e-12, atol=1e-12)
    inputs = dict(A=src, x=np.ones(12), lo=4, hi=30, st=2, c=3)
    kern(**inputs)
    assert kern._plan(inputs) is not MISS
    assert binder.module() is None or kern._plan.windows       # made in C
    for st in (np.int64(2), np.int32(2), np.uint8(2)):
        np.testing.assert_allclose(kern._plan({**inputs, "st": st}), kern(**inputs))
    assert kern._plan({**inputs, "st": np.bool_(True)}) is MISS
    assert kern._plan({**inputs, "st": 2.0}) is MISS
    np.testing.assert_allclose(kern(**{**inputs, "st": np.int64(2)}), kern(**inputs))
    with pytest.raises(InputError, match="step"):
        kern(**{**inputs, "st": 0})
    with pytest.raises(InputError, match="one integer"):
        kern(**{**inputs, "st": np.bool_(True)})


@pytest.mark.parametrize("in_c", [True, False])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_a_window_of_the_minor_mode_checks_every_row_through_the_plan(fmt, in_c):
    """A scipy csr (csc) operand windowed over its columns (rows) only: the plan
    reads it over its own arrays and checks every row in C on every call, so a
    coordinate written out of range anywhere is refused naming the operand."""
    M = sp.random_array((40, 30), density=0.3, format="csr", random_state=4)
    M = M if fmt == "csr" else M.T.tocsc()
    A, x = ep.tensor("A", 2, fmt), ep.tensor("x", 1)
    win = A[i, j["lo":"hi"]] if fmt == "csr" else A[j["lo":"hi"], i]
    e = ep.sum(j, win * x[j])
    kern = ep.compile(e, tuning={"call_binder": in_c})
    v = np.arange(10.0)
    for lo in (3, 3, 11, 20):
        got = kern(A=M, x=v, lo=lo, hi=lo + 10)
        np.testing.assert_allclose(got, reference(e, A=M, x=v, lo=lo, hi=lo + 10))
    assert kern._plan(dict(A=M, x=v, lo=20, hi=30)) is not MISS
    D = M.copy()
    D.indices[D.indptr[33]] = 10 ** 6                  # a row outside every window
    assert kern._plan(dict(A=D, x=v, lo=20, hi=30)) is MISS
    with pytest.raises(InputError, match="A"):
        kern(A=D, x=v, lo=20, hi=30)


@pytest.mark.parametrize("in_c", [True, False])
def test_a_window_of_a_tensor_runs_through_the_plan_and_reads_its_current_values(in_c):
    """A window of an ep.Tensor: its plan's step (TensorWindowStep, or the binder's
    kind 6 where it builds) binds the Tensor's own arrays with the window's sizes
    from each call's bounds, reads values written in place, and misses for another
    Tensor's format (the general path converts it)."""
    M = sp.random_array((30, 20), density=0.3, format="csr", random_state=2)
    T = ep.Tensor.from_scipy(M)
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    e = ep.sum(j, A[i["lo":"hi"], j["lo2":"lo2+12":"st"]] * x[j])
    kern = ep.compile(e, tuning={"call_binder": in_c})
    v = np.arange(12.0)
    for lo, lo2, st in ((0, 0, 1), (4, 3, 1), (4, 3, 1), (9, -2, 1), (9, 5, 1), (2, 12, 1)):
        got = kern(A=T, x=v, lo=lo, hi=lo + 8, lo2=lo2, st=st)
        np.testing.assert_allclose(got, reference(e, A=M, x=v, lo=lo, hi=lo + 8, lo2=lo2,
                                                  st=st))
    if in_c and binder.module() is not None:
        assert kern._plan.windows                       # made in C
    else:
        steps = [s for k, s in kern._plan.__globals__.items() if k.startswith("step")]
        assert any(isinstance(s, TensorWindowStep) for s in steps)
    before = T.to_dense()
    T.vals[:] *= 2.0                                   # written in place between calls
    inputs = dict(A=T, x=v, lo=9, hi=17, lo2=4, st=1)
    np.testing.assert_allclose(kern._plan(inputs), 2.0 * before[9:17, 4:16] @ v)
    for lo, hi in ((-3, 5), (25, 33), (10, 5)):        # partly or wholly outside, empty
        want = reference(e, A=2.0 * before, x=v, lo=lo, hi=hi, lo2=4, st=1)
        np.testing.assert_allclose(kern(**{**inputs, "lo": lo, "hi": hi}), want)
        if hi > lo:                                     # the window lengths' class kept
            np.testing.assert_allclose(kern._plan({**inputs, "lo": lo, "hi": hi}), want)
    assert kern._plan({**inputs, "st": 0}) is MISS     # the general path words it
    with pytest.raises(InputError, match="step"):
        kern(**{**inputs, "st": 0})
    assert kern._plan({**inputs, "A": ep.Tensor.from_scipy(M.tocsc())}) is MISS
    C = ep.Tensor.from_scipy(M.tocsc())
    np.testing.assert_allclose(kern(**{**inputs, "A": C}),
                               reference(e, A=2.0 * before, x=v, lo=9, hi=17, lo2=4, st=1))


@pytest.mark.parametrize("fmt", ["rle", "sparse_rle"])
def test_shifted_windows_of_a_bool_tensor_are_bound_once_through_the_plan(fmt):
    """Three shifted windows of one boolean run-length Tensor (a 1×3 erosion):
    the plan binds the Tensor once (the later windows lead to the first's
    arrays), checks its value bytes each call (a byte 2 written in place is a
    miss; the general path reads it as true) and equals the reference."""
    rng = np.random.default_rng(3)
    img = rng.random((12, 40)) < 0.8
    T = ep.Tensor.from_dense(img, fmt, semiring="boolean")
    I = ep.tensor("I", 2, fmt)
    e = I[i, j["lo-1":"lo+38"]] * I[i, j["lo":"lo+39"]] * I[i, j["lo+1":"lo+40"]]
    kern = ep.compile(e, semiring=ep.semirings.boolean)
    for lo in (0, 1, 1):
        want = reference(e, I=img, lo=lo)
        np.testing.assert_array_equal(kern(I=T, lo=lo), want)
    steps = [s for k, s in kern._plan.__globals__.items() if k.startswith("step")]
    tensor_steps = [s for s in steps if isinstance(s, TensorWindowStep)]
    assert len(tensor_steps) == 3 and sum(s.lead is not None for s in tensor_steps) == 2
    np.testing.assert_array_equal(kern._plan(dict(I=T, lo=1)), want)
    k = int(np.flatnonzero(T.vals)[0])
    T.vals.view(np.uint8)[k] = 2                       # still true, as C reads it
    assert kern._plan(dict(I=T, lo=1)) is MISS
    np.testing.assert_array_equal(kern(I=T, lo=1), want)
