"""A value compared with a dense tensor read at some of its indices (`A[i, j] <
B[i]`, either side, any of the four operators): A's stored entries where A's
value passes against B's at the entry's coordinates (a correlated subquery's
per-group limit, TPC-H Q17), against numpy, on compressed and dense levels;
B is read as passed at each call; B stored sparse is refused."""
import numpy as np
import pytest

import etchpy as ep

OPS = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}
FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _cmp(a, op, b):
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


@pytest.mark.parametrize("levels", [["dense", "compressed"], ["compressed", "compressed"]])
@pytest.mark.parametrize("case", [("<", "left", "Bi"), ("<=", "right", "Bj"),
                                  (">", "right", "Bi"), (">=", "left", "Bj")])
def test_a_value_against_a_dense_vector_at_one_of_its_indices(levels, case):
    rng = np.random.default_rng(7)
    n = 40
    t = {"i": rng.integers(0, 6, n), "j": rng.integers(0, 5, n),
         "v": rng.integers(0, 9, n).astype(float)}
    keys = {"i": ep.Keys(np.arange(6), name="i"), "j": ep.Keys(np.arange(5), name="j")}
    A = ep.relation(t, ["i", "j"], values="v", levels=levels, coding=keys, name="A")
    dense = A.tensor.to_dense()
    stored = np.zeros_like(dense, dtype=bool)
    stored[tuple(A.tensor.to_coords()[0])] = True
    i, j = ep.indices("i j")
    Bi, Bj = ep.tensor("Bi", 1), ep.tensor("Bj", 1)
    op, side, name = case
    B, at, axis = (Bi, i, 1) if name == "Bi" else (Bj, j, 0)
    a = A.var()[i, j]
    test = _cmp(a, op, B[at]) if side == "left" else _cmp(B[at], FLIP[op], a)
    kern = ep.compile(ep.sum(j, test * a))
    for trial in range(2):                          # B as passed at each call
        b = rng.integers(0, 9, 6 if B is Bi else 5).astype(float)
        want = np.where(stored & OPS[op](dense, np.expand_dims(b, axis)), dense, 0.0)
        got = kern(A=A.tensor, **{B.name: b})
        np.testing.assert_array_equal(got, want.sum(axis=1), err_msg=f"{op} {side}")


def test_a_sparse_tensor_at_some_indices_is_refused():
    i, j = ep.indices("i j")
    with pytest.raises(ep.ExpressionTypeError, match="same indices"):
        ep.tensor("A", 2, "csr")[i, j] < ep.tensor("S", 1, "csf")[i]
