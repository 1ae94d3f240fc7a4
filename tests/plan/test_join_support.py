"""The cost model's join estimates (plan.cost): the support of a product of sparse
relations, estimated from nonzero counts and measured fibre statistics, is
near the true number of joined tuples; a loop over a dense level pays for every
position; a conversion pays for the dense levels it reads and writes; and a
chain join over a large, mostly empty key (TPC-H Q5's orders) is planned as one
fused loop nest reading every relation as declared."""
import numpy as np
import scipy.sparse as sp

import etchpy as ep
from etchpy.expr.nodes import Mul
from etchpy.plan.convert import positions
from etchpy.plan.cost import Stats, fanout, join_support, nest_cost, support

o, c, s, n = ep.indices("o c s n")
O, C, L, S = (ep.tensor(t, 2, format="csr") for t in "OCLS")


def _relation(rows, cols, keys, per_key, seed):
    """A csr relation whose entries sit on `keys` rows, `per_key` a row on average."""
    rng = np.random.default_rng(seed)
    r = np.repeat(keys, rng.poisson(per_key, len(keys)) + 1)
    m = sp.csr_array((np.ones(len(r)), (r, rng.integers(0, cols, len(r)))), shape=(rows, cols))
    m.sum_duplicates()
    return m


def _stats(mats: dict) -> Stats:
    """Sizes and fibre rows as runtime.signature.measure records them, for csr inputs."""
    dims, nnz, fibers = {}, {}, []
    for name, (m, (ri, ci)) in mats.items():
        dims[ri], dims[ci] = m.shape
        nnz[name] = m.nnz
        counts = np.diff(m.indptr)
        fibers.append((name, 1, m.shape[0], int(np.count_nonzero(counts)), int(counts.max()),
                       m.nnz / max(1, np.count_nonzero(counts))))
    return Stats(dims, nnz, fibers=fibers)


def _orders_and_lines(seed=0):
    """O[o,c]: a few of the orders; L[o,s]: lines of every order; both keyed by o
    over 4x more keys than orders (TPC-H's sparse order keys)."""
    rng = np.random.default_rng(seed)
    nkeys = 40_000
    orders = np.sort(rng.choice(nkeys, nkeys // 4, replace=False))
    O_ = _relation(nkeys, 500, rng.choice(orders, len(orders) // 6, replace=False), 0, seed)
    L_ = _relation(nkeys, 100, orders, 3, seed + 1)
    return O_, L_


def test_a_join_on_a_sparse_key_is_estimated_near_its_true_size():
    """Σ over (o,c,s) of O[o,c]·L[o,s]: the support is Σ_o |O[o,:]|·|L[o,:]|; the
    estimate from fibre counts is within 2x of it, where the sparsest factor's
    bound (nnz(O)·|s|) is tens of times too large."""
    O_, L_ = _orders_and_lines()
    stats = _stats({"O": (O_, ("o", "c")), "L": (L_, ("o", "s"))})
    actual = float(np.diff(O_.indptr) @ np.diff(L_.indptr))
    body = O[o, c] * L[o, s]
    est = support(body, frozenset("ocs"), stats)
    assert actual / 2 <= est <= 2 * actual
    assert O_.nnz * 100 > 10 * actual               # the old bound: nnz(O)·|s|


def test_a_filter_on_bound_indices_scales_by_its_density():
    """A factor whose indices are all bound (S[s,n] after o, c, s and n) filters:
    the join estimate is at most the estimate without it."""
    O_, L_ = _orders_and_lines(1)
    S_ = _relation(100, 25, np.arange(100), 0, 3)
    stats = _stats({"O": (O_, ("o", "c")), "L": (L_, ("o", "s")), "S": (S_, ("s", "n"))})
    space = frozenset("ocsn")
    with_s = join_support(O[o, c] * L[o, s] * S[s, n], space, stats)
    without = join_support(O[o, c] * L[o, s], space, stats)
    assert with_s <= without / 20                   # S keeps 1 nation in 25


def test_a_dense_level_loop_pays_for_every_position():
    """A loop over o walking csr O's row level steps through all |o| rows, however
    few hold entries: nest_cost counts them, and a product's step is its
    sparsest factor's mean fibre."""
    O_, L_ = _orders_and_lines(2)
    stats = _stats({"O": (O_, ("o", "c")), "L": (L_, ("o", "s"))})
    body = O[o, c] * L[o, s]
    assert fanout(body, frozenset(), "o", stats) == O_.shape[0]
    assert nest_cost(body, ("o", "c", "s"), stats) >= O_.shape[0]
    lines_per_order = L_.nnz / np.count_nonzero(np.diff(L_.indptr))
    assert np.isclose(fanout(body, frozenset("oc"), "s", stats), lines_per_order)
    assert isinstance(body, Mul)


def test_a_conversion_pays_for_the_row_pointers_it_reads_and_writes():
    """csr -> csc of a tall matrix with few entries reads |rows| row pointers and
    writes |cols| column pointers."""
    O_, _ = _orders_and_lines(3)
    stats = _stats({"O": (O_, ("o", "c"))})
    acc = O[o, c]
    assert positions(acc, O.format, stats) == O_.shape[0]
    assert positions(acc, ep.Format.named("csc", 2), stats) == O_.shape[1]


def test_a_chain_join_over_a_large_key_runs_fused_as_declared():
    """Q5's shape on synthetic relations: the plan made from the measured sizes is
    one loop nest, converts nothing, and agrees with scipy."""
    O_, L_ = _orders_and_lines(4)
    rng = np.random.default_rng(5)
    C_ = sp.csr_array((np.ones(500), (np.arange(500), rng.integers(0, 25, 500))), shape=(500, 25))
    S_ = sp.csr_array((np.ones(100), (np.arange(100), rng.integers(0, 25, 100))), shape=(100, 25))
    R_ = (np.arange(25) % 5 == 0).astype(float)
    R = ep.tensor("R", 1)
    kern = ep.compile(ep.sum((o, c, s), O[o, c] * C[c, n] * L[o, s] * S[s, n] * R[n]))
    got = kern(O=O_, C=C_, L=L_, S=S_, R=R_)
    want = np.asarray(((O_ @ C_).multiply(L_ @ S_)).sum(axis=0)).ravel() * R_
    np.testing.assert_allclose(got, want)
    assert len(kern.plan.steps) == 1 and not kern.plan.conversions
    assert kern.plan.steps[0].order[0] == "o"
