"""Capacities: a sparse output's first capacity is a bound read from the inputs,
capped by tuning.first_capacity_limit, and arrays that outgrow it still grow."""
import numpy as np
import pytest

import etchpy as ep
from etchpy import lower
from etchpy.testing import assert_same
from etchpy.tuning import DEFAULT
from tuned import hinted_c, on_interpreter, random_csr, tuned_kernel

i, j, k, r = ep.indices("i j k r")
A_csr = ep.tensor("A", 2, format="csr")

pytestmark = pytest.mark.usefixtures("shared_cache")


def test_union_output_is_allocated_once_from_the_input_sizes():
    """A sparse output's first capacity is a bound read from the inputs: the sum of
    the stored entries for A+B, the smaller for A∘B, a broadcast factor adds no
    bound of its own, and a contraction with a missing output axis has none. A
    dense tail multiplies the bound of the levels above it (TTM's fibers)."""
    B = ep.tensor("B", 2, format="csr")
    x = ep.tensor("x", 1)
    D = ep.tensor("D", 2, format="dcsr")

    def caps(src):
        return {ln.split("_cap = ")[0].strip(): ln.split("_cap = ")[1]
                for ln in src.split("\n") if "_cap = ep_" in ln}
    lim = DEFAULT.first_capacity_limit
    plus = hinted_c(A_csr[i, j] + B[i, j], output="csr")
    sum_ = f"ep_max(ep_min(ep_max((A_pos1[A_dim0] + B_pos1[B_dim0]), 1024), {lim}), 1);"
    assert caps(plus)["out_crd1"] == caps(plus)["out_vals"] == sum_
    assert "k_ < out_vals_cap" not in plus and "k_ < out_crd1_cap" not in plus  # no fill
    times = hinted_c(A_csr[i, j] * B[i, j], output="csr")
    assert "ep_min(A_pos1[A_dim0], B_pos1[B_dim0])" in caps(times)["out_crd1"]
    scaled = hinted_c(A_csr[i, j] * x[j], output="csr")
    assert caps(scaled)["out_crd1"] == f"ep_max(ep_min(ep_max(A_pos1[A_dim0], 1024), {lim}), 1);"
    gus = hinted_c(ep.sum(j, A_csr[i, j] * B[j, k]), output="csr")
    assert caps(gus)["out_crd1"] == f"ep_max(ep_min(ep_max(join_size, 1024), {lim}), 1);"
    Bd = ep.tensor("B", 2, format="dcsr")     # rows not located by j: no join size
    gus_d = hinted_c(ep.sum(j, A_csr[i, j] * Bd[j, k]), output="csr")
    assert caps(gus_d)["out_crd1"] == "ep_max(1024, 1);"
    T = ep.tensor("T", 3, "csf")
    fibers = ep.Format([ep.Compressed(), ep.Compressed(), ep.Dense()])
    ttm = hinted_c(ep.sum(k, T[i, j, k] * B[k, r]), output=fibers)
    assert caps(ttm)["out_vals"] == \
        f"ep_max((ep_min(ep_max(T_pos2[T_pos1[T_pos0[1]]], 1024), {lim}) * dim_r), 1);"
    tvs = {"D": D}
    assert lower.entries_bound(D[i, j], ("i", "j"), tvs) == \
        ep.imp.Load("D_pos1", ep.imp.Load("D_pos0", ep.imp.ONE))
    assert lower.entries_bound(x[j], ("i", "j"), {"x": x}) is None
    assert lower.entries_bound(x[j], ("j",), {"x": x}) == ep.imp.Var("x_dim0")
    M, N = random_csr(500, 400, 6000, 1), random_csr(500, 400, 300, 2)
    np.testing.assert_allclose(ep.evaluate(A_csr[i, j] + B[i, j], output="csr", A=M,
                                           B=N).toarray(), (M + N).toarray())
    np.testing.assert_allclose(ep.evaluate(A_csr[i, j] * B[i, j], output="csr", A=M,
                                           B=N).toarray(), M.multiply(N).toarray())


def test_the_bounds_read_a_kernel_no_call_has_replanned():
    """ep.compile hands one kernel per arguments to the whole process, and after a
    call its c_source shows that call's size-class plan: csc inputs (an adopted
    layout, runtime.adopt) leave no input bound in it. The tests above read a fresh
    kernel's C (tuned.hinted_c), which no earlier test's calls change (run after
    tests/runtime/test_user_forms.py's csc calls of A + B into csr, reading
    ep.compile(...).c_source failed). The name keeps this kernel from other tests."""
    B = ep.tensor("B", 2, format="csr")
    bound = "(A_pos1[A_dim0] + B_pos1[B_dim0])"
    shared = ep.compile(A_csr[i, j] + B[i, j], output="csr", name="replanned_probe")
    assert bound in shared.c_source
    M, N = random_csr(30, 30, 135, 1), random_csr(30, 30, 135, 2)
    np.testing.assert_allclose(shared(A=M.tocsc(), B=N.tocsc()).toarray(), (M + N).toarray())
    assert bound not in shared.c_source          # the csc call's plan, shown to every holder
    again = ep.compile(A_csr[i, j] + B[i, j], output="csr", name="replanned_probe")
    assert again is shared and bound not in again.c_source
    assert bound in hinted_c(A_csr[i, j] + B[i, j], output="csr", name="replanned_probe")


