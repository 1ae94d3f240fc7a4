"""Value predicates on the call plans (runtime.value_steps): `[A[i,j] > t]` of one
column is bound by a plan from the caller's input of that column (a scipy
csr/csc, numpy or ep.Tensor input, its checks as that kind's) and its slots from
the call's bounds, so a kernel reading it keeps a plan; every call, with new
matrices, new vectors, new bounds or values written in place, equals the
reference, and what the plan does not take goes to the general path, which
words the error."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError
from etchpy.runtime.call_plans import MISS
from etchpy.runtime.value_steps import SlotStep, column_of, slots_owner, value_read

pytestmark = pytest.mark.usefixtures("shared_cache")
# names the generated code uses among them
row, pos, out = ep.indices("row pos out")


def reference(e, **inputs):
    return ep.evaluate(e, backend="reference", **inputs)


def _slot_step(kern) -> bool:
    """Whether the plan `kern` tries first binds a value predicate's slots (a SlotStep
    of the Python plan: its closure's namespace)."""
    space = getattr(kern._plan, "__globals__", {})
    return any(k.startswith("step") and type(v) is SlotStep for k, v in space.items())


def matrix(rng, n, m, fmt, dtype=np.float64):
    M = sp.random_array((n, m), density=0.35, format="csr", random_state=rng,
                        data_sampler=lambda size: rng.standard_normal(size)).astype(dtype)
    return {"csr": M.tocsr(), "csc": M.tocsc(), "dense": M.toarray(),
            "tensor": ep.Tensor.from_scipy(M.tocsr(), "csr")}[fmt]


def forms(A, x):
    return {"A·[A>t]·x": ep.sum(pos, A[row, pos] * (A[row, pos] > "t") * x[pos]),
            "[A<=t]·x": ep.sum(pos, (A[row, pos] <= "t") * x[pos]),
            "A·[A>0]·x": ep.sum(pos, A[row, pos] * (A[row, pos] > 0) * x[pos]),
            "[A>=t] and A[out,pos]": (A[out, pos] >= "t") * A[out, pos]}


@pytest.mark.parametrize("fmt", ["csr", "csc", "dense", "tensor"])
def test_value_predicates_run_by_a_plan_and_equal_the_reference(fmt):
    A, x = ep.tensor("A", 2, "csr" if fmt == "tensor" else fmt), ep.tensor("x", 1)
    rng = np.random.default_rng(1)
    for name, e in forms(A, x).items():
        kern = ep.compile(e)
        if "t" not in kern._users:
            continue
        assert value_read(kern.tensors[[n for n in kern.tensors if n.startswith("cmp")][0]])
        for n, m, t in ((9, 11, 0.0), (12, 11, 0.3), (9, 11, -0.2), (30, 33, 0.1),
                        (9, 11, 0.0)):        # new matrices, bounds, two size classes
            inputs = {"A": matrix(rng, n, m, fmt), "x": rng.random(m), "t": t}
            inputs = {k: v for k, v in inputs.items() if k in kern._users}
            want = np.asarray(reference(e, **inputs))
            got = kern(**inputs)
            np.testing.assert_allclose(getattr(got, "toarray", lambda: got)(), want,
                                       rtol=1e-12, atol=1e-12)
            if fmt == "tensor":     # ep.Tensors over one structure: runtime.shared's walk
                continue
            planned = kern._by_plan(inputs)
            assert planned is not MISS, f"{name}: the plan missed a call of its kind"
            np.testing.assert_allclose(getattr(planned, "toarray", lambda: planned)(), want,
                                       rtol=1e-12, atol=1e-12)
        assert fmt == "tensor" or _slot_step(kern), f"{name}: its slots were not bound"


def test_constant_bounds_keep_one_slots_array_and_values_written_in_place_are_read():
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    e = ep.sum(pos, A[row, pos] * (A[row, pos] > 0) * x[pos])
    kern = ep.compile(e)
    rng = np.random.default_rng(2)
    M = matrix(rng, 20, 20, "csr")
    v = rng.random(20)
    kern(A=M, x=v)
    kern(A=M, x=v)
    assert kern._plans and _slot_step(kern)
    M.data[::2] *= -1.0                 # the same arrays, other values: read as they are
    np.testing.assert_allclose(kern._by_plan({"A": M, "x": v}), reference(e, A=M, x=v),
                               rtol=1e-12)


def test_the_column_is_checked_and_a_malformed_one_is_named():
    """`[A<=t]·x` reads A only as the predicate's column: a scipy input whose indices
    leave the matrix after the plan is made is refused with A named, never read;
    an unsorted one gives the right answer."""
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    e = ep.sum(pos, (A[row, pos] <= "t") * x[pos])
    kern = ep.compile(e)
    rng = np.random.default_rng(3)
    M, v = matrix(rng, 16, 16, "csr"), rng.random(16)
    kern(A=M, x=v, t=0.2)
    kern(A=M, x=v, t=0.2)
    assert _slot_step(kern)
    bad = M.copy()
    bad.indices[3] = 99
    with pytest.raises(InputError, match="A"):
        kern(A=bad, x=v, t=0.2)
    shuffled = M.copy()
    for r in range(16):
        a, b = shuffled.indptr[r], shuffled.indptr[r + 1]
        order = rng.permutation(b - a)
        shuffled.indices[a:b] = shuffled.indices[a:b][order]
        shuffled.data[a:b] = shuffled.data[a:b][order]
    shuffled.has_sorted_indices = False
    np.testing.assert_allclose(kern(A=shuffled, x=v, t=0.2), reference(e, A=M, x=v, t=0.2),
                               rtol=1e-12)


