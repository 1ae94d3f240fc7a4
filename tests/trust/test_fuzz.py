"""Malformed inputs of every kind (issue 26, item 5): each draw ends in the right
answer, or an InputError that names the tensor (a MemoryError for huge dims); never
a crash, a sanitizer report or a hang. Every draw has a time limit, enforced by a
watchdog that ends the process (a hang in C cannot be interrupted).

The sanitizer profile (test_sanitizer.py) runs this file in a process whose kernels
are built with ASan and UBSan. Longer runs: ETCHPY_FUZZ_EXAMPLES=2000 (the default
is small, for CI), see the README.
"""
import faulthandler
import os
import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings, strategies as st

import etchpy as ep
from etchpy import InputError, Tensor

EXAMPLES = int(os.environ.get("ETCHPY_FUZZ_EXAMPLES", "40"))
SECONDS = float(os.environ.get("ETCHPY_FUZZ_SECONDS", "60"))
FORMATS = {"dense": 2, "csr": 2, "csc": 2, "dcsr": 2, "coo": 2, "csf": 3, "coo3": 3}
KINDS = ["tensor", "unsafe", "scipy"]
MUTATIONS = ["none", "pos_order", "crd_range", "crd_unsorted", "crd_duplicate", "shorter",
             "longer", "dtype", "mixed_dtypes", "negative_dim", "huge_dim", "nan", "x_length"]
BAD_CRD = [-1, -(2**31), 2**31 - 1, 2**31, 10**9, 2**62, 2**63 - 1]
BAD_DTYPES = [np.float64, np.int8, np.int16, np.uint32, np.uint64, np.bool_, np.complex128]
HUGE = [2**31, 2**32 + 1, 2**40, 2**62, 2**63 - 1, 2**63, 2**64 + 3]


def kernel(fmt, semiring):
    order = FORMATS[fmt]
    idx = ep.indices("i j k")[:order]
    Q = ep.tensor("Q", order, format="coo" if fmt == "coo3" else fmt)
    x = ep.tensor("x", 1)
    expr = ep.sum(idx[-1], Q[idx] * x[idx[-1]])
    return expr, ep.compile(expr, semiring=semiring)


@st.composite
def draws(draw):
    fmt = draw(st.sampled_from(sorted(FORMATS)))
    # scipy input: to a tensor declared in its own layout, or to a dense one
    kind = draw(st.sampled_from(KINDS if fmt in ("csr", "csc", "coo", "dense") else KINDS[:2]))
    semiring = draw(st.sampled_from(["real", "min_plus"]))
    shape = tuple(draw(st.integers(0, 5)) for _ in range(FORMATS[fmt]))
    density = draw(st.floats(0, 1))
    values = draw(st.lists(st.floats(-4, 4, allow_nan=False), min_size=int(np.prod(shape)),
                           max_size=int(np.prod(shape))))
    dense = np.array(values, dtype=np.float64).reshape(shape)
    keep = np.random.default_rng(draw(st.integers(0, 2**16))).random(shape) < density
    dense = np.where(keep, dense, ep.semirings.get(semiring).zero)
    mutation = draw(st.sampled_from(MUTATIONS))
    if mutation == "nan":
        semiring = "min_plus"   # real allows NaN, and 0·NaN differs between sparse and dense
        dense = np.where(keep, dense, np.inf)
    return fmt, kind, semiring, dense, mutation, draw(st.data())


def storage_of(fmt, kind, dense, semiring, data):
    """(shape, levels as dicts of fresh arrays, vals) of a valid input, or a scipy matrix
    (for a dense-declared tensor, of a drawn layout)."""
    sr = ep.semirings.get(semiring)
    if kind == "scipy":
        zeroed = np.where(dense == sr.zero, 0.0, dense)
        layout = data.draw(st.sampled_from(["csr", "csc", "coo"])) if fmt == "dense" else fmt
        return {"csr": sp.csr_array, "csc": sp.csc_array, "coo": sp.coo_array}[layout](zeroed)
    t = Tensor.from_dense(dense, "coo" if fmt == "coo3" else fmt, semiring=sr)
    levels = [{k: np.array(a) for k, a in lv.items()} for lv in t.levels]
    return list(t.shape), levels, np.array(t.vals)


def index_arrays(stored):
    if isinstance(stored, tuple):
        return [(lv, k) for lv in stored[1] for k in lv]
    names = ["indptr", "indices"] if stored.format != "coo" else ["row", "col"]
    return [(stored, n) for n in names]


def get(holder, name):
    return holder[name] if isinstance(holder, dict) else getattr(holder, name)


def put(holder, name, value):
    if isinstance(holder, dict):
        holder[name] = value
    else:
        setattr(holder, name, value)