@pytest.mark.parametrize("fa, fb", [("csr", "csr"), ("dcsr", "csr"), ("csr", "dense")])
def test_gustavson_first_capacity_is_the_join_size(fa, fb):
    """Σ_j A[i,j]·B[j,k] into csr starts at |A ⋈ B| entries: Σ over A's entries of
    the entries in B's row j, counted in one pass at entry. It bounds the result
    (every output entry is the projection of a joined pair), and for random rows
    with few collisions it is close, so the arrays do not grow by copies."""
    Af, Bf = ep.tensor("A", 2, format=fa), ep.tensor("B", 2, format=fb)
    expr = ep.sum(j, Af[i, j] * Bf[j, k])
    M, N = random_csr(60, 50, 400, 5), random_csr(50, 70, 300, 6)
    final, _, _ = on_interpreter(expr, ep.semirings.get("real"), ep.Format.named("csr", 2),
                                  {"A": M, "B": N})
    rows_of_b = np.diff(N.indptr) if fb == "csr" else np.full(50, 70)
    assert int(final["join_size"]) == int(rows_of_b[M.indices].sum())
    assert int(final["out_count1"]) <= int(final["join_size"])
    got = ep.compile(expr, output="csr")(A=M, B=N)
    np.testing.assert_allclose(got.toarray(), (M @ N).toarray(), rtol=1e-12)


def test_outputs_past_the_first_capacity_limit_still_grow():
    """A bound above tuning.first_capacity_limit is not trusted: the arrays start at the
    limit and appends grow them."""
    B = ep.tensor("B", 2, format="csr")
    kern = tuned_kernel(A_csr[i, j] + B[i, j], DEFAULT.with_(first_capacity_limit=16),
                        output="csr")
    assert ", 16), 1);" in kern.c_source
    M, N = random_csr(400, 300, 5000, 3), random_csr(400, 300, 5000, 4)
    got = kern(A=M, B=N)
    np.testing.assert_allclose(got.toarray(), (M + N).toarray())
    assert got.nnz > 16 * 100
    # a dense tail (TTM's fibers), zero_on_append off: vals starts zeroed (calloc,
    # no fill loop), and each growth zeroes the grown part, so every appended block
    # starts at zero; on: vals from ep_malloc, grown unfilled, each block zeroed as
    # appended (tests/lower/targets/test_zero_on_append.py)
    T, W = ep.tensor("T", 3, "csf"), ep.tensor("W", 2)
    fibers = ep.Format([ep.Compressed(), ep.Compressed(), ep.Dense()])
    e = ep.sum(k, T[i, j, k] * W[k, r])
    off = DEFAULT.with_(zero_on_append=False, first_capacity_limit=16)
    src = hinted_c(e, off, output=fibers)
    assert "out_vals = (ep_val_t *)ep_calloc(" in src
    assert "for (int64_t k_ = out_vals_cap; k_ < cap_; k_++) grown_[k_] = 0.0;" in src
    src = hinted_c(e, off.with_(zero_on_append=True), output=fibers)
    assert "out_vals = (ep_val_t *)ep_malloc(" in src and "grown_[k_] = 0.0;" not in src
    rng = np.random.default_rng(5)
    dense = np.where(rng.random((30, 20, 10)) < 0.2, rng.random((30, 20, 10)), 0.0)
    Wv = rng.random((10, 3))
    for semiring in ("real", "min_plus"):
        want = ep.evaluate(e, semiring=semiring, backend="reference", T=dense, W=Wv)
        for tuning in (off, off.with_(zero_on_append=True)):
            got = ep.evaluate(e, semiring=semiring, output=fibers, T=dense, W=Wv,
                              tuning=tuning)
            assert_same(got.to_dense(), want, ep.semirings.get(semiring), what=semiring)


def test_outputs_past_4_mib_grow_into_fresh_advised_blocks():
    """A csr output of ~800k entries (6 MB of values): its arrays cross 4 MiB while
    growing, so ep_grow moves them into new blocks (huge pages asked for first)."""
    M = random_csr(40000, 40000, 400000, 8)
    N = random_csr(40000, 40000, 400000, 9)
    B = ep.tensor("B", 2, format="csr")
    kern = ep.compile(A_csr[i, j] + B[i, j], output="csr")
    assert "ep_grow(" in kern.c_source and "MADV_HUGEPAGE" in kern.c_source
    got = kern(A=M, B=N)
    want = (M + N).tocsr()
    want.sort_indices()
    assert got.nnz == want.nnz > 600000
    np.testing.assert_array_equal(got.indptr, want.indptr)
    np.testing.assert_array_equal(got.indices, want.indices)
    np.testing.assert_allclose(got.data, want.data, rtol=1e-12)
