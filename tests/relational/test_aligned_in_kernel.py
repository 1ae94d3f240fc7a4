"""Columns of different structures compared in the kernel's loop, not gathered per
call (expr.through, Tuning.aligned_in_kernel): a row predicate over ep.Tensors
apart is read through the positions of its entries among each column's values,
kept for the same Tensors (runtime.align.through). Against a pure-Python
relational reference: random formulas over three columns stored apart, the
first column on several level kinds, values written in place between calls,
another structure afterwards, the knob off, and semirings whose values cannot
carry the positions (the gather then, the same answers)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from tests.relational.test_row_predicates import _uses, formulas, holds, n, predicate

i, j = ep.indices("i j")
SHAPE = (6, 5)
FIRST = (["dense", "compressed"], ["compressed", "compressed"], ["dense", "hash"],
         ["compressed", "bytemap"])
cells = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 4)), min_size=1, max_size=20,
                 unique=True)


def entries(t) -> dict:
    coords, v = t.to_coords()
    return {tuple(int(c) for c in key): float(x) for key, x in zip(zip(*coords), v)}


def reference(ts, f, t) -> list:
    """Per row, the count of cells every column stores where f holds (parameter
    t; a coordinate test reads the cell's (row, column))."""
    cols = [entries(x) for x in ts]
    out = [0.0] * SHAPE[0]
    for key in set(cols[0]).intersection(*cols[1:]):
        if holds(f, [c[key] for c in cols], t, key):
            out[key[0]] += 1.0
    return out


def column(pairs, rng, fmt):
    rows, cols = zip(*pairs)
    return ep.Tensor.from_coords([np.array(rows), np.array(cols)],
                                 rng.integers(0, 4, len(pairs)).astype(float), SHAPE, fmt)


def read_through(*ts) -> bool:
    """Did a call keep positions for a kernel that reads through them (on the
    Tensor of the predicate's first column, one of ts)?"""
    return any(k[0] == "through" for t in ts
               for kept in t.__dict__.get("_etchpy_aligned", {}).values() for k in kept[-1])


@settings(max_examples=12, deadline=None)
@given(ps=st.tuples(cells, cells, cells), f=formulas, t=st.integers(-1, 4),
       seed=st.integers(0, 99), first=st.sampled_from(FIRST), on=st.booleans())
def test_columns_apart_match_the_relational_reference_after_writes(ps, f, t, seed, first, on):
    """test_row_predicates' formulas (value, parameter and coordinate tests, AND,
    OR, NOT), its columns here three Tensors built apart."""
    rng = np.random.default_rng(seed)
    ts = [column(ps[0], rng, ep.Format(first)), column(ps[1], rng, "csr"),
          column(ps[2], rng, "dcsr")]
    V = [ep.tensor("a", 2, ep.Format(first)), ep.tensor("b", 2, "csr"),
         ep.tensor("c", 2, "dcsr")]
    for k in (1, 2):               # every column in the one predicate: an OR that holds
        f = ("and", f, ("or", ("cc", 0, "<", k), ("cc", 0, ">=", k)))
    kern = ep.compile(ep.sum(n, predicate(f, V)), tuning={"aligned_in_kernel": on})
    params = {"t": t} if _uses(f, "t") else {}
    for _ in range(2):
        got = kern(a=ts[0], b=ts[1], c=ts[2], **params)
        assert got.tolist() == reference(ts, f, t)
        for x in ts:                                   # written in place
            x.vals[:] = rng.integers(0, 4, len(x.vals))
    assert read_through(*ts) == on
    ts[1] = column(ps[0][::-1][:4], rng, "csr")        # another structure
    assert kern(a=ts[0], b=ts[1], c=ts[2], **params).tolist() == reference(ts, f, t)


def test_the_positions_are_kept_and_no_value_is_gathered():
    rng = np.random.default_rng(1)
    A = column([(0, 0), (1, 2), (3, 3), (4, 1), (5, 4)], rng, "csr")
    B = column([(1, 2), (3, 3), (5, 4)], rng, "csr")
    X, Y = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    kern = ep.compile(ep.sum((i, j), X[i, j] > Y[i, j]))
    A.vals[:], B.vals[:] = [5.0, 1.0, 7.0, 2.0, 0.0], [1.0, 9.0, 0.0]
    assert float(kern(A=A, B=B)) == 0.0                # 1 > 1, 7 > 9, 0 > 0: none
    kept = [dict(v[-1]) for v in A.__dict__["_etchpy_aligned"].values()]
    A.vals[2] = 10.0                                   # (3, 3): 10 > 9
    assert float(kern(A=A, B=B)) == 1.0
    again = [dict(v[-1]) for v in A.__dict__["_etchpy_aligned"].values()]
    (structure, pos), = kept[0].values()
    (structure2, pos2), = again[0].values()
    assert structure is structure2 and all(p is q for p, q in zip(pos, pos2))
    assert [p.view(np.int64).tolist() for p in pos] == [[1, 2, 4], [0, 1, 2]]
    assert "__w1" in kern.explain() or read_through(A)


@pytest.mark.parametrize("sr", ["real32", "min_plus", "integer", "max_times", "boolean"])
def test_semirings_whose_values_do_or_do_not_carry_positions(sr):
    """Values of 8 or 4 bytes (numbers) carry int64 or int32 positions; booleans
    keep the gather (complex values have no order to compare). The same answers
    either way."""
    dt = getattr(ep.semirings, sr).dtype
    A = ep.Tensor.from_coords([np.array([0, 1, 3, 4]), np.array([0, 2, 3, 1])],
                              np.array([1, 0, 1, 1], dt), SHAPE, "csr", semiring=sr)
    B = ep.Tensor.from_coords([np.array([1, 3, 4]), np.array([2, 3, 1])],
                              np.array([0, 1, 1], dt), SHAPE, "csr", semiring=sr)
    X, Y = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    e = ep.sum(j, (X[i, j] >= Y[i, j]) * X[i, j])
    want = ep.evaluate(e, semiring=sr, backend="reference", A=A, B=B)
    kern = ep.compile(e, semiring=sr)
    for _ in range(2):
        got = kern(A=A, B=B)
        assert np.array_equal(np.asarray(got), np.asarray(want))
    assert read_through(A, B) == (dt.itemsize in (4, 8) and dt.kind in "fiu")


@pytest.mark.parametrize("on", [False, True])
@pytest.mark.parametrize("first", [["dense", "hash"], ["compressed", "bytemap"]])
def test_no_common_entry_over_slotted_levels(first, on):
    """A first column over slots (a hash's, a bytemap's) sharing no entry with the
    other: nothing holds (its empty slots' positions are never read; an
    IndexError before)."""
    rng = np.random.default_rng(3)
    A, B = column([(0, 0), (2, 1)], rng, ep.Format(first)), column([(0, 1)], rng, "csr")
    X, Y = ep.tensor("A", 2, ep.Format(first)), ep.tensor("B", 2, "csr")
    kern = ep.compile(ep.sum(j, X[i, j] >= Y[i, j]), tuning={"aligned_in_kernel": on})
    assert kern(A=A, B=B).tolist() == [0.0] * SHAPE[0]


def test_scipy_inputs_apart_are_aligned_once_while_their_index_arrays_hold():
    """scipy matrices are bound as a new Tensor each call: their alignment is kept
    by their index arrays, each compared with a copy (runtime.align._by_arrays),
    so a call on the same matrices sorts nothing, and an index array written in
    place is noticed (aligned again: the right answer)."""
    from etchpy.runtime import align
    import scipy.sparse as sp
    A = sp.csr_array(np.array([[5.0, 0, 1], [0, 7, 0], [2, 0, 3]]))
    B = sp.csr_array(np.array([[1.0, 2, 0], [0, 9, 0], [0, 0, 1]]))
    X, Y = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    kern = ep.compile(ep.sum(j, X[i, j] > Y[i, j]))
    align._BY_ARRAYS.clear()
    assert kern(A=A, B=B).tolist() == [1.0, 0.0, 1.0]       # 5 > 1; 7 > 9 no; 3 > 1
    (key, (_, first)), = align._BY_ARRAYS.items()
    A.data[1] = 0.5                                          # values: read as they are
    assert kern(A=A, B=B).tolist() == [1.0, 0.0, 1.0]
    assert align._BY_ARRAYS[key][1] is first                 # the same alignment
    A.indices[1] = 1                                         # (0, 2) -> (0, 1): B has 2
    assert kern(A=A, B=B).tolist() == [1.0, 0.0, 1.0]        # 5 > 1, 0.5 > 2 no
    A.data[1] = 4.0
    assert kern(A=A, B=B).tolist() == [2.0, 0.0, 1.0]        # and 4 > 2
    assert align._BY_ARRAYS[key][1] is not first
    assert len(align._BY_ARRAYS) == 1
