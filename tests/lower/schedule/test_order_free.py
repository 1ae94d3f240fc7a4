"""order_free (lower/schedule/order_free.py): a walk body whose effect on what
outlives one entry's step is ⊕-accumulations, its coordinate used only to say
where or whether, is free of its segment's order (proofs_notes/validation.md,
"Order-free form"); names the body declares live for one step alone."""
import numpy as np
import scipy.sparse as sp

import etchpy as ep
from etchpy.imp import Accum, Assign, Bin, Const, Decl, Load, Ring, Var, While, incr, lt, seq
from etchpy.lower.schedule.order_free import order_free

CRD = Load("A_crd1", Var("q"))
ADD = Accum("blk", Var("k"), Ring("mul", Load("A_vals", Var("q")), Load("X_vals", CRD)))


def _inner_loop(step: int):
    """An inner loop over k, its counter declared in the body, set and stepped."""
    return seq(Decl("k", "index", Const(0)), Assign("k", Const(0)),
               While(lt(Var("k"), Var("dim_k")), seq(ADD, Assign("k", Bin(
                   "+", Var("k"), Const(step, "index"))))))


def test_a_counter_the_body_declares_is_one_steps_own():
    """An inner loop's counter (a prefetch loop's stride of 8 too) declared in the
    body changes nothing that outlives the step: the walk stays order-free."""
    assert order_free(_inner_loop(1), CRD)
    assert order_free(_inner_loop(8), CRD)


def test_a_name_from_outside_the_body_is_not_a_local():
    """The same assignments to a name the body did not declare carry state from
    one entry to the next: not order-free."""
    body = seq(Assign("k", Const(0)),
               While(lt(Var("k"), Var("dim_k")), seq(ADD, incr("k"))))
    assert not order_free(body, CRD)


def test_a_local_holding_the_coordinate_as_a_value_is_refused():
    """A local assigned the coordinate (or declared from it and reassigned) and
    added as a value: not order-free."""
    added = Accum("out", Const(0), Var("t"))
    assert not order_free(seq(Decl("t", "index", Const(0)), Assign("t", CRD), added), CRD)
    assert not order_free(seq(Decl("t", "index", CRD), Assign("t", Var("t")), added), CRD)


def test_spmm_answers_unsorted_and_repeated_rows_as_scipy_sums_them():
    """SpMM's checked build (its rows' prefetch loop and register block's inner
    loop declared in its walk body) tests no order: a scipy input with an
    unsorted row and a repeated coordinate gives scipy's product, and an index
    out of range is still refused."""
    kern = ep.compile("Y[i, k] = A[i, j] * X[j, k]", formats={"A": "csr"})
    assert "_prev" not in kern.source("int32_t").c
    A = sp.csr_matrix((np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([3, 0, 3, 1, 2]),
                       np.array([0, 3, 3, 5])), shape=(3, 4))
    X = np.arange(8.0).reshape(4, 2)
    for cols in (X[:, :1].copy(), X):
        np.testing.assert_allclose(kern(A=A, X=cols), A.toarray() @ cols)
    A.indices[4] = 4
    try:
        kern(A=A, X=X)
    except ep.InputError as e:
        assert "A" in str(e)
    else:
        raise AssertionError("an index out of range was not refused")
