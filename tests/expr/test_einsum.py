"""The einsum front end: specs and operands, compared with hand-built expressions."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.expr.einsum import einsum_expr
from etchpy.expr.nodes import Access, Mul
from etchpy.expr.parse import FrontendError

i, j, k, r = ep.indices("i j k r")


def caret_column(msg: str) -> int:
    """0-based column of the caret in an error message."""
    last = msg.splitlines()[-1]
    assert last.strip() == "^", msg
    return last.index("^") - 2


def T(n, order, fmt="dense"):
    return ep.tensor(f"T{n}", order, fmt)


def test_einsum_spmv():
    A, x = sp.random(3, 4, density=0.5, format="csr", random_state=0), np.ones(4)
    expr, out, ops = einsum_expr("ij,j->i", [A, x])
    assert expr == ep.sum(j, T(0, 2, "csr")[i, j] * T(1, 1)[j])
    assert out == (i,)
    assert list(ops) == ["T0", "T1"] and ops["T0"] is A and ops["T1"] is x


def test_einsum_matmul_formats():
    A = sp.random(3, 4, density=0.5, format="csc", random_state=0)
    B = sp.random(4, 2, density=0.5, format="coo", random_state=0)
    expr, out, ops = einsum_expr("ij,jk->ik", [A, B])
    assert expr == ep.sum(j, T(0, 2, "csc")[i, j] * T(1, 2, "coo")[j, k])
    assert out == (i, k)
    # scipy's bsr is read as it lies (tiles); its other layouts as csr (made so each
    # call); array-likes dense
    for other in (sp.lil_matrix((2, 2)), sp.dia_array((2, 2)), sp.bsr_array((2, 2))):
        expr, _, _ = einsum_expr("ij", [other])
        want = "bsr" if other.format == "bsr" else "csr"
        assert expr.tensor.format == ep.Format.named(want, 2)
    expr, _, _ = einsum_expr("ij", [[[1.0, 2.0], [3.0, 4.0]]])
    assert expr.tensor.format == ep.Format.named("dense", 2)
    expr, _, _ = einsum_expr("ij", [sp.csr_array((2, 2))])
    assert expr.tensor.format == ep.Format.named("csr", 2)


def test_einsum_mttkrp_and_order():
    expr, out, _ = einsum_expr("ijk,jr,kr->ir", [np.ones((2, 3, 4)), np.ones((3, 5)),
                                                 np.ones((4, 5))])
    B, C, D = T(0, 3), T(1, 2), T(2, 2)
    assert expr == ep.sum((j, k), B[i, j, k] * C[j, r] * D[k, r])
    assert out == (i, r)


def test_einsum_scalar_output_and_no_sum():
    expr, out, _ = einsum_expr("ij,ij->", [np.ones((2, 2)), np.ones((2, 2))])
    assert expr == ep.sum((i, j), T(0, 2)[i, j] * T(1, 2)[i, j])
    assert out == ()
    expr, out, _ = einsum_expr("ij->ji", [np.ones((2, 3))])
    assert expr == T(0, 2)[i, j] and out == (j, i)
    expr, out, _ = einsum_expr(",->", [2.0, 3])
    a, b = ep.tensor("T0", 0), ep.tensor("T1", 0)
    assert expr == Mul(Access(a, ()), Access(b, ())) and out == ()


def test_einsum_implicit_output():
    ops = [np.ones((2, 3)), np.ones((3, 4))]
    expr, out, _ = einsum_expr("ij,jk", ops)
    assert out == (i, k) and expr == ep.sum(j, T(0, 2)[i, j] * T(1, 2)[j, k])
    _, out, _ = einsum_expr("ba", [np.ones((2, 2))])
    assert out == ep.indices("a b")
    _, out, _ = einsum_expr("ij,ij", ops[:1] * 2)
    assert out == ()
    # numpy's rule sorts by character code: upper case first
    _, out, _ = einsum_expr("bA", [np.ones((2, 2))])
    assert [ix.name for ix in out] == ["A", "b"]
    assert np.einsum("bA", np.arange(4).reshape(2, 2)).tolist() == [[0, 2], [1, 3]]


def test_einsum_whitespace():
    a = einsum_expr("ij,j->i", [np.ones((2, 2)), np.ones(2)])
    b = einsum_expr(" i j , j -> i ", [np.ones((2, 2)), np.ones(2)])
    assert a[:2] == b[:2]


def check_einsum_error(spec, operands, col, fragment):
    with pytest.raises(FrontendError) as info:
        einsum_expr(spec, operands)
    msg = str(info.value)
    assert fragment in msg, msg
    if col is not None:
        assert f"column {col + 1}" in msg.splitlines()[0], msg
        assert caret_column(msg) == col, msg


@pytest.mark.parametrize("spec, ops, col, fragment", [
    ("i.j->i", [np.ones((2, 2))], 1, "not part of an ellipsis"),
    ("i..j->i", [np.ones((2, 2))], 1, "not part of an ellipsis"),
    ("...i...->i", [np.ones((2, 2))], 4, "at most one ellipsis"),
    ("...ij->j", [np.ones((2, 2, 3))], 5, "no '...' to keep them"),
    ("i...j", [np.ones(2)], 0, "operand 0 has 1 dimensions but the spec gives it 2 "
                               "indices and '...'"),
    ("ij,j->i", [np.ones((2, 2))], None, "2 operands but 1 was given"),
    ("ij->i", [np.ones((2, 2))] * 2, None, "1 operand but 2 were given"),
    ("i1,j->i", [np.ones((2, 2)), np.ones(2)], 1, "unknown character '1'"),
    ("ij,é->i", [np.ones((2, 2)), np.ones(2)], 3, "unknown character 'é'"),
    ("i_->i", [np.ones((2, 2))], 1, "unknown character '_'"),
    ("ij,j->k", [np.ones((2, 2)), np.ones(2)], 6, "output index k"),
    ("ij,j->ii", [np.ones((2, 2)), np.ones(2)], 7, "output index i appears twice"),
    ("ij->i->j", [np.ones((2, 2))], 5, "at most one '->'"),
    ("ijk,j->i", [np.ones((2, 2)), np.ones(2)], 0, "operand 0 has 2 dimensions"),
    ("ij,->i", [np.ones((2, 2)), np.ones(2)], 3, "operand 1 has 1 dimensions"),
])
def test_einsum_errors(spec, ops, col, fragment):
    check_einsum_error(spec, ops, col, fragment)
