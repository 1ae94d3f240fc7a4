"""The expression layer: construction, free indices, type errors, printing."""
import pytest

import etchpy as ep
from etchpy.expr.nodes import Add, IdentityVar, Lit, Mul, Sum, free_indices
from etchpy.expr.walk import accesses, map_operands, sum_chain

i, j, k, l = ep.indices("i j k l")
A = ep.tensor("A", 2, format="csr")
B = ep.tensor("B", 2)
x = ep.tensor("x", 1)


def test_spmv_free_indices_and_text():
    e = ep.sum(j, A[i, j] * x[j])
    assert e.free == (i,)
    assert str(e) == "Σ_j A[i,j]·x[j]"


def test_nodes_are_hashable_and_structural():
    e1 = ep.sum(j, A[i, j] * x[j])
    e2 = ep.sum(j, A[i, j] * x[j])
    assert e1 == e2 and hash(e1) == hash(e2)
    assert len({e1, e2}) == 1
    with pytest.raises(Exception):
        e1.body = None


def test_a_kept_hash_is_never_stored_and_equals_a_fresh_one():
    """Nodes keep their hash once worked out (expr.nodes._kept); pickling and the
    manifests' jsondata store the fields only, so another process (another string
    hash seed) works it out again."""
    import pickle
    from etchpy.runtime import jsondata
    e = ep.sum(j, A[i, j] * x[j]) + 2 * ep.map("exp", B[i, k] * x[k])
    h = hash(e)
    assert "_hash" in e.__dict__ and hash(e) == h
    for back in (pickle.loads(pickle.dumps(e)), jsondata.loads(jsondata.dumps(e))):
        assert "_hash" not in back.__dict__ and back == e and hash(back) == h
    assert "_hash" not in jsondata.dumps(e)


def test_free_indices_first_appearance_order():
    assert (A[i, j] * B[j, k]).free == (i, j, k)
    assert (B[k, j] + A[i, j]).free == (k, j, i)
    assert ep.sum((i, k), A[i, j] * B[j, k]).free == (j,)


def test_sum_over_tuple_nests_sums():
    e = ep.sum((j, k), A[i, j] * B[j, k])
    assert isinstance(e, Sum) and e.index == j and isinstance(e.body, Sum)


def test_sum_over_index_that_is_not_free_names_it():
    with pytest.raises(ep.ExpressionTypeError, match="index k"):
        ep.sum(k, A[i, j])
    with pytest.raises(ep.ExpressionTypeError, match="index j"):
        ep.sum(j, ep.sum(j, A[i, j]))


def test_wrong_number_of_indices_names_tensor():
    with pytest.raises(ep.ExpressionTypeError, match="A has order 2"):
        A[i]
    with pytest.raises(ep.ExpressionTypeError, match="x has order 1"):
        x[i, j]


def test_diagonal_access_is_a_sum_with_an_identity():
    """B[i, i] is Σ_i' B[i, i']·δ[i, i'] with δ an implicit identity (IdentityVar)."""
    d = B[i, i]
    assert d.free == (i,)
    assert isinstance(d, Sum) and isinstance(d.body, Mul)
    acc, delta = d.body.a, d.body.b
    assert acc.tensor == B and acc.indices == (i, d.index)
    assert isinstance(delta.tensor, IdentityVar) and delta.indices == (i, d.index)
    assert delta.tensor.source == B.name and delta.tensor.modes == (0, 1)
    with pytest.raises(ep.ExpressionTypeError, match="reserved"):
        ep.tensor(delta.tensor.name, 2)


def test_non_index_subscript_rejected():
    with pytest.raises(ep.ExpressionTypeError):
        A[i, 0]


def test_literals_sub_neg_pow():
    e = 2 * A[i, j] - B[i, j]
    assert isinstance(e, Add) and isinstance(e.b, Mul) and e.b.a == Lit(-1, negation=True)
    assert (A[i, j] ** 3) == Mul(Mul(A[i, j], A[i, j]), A[i, j])
    assert (-x[i]).free == (i,)
    with pytest.raises(ep.ExpressionTypeError):
        A[i, j] ** 0
    with pytest.raises(ep.ExpressionTypeError):
        A[i, j] ** 1.5
    with pytest.raises(ep.ExpressionTypeError, match="operand only"):   # a parameter's
        ep.sum(j, A[i, j] * "two")             # name scales a comparison's operand only
    with pytest.raises(ep.ExpressionTypeError):
        x[j] * (A[i, j] * "two")
    with pytest.raises(ep.ExpressionTypeError, match="numbers and parameter names"):
        A[i, j] * "two" * x[j]


def test_format_checked_against_order():
    with pytest.raises(ep.FormatError):
        ep.tensor("M", 3, format="csr")
    with pytest.raises(ep.FormatError):
        ep.tensor("M", 2, format="banana")
    f = ep.Format(["dense", "compressed"], (1, 0))
    assert ep.tensor("M", 2, format=f).format == ep.tensor("N", 2, format="csc").format


def test_accesses_and_printing_parenthesises():
    e = (A[i, j] + B[i, j]) * x[j]
    assert [a.tensor.name for a in accesses(e)] == ["A", "B", "x"]
    assert str(e) == "(A[i,j] + B[i,j])·x[j]"
    assert str(ep.sum(j, A[i, j]) * x[i]) == "(Σ_j A[i,j])·x[i]"


def test_free_indices_respect_shadowing():
    # the bound i inside the sum is not the free i of x
    e = ep.sum(i, A[i, j]) * x[i]
    assert set(free_indices(e)) == {i, j}


def test_map_operands_rebuilds_each_kind_left_to_right():
    i, j = ep.indices("i j")
    A, x = ep.tensor("A", 2), ep.tensor("x", 1)
    e = ep.sum(j, ep.map("exp", A[i, j]) * x[j] + A[i, j])
    seen = []

    def mark(s):
        seen.append(s)
        return s

    assert map_operands(e, mark) == e and seen == [e.body]
    product = e.body.a
    assert map_operands(product, mark) == product and seen[1:] == [product.a, product.b]
    assert map_operands(A[i, j], mark) == A[i, j] and len(seen) == 3
    assert map_operands(Lit(2), mark) == Lit(2)


def test_sum_chain_reads_nested_sums_outermost_first():
    i, j, k = ep.indices("i j k")
    A = ep.tensor("A", 3)
    body = A[i, j, k]
    assert sum_chain(ep.sum(j, ep.sum(k, body))) == ((j, k), body)
    assert sum_chain(body) == ((), body)