@pytest.mark.parametrize("t, message", [(float("nan"), "NaN"), ("high", "one number"),
                                        (np.array([0.1, 0.2]), "one number")])
def test_a_parameter_the_plan_does_not_take_is_named_by_the_general_path(t, message):
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    e = ep.sum(pos, A[row, pos] * (A[row, pos] > "t") * x[pos])
    kern = ep.compile(e)
    M, v = matrix(np.random.default_rng(4), 10, 10, "csr"), np.ones(10)
    kern(A=M, x=v, t=0.1)
    kern(A=M, x=v, t=0.1)
    assert _slot_step(kern)
    assert kern._plan({"A": M, "x": v, "t": t}) is MISS
    with pytest.raises(InputError, match=message):
        kern(A=M, x=v, t=t)
    with pytest.raises(InputError, match="t"):
        kern(A=M, x=v)
    for t in (0, np.float32(0.25), np.int64(-1), 0.5):          # taken, by type and value
        np.testing.assert_allclose(kern._by_plan({"A": M, "x": v, "t": t}),
                                   reference(e, A=M, x=v, t=t), rtol=1e-12)


def test_integer_values_round_their_bounds_as_the_general_path_does():
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    e = ep.sum(pos, A[row, pos] * (A[row, pos] < "t") * x[pos])
    kern = ep.compile(e, semiring="integer")
    rng = np.random.default_rng(5)
    M = sp.random_array((12, 12), density=0.5, format="csr", random_state=rng,
                        data_sampler=lambda size: rng.integers(-4, 5, size)).astype(np.int64)
    v = rng.integers(0, 3, 12).astype(np.int64)
    for t in (2, 2.5, -1.5, 2.5, 10**30, float("-inf")):
        np.testing.assert_array_equal(kern(A=M, x=v, t=t), reference(e, A=M, x=v, t=t))
    assert kern._plans and _slot_step(kern)


def test_min_plus_and_the_knob_off_agree():
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    e = ep.sum(pos, A[row, pos] * (A[row, pos] >= "t") * x[pos])
    M = matrix(np.random.default_rng(6), 14, 14, "csr")
    v = np.random.default_rng(7).random(14)
    for sr in ("min_plus", "real"):
        on, off = ep.compile(e, semiring=sr), ep.compile(e, semiring=sr,
                                                         tuning={"call_plans": False})
        for t in (0.0, 0.4, 0.0):
            np.testing.assert_allclose(on(A=M, x=v, t=t), off(A=M, x=v, t=t), rtol=1e-12)
            np.testing.assert_allclose(on(A=M, x=v, t=t), reference(e, A=M, x=v, t=t,
                                                                     semiring=sr), rtol=1e-12)
        assert on._plans and not off._plans


def test_predicates_of_two_columns_stay_off_the_plans():
    """`[A > B]` (two columns, aligned per call by runtime.align) is not value_read."""
    A, B, x = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr"), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(pos, (A[row, pos] > B[row, pos]) * x[pos]))
    pred = next(tv for n, tv in kern.tensors.items() if n.startswith("cmp") and
                tv.kind == "value")
    assert not value_read(pred)
    rng = np.random.default_rng(8)
    M, N, v = matrix(rng, 9, 9, "csr"), matrix(rng, 9, 9, "csr"), rng.random(9)
    np.testing.assert_allclose(kern(A=M, B=N, x=v), reference(kern.request.expr, A=M, B=N,
                                                                x=v), rtol=1e-12)


def test_column_and_slots_owner():
    A = ep.tensor("A", 2, "csr")
    kern = ep.compile(A[row, pos] * (A[row, pos] > "t"))
    pred = next(tv for n, tv in kern.tensors.items() if getattr(tv, "kind", "") == "value")
    slots = next(tv for tv in kern.tensors.values() if getattr(tv, "kind", "") == "slots")
    assert column_of(pred) == "A" and slots_owner(kern.tensors, slots) is pred
    assert slots_owner(kern.tensors, pred) is None


def test_a_dense_column_copied_each_call_keeps_its_plan_and_names_its_input():
    """[D[i,j] > t] of a numpy D of another dtype, or in Fortran order: the plan copies
    D as the general path does (a DenseCast read under D's name; explain's note of the
    copy names D)."""
    D, x = ep.tensor("D", 2, "dense"), ep.tensor("x", 1)
    e = ep.sum(pos, (D[row, pos] > "t") * x[pos])
    kern = ep.compile(e)
    a = np.random.default_rng(9).random((6, 5))
    for arr in (a.astype(np.float32), np.asfortranarray(a), a):
        for _ in range(3):
            got = kern(D=arr, x=np.ones(5), t=0.5)
            np.testing.assert_allclose(got, (arr > 0.5).astype(float) @ np.ones(5))
        assert kern._plans and _slot_step(kern)
    assert not any("cmp_" in line for lines in kern._copies.values() for line in lines)
