"""An ep.Tensor input bound by a call plan (runtime.binder: its attributes read from
the Tensor's instance dict, its layout check in C, the apart guard in C under
Tuning.apart_in_c; plan_steps.tensor_step without the binder): whatever path runs,
a Tensor whose array had its dtype, shape or strides changed in place, or whose
values or levels were put in place of its own through its __dict__, is refused
with an InputError naming it on every later call, never read; a Tensor as built
gives the reference's answer, and the paths agree."""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.runtime import binder, shared

TEXT = "C[i, j] = A[i, j] + B[i, j]"
CSR = {"A": "csr", "B": "csr"}
TUNINGS = {"default": ep.Tuning(), "python guard": ep.Tuning(apart_in_c=False),
           "python plan": ep.Tuning(call_binder=False)}


def _pair(seed, shape=(5, 6)):
    return [ep.Tensor.from_scipy(sp.random_array(shape, density=0.4, format="csr",
                                                 random_state=seed + k), "csr", name=n)
            for k, n in enumerate("AB")]


def _dense(res):
    return res.to_dense() if isinstance(res, ep.Tensor) else res.toarray()


def _kernel(tuning, **knobs):
    kern = ep.compile(TEXT, output="csr", formats=CSR,
                      tuning=dataclasses.replace(TUNINGS[tuning], **knobs))
    A, B = _pair(3)
    for _ in range(3):         # a plan made, then run first (behind its guard)
        np.testing.assert_allclose(_dense(kern(A=A, B=B)), A.to_dense() + B.to_dense())
    return kern


def _in_place(attr, value):
    def change(t):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)     # (setting strides)
            setattr(t._vals if attr != "crd" else t._levels[1]["crd"], attr
                    if attr != "crd" else "shape", value(t))
    return change


def _replace(key, value):
    def change(t):
        t.__dict__[key] = value(t)
    return change


CHANGES = {
    "values reshaped": _in_place("shape", lambda t: (len(t._vals), 1)),
    "values strided": _in_place("strides", lambda t: (0,)),        # not contiguous
    "values' dtype set": _in_place("dtype", lambda t: np.dtype(np.int64)),
    "an index array reshaped": _in_place("crd", lambda t: (len(t._levels[1]["crd"]), 1)),
    "values replaced": _replace("_vals", lambda t: np.zeros(len(t._vals))),
    "values replaced, shorter": _replace("_vals", lambda t: np.zeros(1)),
    "levels replaced": _replace("_levels", lambda t: _pair(50, (9, 9))[0]._levels),
}


def test_the_names_the_binder_reads_from_the_dict_are_no_class_attributes():
    """binder_inputs.c.j2 reads these from a Tensor's dict: what getattr gives only
    while the class defines no descriptor (property) of the same name."""
    A, _ = _pair(1)
    shared._probe(A)
    for name in ("_layout", "_parts", "_vals", "_levels", "fill", "format", "shape",
                 shared._PROBE):
        assert not hasattr(ep.Tensor, name) and name in A.__dict__


@pytest.mark.parametrize("tuning", sorted(TUNINGS))
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_tensor_changed_after_its_plan_is_refused_naming_it(tuning, change):
    kern = _kernel(tuning)
    A, B = _pair(3)
    kern(A=A, B=B)
    CHANGES[change](B)
    for _ in range(2):          # every call: no check kept from the last one
        with pytest.raises(ep.InputError, match="'B'"):
            kern(A=A, B=B)
    C, D = _pair(9)             # Tensors as built still run
    np.testing.assert_allclose(_dense(kern(A=C, B=D)), C.to_dense() + D.to_dense())


def test_a_shape_changed_back_is_read_again():
    """The layout check keeps nothing: an array reshaped, then shaped back, runs."""
    kern = _kernel("default")
    A, B = _pair(3)
    n = len(B._vals)
    B._vals.shape = (n, 1)
    with pytest.raises(ep.InputError, match="'B'.*changed in place"):
        kern(A=A, B=B)
    B._vals.shape = (n,)
    B.vals[:] = 2.0                                  # written in place: read
    np.testing.assert_allclose(_dense(kern(A=A, B=B)), A.to_dense() + B.to_dense())


@pytest.mark.parametrize("least", [0, 4096])
def test_the_guard_in_c_runs_where_the_binder_does_and_answers_as_the_python_one(least):
    """With the binder, the plan goes first behind the guard in C; with apart_in_c off
    behind the Python guard. Tensors apart run the plan (no walk worked out), one
    Tensor twice is not apart (the walk is worked out, every call, with one_walk_from
    0; below one_walk_from the guard runs the plan), a scipy input beside a Tensor is
    skipped by the guard: the same answers and the same route on both."""
    kerns = {t: _kernel(t, one_walk_from=least) for t in ("default", "python guard")}
    twice = 0 if least else 1
    if binder.module() is not None:
        assert kerns["default"]._first.func.__name__ == "call_apart"
    assert getattr(kerns["python guard"]._first, "func", None) is None
    A, B = _pair(11)
    M = sp.csr_array(B.to_dense())
    for kern in kerns.values():
        walks = []
        kern._one_walk = lambda inputs, kern=kern: walks.append(1) or type(kern)._one_walk(
            kern, inputs)             # (an instance attribute: counts the kernel's own)
        for inputs, walked in (({"A": A, "B": B}, 0), ({"A": A, "B": A}, twice),
                               ({"A": A, "B": M}, 1), ({"A": B, "B": A}, 0),
                               ({"A": A, "B": A}, twice), ({"A": A, "B": B}, 0)):
            want = sum(v.to_dense() if isinstance(v, ep.Tensor) else v.toarray()
                       for v in inputs.values())
            before = len(walks)
            np.testing.assert_allclose(_dense(kern(**inputs)), want)
            assert len(walks) - before == walked, inputs
    assert A.__dict__[shared._PROBE] is A._levels[-1]["crd"]


@pytest.mark.parametrize("tuning", sorted(TUNINGS))
def test_a_one_entry_array_given_other_strides_is_refused(tuning):
    """An array of one entry is contiguous whatever its stride, so only the layout
    check (not the binder's contiguity test) sees its strides changed in place."""
    kern = _kernel(tuning)
    A, B = (ep.Tensor.from_coords([[1], [2]], [v], (5, 6), "csr", name=n)
            for v, n in ((2.0, "A"), (3.0, "B")))
    for _ in range(2):
        assert _dense(kern(A=A, B=B))[1, 2] == 5.0
    _in_place("strides", lambda t: (0,))(B)
    assert B._vals.flags.c_contiguous
    with pytest.raises(ep.InputError, match="'B'.*changed in place"):
        kern(A=A, B=B)
