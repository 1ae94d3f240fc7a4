"""Windows under a guarded product (proofs_notes/hoist.md, "A guard keeps the
keys increasing"): strided and shifted windows over every level kind, walked
by a product that locates an operand whose value is zero unless a test holds
(streams.hoist guards the levels below with it), multiplied with other
streams, in every semiring; the stream interpreter (its invariants checked),
the C and the dense reference agree.

The minimal case (session 48, issue 40): A[i]·(Σ_i B[i]·A[i])·C[i[1:13:2]],
A bytemap or hash. C's window skips to the stride point 3, which C does not
store, and lands at 4: a state (2, not ready) before the stride point 5,
(2, ready); A's test fails at 2 (A[2] = 0), which made the second (2, not
ready) too, and the interpreter refused the repeated state."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.testing import (check_backends, formats_for, semirings_st, sparse_arrays,
                            stored_values)

pytestmark = pytest.mark.usefixtures("shared_cache", "full_flags")
i, j = ep.indices("i j")
VALUES = {"C": np.array([1., 2., 3., 0., 2., 3.]), "A": np.array([1., 2., 0., 0., 2., 0.]),
          "B": np.array([1., 2., 0., 0., 2., 3.])}


def minimal(fa, fc):
    A, B, C = ep.tensor("A", 1, format=fa), ep.tensor("B", 1), ep.tensor("C", 1, format=fc)
    return A[i] * ep.sum(i, B[i] * A[i]) * C[i[1:13:2]]


@pytest.mark.parametrize("fa, fc", [("bytemap", "bytemap"), ("hash", "csf")])
def test_the_minimal_case(fa, fc):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ep.PerformanceWarning)
        check_backends(minimal(fa, fc), VALUES, backends=("streams", "c"))


# The located operand: formats whose located value tests presence (bytemap, hash,
# sparse ones through a marker) among others.
LOCATED = ("hash", "bytemap", "hash", "dense", "csf", "sparse_rle")
SHAPES = ("sum below", "matrix below", "window of a matrix's rows",
          "window of a matrix's columns")


@st.composite
def halves(draw, shape, sr):
    """Arrays over `sr` whose entries are each stored or not (about half of them),
    with stored values in turn: holes of every pattern, as a window's skips meet."""
    size, values = int(np.prod(shape)), stored_values(sr)
    stored = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    flat = [values[k % len(values)] if s else sr.zero for k, s in enumerate(stored)]
    return np.array(flat, dtype=sr.dtype).reshape(shape)


@st.composite
def cases(draw):
    """(expression, [inputs without the bounds, ...], [(lo, hi), ...], semiring): the
    window `lo:hi:step` (step 1..3 written in the kernel, lo and hi parameters:
    every lo from 2 before the operand to past its end) of an operand of any format, in a product with a located operand A and,
    one time in two, another operand E; levels below from a Σ or a matrix."""
    sr, shape = draw(semirings_st()), draw(st.sampled_from(SHAPES))
    n, m, k = draw(st.integers(1, 6)), draw(st.integers(1, 9)), draw(st.integers(1, 3))
    step = draw(st.sampled_from((1, 2, 3)))
    fa = draw(st.sampled_from(LOCATED))
    A = ep.tensor("A", 1, format=fa)
    if shape in ("sum below", "matrix below"):
        C = ep.tensor("C", 1, format=draw(formats_for(1)))
        win, sizes = C[i["lo":"hi":step]], {"A": (n,), "C": (m,)}
    else:
        C = ep.tensor("C", 2, format=draw(formats_for(2)))
        rows = shape == "window of a matrix's rows"
        win = C[i["lo":"hi":step], j] if rows else C[j, i["lo":"hi":step]]
        sizes = {"A": (n,), "C": (m, k) if rows else (k, m)}
    e = A[i] * win
    if shape == "sum below":
        B = ep.tensor("B", 1, format=draw(formats_for(1)))
        e, sizes["B"] = e * ep.sum(i, B[i] * A[i]), (n,)
    elif shape == "matrix below":
        D = ep.tensor("D", 2, format=draw(formats_for(2)))
        e, sizes["D"] = e * D[i, j], (n, k)
    if draw(st.booleans()):
        E = ep.tensor("E", 1, format=draw(formats_for(1)))
        e, sizes["E"] = e * E[i], (n,)
    fills = [{name: draw(st.one_of(halves(s, sr), sparse_arrays(s, sr)))
              for name, s in sizes.items()} for _ in range(draw(st.integers(1, 3)))]
    extra = draw(st.integers(0, step - 1))
    bounds = [(lo, lo + (n - 1) * step + 1 + extra) for lo in range(-2, m + 2)]
    return e, fills, bounds, sr


# 3 under the ci profile (a C compile each), 37 under dev
_MAX = settings.default.max_examples


@settings(max_examples=min(3, _MAX) if _MAX <= 40 else _MAX // 8)
@given(cases())
def test_guarded_windows_agree_on_every_backend(case):
    """One kernel an example (the bounds are parameters), run on each of its
    inputs at each of its bounds."""
    e, fills, bounds, sr = case
    for inputs in fills:
        for lo, hi in bounds:
            check_backends(e, {**inputs, "lo": lo, "hi": hi}, semiring=sr,
                           backends=("streams", "c"))
