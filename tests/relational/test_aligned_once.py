"""Columns of different structures compared (`A[i, j] > B[i, j]` of two relations
built apart): the alignment is found once for the same Tensors (runtime.align)
and reused, values written in place between calls are read as they are, a
new Tensor (another structure) is aligned afresh, and Tuning.aligned_once off
gives the same answers; against a pure-Python relational reference."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep

i, j = ep.indices("i j")
cell = st.tuples(st.integers(0, 4), st.integers(0, 4))


def _tensor(pairs, vals):
    rows, cols = zip(*pairs)
    return ep.Tensor.from_coords([np.array(rows), np.array(cols)], np.array(vals, float),
                                 (5, 5), "csr")


def reference(a: dict, b: dict, frac) -> list:
    """Per row, the count of cells both store where a's value > frac * b's."""
    out = [0.0] * 5
    for key, v in a.items():
        if key in b and v > frac * b[key]:
            out[key[0]] += 1.0
    return out


@settings(max_examples=5, deadline=None)
@given(pa=st.lists(cell, min_size=1, max_size=14, unique=True),
       pb=st.lists(cell, min_size=1, max_size=6, unique=True),
       seed=st.integers(0, 99), once=st.booleans())
def test_an_alignment_kept_reads_the_values_written_in_place(pa, pb, seed, once):
    rng = np.random.default_rng(seed)
    A, B = _tensor(pa, rng.integers(0, 4, len(pa))), _tensor(pb, rng.integers(0, 4, len(pb)))
    X, Y = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    kern = ep.compile(ep.sum(j, X[i, j] > 0.5 * Y[i, j]), tuning={"aligned_once": once})

    def entries(t):
        (r, c), v = t.to_coords()
        return {(int(x), int(y)): float(w) for x, y, w in zip(r, c, v)}
    for _ in range(3):
        assert kern(A=A, B=B).tolist() == reference(entries(A), entries(B), 0.5)
        A.vals[:] = rng.integers(0, 4, len(A.vals))        # written in place
        B.vals[:] = rng.integers(0, 4, len(B.vals))
    B = _tensor(pa[::-1][:3], [1.0] * len(pa[::-1][:3]))     # another structure
    assert kern(A=A, B=B).tolist() == reference(entries(A), entries(B), 0.5)


def test_the_same_tensors_are_aligned_once():
    A = _tensor([(0, 0), (1, 2), (3, 3), (4, 1)], [5.0, 1.0, 7.0, 2.0])
    B = _tensor([(1, 2), (3, 3)], [1.0, 9.0])
    X, Y = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    for once in (False, True):
        kern = ep.compile(ep.sum((i, j), X[i, j] > Y[i, j]), tuning={"aligned_once": once})
        kept = []
        for _ in range(3):
            assert float(kern(A=A, B=B)) == 0.0            # 1 > 1 no, 7 > 9 no
            kept.append(dict(A.__dict__.get("_etchpy_aligned", {})))
        if once:     # one alignment, the same object on every call; B's keys sorted once
            assert len(kept[0]) == 1 and all(k == kept[0] for k in kept)
            assert all(v is kept[0][key] for k in kept for key, v in k.items())
            assert "_etchpy_sorted" in A.__dict__ or "_etchpy_sorted" in B.__dict__
        else:
            assert kept == [{}, {}, {}]
    A.vals[2] = 10.0                                           # (3, 3): 10 > 9
    assert float(kern(A=A, B=B)) == 1.0
    assert float(kern(A=A, B=_tensor([(3, 3)], [11.0]))) == 0.0   # another structure


def test_a_dense_second_column_stores_every_cell_and_a_dense_first_is_refused():
    D = ep.Tensor.from_dense(np.arange(25.0).reshape(5, 5), "dense")
    S = _tensor([(0, 0), (2, 3), (4, 4)], [1.0, 1.0, 30.0])
    X, Y = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "dense")
    kern = ep.compile(ep.sum(j, X[i, j] > 0.5 * Y[i, j]))
    assert kern(A=S, B=D).tolist() == [1.0, 0.0, 0.0, 0.0, 1.0]    # 1 > 0, 1 > 6.5 no, 30 > 12
    with pytest.raises(ep.InputError, match="must share its structure"):
        ep.evaluate(ep.tensor("A", 2, "dense")[i, j] > ep.tensor("B", 2, "csr")[i, j],
                    A=D, B=S)
