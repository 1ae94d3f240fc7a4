"""Streams built from an expression: a reused access probed via a marker, and
the counters of loops over segments hidden from the vectoriser."""
import re

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from tuned import random_csr

i, j = ep.indices("i j")
A_csr = ep.tensor("A", 2, format="csr")
x_vec = ep.tensor("x", 1)
SPMV = ep.sum(j, A_csr[i, j] * x_vec[j])

pytestmark = pytest.mark.usefixtures("shared_cache")


def test_triangle_count_probes_a_marker():
    """U[a,c] is reused across the b loop: scattered once per a, then probed."""
    a, b, c = ep.indices("a b c")
    U = ep.tensor("U", 2, format="csr")
    kern = ep.compile(ep.sum((a, b, c), U[a, b] * U[b, c] * U[a, c]))
    assert "probed via a marker" in kern.explain()
    assert re.search(r"_mark(_\d+)?\[", kern.c_source)
    rng = np.random.default_rng(5)
    n = 300
    r_, s_ = rng.integers(0, n, 3000), rng.integers(0, n, 3000)
    keep = r_ != s_
    G = sp.coo_array((np.ones(keep.sum()), (np.minimum(r_, s_)[keep], np.maximum(r_, s_)[keep])),
                     shape=(n, n)).tocsr()
    G.data[:] = 1.0
    want = float(((G @ G).multiply(G)).sum())
    assert kern(U=G) == want
    # the same count on the stream interpreter, which never uses markers
    assert ep.evaluate(ep.sum((a, b, c), U[a, b] * U[b, c] * U[a, c]), backend="streams",
                       U=G[:40, :40]) == float(((G[:40, :40] @ G[:40, :40]).multiply(
                           G[:40, :40])).sum())


def test_loops_over_segments_hide_their_counter_from_the_vectoriser():
    """The loop over a csr row (SpMV's gather x[crd[q]]) and a marker's fill loop
    (its scatter mark[crd[q]]) start with EP_OPAQUE of their counter, which C
    defines as an empty asm on GCC and clang; a dense range loop does not. The
    Imp statement is a no-op on the interpreter, so every property test runs
    with it."""
    src = ep.compile(SPMV).c_source
    assert "#define EP_OPAQUE(v) __asm__(\"\" : \"+r\"(v))" in src
    assert "EP_OPAQUE(j_q);" in src and "EP_OPAQUE(i_c);" not in src
    U = ep.tensor("U", 2, format="csr")
    a, b, c = ep.indices("a b c")
    tri = ep.compile(ep.sum((a, b, c), U[a, b] * U[b, c] * U[a, c]), semiring="integer")
    assert re.search(r"EP_OPAQUE\(c_fill\w*\);", tri.c_source)
    M = random_csr(50, 50, 400, 11)
    Mu = sp.csr_array(sp.triu(M, 1))
    Mu.data[:] = 1
    Mu = Mu.astype(np.int64)
    want = int(((Mu @ Mu).multiply(Mu)).sum())
    assert int(tri(U=Mu)) == want


def test_a_loop_over_one_position_keeps_its_counter_visible():
    """A singleton level's loop runs from p to p + 1: its counter is not hidden
    (C folds the loop away), while the compressed level above it still hides
    its own; Tuning(unhide_one_entry=False) hides both. The same answer."""
    T = ep.table({"o": np.array([1, 1, 2, 3]), "l": np.array([1, 2, 1, 1]),
                  "p": np.array([5, 6, 5, 7]), "v": np.array([1.0, 2.0, 3.0, 4.0])},
                 ["o", "l"], keys=["p"], values=["v"], name="T")
    o, ln, p = ep.indices("o l p")
    e = ep.sum((ln, p), T.var("v")[o, ln, p])
    seen = ep.compile(e)
    hidden = ep.compile(e, tuning=ep.Tuning(unhide_one_entry=False))
    # (as sets: a size test switched once, lower/schedule/size_switch.py, copies the loops)
    assert set(re.findall(r"EP_OPAQUE\((\w+)\);", seen.c_source)) == {"l_q"}
    assert set(re.findall(r"EP_OPAQUE\((\w+)\);", hidden.c_source)) == {"l_q", "p_q"}
    assert seen(T=T.tensor("v")).tolist() == hidden(T=T.tensor("v")).tolist() == [3.0, 3.0, 4.0]