def mutate(stored, mutation, data, x):
    """Apply ``mutation`` to the stored arrays (in place) or to x; returns x and
    whether a huge dimension was asked for."""
    arrays = index_arrays(stored)
    pick = lambda options: data.draw(st.sampled_from(options))   # noqa: E731
    crds = [(h, n) for h, n in arrays if n in ("crd", "indices", "row", "col")]
    poss = [(h, n) for h, n in arrays if n in ("pos", "indptr")]
    match mutation:
        case "pos_order" if poss and any(len(get(*p)) > 2 for p in poss):
            h, n = pick([p for p in poss if len(get(*p)) > 2])
            a = get(h, n).copy()
            q = data.draw(st.integers(0, len(a) - 2))
            a[q] = a[q + 1] + data.draw(st.integers(1, 3))
            put(h, n, a)
        case "crd_range" if crds and any(len(get(*c)) for c in crds):
            h, n = pick([c for c in crds if len(get(*c))])
            a = get(h, n).astype(np.int64)
            a[data.draw(st.integers(0, len(a) - 1))] = pick(BAD_CRD)
            put(h, n, a)
        case "crd_unsorted" | "crd_duplicate" if crds and any(len(get(*c)) > 1 for c in crds):
            h, n = pick([c for c in crds if len(get(*c)) > 1])
            a = get(h, n).copy()
            q = data.draw(st.integers(0, len(a) - 2))
            a[q], a[q + 1] = (a[q + 1], a[q]) if mutation == "crd_unsorted" else (a[q], a[q])
            put(h, n, a)
        case "shorter" | "longer":
            h, n = pick(arrays + [(stored, "vals")] if isinstance(stored, tuple)
                        else arrays + [(stored, "data")])
            a = get(h, n) if not isinstance(h, tuple) else h[2]
            a = a[:-1] if mutation == "shorter" else np.append(a, a[-1:] if len(a) else [0])
            if isinstance(h, tuple):
                return x, False, a
            put(h, n, a)
        case "dtype" if arrays:
            h, n = pick(arrays)
            put(h, n, get(h, n).astype(pick(BAD_DTYPES)))
        case "mixed_dtypes" if arrays:
            h, n = pick(arrays)
            a = get(h, n)
            put(h, n, a.astype(np.int32 if a.dtype == np.int64 else np.int64))
        case "negative_dim" | "huge_dim" if isinstance(stored, tuple):
            # a huge size for a mode of the output would be a legitimately huge dense
            # output, which the machine may overcommit and then kill: only the
            # contracted mode gets one
            shape = stored[0]
            if mutation == "negative_dim":
                shape[data.draw(st.integers(0, len(shape) - 1))] = -data.draw(
                    st.integers(1, 2**63))
            else:
                shape[-1] = pick(HUGE)
            return x, mutation == "huge_dim", None
        case "nan":
            x = x.copy()
            if len(x):
                x[data.draw(st.integers(0, len(x) - 1))] = np.nan
        case "x_length":
            x = np.append(x, 1.0) if data.draw(st.booleans()) or not len(x) else x[:-1]
    return x, False, None


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(draws())
def test_malformed_inputs_give_the_right_answer_or_an_input_error(draw):
    fmt, kind, semiring, dense, mutation, data = draw
    expr, kern = kernel(fmt, semiring)
    x = np.linspace(-1.0, 2.0, dense.shape[-1])
    stored = storage_of(fmt, kind, dense, semiring, data)
    x, huge, new_vals = mutate(stored, mutation, data, x)
    if new_vals is not None:
        stored = (stored[0], stored[1], new_vals)
    if os.environ.get("ETCHPY_FUZZ_VERBOSE"):      # the last draw printed is the culprit
        shown = stored if isinstance(stored, tuple) else (
            stored.format, stored.shape, {n: get(stored, n) for _, n in index_arrays(stored)},
            stored.data)
        print(f"\n{fmt} {kind} {semiring} {mutation}: {shown!r}, x={x!r}", flush=True)
    faulthandler.dump_traceback_later(SECONDS, exit=True)   # a hang ends the process
    try:
        outcome = run(kern, stored, fmt, kind, x)
    finally:
        faulthandler.cancel_dump_traceback_later()
    if isinstance(outcome, InputError):
        assert re.search(r"\b(Q|x)\b", str(outcome)), outcome
        return
    if isinstance(outcome, MemoryError):
        assert huge, outcome
        return
    try:
        reference = checked_reference(expr, stored, fmt, kind, x, semiring)
    except MemoryError:
        assert huge             # the dense reference of a huge tensor
        return
    if reference is not None:
        np.testing.assert_allclose(outcome, reference, equal_nan=True)


def run(kern, stored, fmt, kind, x):
    """The kernel's result, or the InputError / MemoryError it raised."""
    try:
        if kind == "scipy":
            q = stored
        else:
            shape, levels, vals = stored
            skip = {"unsafe_skip_order_check": True} if kind == "unsafe" else {}
            q = Tensor(shape, "coo" if fmt == "coo3" else fmt, levels, vals, name="Q", **skip)
        return kern(Q=q, x=x)
    except (InputError, MemoryError) as exc:
        return exc


def checked_reference(expr, stored, fmt, kind, x, semiring):
    """The reference answer for an input that passes every check, else None (an
    input the unsafe path accepted with its order broken has no specified answer);
    the kernel must not have accepted anything else."""
    try:
        if kind == "scipy":
            q = Tensor.from_scipy(stored, semiring=ep.semirings.get(semiring), name="Q")
        else:
            shape, levels, vals = stored
            q = Tensor(shape, "coo" if fmt == "coo3" else fmt, levels, vals, name="Q")
    except InputError:
        assert kind == "unsafe", "the kernel accepted an input that fails validation"
        return None
    return ep.evaluate(expr, backend="reference", semiring=semiring, Q=q, x=x)


@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_nan_in_a_dense_operand_of_min_plus_is_refused_by_name(fmt):
    """NaN is not a value of min_plus: refused, naming the operand."""
    _, kern = kernel(fmt, "min_plus")
    good_q, good_x = np.array([[0.0, np.inf], [1.0, 2.0]]), np.array([0.0, 1.0])
    with pytest.raises(InputError, match=r"\bx\b"):
        kern(Q=good_q, x=np.array([0.0, np.nan]))
    with pytest.raises(InputError, match=r"\bQ\b"):
        kern(Q=np.array([[0.0, np.nan], [1.0, 2.0]]), x=good_x)
    with pytest.raises(InputError, match=r"\bQ\b"):
        q = Tensor.from_dense(np.array([[0.0, np.nan], [1.0, 2.0]]), fmt,
                              semiring=ep.semirings.min_plus, name="Q")
        kern(Q=q, x=good_x)
