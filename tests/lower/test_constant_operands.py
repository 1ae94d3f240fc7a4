"""An iso operand (ep.tensor(..., iso=True): every stored value the semiring's one)
is lowered without its value array: `a·1 = a` folded in a product, a Σ of a
value that no state of a counted loop changes taken once, n-fold
(Tuning.constant_sums, lower.schedule.constant_sums; proofs_notes/constant_sums.md).
Backends agree with such operands in every semiring (min-plus's one is 0,
max_min's +inf), with the pass on and off."""
import numpy as np
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.expr.walk import accesses
from etchpy.plan import cost
from etchpy.testing import check_backends, formats_for, semirings_st, sparse_arrays

i, j = ep.indices("i j")
OFF = ep.Tuning().with_(constant_sums=False)


def _forms(A, B, U, V):
    """Expressions with an iso operand U (order 1) or V (order 2) in each place."""
    return [ep.sum(i, U[i]), ep.sum(i, A[i] * U[i]), ep.sum(j, B[i, j] * U[j]),
            ep.sum(j, A[i] * U[j]), ep.sum((i, j), V[i, j] * A[i]),
            ep.sum(j, V[i, j]) + A[i], U[i] * A[i] + A[i], ep.sum(j, V[i, j] * U[j])]


def _iso(pattern: np.ndarray, fmt, sr) -> ep.Tensor:
    """The Tensor of `fmt` storing what `pattern` stores (a dense level every
    entry), each value the semiring's one (Tensor.pattern)."""
    return ep.Tensor.from_dense(pattern.astype(sr.dtype), fmt, semiring=sr).pattern(sr.one)


@settings(max_examples=12, deadline=None)
@given(semirings_st(), st.data())
def test_backends_agree_with_iso_operands(sr, data):
    n = data.draw(st.integers(1, 5))
    A, B = ep.tensor("A", 1), ep.tensor("B", 2)
    fu, fv = data.draw(formats_for(1)), data.draw(formats_for(2))
    U, V = ep.tensor("U", 1, fu, iso=True), ep.tensor("V", 2, fv, iso=True)
    dense = data.draw(st.booleans())       # a dense pattern: an all-ones operand
    pu = np.full(n, sr.one) if dense else data.draw(sparse_arrays((n,), sr))
    inputs = {"A": data.draw(sparse_arrays((n,), sr)), "B": data.draw(sparse_arrays((n, n), sr)),
              "U": _iso(pu, fu, sr), "V": _iso(data.draw(sparse_arrays((n, n), sr)), fv, sr)}
    e = data.draw(st.sampled_from(_forms(A, B, U, V)))
    names = {a.tensor.name for a in accesses(e)}
    tuning = data.draw(st.sampled_from([None, OFF]))
    check_backends(e, {k: v for k, v in inputs.items() if k in names}, semiring=sr,
                   backends=("streams", "imp"), tuning=tuning)


def _c(expr, **kw) -> str:
    return ep.compile(expr, **kw).c_source


def test_the_c_of_a_product_by_ones_loads_no_value_of_it():
    A, O = ep.tensor("A", 1), ep.tensor("O", 1, iso=True)
    P = ep.tensor("P", 2, "csr", iso=True)
    for e in (ep.sum(i, A[i] * O[i]), ep.sum(i, O[i]), ep.sum(j, P[i, j] * A[j])):
        for sr in ("real", "min_plus"):
            src = _c(e, semiring=sr)
            body = src[src.index("int etchpy_kernel("):]
            assert "O_vals[" not in body and "P_vals[" not in body, (e, sr)
    k = ep.compile(ep.sum(i, A[i] * O[i]), tuning=ep.Tuning().with_(blas=False))
    assert k(A=np.arange(5.0), O=np.ones(5)) == 10.0
    body = k.c_source[k.c_source.index("int etchpy_kernel("):]
    assert "O_vals[" not in body and "acc + A_vals[i_c]" in body.replace("(", "")


def test_a_sum_of_a_constant_is_taken_once_and_off_keeps_the_loop():
    O = ep.tensor("O", 1, iso=True)
    A = ep.tensor("A", 1)
    on, off = _c(ep.sum(i, O[i])), _c(ep.sum(i, O[i]), tuning=OFF)
    assert "(double)((dim_i - i_c))" in on and "while (i_c < dim_i)" not in on
    assert "while (i_c < dim_i)" in off
    for sr, want in (("real", 5.0), ("min_plus", 0.0), ("max_plus", 0.0)):
        for t in (None, OFF):
            k = ep.compile(ep.sum(i, O[i]), semiring=sr, tuning=t)
            assert k(O=np.full(5, ep.semirings.get(sr).one)) == want
    e = ep.sum(j, A[i] * O[j])                     # A[i] ⊕-ed |j| times
    got = ep.compile(e, order=["i", "j"])(A=np.array([1.0, 2.0]), O=np.ones(3))
    assert list(np.asarray(got)) == [3.0, 6.0]


def test_an_iso_hash_operand_is_checked_at_its_stored_slots():
    H = ep.tensor("H", 1, "hash", iso=True)    # empty slots hold the zero, not checked
    k = ep.compile(ep.sum(i, H[i]))
    assert k(H=np.ones(3)) == 3.0 and k(H=np.array([1.0, 0.0, 1.0])) == 2.0


def test_the_planner_prices_a_product_by_ones_lower():
    A, B, O = ep.tensor("A", 1), ep.tensor("B", 1), ep.tensor("O", 1, iso=True)
    assert cost.operations(A[i] * O[i]) < cost.operations(A[i] * B[i])
    assert cost.operations(A[i] * O[i] + B[i]) == 1
