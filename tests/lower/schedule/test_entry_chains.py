"""Entry chains (lower/schedule/entry_chains.py; Tuning.entry_chains,
entry_chain_count): the walk of every entry of a coo input whose only work is one
float or complex sum adds into entry_chain_count accumulators, the one-position
loops of the levels below it removed first (`unit`); it answers as numpy for
totals, sums of products with dense operands and scalars of every carrier, from
scipy coo inputs of two and three axes with every remainder of the chains, with
index names the C uses; min-plus totals are chained too (exactly: min is
associative), integer sums and the switch off keep one accumulator; a coordinate out of range is refused (proofs_notes/walk_chains.md,
"Entry chains")."""
import re

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp
from etchpy.imp import Assign, Bin, Decl, Load, Ring, Var, While, seq
from etchpy.lower.schedule import entry_chains

pytestmark = pytest.mark.usefixtures("shared_cache")


def _chains(kern) -> int:
    """The accumulators a kernel's C declares besides its first."""
    return len(re.findall(r"ep_val_t \w*_chain\w* = ", kern.c_source))


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 17, 64])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_a_coo_total_is_summed_in_chains_and_answers_as_numpy(n, dtype):
    rng = np.random.default_rng(n)
    shape = (5, 6, 7)
    flat = np.sort(rng.choice(np.prod(shape), n, replace=False))
    coords = np.array(np.unravel_index(flat, shape), dtype=np.int32)
    vals = (rng.random(n) + (1j * rng.random(n) if dtype == np.complex128 else 0)).astype(dtype)
    row, n_, pos = ep.indices("row n pos")
    T = ep.tensor("T", 3, format="coo")
    kern = ep.compile(ep.sum((row, n_, pos), T[row, n_, pos]),
                      semiring={np.float32: "real32", np.complex128: "complex"}.get(dtype))
    assert _chains(kern) == 7                       # eight accumulators, seven new
    S = sp.coo_array((vals, tuple(coords)), shape=shape)     # scipy's n-d coo
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(kern(T=S), vals.sum(), rtol=tol, atol=tol)
    np.testing.assert_allclose(ep.einsum("ijk->", S), vals.sum(), rtol=tol, atol=tol)


@pytest.mark.parametrize("count", [2, 3, 8])
def test_a_sum_of_products_read_at_the_coordinates(count):
    A = sp.random_array((40, 30), density=0.3, format="coo", random_state=count)
    x, y = np.random.default_rng(1).random((2, 40)), np.random.default_rng(2).random(30)
    got = ep.einsum("i,ij,j->", x[0], A, y, tuning=ep.Tuning(entry_chain_count=count))
    np.testing.assert_allclose(got, x[0] @ (A @ y), rtol=1e-12)
    np.testing.assert_allclose(ep.einsum("ij->", A), A.sum(), rtol=1e-12)


def test_one_accumulator_where_chains_do_not_apply():
    i, j = ep.indices("i j")
    T = ep.tensor("T", 2, format="coo")
    total = ep.sum((i, j), T[i, j])
    assert _chains(ep.compile(total)) == 7
    assert _chains(ep.compile(total, tuning=ep.Tuning(entry_chains=False))) == 0
    assert _chains(ep.compile(total, tuning=ep.Tuning(entry_chain_count=1))) == 0
    assert _chains(ep.compile(total, tuning="noopt")) == 0
    for semiring, chains, want in (("min_plus", 7, 1.0), ("integer", 0, 8)):   # min: exact
        kern = ep.compile(total, semiring=semiring)
        assert _chains(kern) == chains
        A = sp.coo_array(np.array([[1, 0, 3], [0, 4, 0]]))
        assert kern(T=A) == want


def test_a_coordinate_out_of_range_is_refused():
    A = sp.random_array((20, 20), density=0.3, format="coo", random_state=3)
    np.testing.assert_allclose(ep.einsum("ij->", A), A.sum())
    A.coords[1][-1] = 20                                # written in place after the call
    with pytest.raises(ep.InputError, match="T0"):
        ep.einsum("ij->", A)


def test_unit_removes_a_one_position_loop_and_keeps_others():
    q, c, e, acc = "q", "c", "e", "acc"
    body = seq(Assign(acc, Ring("add", Var(acc), Load("vals", Var(c)))),
               Assign(c, imp.add(Var(c), imp.ONE)))
    loop = seq(Decl(c, "index", imp.Const(0)), Decl(e, "index", imp.Const(0)),
               Assign(c, Var(q)), Assign(e, imp.add(Var(q), imp.ONE)),
               While(Bin("<", Var(c), Var(e)), body))
    gone: set = set()
    got = entry_chains.unit(loop, gone)
    assert gone == {c, e}
    assert Assign(acc, Ring("add", Var(acc), Load("vals", Var(q)))) in imp.statements(got)
    assert not any(isinstance(s, While) for s in imp.statements(got))
    # an end that is not q + 1, or a body that moves c, is a loop that stays
    for other in (seq(Assign(c, Var(q)), Assign(e, imp.add(Var(q), imp.Const(2))),
                      While(Bin("<", Var(c), Var(e)), body)),
                  seq(Assign(c, Var(q)), Assign(e, imp.add(Var(q), imp.ONE)),
                      While(Bin("<", Var(c), Var(e)),
                            seq(Assign(c, imp.add(Var(c), imp.ONE)), body)))):
        assert any(isinstance(s, While) for s in imp.statements(entry_chains.unit(other, set())))
