"""The compiled C backend: C == streams == reference, programs on the Imp
interpreter, outputs of every kind, the disk cache, and bad input."""
import os
import re
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy import api
from etchpy.runtime import inputs as binding
from etchpy import imp
from etchpy.lower import core as lower
from etchpy.plan import plan as planning
from etchpy.expr.nodes import free_indices, tensors
from etchpy.testing import assert_same, check_backends, formats_for, problems

i, j, k, l, r = ep.indices("i j k l r")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("ETCHPY_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


@settings(max_examples=40)
@given(problems())
def test_c_equals_streams_equals_reference(p):
    check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("streams", "c"))


@settings(max_examples=40)
@given(problems(max_indices=3), st.sampled_from(["csr", "csc", "dcsr", "coo", "csf"]),
       st.data())
def test_sparse_outputs_match_reference(p, fmt, data):
    out = free_indices(p.expr)
    if not out:
        return
    if len(out) != 2 and fmt != "csf" and fmt != "coo":
        fmt = data.draw(formats_for(len(out)))     # any mix of dense and compressed
    check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("streams", "c"),
                   output=fmt)


@settings(max_examples=25)
@given(problems(max_indices=3), st.sampled_from(["csr", "csc", "dcsr", "csf"]))
def test_hash_workspace_outputs_match_reference(p, fmt):
    """With every workspace forced to be a hash table (threshold 0)."""
    from etchpy.lower import core as lower
    out = free_indices(p.expr)
    if not out:
        return
    if len(out) != 2:
        fmt = "csf"
    old = lower.HASH_WORKSPACE_DIM
    lower.HASH_WORKSPACE_DIM = 0
    try:
        check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("streams", "c"),
                       output=fmt)
    finally:
        lower.HASH_WORKSPACE_DIM = old


@pytest.mark.parametrize("forced", [True, False])
def test_hash_workspace_spgemm_grows_and_sorts(forced, monkeypatch):
    """Rows touching up to ~900 columns: the 256-slot table rehashes twice or more.
    The kernel is built with the dense workspace only; a dimension past the limit
    makes it return 3, and the call goes to a second build that has the table."""
    from etchpy.lower import core as lower
    if forced:
        monkeypatch.setattr(lower, "HASH_WORKSPACE_DIM", 0)
    rng = np.random.default_rng(11)
    A = sp.random_array((40, 60), density=0.2, format="csr", rng=rng)
    B = sp.random_array((60, 5000), density=0.02, format="csr", rng=rng)
    Ac, Bc = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    kern = ep.compile(ep.sum(j, Ac[i, j] * Bc[j, k]), output="csr")
    assert kern.program.output.mode == "workspace"
    assert "hs_keys" not in kern.c_source and "ep_hash" not in kern.c_source
    assert f"if (dim_k > {lower.HASH_WORKSPACE_DIM}) return 3;" in kern.c_source
    assert f"dense while |k| <= {lower.HASH_WORKSPACE_DIM}" in kern.explain()
    C = kern(A=A, B=B)
    assert (kern._larger is not None) == forced
    if forced:
        assert "hs_keys" in kern._larger.c_source and "return 3" not in kern._larger.c_source
    for r_ in range(40):
        assert np.all(np.diff(C.indices[C.indptr[r_]:C.indptr[r_ + 1]]) > 0)
    np.testing.assert_allclose(C.toarray(), (A @ B).toarray(), rtol=1e-12)


def test_huge_output_dimension_uses_a_hash_workspace():
    """2^23 + 17 columns: a dense accumulator would allocate ~200 MB per call; the
    hash table holds only the touched columns."""
    n = 2**23 + 17
    rng = np.random.default_rng(5)
    A = sp.csr_array((rng.random(300), (rng.integers(0, 30, 300), rng.integers(0, 50, 300))),
                     shape=(30, 50))
    B = sp.csr_array((rng.random(2000), (rng.integers(0, 50, 2000), rng.integers(0, n, 2000))),
                     shape=(50, n))
    Ac, Bc = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    C = ep.evaluate(ep.sum(j, Ac[i, j] * Bc[j, k]), A=A, B=B, output="csr")
    ref = (A @ B).tocsr()
    ref.sum_duplicates()
    assert C.shape == (30, n)
    np.testing.assert_array_equal(C.indptr, ref.indptr)
    np.testing.assert_array_equal(C.indices, ref.indices)
    np.testing.assert_allclose(C.data, ref.data, rtol=1e-12)


@pytest.mark.parametrize("semiring, threads, fmt", [
    ("real", 1, "csr"), ("min_plus", 1, "csr"), ("real", 2, "csr"), ("min_plus", 2, "csr"),
    ("real", 2, "dcsr"), ("real", 3, "csr")])
def test_transposed_sparse_output_is_one_counting_sort(semiring, threads, fmt, monkeypatch):
    """csr (or dcsr) A written as csc: the loops run over A's rows, the output's
    compressed index, first. Counted per column, then placed at each column's
    cursor: the same arrays as scipy's tocsc (sorted rows, exact pointers), on C
    and on the Imp interpreter. On threads the rows are cut into one block per
    thread; each block counts, then places, its entries of each column, and the
    cursors put block 0's entries of a column before block 1's. The write pass
    prefetches the destinations of the entry d ahead for writing (here for any
    size, d = 3; the interpreter checks each index is inside its array)."""
    monkeypatch.setattr(lower, "PREFETCH_MIN_BYTES", 8)
    monkeypatch.setattr(lower, "PREFETCH_DISTANCE", 3)
    sr = ep.semirings.get(semiring)
    M = _random_csr(300, 200, 2000, 3)
    M = M.tolil()
    M[140:170] = 0                               # empty rows, some at a block's edge
    M[:, 50:60] = 0                              # and empty columns
    M = sp.csr_array(M.tocsr())
    M.eliminate_zeros()
    if semiring == "min_plus":
        M.data[::7] = 0.0                        # stored zeros are real edges
    A = ep.tensor("A", 2, format=fmt)
    kern = ep.compile(A[i, j], output="csc", semiring=semiring, threads=threads)
    assert kern.program.output.mode == "bucket"
    assert "bk_last" not in kern.c_source        # no sum inside: no repeats to merge
    assert ("count each block" in kern.c_source) == (threads > 1)
    assert ("EP_PREFETCH_W(&out_vals[bk_next[" in kern.c_source) == (threads == 1)
    assert ("EP_PREFETCH_W(&out_vals[bk_blk[" in kern.c_source) == (threads > 1)
    ref = sp.csc_array(M)
    ref.sort_indices()
    final, _, _ = _on_interpreter(A[i, j], sr, ep.Format.named("csc", 2),
                                  {"A": ep.Tensor.from_scipy(M, fmt, semiring=sr)}, threads)
    nnz = int(final["out_count1"])
    on_imp = sp.csc_array((final["out_vals"][:nnz], final["out_crd1"][:nnz],
                           final["out_pos1"][:201]), shape=(300, 200))
    for got in (kern(A=M), on_imp):
        np.testing.assert_array_equal(got.indptr, ref.indptr)
        np.testing.assert_array_equal(got.indices, ref.indices)
        np.testing.assert_array_equal(got.data, ref.data)


@pytest.mark.parametrize("semiring, threads", [
    ("real", 1), ("min_plus", 1), ("real", 2), ("min_plus", 2), ("real", 3)])
def test_bucket_output_merges_the_repeats_of_an_inner_sum(semiring, threads):
    """Σ_j A[i,j]·B[j,k] into csc with loops (i, j, k): (i, k) is written once per
    j, before i moves on. The count pass counts it once and the fill pass adds
    the repeats into one entry, so each column is sorted and duplicate-free. On
    threads each block of rows i keeps its own last i per column k, and a
    column gets block 0's entries first: the same arrays as one thread, on C
    and on the Imp interpreter."""
    sr = ep.semirings.get(semiring)
    A = _random_csr(60, 40, 500, 4).tolil()
    A[20:35] = 0                                 # empty rows, across a block's edge
    A = sp.csr_array(A.tocsr())
    B = _random_csr(40, 70, 500, 5)
    Bc = ep.tensor("B", 2, format="csr")
    e = ep.sum(j, A_csr[i, j] * Bc[j, k])
    kern = ep.compile(e, output="csc", semiring=semiring, threads=threads)
    assert kern.program.output.mode == "bucket" and "bk_last" in kern.c_source
    assert ("count each block" in kern.c_source) == (threads > 1)
    want = ep.evaluate(e, A=A, B=B, semiring=semiring, backend="reference")
    final, _, _ = _on_interpreter(e, sr, ep.Format.named("csc", 2),
                                  {"A": A, "B": B}, threads)
    nnz = int(final["out_count1"])
    on_imp = sp.csc_array((final["out_vals"][:nnz], final["out_crd1"][:nnz],
                           final["out_pos1"][:71]), shape=(60, 70))
    serial = ep.compile(e, output="csc", semiring=semiring)(A=A, B=B)
    for got in (kern(A=A, B=B), on_imp):
        assert got.nnz == np.count_nonzero(want != sr.zero)
        for c in range(70):
            assert np.all(np.diff(got.indices[got.indptr[c]:got.indptr[c + 1]]) > 0)
        np.testing.assert_allclose(got.toarray() if semiring == "real" else
                                   _fill(got, sr.zero), want, rtol=1e-12)
        np.testing.assert_array_equal(got.indptr, serial.indptr)
        np.testing.assert_array_equal(got.indices, serial.indices)
        np.testing.assert_array_equal(got.data, serial.data)


def _fill(m, fill):
    """A sparse result as a dense array whose implicit entries are `fill`."""
    out = np.full(m.shape, fill)
    coo = m.tocoo()
    out[coo.row, coo.col] = coo.data
    return out


def test_ttm_into_sparse_rows_with_dense_tail_appends():
    """(compressed, compressed, dense): the rank level accumulates in place."""
    T = ep.tensor("T", 3, format="csf")
    M = ep.tensor("M", 2)
    r_ = ep.indices("r")[0]
    fmt = ep.Format(["compressed", "compressed", "dense"])
    kern = ep.compile(ep.sum(k, T[i, j, k] * M[k, r_]), output=fmt)
    assert kern.program.output.mode == "append"
    rng = np.random.default_rng(2)
    coords = rng.integers(0, 30, size=(3, 400))
    Tt = ep.Tensor.from_coords(coords, rng.random(400), (30, 30, 30), "csf")
    Mv = rng.random((30, 5))
    got = kern(T=Tt, M=Mv)
    np.testing.assert_allclose(got.to_dense(), np.einsum("ijk,kr->ijr", Tt.to_dense(), Mv),
                               rtol=1e-12)


def _on_interpreter(expr, sr, out_format, inputs, threads=1):
    """The lowered program of expr run on the Imp interpreter, with a zeroed dense
    `out` when out_format is None: (final environment, program, output shape)."""
    bound = binding.bind_inputs(tensors(expr), inputs, sr)
    pl = planning.make_plan(expr)
    sizes = binding.index_sizes(pl, bound)
    prog = lower.lower_plan(pl, sr, tensors(expr), out_format, threads=threads)
    env = api.imp_env(bound, sizes)
    for name, t in bound.items():
        for m, n in enumerate(t.shape):
            env[f"{name}_dim{m}"] = n
    shape = tuple(sizes[v] for v in pl.out)
    if out_format is None:
        env["out"] = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=sr.dtype)
    return lower.run_program(prog, sr, env), prog, shape


@settings(max_examples=25)
@given(problems())
def test_imp_program_on_interpreter_equals_reference(p):
    """The whole lowered program (output writes included) run on the Imp interpreter."""
    sr = p.semiring
    e = p.expr
    final, _, shape = _on_interpreter(e, sr, None, p.inputs)
    want = ep.evaluate(e, semiring=sr, backend="reference", **p.inputs)
    assert_same(final["out"].reshape(shape), want, sr, what=str(e))

# ------------------------------------------------------------------ bad input

A_csr = ep.tensor("A", 2, format="csr")
x_vec = ep.tensor("x", 1)
SPMV = ep.sum(j, A_csr[i, j] * x_vec[j])


def _csr(indptr, indices, data, shape):
    m = sp.csr_array((np.asarray(data, float), np.asarray(indices), np.asarray(indptr)),
                     shape=shape, copy=False)
    return m


def _broken(kind):
    """A scipy csr_array whose arrays were corrupted after construction."""
    m = sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0]]))
    if kind == "out of range":
        m.indices[1] = 7
    elif kind == "negative":
        m.indices[0] = -1
    elif kind == "short pointers":
        m.indptr = m.indptr[:2]
    elif kind == "non-monotone":
        m.indptr[1] = 3
        m.indptr[2] = 2
    return m


@pytest.mark.parametrize("kind", ["out of range", "negative", "short pointers", "non-monotone"])
@pytest.mark.parametrize("backend", ["c", "streams", "reference"])
def test_malformed_scipy_input_raises(kind, backend):
    with pytest.raises(ep.InputError):
        ep.evaluate(SPMV, backend=backend, A=_broken(kind), x=np.ones(3))


def test_mismatched_shapes_name_the_index():
    with pytest.raises(ep.InputError, match="index j"):
        ep.evaluate(SPMV, backend="c", A=sp.csr_array(np.eye(3)), x=np.ones(4))


def test_nan_in_boolean_semiring_raises():
    u, v = ep.indices("u v")
    A = ep.tensor("A", 2, format="csr")
    f = ep.tensor("f", 1)
    e = ep.sum(u, f[u] * A[u, v])
    with pytest.raises(ep.InputError, match="NaN"):
        ep.evaluate(e, semiring="boolean", backend="c", A=sp.csr_array(np.eye(3)),
                    f=np.array([1.0, np.nan, 0.0]))
    with pytest.raises(ep.InputError, match="NaN"):
        ep.evaluate(e, semiring="boolean", backend="c",
                    A=sp.csr_array(np.array([[np.nan, 1.0], [0, 1]])), f=np.ones(2, bool))


def test_wrong_dtype_and_missing_inputs():
    with pytest.raises(ep.InputError):
        ep.evaluate(SPMV, backend="c", A=sp.csr_array(np.eye(3)), x=np.array(["a", "b", "c"]))
    with pytest.raises(ep.InputError, match="missing"):
        ep.evaluate(SPMV, backend="c", A=sp.csr_array(np.eye(3)))
    with pytest.raises(ep.InputError, match="not a tensor"):
        ep.evaluate(SPMV, backend="c", A=sp.csr_array(np.eye(3)), x=np.ones(3), y=1)
    with pytest.raises(ep.InputError, match="dimensions"):
        ep.evaluate(SPMV, backend="c", A=sp.csr_array(np.eye(3)), x=np.ones((3, 1)))


def test_unsorted_and_duplicate_entries_are_canonicalised():
    m = _csr([0, 3, 4], [2, 0, 2, 1], [1.0, 2.0, 3.0, 4.0], (2, 3))
    before = (m.indices.copy(), m.data.copy())
    y = ep.evaluate(SPMV, backend="c", A=m, x=np.array([1.0, 10.0, 100.0]))
    np.testing.assert_array_equal(y, [2.0 + 400.0, 40.0])
    np.testing.assert_array_equal(m.indices, before[0])   # the input is not modified
    mp = ep.evaluate(SPMV, backend="c", semiring="min_plus", A=m, x=np.zeros(3))
    np.testing.assert_array_equal(mp, [1.0, 4.0])          # duplicates combine with min


def test_min_plus_explicit_zero_is_an_edge():
    W = sp.csr_array((np.array([0.0]), np.array([1]), np.array([0, 1, 1])), shape=(2, 2))
    d = ep.evaluate(SPMV, backend="c", semiring="min_plus", A=W, x=np.array([5.0, 2.0]))
    np.testing.assert_array_equal(d, [2.0, np.inf])

# ----------------------------------------------------------------- the cache


def test_second_process_reuses_disk_cache(tmp_path):
    env = dict(os.environ, ETCHPY_CACHE_DIR=str(tmp_path / "c"),
               ETCHPY_LOG_COMPILES=str(tmp_path / "log"))
    script = textwrap.dedent("""
        import numpy as np, scipy.sparse as sp, etchpy as ep
        i, j = ep.indices("i j")
        A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
        y = ep.compile(ep.sum(j, A[i, j] * x[j]))(A=sp.csr_array(np.eye(4)), x=np.arange(4.0))
        assert y.tolist() == [0.0, 1.0, 2.0, 3.0]
    """)
    subprocess.run([sys.executable, "-c", script], env=env, check=True)
    first = (tmp_path / "log").read_text().count("\n")
    assert first >= 1
    subprocess.run([sys.executable, "-c", script], env=env, check=True)
    assert (tmp_path / "log").read_text().count("\n") == first


MANIFEST_CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np, scipy.sparse as sp, etchpy as ep
    i, j, k = ep.indices("i j k")
    A, B, x = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr"), ep.tensor("x", 1)
    M = sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0], [4, 0, 0]]))
    spmv = ep.compile(ep.sum(j, A[i, j] * x[j]))
    y = spmv(A=M, x=np.arange(3.0))
    spgemm = ep.compile(ep.sum(j, A[i, j] * B[j, k]), output="csr")
    C = spgemm(A=M, B=M)
    print(json.dumps({"manifest": [spmv.from_manifest, spgemm.from_manifest],
                      "y": y.tolist(), "C": C.toarray().tolist(),
                      "jinja2": "jinja2" in sys.modules, "pycparser": "pycparser" in sys.modules,
                      "explains": "optimizer:" in spmv.explain()}))
""")


def test_new_process_restores_kernels_from_their_manifests(tmp_path):
    """A second process asking for the same kernels neither plans, lowers nor renders
    (no jinja2) nor parses a cdef (no pycparser); a corrupt manifest is rebuilt."""
    env = dict(os.environ, ETCHPY_CACHE_DIR=str(tmp_path / "c"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    def child():
        out = subprocess.run([sys.executable, "-c", MANIFEST_CHILD], env=env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)
    M = np.array([[1.0, 0, 2], [0, 3, 0], [4, 0, 0]])
    want = {"y": (M @ np.arange(3.0)).tolist(), "C": (M @ M).tolist(), "explains": True}
    first = child()
    assert first["manifest"] == [False, False] and first["jinja2"]
    assert {k: first[k] for k in want} == want
    second = child()
    assert second["manifest"] == [True, True]
    assert not second["jinja2"] and not second["pycparser"]
    assert {k: second[k] for k in want} == want
    for f in (tmp_path / "c").glob("*-req-*.json"):
        f.write_bytes(b"not a pickle")
    third = child()
    assert third["manifest"] == [False, False]
    assert {k: third[k] for k in want} == want
    assert child()["manifest"] == [True, True]


def test_dense_output_cells_written_once_skip_the_zero_fill():
    """SpMV visits every row once and sums into one accumulator: y[i] = acc, no
    fill pass. Rows of a dcsr matrix are sparse, so y keeps its fill and ⊕=."""
    spmv = ep.compile(SPMV)
    assert "out_k" not in spmv.c_source and "out[i_] = acc;" in spmv.c_source
    A_dcsr = ep.tensor("A", 2, format="dcsr")
    x = ep.tensor("x", 1)
    sparse_rows = ep.compile(ep.sum(j, A_dcsr[i, j] * x[j]), semiring="min_plus")
    assert "out_k" in sparse_rows.c_source
    m = _csr([0, 2, 2, 3], [0, 1, 1], [1.0, 2.0, 5.0], (3, 2))
    got = sparse_rows(A=m, x=np.array([1.0, 1.0]))
    np.testing.assert_array_equal(got, [2.0, np.inf, 6.0])      # row 1: the fill
    np.testing.assert_allclose(spmv(A=m, x=np.array([1.0, 1.0])), [3.0, 0.0, 5.0])


def test_kernel_exposes_source_signature_explain():
    kern = ep.compile(SPMV)
    assert "int etchpy_kernel(" in kern.c_source and "Σ_j A[i,j]·x[j]" in kern.c_source
    assert kern.signature.startswith("int etchpy_kernel(")
    text = kern.explain()
    assert "loop order" in text and "csr" in text
    assert ep.compile(SPMV) is kern                   # in-process cache


def test_c_source_is_deterministic():
    a = ep.Kernel(SPMV).c_source
    b = ep.Kernel(ep.sum(j, A_csr[i, j] * x_vec[j])).c_source
    assert a == b


@pytest.mark.parametrize("output", ["dense", "csr"])
def test_a_union_no_order_walks_is_planned_one_step_per_term(output):
    """A + Aᵀ with A csr: no single loop order walks both accesses, so the planner
    gives each term its own step (and its own order); a Σ over such a union is
    distributed first, Σ_i (a + b) = Σ_i a + Σ_i b, also over a term without i."""
    M = _random_csr(40, 40, 300, 6)
    D = M.toarray()
    sym = A_csr[i, j] + A_csr[j, i]
    kern = ep.compile(sym, output=output)
    assert [s.order for s in kern.plan.steps] == [("i", "j"), ("j", "i")]
    got = kern(A=M)
    np.testing.assert_allclose(got if output == "dense" else got.toarray(), D + D.T)
    check_backends(sym, {"A": M}, output=output)
    check_backends(ep.sum(i, sym), {"A": M})
    v = ep.tensor("v", 1)        # a term without i is added once per value of i
    check_backends(ep.sum(i, sym + v[j]), {"A": M, "v": np.arange(40.0)})


def test_no_legal_order_says_what_to_convert():
    B = ep.tensor("B", 2, format="csr")
    with pytest.raises(ep.OrderError, match="Convert"):
        ep.compile(ep.sum((i, j), A_csr[i, j] * B[j, i]))


def test_reference_semantics_needs_no_loop_order():
    """The dense specification evaluates what no loop order walks (the
    optimizer's tests compare rewrites on it)."""
    B = ep.tensor("B", 2, format="csr")
    M, N = _random_csr(20, 30, 100, 7), _random_csr(30, 20, 100, 8)
    got = ep.evaluate(ep.sum((i, j), A_csr[i, j] * B[j, i]), A=M, B=N, backend="reference")
    assert got == pytest.approx(float((M.toarray() * N.toarray().T).sum()))
    with pytest.raises(ep.OrderError):
        ep.evaluate(ep.sum((i, j), A_csr[i, j] * B[j, i]), A=M, B=N, backend="streams")

# ------------------------------------------------------- real sizes (nnz ≥ 1e5)


def _sparse3(n, nnz, seed):
    rng = np.random.default_rng(seed)
    coords = rng.integers(0, n, size=(3, nnz))
    return ep.Tensor.from_coords(coords, rng.random(nnz), (n, n, n), "csf")


def _random_csr(n, m, nnz, seed):
    """Random CSR quickly (scipy's sp.random is slow at low density and large n)."""
    rng = np.random.default_rng(seed)
    coo = sp.coo_array((rng.random(nnz), (rng.integers(0, n, nnz), rng.integers(0, m, nnz))),
                       shape=(n, m))
    return coo.tocsr()


def test_benchmark_expressions_at_real_size():
    rng = np.random.default_rng(0)
    n = 20000
    A = _random_csr(n, n, 200000, 1)
    B = _random_csr(n, n, 200000, 2)
    x = rng.random(n)
    Ac, Bc = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    xv = ep.tensor("x", 1)
    np.testing.assert_allclose(ep.evaluate(ep.sum(j, Ac[i, j] * xv[j]), A=A, x=x), A @ x)
    C = ep.evaluate(ep.sum(j, Ac[i, j] * Bc[j, k]), A=A, B=B, output="csr")
    assert abs(C - A @ B).max() < 1e-12
    # inner products visit every (i, k) pair: sized so that nnz is still 1e5
    A2 = _random_csr(1000, 1000, 100000, 5)
    B2 = _random_csr(1000, 1000, 100000, 6)
    C2 = ep.evaluate(ep.sum(j, Ac[i, j] * Bc[k, j]), A=A2, B=sp.csr_array(B2.T), output="csr")
    assert abs(C2 - A2 @ B2).max() < 1e-12
    T = _sparse3(200, 200000, 3)
    dense = T.to_dense()
    c, M1, M2 = rng.random(200), rng.random((200, 8)), rng.random((200, 8))
    Tv = ep.tensor("T", 3, format="csf")
    cv, Mv, Nv = ep.tensor("c", 1), ep.tensor("M", 2), ep.tensor("N", 2)
    np.testing.assert_allclose(ep.evaluate(ep.sum(k, Tv[i, j, k] * cv[k]), T=T, c=c),
                               np.einsum("ijk,k->ij", dense, c))
    np.testing.assert_allclose(ep.evaluate(ep.sum(k, Tv[i, j, k] * Mv[k, r]), T=T, M=M1),
                               np.einsum("ijk,kr->ijr", dense, M1))
    np.testing.assert_allclose(
        ep.evaluate(ep.sum((j, k), Tv[i, j, k] * Mv[j, r] * Nv[k, r]), T=T, M=M1, N=M2),
        np.einsum("ijk,jr,kr->ir", dense, M1, M2))
    U = _sparse3(200, 200000, 4)
    Uv = ep.tensor("U", 3, format="csf")
    np.testing.assert_allclose(ep.evaluate(ep.sum((i, j, k), Tv[i, j, k] * Uv[i, j, k]),
                                           T=T, U=U), np.sum(dense * U.to_dense()))


@pytest.mark.parametrize("n, per_row", [(300, 120), (100000, 40), (4_000_000, 40), (50, 3)])
def test_gustavson_spgemm_workspace_sorts_rows(n, per_row):
    """Rows long enough for the bitset readback (within one summary word, and across
    many), spread wide enough for quicksort, and tiny."""
    rng = np.random.default_rng(n)
    rows = 20
    A = sp.csr_array((rng.random(rows * 3), (np.repeat(np.arange(rows), 3),
                                            rng.integers(0, 30, rows * 3))), shape=(rows, 30))
    B = sp.csr_array((rng.random(30 * per_row), (np.repeat(np.arange(30), per_row),
                                                rng.integers(0, n, 30 * per_row))),
                     shape=(30, n))
    Ac, Bc = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    kern = ep.compile(ep.sum(j, Ac[i, j] * Bc[j, k]), output="csr")
    assert kern.program.output.mode == "workspace"
    C = kern(A=A, B=B)
    ref = (A @ B).tocsr()
    ref.sort_indices()
    for r_ in range(rows):
        row = C.indices[C.indptr[r_]:C.indptr[r_ + 1]]
        assert np.all(np.diff(row) > 0), "rows must be sorted without duplicates"
    np.testing.assert_allclose(C.toarray(), ref.toarray(), rtol=1e-12)


@pytest.mark.parametrize("backend, n", [("streams", 400), ("c", 200000)])
def test_unbalanced_intersection_gallops_correctly(backend, n):
    """A short sparse list against a long one: skips jump far, past the linear phase."""
    rng = np.random.default_rng(n)
    long_idx = np.sort(rng.choice(n, size=n // 2, replace=False))
    short_idx = np.sort(rng.choice(n, size=7, replace=False))
    a = np.zeros(n)
    b = np.zeros(n)
    a[short_idx] = rng.integers(1, 5, size=7)
    b[long_idx] = rng.integers(1, 5, size=len(long_idx))
    x, y = ep.tensor("x", 1, format="csf"), ep.tensor("y", 1, format="csf")
    e = ep.sum(i, x[i] * y[i])
    got = ep.evaluate(e, backend=backend, check=(backend == "streams"),
                      x=ep.Tensor.from_dense(a, "csf"), y=ep.Tensor.from_dense(b, "csf"))
    assert got == float(a @ b)
    kern = ep.compile(e)
    assert "gallop" in kern.explain()


def _seek_in_c():
    """The C seek of a kernel that leapfrogs (ep_seek, static in its source), with a
    small exported wrapper around it so that a test can call it directly."""
    from etchpy.runtime import build
    x, y = ep.tensor("x", 1, format="csf"), ep.tensor("y", 1, format="csf")
    src = ep.compile(ep.sum(i, x[i] * y[i])).source("int32_t").c
    assert "ep_seek(" in src
    wrapper = ("int64_t seek_for_test(const int32_t *crd, int64_t q, int64_t end, "
               "int64_t t, int r)")
    return build.load(src + f"\n{wrapper} {{ return ep_seek(crd, q, end, t, r); }}\n",
                      wrapper + ";", name="seek_test")


@settings(max_examples=200)
@given(st.integers(0, 400), st.integers(1, 12), st.data())
def test_seek_in_c_equals_its_imp_meaning(n, gap, data):
    """ep_seek (linear steps, then a gallop and a binary search) against the meaning
    of imp.Seek: q moves past exactly the positions of crd[q..end) behind (t, r).
    Targets land before, on, between and past the coordinates, near and far."""
    rng = np.random.default_rng(n * 13 + gap)
    crd = np.cumsum(rng.integers(1, gap + 1, n)).astype(np.int32)
    q = data.draw(st.integers(0, n), label="q")
    end = data.draw(st.one_of(st.just(n), st.integers(q, n)), label="end")
    inside = [int(c) for c in crd[q:end]] or [0]
    t = data.draw(st.one_of(st.sampled_from(inside), st.sampled_from(inside).map(lambda c: c + 1),
                            st.integers(-2, 12 * 400 + 2)), label="t")
    r = data.draw(st.booleans(), label="r")
    lib = _seek_in_c()
    got = lib.lib.seek_for_test(lib.ffi.cast("const int32_t *", crd.ctypes.data), q, end, t,
                                int(r))
    assert got == q + np.searchsorted(crd[q:end], t, side="right" if r else "left")
    machine = imp.Machine(ep.semirings.get("real"), {"crd": crd.astype(np.int64), "q": q})
    machine.exec(imp.Seek("q", imp.Const(end), "crd", imp.Const(t), imp.Const(r, "bool")))
    assert machine.env["q"] == got


@pytest.mark.parametrize("ratio", [0, 10**9])
@settings(max_examples=25)
@given(problems())
def test_merge_and_leapfrog_ways_equal_reference(ratio, p):
    """Each way of a two-segment intersection on its own: ratio 0 always leapfrogs
    (gallops), a huge ratio always merges; both must agree with the reference."""
    from etchpy.streams import stream as streams
    old = streams.GALLOP_RATIO
    streams.GALLOP_RATIO = ratio
    try:
        check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("streams", "c"))
    finally:
        streams.GALLOP_RATIO = old


def test_outputs_past_4_mib_grow_into_fresh_advised_blocks():
    """A csr output of ~800k entries (6 MB of values): its arrays cross 4 MiB while
    growing, so ep_grow moves them into new blocks (huge pages asked for first)."""
    M = _random_csr(40000, 40000, 400000, 8)
    N = _random_csr(40000, 40000, 400000, 9)
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


def test_knobs_are_part_of_the_kernel_cache_key(monkeypatch):
    """Setting a code-generation knob never returns a kernel built under another value
    (in process, and through the on-disk manifest)."""
    from etchpy.runtime import kernel as runtime
    from etchpy.streams import stream as streams
    e = ep.sum(j, A_csr[i, j] * ep.tensor("y", 2, format="csr")[i, j])
    before = ep.compile(e)
    monkeypatch.setattr(streams, "GALLOP_RATIO", 3)
    after = ep.compile(e)
    assert after is not before and after._request != before._request
    assert "* 3)" in after.c_source and "* 16)" in before.c_source
    assert runtime.tunables()[0] == 3


def test_intersection_picks_merge_or_gallop_per_segment_pair():
    """Row 0 intersects 5000 entries with 7 (leapfrog, galloping), row 1 4000 with
    5000 (merge); the choice is made per pair of segments at run time and the loop
    is emitted once per way."""
    rng = np.random.default_rng(7)
    n = 10000
    x, y = np.zeros((2, n)), np.zeros((2, n))
    x[0, rng.choice(n, 5000, replace=False)] = 1.0
    y[0, rng.choice(n, 7, replace=False)] = 2.0
    x[1, rng.choice(n, 4000, replace=False)] = 3.0
    y[1, rng.choice(n, 5000, replace=False)] = 4.0
    X, Y = ep.tensor("X", 2, format="csr"), ep.tensor("Y", 2, format="csr")
    e = ep.sum((i, j), X[i, j] * Y[i, j])
    kern = ep.compile(e)
    assert "merge [" in kern.explain() and "leapfrog when one is" in kern.explain()
    assert kern.c_source.count("_gallop) {") == 1
    want = float((x * y).sum())
    Xs, Ys = sp.csr_matrix(x), sp.csr_matrix(y)
    assert kern(X=Xs, Y=Ys) == pytest.approx(want)
    assert ep.evaluate(e, backend="streams", check=True, X=Xs, Y=Ys) == pytest.approx(want)


@settings(max_examples=20)
@given(problems())
def test_two_threads_equal_reference(p):
    check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("c",), threads=2)


@settings(max_examples=30)
@given(problems(max_indices=3), st.sampled_from(["csr", "csc", "dcsr", "csf"]), st.data())
def test_two_threads_sparse_outputs_equal_reference(p, fmt, data):
    """Sparse outputs on two threads: csr/csc, doubly compressed, and for three
    output indices any mix of dense and compressed levels (fibers with a dense
    tail among them)."""
    out = free_indices(p.expr)
    if len(out) < 2:
        return
    if len(out) != 2 and fmt != "csf":
        fmt = data.draw(formats_for(len(out)))
    check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("c",), threads=2,
                   output=fmt)


def _csr_on_interpreter(expr, sr, threads=1, **inputs):
    """The lowered csr-output program of expr run on the Imp interpreter."""
    final, _, shape = _on_interpreter(expr, sr, ep.Format.named("csr", 2), inputs, threads)
    nnz = int(final["out_count1"])
    return sp.csr_array((final["out_vals"][:nnz], final["out_crd1"][:nnz],
                         final["out_pos1"][:shape[0] + 1]), shape=shape)


@pytest.mark.parametrize("semiring", ["real", "min_plus"])
def test_union_of_segments_steps_fronts_in_phases(semiring):
    """csr A+B: the union steps exactly the operands at its front (q += flag), and
    its loop runs in three phases (both rows left, only A's, only B's) with the
    validity tests folded away. C, the Imp interpreter and scipy agree, including
    rows where one side is empty or ends first."""
    sr = ep.semirings.get(semiring)
    B = ep.tensor("B", 2, format="csr")
    e = A_csr[i, j] + B[i, j]
    kern = ep.compile(e, output="csr", semiring=semiring)
    src = kern.c_source
    assert "then gallop" in src and "j_fa = ((A_crd1[j_q] < B_crd1[j_q_2])" in src
    both = r"while \(\(j_q < j_end\) && \(j_q_2 < j_end_2\)\)"
    only_a = r"while \(\(j_q < j_end\) && !\(j_q_2 < j_end_2\)\)"
    only_b = r"while \(!\(j_q < j_end\) && \(j_q_2 < j_end_2\)\)"
    for loop in (both, only_a, only_b):
        assert len(re.findall(loop, src)) == 1, loop
    assert "j_q = (j_q + j_fa);" in src
    M, N = _random_csr(300, 80, 3000, 11), _random_csr(300, 80, 1500, 12)
    M = sp.csr_array(M.multiply(np.arange(300)[:, None] % 3 != 0))      # rows A lacks
    N = sp.csr_array(N.multiply(np.arange(300)[:, None] % 5 != 0))      # rows B lacks
    for m in (M, N):
        m.data = np.random.default_rng(1).integers(1, 9, m.nnz).astype(sr.dtype)
    want = ep.evaluate(e, semiring=semiring, backend="reference", A=M, B=N)
    for got in (kern(A=M, B=N), _csr_on_interpreter(e, sr, A=M, B=N)):
        dense = np.full(got.shape, sr.zero, dtype=sr.dtype)
        coo = got.tocoo()
        dense[coo.row, coo.col] = coo.data
        assert_same(dense, want, sr, what=str(e))
        for r in range(got.shape[0]):
            row = got.indices[got.indptr[r]:got.indptr[r + 1]]
            assert np.all(np.diff(row) > 0)
    if semiring == "real":
        np.testing.assert_allclose(kern(A=M, B=N).toarray(), (M + N).toarray())


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
    lim = lower.FIRST_CAPACITY_LIMIT
    plus = ep.compile(A_csr[i, j] + B[i, j], output="csr").c_source
    sum_ = f"ep_max(ep_min(ep_max((A_pos1[A_dim0] + B_pos1[B_dim0]), 1024), {lim}), 1);"
    assert caps(plus)["out_crd1"] == caps(plus)["out_vals"] == sum_
    assert "k_ < out_vals_cap" not in plus and "k_ < out_crd1_cap" not in plus  # no fill
    times = ep.compile(A_csr[i, j] * B[i, j], output="csr").c_source
    assert "ep_min(A_pos1[A_dim0], B_pos1[B_dim0])" in caps(times)["out_crd1"]
    scaled = ep.compile(A_csr[i, j] * x[j], output="csr").c_source
    assert caps(scaled)["out_crd1"] == f"ep_max(ep_min(ep_max(A_pos1[A_dim0], 1024), {lim}), 1);"
    gus = ep.compile(ep.sum(j, A_csr[i, j] * B[j, k]), output="csr").c_source
    assert caps(gus)["out_crd1"] == f"ep_max(ep_min(ep_max(join_size, 1024), {lim}), 1);"
    Bd = ep.tensor("B", 2, format="dcsr")     # rows not located by j: no join size
    gus_d = ep.compile(ep.sum(j, A_csr[i, j] * Bd[j, k]), output="csr").c_source
    assert caps(gus_d)["out_crd1"] == "ep_max(1024, 1);"
    T = ep.tensor("T", 3, "csf")
    fibers = ep.Format([ep.Compressed(), ep.Compressed(), ep.Dense()])
    ttm = ep.compile(ep.sum(k, T[i, j, k] * B[k, r]), output=fibers).c_source
    assert caps(ttm)["out_vals"] == \
        f"ep_max((ep_min(ep_max(T_pos2[T_pos1[T_pos0[1]]], 1024), {lim}) * dim_r), 1);"
    tvs = {"D": D}
    assert lower.entries_bound(D[i, j], ("i", "j"), tvs) == \
        ep.imp.Load("D_pos1", ep.imp.Load("D_pos0", ep.imp.ONE))
    assert lower.entries_bound(x[j], ("i", "j"), {"x": x}) is None
    assert lower.entries_bound(x[j], ("j",), {"x": x}) == ep.imp.Var("x_dim0")
    M, N = _random_csr(500, 400, 6000, 1), _random_csr(500, 400, 300, 2)
    np.testing.assert_allclose(ep.evaluate(A_csr[i, j] + B[i, j], output="csr", A=M,
                                           B=N).toarray(), (M + N).toarray())
    np.testing.assert_allclose(ep.evaluate(A_csr[i, j] * B[i, j], output="csr", A=M,
                                           B=N).toarray(), M.multiply(N).toarray())


@pytest.mark.parametrize("fa, fb", [("csr", "csr"), ("dcsr", "csr"), ("csr", "dense")])
def test_gustavson_first_capacity_is_the_join_size(fa, fb):
    """Σ_j A[i,j]·B[j,k] into csr starts at |A ⋈ B| entries: Σ over A's entries of
    the entries in B's row j, counted in one pass at entry. It bounds the result
    (every output entry is the projection of a joined pair), and for random rows
    with few collisions it is close, so the arrays do not grow by copies."""
    Af, Bf = ep.tensor("A", 2, format=fa), ep.tensor("B", 2, format=fb)
    expr = ep.sum(j, Af[i, j] * Bf[j, k])
    M, N = _random_csr(60, 50, 400, 5), _random_csr(50, 70, 300, 6)
    final, _, _ = _on_interpreter(expr, ep.semirings.get("real"), ep.Format.named("csr", 2),
                                  {"A": M, "B": N})
    rows_of_b = np.diff(N.indptr) if fb == "csr" else np.full(50, 70)
    assert int(final["join_size"]) == int(rows_of_b[M.indices].sum())
    assert int(final["out_count1"]) <= int(final["join_size"])
    got = ep.compile(expr, output="csr")(A=M, B=N)
    np.testing.assert_allclose(got.toarray(), (M @ N).toarray(), rtol=1e-12)


def test_outputs_past_the_first_capacity_limit_still_grow(monkeypatch):
    """A bound above FIRST_CAPACITY_LIMIT is not trusted: the arrays start at the
    limit and appends grow them."""
    monkeypatch.setattr(lower, "FIRST_CAPACITY_LIMIT", 16)
    B = ep.tensor("B", 2, format="csr")
    kern = ep.compile(A_csr[i, j] + B[i, j], output="csr")
    assert ", 16), 1);" in kern.c_source
    M, N = _random_csr(400, 300, 5000, 3), _random_csr(400, 300, 5000, 4)
    got = kern(A=M, B=N)
    np.testing.assert_allclose(got.toarray(), (M + N).toarray())
    assert got.nnz > 16 * 100
    # a dense tail (TTM's fibers): vals starts zeroed (calloc, no fill loop), and
    # each growth zeroes the grown part, so every appended block starts at zero
    T, W = ep.tensor("T", 3, "csf"), ep.tensor("W", 2)
    fibers = ep.Format([ep.Compressed(), ep.Compressed(), ep.Dense()])
    e = ep.sum(k, T[i, j, k] * W[k, r])
    src = ep.compile(e, output=fibers).c_source
    assert "out_vals = (val_t *)ep_calloc(" in src
    assert "for (int64_t k_ = out_vals_cap; k_ < cap_; k_++) grown_[k_] = 0.0;" in src
    rng = np.random.default_rng(5)
    dense = np.where(rng.random((30, 20, 10)) < 0.2, rng.random((30, 20, 10)), 0.0)
    Wv = rng.random((10, 3))
    for semiring in ("real", "min_plus"):
        want = ep.evaluate(e, semiring=semiring, backend="reference", T=dense, W=Wv)
        got = ep.evaluate(e, semiring=semiring, output=fibers, T=dense, W=Wv)
        assert_same(got.to_dense(), want, ep.semirings.get(semiring), what=semiring)


def test_gathered_rows_of_large_operands_are_prefetched(monkeypatch):
    """SpMM gathers X[j,:] at A's column coordinates: the j loop prefetches the rows
    of the entries 16 ahead (crd read only inside A's crd), when X holds at least
    PREFETCH_MIN_BYTES. A scalar gather (SpMV's x[j]) is left alone. Results do not
    change, in C (big X, prefetching) or on the interpreter, which checks that
    every prefetched index is inside its array."""
    X = ep.tensor("X", 2)
    spmm = ep.sum(j, A_csr[i, j] * X[j, k])
    src = ep.compile(spmm).c_source
    assert "if ((131072 <= (dim_j * dim_k)) && ((j_q + 16) < A_pos1[A_dim0]))" in src
    assert "int64_t j_pf_at = (j_ahead * dim_k);" in src
    assert "EP_PREFETCH(&X_vals[j_pf_at + j_pf]);" in src
    assert "rows of large operands prefetched ahead" in src
    assert "EP_PREFETCH(&x_vals" not in ep.compile(SPMV).c_source
    M = _random_csr(3000, 6000, 30000, 8)
    Xv = np.random.default_rng(2).random((6000, 32))          # 1.5 MB: prefetched
    np.testing.assert_allclose(ep.evaluate(spmm, A=M, X=Xv), M @ Xv, rtol=1e-12)
    monkeypatch.setattr(lower, "PREFETCH_MIN_BYTES", 8)
    monkeypatch.setattr(lower, "PREFETCH_DISTANCE", 3)
    sr = ep.semirings.get("real")
    small, Xs = _random_csr(30, 20, 90, 9), np.random.default_rng(3).random((20, 5))
    final, prog, _ = _on_interpreter(spmm, sr, None, {"A": small, "X": Xs})
    assert any(isinstance(u, ep.imp.Prefetch) for u in ep.imp.statements(prog.body))
    np.testing.assert_allclose(final["out"].reshape(30, 5), small @ Xs, rtol=1e-12)


def test_rows_that_follow_one_another_prefetch_their_arrays_ahead(monkeypatch):
    """A csr level below a counter whose loop only adds up its values (SpMV's
    rows) prefetches its crd and values RUN_AHEAD entries past each row's start
    (rows of at least RUN_SHORT entries), clamped to one past the end, and at
    every step in rows of at least RUN_LONG entries, when it holds at least
    RUN_MIN_ENTRIES entries. Other loops do not: a row
    gathered at another operand's coordinates (Gustavson's B[j,:]), a loop that
    writes (a transpose). Results do not change; the interpreter checks each
    prefetched index is inside its array or one past it, with a distance that
    reaches past the end of A's arrays."""
    src = ep.compile(SPMV).c_source
    assert "if ((524288 <= A_pos1[A_dim0]) && (4 <= (j_end - j_q))) {" in src
    assert "EP_PREFETCH(&A_crd1[ep_min((j_q + 256), A_pos1[A_dim0])]);" in src
    assert "EP_PREFETCH(&A_vals[ep_min((j_q + 256), A_pos1[A_dim0])]);" in src
    assert "if ((524288 <= A_pos1[A_dim0]) && (32 <= (j_end - j_q))) {" in src
    assert "its arrays prefetched 256 ahead" in src
    B = ep.tensor("B", 2, format="csr")
    gus = ep.compile(ep.sum(j, A_csr[i, j] * B[j, k]), output="csr").c_source
    assert "EP_PREFETCH(&B_crd1[ep_min(" not in gus
    assert "ep_min((j_q + 256)" not in ep.compile(A_csr[i, j], output="csc").c_source
    rng = np.random.default_rng(5)
    M = _random_csr(400, 300, 6000, 10)
    v = rng.random(300)
    np.testing.assert_allclose(ep.evaluate(SPMV, A=M, x=v), M @ v, rtol=1e-12)
    monkeypatch.setattr(lower, "RUN_AHEAD", 5)
    monkeypatch.setattr(lower, "RUN_SHORT", 1)
    monkeypatch.setattr(lower, "RUN_MIN_ENTRIES", 0)
    monkeypatch.setattr(lower, "RUN_LONG", 3)
    sr = ep.semirings.get("real")
    for small in (_random_csr(30, 20, 90, 9), sp.csr_matrix((12, 20)),
                  sp.csr_matrix(np.triu(np.ones((20, 20))))):
        xs = rng.random(20)
        final, prog, _ = _on_interpreter(SPMV, sr, None, {"A": small, "x": xs})
        assert any(isinstance(u, ep.imp.Prefetch) for u in ep.imp.statements(prog.body))
        np.testing.assert_allclose(final["out"], small @ xs, rtol=1e-12)


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
    M = _random_csr(50, 50, 400, 11)
    Mu = sp.csr_array(sp.triu(M, 1))
    Mu.data[:] = 1
    Mu = Mu.astype(np.int64)
    want = int(((Mu @ Mu).multiply(Mu)).sum())
    assert int(tri(U=Mu)) == want


def test_gustavson_prefetches_the_rows_of_b_it_will_read(monkeypatch):
    """Σ_j A[i,j]·B[j,k] locates B's row j at A's coordinates: when B is large, the
    j loop prefetches pos[j] of the entry 32 ahead, and the crd and vals of the
    row of the entry 16 ahead (from that pos). Results do not change, in C or on
    the interpreter, which checks that every prefetched index is inside its
    array (rows at the end of B, crd read only inside A's crd)."""
    B = ep.tensor("B", 2, format="csr")
    gus = ep.sum(j, A_csr[i, j] * B[j, k])
    src = ep.compile(gus, output="csr").c_source
    assert "EP_PREFETCH(&B_pos1[A_crd1[(j_q + 32)]]);" in src
    assert "EP_PREFETCH(&B_crd1[j_pf_at + j_pf]);" in src
    assert "EP_PREFETCH(&B_vals[j_pf_at_1 + j_pf_1]);" in src
    M, N = _random_csr(400, 300, 3000, 10), _random_csr(300, 500, 150000, 11)  # N: 1.2 MB
    np.testing.assert_allclose(ep.evaluate(gus, output="csr", A=M, B=N).toarray(),
                               (M @ N).toarray(), rtol=1e-12)
    monkeypatch.setattr(lower, "PREFETCH_MIN_BYTES", 8)
    monkeypatch.setattr(lower, "PREFETCH_DISTANCE", 2)
    sr = ep.semirings.get("real")
    small, Ns = _random_csr(30, 20, 120, 12), _random_csr(20, 25, 200, 13)
    last = sp.csr_array((np.ones(30), (np.arange(30), np.full(30, 19))), shape=(30, 20))
    small = (small + last).tocsr()          # the last row of B is read (pos[20])
    got = _csr_on_interpreter(gus, sr, A=small, B=Ns)
    np.testing.assert_allclose(got.toarray(), (small @ Ns).toarray(), rtol=1e-12)


def test_sorted_walk_over_marks_on_the_interpreter():
    """ForSorted runs its body in ascending order of the listed indices, leaves the
    marks all-zero, and refuses marks that are not exactly the list (or a list
    with repeats); with no marks it only sorts."""
    from etchpy import imp
    m = imp.Machine(ep.semirings.get("real"), {})
    size = imp.Const(200)
    listed = [130, 7, 64, 63, 199]
    walk = imp.seq(imp.Alloc("seen", "index", imp.Const(5), imp.ZERO),
                   imp.Decl("t", "index", imp.ZERO),
                   imp.ForSorted("k", "list", imp.Const(5), size, "bits",
                                 imp.seq(imp.Store("seen", imp.Var("t"), imp.Var("k")),
                                         imp.incr("t"))))
    m.exec(imp.seq(imp.Alloc("list", "index", imp.Const(5), imp.ZERO),
                   imp.Alloc("bits", "bits", imp.sort_bits_words(size), imp.ZERO)))
    for t, k in enumerate(listed):
        m.exec(imp.seq(imp.Store("list", imp.Const(t), imp.Const(k)),
                       imp.SetBit("bits", imp.Const(k), True)))
    assert m.eval(imp.Bit("bits", imp.Const(64))) and not m.eval(imp.Bit("bits", imp.Const(65)))
    m.exec(walk)
    assert list(m.env["seen"]) == sorted(listed) and not m.env["bits"].any()
    m.exec(imp.seq(*(imp.Store("list", imp.Const(t), imp.Const(k))
                     for t, k in enumerate(listed)), imp.SetBit("bits", imp.Const(7), True)))
    with pytest.raises(imp.ImpRuntimeError, match="not exactly"):
        m.exec(walk)                              # only one of the five is marked
    m.exec(imp.SetBit("bits", imp.Const(7), False))
    m.exec(imp.Store("list", imp.Const(1), imp.Const(130)))
    with pytest.raises(imp.ImpRuntimeError, match="distinct"):
        m.exec(imp.ForSorted("k", "list", imp.Const(5), size, None, imp.SKIP))


def test_unfilled_arrays_hold_garbage_on_the_interpreter():
    """Alloc without a fill (and the grown part of a Reserve) is undefined in C; the
    interpreter puts values there that no test expects, so reading one shows."""
    from etchpy import imp
    sr = ep.semirings.get("real")
    m = imp.Machine(sr, {})
    m.exec(imp.seq(imp.Alloc("v", "value", imp.Const(3), None),
                   imp.Alloc("c", "index", imp.Const(2), None),
                   imp.Alloc("z", "index", imp.Const(2), imp.ZERO),
                   imp.Reserve("z", "index", imp.Const(5))))
    assert np.all(m.env["v"] == 918273.645) and np.all(m.env["c"] == 1 << 40)
    assert list(m.env["z"][:2]) == [0, 0] and np.all(m.env["z"][2:] == 1 << 40)


@pytest.mark.parametrize("semiring", ["real", "min_plus", "boolean"])
def test_threads_fill_sparse_rows(semiring):
    """csr outputs on two threads. Element-wise: each row's column stream bounds its
    entries (A+B: both lengths; A∘B: the shorter), the bounds are summed into
    ranges of scratch arrays, rows fill their ranges on threads and are then copied
    into place.
    Gustavson (workspace): each row's distinct touched columns are counted first,
    pos is their prefix sum, and every row then fills its own range."""
    sr = ep.semirings.get(semiring)
    rng = np.random.default_rng(3)
    M = _random_csr(2500, 400, 20000, 1)
    N = _random_csr(2500, 400, 20000, 2)
    P = _random_csr(400, 700, 6000, 4)
    for m in (M, N, P):
        m.data = rng.integers(1, 5, m.nnz).astype(sr.dtype)
    M = M.tolil()
    M[100:300] = 0                                    # empty rows: ranges of length 0
    M = sp.csr_array(M.tocsr())
    M.eliminate_zeros()
    B = ep.tensor("B", 2, format="csr")
    exprs = {"add": A_csr[i, j] + B[i, j], "mul": A_csr[i, j] * B[i, j],
             "gus": ep.sum(j, A_csr[i, j] * B[j, k])}
    kerns = {name: ep.compile(e, output="csr", threads=2, semiring=semiring)
             for name, e in exprs.items()}
    for name in ("add", "mul"):
        assert "rows bounded, filled on 2 threads, then moved" in kerns[name].c_source
    assert "rows counted, then filled, on 2 threads" in kerns["gus"].c_source
    operands = {"add": dict(A=M, B=N), "mul": dict(A=M, B=N), "gus": dict(A=M, B=P)}
    for name, kern in kerns.items():
        got = kern(**operands[name])
        want = ep.evaluate(exprs[name], semiring=semiring, output="csr", **operands[name])
        np.testing.assert_array_equal(got.indptr, want.indptr)
        np.testing.assert_array_equal(got.indices, want.indices)
        np.testing.assert_array_equal(got.data, want.data)
    # the same threaded programs on the Imp interpreter (small inputs)
    small = {name: sp.csr_array(m[90:130, :60] if m is not P else m[:60, :50])
             for name, m in (("M", M), ("N", N), ("P", P))}
    for name, a, b in (("add", "M", "N"), ("mul", "M", "N"), ("gus", "M", "P")):
        got = _csr_on_interpreter(kerns[name].expr, sr, threads=2, A=small[a], B=small[b])
        want = kerns[name](A=small[a], B=small[b])
        for part in ("indptr", "indices", "data"):
            np.testing.assert_array_equal(getattr(got, part), getattr(want, part))


def _random_csf(shape, nnz, seed, fmt="csf"):
    rng = np.random.default_rng(seed)
    coords = np.stack([rng.integers(0, n, nnz) for n in shape])
    coords[0] = np.where(coords[0] % 5 == 2, 0, coords[0])     # some empty slices
    return ep.Tensor.from_coords(coords, rng.integers(1, 5, nnz).astype(float), shape, fmt)


def _levels_on_interpreter(final, fmt, shape):
    """The output arrays a lowered program left in the interpreter's environment."""
    arrays, parents = [], 1
    for k, lv in enumerate(fmt.levels):
        n = shape[fmt.mode_order[k]]
        if isinstance(lv, ep.Dense):
            parents *= n
            continue
        count = int(final[f"out_count{k}"])
        arrays += [final[f"out_pos{k}"][:parents + 1], final[f"out_crd{k}"][:count]]
        parents = count
    return arrays + [final["out_vals"][:parents]]


def _levels(t):
    return [arr for level in t.levels for arr in level.values()] + [t.vals]


@pytest.mark.parametrize("semiring", ["real", "min_plus", "integer"])
def test_fresh_tail_blocks_are_stored_not_added(semiring):
    """TTM into (i,j) fibers with a dense r tail: each appended fiber's block is
    zero and written by nothing but its Σ_k, so with r of extent 16 or 32 the k
    loop adds into a local block that is then stored (the output is never read);
    other extents add into the output as before. One and two threads (rows within
    bounds, and counted), C and the Imp interpreter agree with the reference.
    A sum over two contracted levels under the fiber (Σ_{k,l}) still stores once
    per fiber, not once per k."""
    sr = ep.semirings.get(semiring)
    r_, l_ = ep.indices("r l")
    T = ep.tensor("T", 3, format="csf")
    U = ep.tensor("U", 4, format="csf")
    M, N = ep.tensor("M", 2), ep.tensor("N", 2)
    fibers = ep.Format([ep.Compressed(), ep.Compressed(), ep.Dense()])
    rng = np.random.default_rng(11)
    Tv = _random_csf((30, 25, 20), 500, 4)
    coords = np.array([rng.integers(0, 9, 400), rng.integers(0, 8, 400),
                       rng.integers(0, 7, 400), rng.integers(0, 6, 400)])
    Uv = ep.Tensor.from_coords(coords, rng.integers(1, 4, 400).astype(float), (9, 8, 7, 6),
                               "csf")
    for R in (16, 32, 5):
        Mv = rng.integers(0, 4, (20, R)).astype(sr.dtype)
        Nv = rng.integers(0, 4, (7, R)).astype(sr.dtype)
        cases = [(ep.sum(k, T[i, j, k] * M[k, r_]), {"T": Tv, "M": Mv}),
                 (ep.sum((k, l_), U[i, j, k, l_] * N[k, r_]), {"U": Uv, "N": Nv})]
        for e, inputs in cases:
            inputs = {n: (v.astype(sr.dtype) if isinstance(v, np.ndarray) else v)
                      for n, v in inputs.items()}
            want = ep.evaluate(e, semiring=semiring, backend="reference", **inputs)
            for threads in (1, 2):
                kern = ep.compile(e, output=fibers, semiring=semiring, threads=threads,
                                  optimize=False)
                src = kern.c_source
                stored = re.findall(r"(\w+)\[\(\(out_p1 \* (16|32)\) \+ r_t\w*\)\] = (\w+)\[", src)
                assert {n for _, n, _ in stored} == {"16", "32"}, src
                assert all(not rhs.startswith("out") for *_, rhs in stored)
                got = kern(**inputs)
                np.testing.assert_array_equal(got.to_dense(), want)
                final, _, shape = _on_interpreter(e, sr, kern.out_format, inputs, threads)
                for a, b in zip(_levels_on_interpreter(final, kern.out_format, shape),
                                _levels(got), strict=True):
                    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("semiring", ["real", "min_plus"])
@pytest.mark.parametrize("counted", [False, True])
def test_threads_fill_doubly_compressed_and_tailed_rows(semiring, counted, monkeypatch):
    """Outputs whose first level is compressed (dcsr, TTM's fibers), or that end
    in dense levels (a tail), filled on 2 and 3 threads: a compressed first level
    appends one coordinate per iteration of the outer loop, so rows are the
    iterations. Rows filled within bounds are moved into place when every row
    met its bound (TTM, A·x: the rows are an operand's segments) and copied,
    tail blocks and all, when some did not (an intersection). With `counted`
    every such output takes the counting pass instead. The arrays equal one
    thread's, and the reference's values, on C and on the Imp interpreter. (The
    forced kernels get a name of their own, so no cached program is reused.)"""
    from etchpy.lower import core as lower
    if counted:
        monkeypatch.setattr(lower.Emitter, "parallel_rows", lower.Emitter.counted_rows)
    sr = ep.semirings.get(semiring)
    r_ = ep.indices("r")[0]
    T, S = ep.tensor("T", 3, format="csf"), ep.tensor("S", 2, format="dcsr")
    T2 = ep.tensor("T", 3, format=ep.Format([ep.Dense(), ep.Compressed(), ep.Compressed()]))
    M, x = ep.tensor("M", 2), ep.tensor("x", 1)
    G = ep.tensor("G", 2, format="csr")
    D = ep.tensor("D", 2, format="dcsr")
    fibers = ep.Format([ep.Compressed(), ep.Compressed(), ep.Dense()])
    rows = ep.Format([ep.Dense(), ep.Compressed(), ep.Dense()])
    rng = np.random.default_rng(7)
    Tv, T2v = _random_csf((40, 30, 20), 700, 1), _random_csf((40, 30, 20), 700, 1, T2.format)
    Sv = ep.Tensor.from_scipy(_random_csr(30, 20, 90, 2), "dcsr")
    Dv = ep.Tensor.from_coords(np.array([rng.integers(0, 50, 300) * 3, rng.integers(0, 60, 300)]),
                               rng.integers(1, 5, 300).astype(float), (150, 60), "dcsr")
    Mv, xv = rng.integers(0, 3, (20, 6)).astype(float), rng.integers(0, 3, 60).astype(float)
    Gv = _random_csr(150, 60, 3000, 3)
    cases = [  # expression, output, inputs, moved into place (exact bounds)?
        (ep.sum(k, T[i, j, k] * M[k, r_]), fibers, {"T": Tv, "M": Mv}, True),
        (ep.sum(k, T[i, j, k] * S[j, k] * M[k, r_]), fibers, {"T": Tv, "S": Sv, "M": Mv}, False),
        (ep.sum(k, T2[i, j, k] * M[k, r_]), rows, {"T": T2v, "M": Mv}, True),
        (D[i, j] * x[j], "dcsr", {"D": Dv, "x": xv}, True),
        (D[i, j] * G[i, j], "dcsr", {"D": Dv, "G": Gv}, False)]
    for e, fmt, inputs, exact in cases:
        inputs = {n: v.astype(sr.dtype) if isinstance(v, np.ndarray) else v
                  for n, v in inputs.items()}
        serial = ep.compile(e, output=fmt, semiring=semiring)(**inputs)
        want = ep.evaluate(e, semiring=semiring, backend="reference", **inputs)
        np.testing.assert_array_equal(serial.to_dense(), want)
        for threads in (2, 3):
            kern = ep.compile(e, output=fmt, semiring=semiring, threads=threads,
                              name="forced_count" if counted else "etchpy_kernel")
            assert ("rows counted" if counted else "rows bounded") in kern.c_source
            assert (" = move " in imp.show(kern.program.body)) == (not counted)
            got = kern(**inputs)
            for a, b in zip(_levels(got), _levels(serial), strict=True):
                np.testing.assert_array_equal(a, b)
        if not counted:     # was every row's bound met, so the scratch was moved?
            bd = np.diff(_on_interpreter(e, sr, kern.out_format, inputs, 2)[0]["bd_pos"])
            assert (bd == np.diff(serial.levels[1]["pos"])).all() == exact
        final, _, shape = _on_interpreter(e, sr, kern.out_format, inputs, 2)
        for a, b in zip(_levels_on_interpreter(final, kern.out_format, shape),
                        _levels(serial), strict=True):
            np.testing.assert_array_equal(a, b)


def test_threads_split_the_outer_loop_of_dense_outputs():
    B = ep.tensor("B", 2)
    kern = ep.compile(ep.sum(j, A_csr[i, j] * B[j, k]), threads=2)
    assert "omp parallel for" in kern.c_source and "threads:    2" in kern.explain()
    rng = np.random.default_rng(1)
    M = _random_csr(3000, 200, 20000, 3)
    X = rng.random((200, 16))
    np.testing.assert_allclose(kern(A=M, B=X), M @ X, rtol=1e-12)
    # a coordinates output (sorted afterwards) stays serial
    assert "omp parallel" not in ep.compile(A_csr[i, j] * A_csr[i, j], output="coo",
                                            threads=2).c_source
    with pytest.raises(ep.EtchpyError):
        ep.compile(SPMV, threads=0)


def test_a_threaded_loops_body_is_a_function_of_its_own():
    """Each loop split across threads runs its blocks of rows through a static
    function whose parameters are the names the body reads from outside: the
    arrays it writes as plain restrict pointers, the rest const; scalars by value.
    Serial kernels have no such function."""
    B = ep.tensor("B", 2)
    src = ep.compile(ep.sum(j, A_csr[i, j] * B[j, k]), threads=2).c_source
    m = re.search(r"static EP_NOINLINE void (ep_rows_0)\(([^)]*)\)", src)
    assert m, src
    params = {p.split()[-1]: p for p in (q.strip() for q in m.group(2).split(","))}
    assert params["out"] == "val_t *restrict out"
    assert params["A_vals"] == "const val_t *restrict A_vals"
    assert params["A_pos1"] == "const idx_t *restrict A_pos1"
    assert params["lo"] == "int64_t lo" and params["hi"] == "int64_t hi"
    kernel = src[src.index("int etchpy_kernel("):]
    assert re.search(r"ep_rows_0\(\w+_lo, \w+_hi,", kernel) and "A_vals[" not in kernel
    assert "ep_rows" not in ep.compile(ep.sum(j, A_csr[i, j] * B[j, k])).c_source
    # the analysis it rests on
    body = imp.seq(imp.Decl("t", "value", imp.Load("x", imp.Var("q"))),
                   imp.Assign("t", imp.Var("u")),
                   imp.Accum("y", imp.Var("q"), imp.Var("t")),
                   imp.Seek("p", imp.Var("e"), "crd", imp.Var("q"), imp.Const(True, "bool")))
    assert imp.declared_in(body) == {"t"}
    assert imp.scalars_assigned(body) == {"t", "p"}
    assert imp.arrays_written(body) == {"y"}


@pytest.mark.parametrize("semiring", ["real", "min_plus", "integer", "boolean"])
def test_threads_split_full_reductions_with_one_accumulator_per_block(semiring):
    """Σ_{i,j} A[i,j]·x[j]: every level contracted, so the rows are cut into fixed
    blocks that threads take dynamically, each block adding into its own partial;
    the partials are added in block order."""
    x = ep.tensor("x", 1)
    e = ep.sum((i, j), A_csr[i, j] * x[j])
    kern = ep.compile(e, threads=2, semiring=semiring)
    src = kern.c_source
    assert "schedule(dynamic, 1) num_threads(2)" in src and "acc_part[32]" in src
    assert "one accumulator per block" in src
    sr = ep.semirings.get(semiring)
    M = _random_csr(700, 90, 4000, 5)
    M.data = np.random.default_rng(0).integers(1, 5, M.nnz).astype(M.data.dtype)
    xv = np.random.default_rng(1).integers(0, 4, 90).astype(float)
    M, xv = M.astype(sr.dtype), xv.astype(sr.dtype)
    want = ep.evaluate(e, semiring=semiring, backend="reference", A=M, x=xv)
    got = kern(A=M, x=xv)
    assert got == pytest.approx(want, rel=1e-12)
    assert kern(A=M, x=xv) == got                       # the same partition every call
    serial = ep.compile(e, threads=1, semiring=semiring)
    assert not re.search(r"\bomp\b", "\n".join(ln for ln in serial.c_source.splitlines()
                                              if not ln.startswith("#")))


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


def test_tensor_inputs_are_bound_once_and_rebound_when_replaced():
    """A Tensor passed again reuses its validated binding; replacing its arrays, or
    passing it to a kernel declaring another format, binds afresh."""
    x = ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A_csr[i, j] * x[j]))
    M = _random_csr(20, 10, 60, 9)
    T = ep.Tensor.from_scipy(M, "csr")
    xv = np.arange(10.0)
    np.testing.assert_allclose(kern(A=T, x=xv), M @ xv)
    assert len(T._etchpy_bound) == 1
    np.testing.assert_allclose(kern(A=T, x=xv), M @ xv)
    with pytest.raises(AttributeError):
        T.vals = T.vals * 2                      # a Tensor's arrays cannot be replaced
    want = 2 * (M @ xv)
    T.vals[:] *= 2                               # its values may be written in place
    np.testing.assert_allclose(kern(A=T, x=xv), want)
    csc = ep.tensor("A", 2, "csc")
    other = ep.compile(ep.sum(j, csc[i, j] * x[j]))
    np.testing.assert_allclose(other(A=T, x=xv), want)   # converted for csc
    assert len(T._etchpy_bound) == 2


def _with_index_dtype(M, dtype):
    M = M.copy()
    M.indptr, M.indices = M.indptr.astype(dtype), M.indices.astype(dtype)
    return M


def test_a_tensor_reused_across_index_types_and_argument_orders():
    """A Tensor's C arguments are kept per library: an int32 Tensor meets an int64
    one (int64 library, its indices copied) and then an int32 one (int32 library),
    in either keyword order. Writes into its values are seen by later calls, a
    new shape is checked again, and swapped shapes are not taken for known ones."""
    B = ep.tensor("B", 2, "csr")
    kern = ep.compile(A_csr[i, j] * B[i, j], output="csr")
    M1, M2 = _random_csr(30, 20, 150, 1), _random_csr(30, 20, 150, 2)
    T32 = ep.Tensor.from_scipy(_with_index_dtype(M1, np.int32), "csr")
    T64 = ep.Tensor.from_scipy(_with_index_dtype(M2, np.int64), "csr")
    S32 = ep.Tensor.from_scipy(_with_index_dtype(M2, np.int32), "csr")
    want = M1.multiply(M2).toarray()
    for _ in range(2):
        np.testing.assert_allclose(kern(A=T32, B=T64).toarray(), want)
        np.testing.assert_allclose(kern(B=S32, A=T32).toarray(), want)
    T32.vals[:] *= 2                                 # the same array, written in place
    np.testing.assert_allclose(kern(A=T32, B=S32).toarray(), 2 * want)
    wide = ep.Tensor.from_scipy(_random_csr(30, 21, 150, 3), "csr")
    with pytest.raises(ep.InputError, match="different sizes"):
        kern(A=T32, B=wide)
    x = ep.tensor("x", 1)
    y = ep.tensor("y", 1)
    outer = ep.compile(x[i] * y[j])
    xv, yv = np.arange(3.0), np.arange(5.0)
    assert outer(x=xv, y=yv).shape == (3, 5)
    assert outer(y=xv, x=yv).shape == (5, 3)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("semiring", ["real", "min_plus"])
def test_short_segments_intersect_at_once(index_dtype, semiring):
    """An innermost intersection of two segments of at most 4 entries is found
    with one all-pairs compare (SSE2 for int32, AVX2 for int64, the merge
    elsewhere). Lanes past a segment's end hold the next segment's coordinates,
    which must not match: A∘B below is empty, though row 0 of A holds 1, row 0
    of B holds 2 and row 1 of each starts with the other's. The same programs
    run on the Imp interpreter."""
    sr = ep.semirings.get(semiring)
    B = ep.tensor("B", 2, format="csr")
    e = A_csr[i, j] * B[i, j]
    kern = ep.compile(e, output="csr", semiring=semiring)
    assert "ep_short_match(" in kern.c_source

    def csr(indptr, indices, n):
        m = sp.csr_array((np.arange(1.0, len(indices) + 1), np.asarray(indices, index_dtype),
                          np.asarray(indptr, index_dtype)), shape=(len(indptr) - 1, n))
        m.data = m.data.astype(sr.dtype)
        return m
    # four rows each, padded with rows of 4 so that every segment has 4 readable entries
    M = csr([0, 1, 3, 7, 11, 15], [1, 2, 5, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3], 8)
    N = csr([0, 1, 3, 7, 11, 15], [2, 1, 6, 4, 5, 6, 7, 0, 1, 2, 3, 0, 1, 2, 3], 8)
    want = ep.evaluate(e, semiring=semiring, backend="reference", output="csr", A=M, B=N)
    assert want.nnz == 8                           # only rows 3 and 4 meet
    for got in (kern(A=M, B=N), _csr_on_interpreter(e, sr, A=M, B=N)):
        np.testing.assert_array_equal(got.indptr, want.indptr)
        np.testing.assert_array_equal(got.indices, want.indices)
        np.testing.assert_array_equal(got.data, want.data)
    # inner3 on random csf tensors: fibers of 1-3 entries, most of them short
    T, U = _sparse3(60, 20000, 1), _sparse3(60, 20000, 2)
    if index_dtype == np.int64:
        T, U = (ep.Tensor(t.shape, t.format, [{k: a.astype(np.int64) for k, a in lv.items()}
                                              for lv in t.levels], t.vals, t.fill)
                for t in (T, U))
    Tv, Uv = ep.tensor("T", 3, format="csf"), ep.tensor("U", 3, format="csf")
    inner = ep.sum((i, j, k), Tv[i, j, k] * Uv[i, j, k])
    np.testing.assert_allclose(ep.evaluate(inner, T=T, U=U),
                               np.sum(T.to_dense() * U.to_dense()), rtol=1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), semiring=st.sampled_from(["real", "min_plus", "boolean"]),
       index_dtype=st.sampled_from([np.int32, np.int64]),
       shape=st.tuples(st.integers(1, 12), st.integers(1, 9)),
       density=st.floats(0.05, 0.7), output=st.sampled_from(["dense", "csr"]))
def test_short_intersections_equal_reference(seed, semiring, index_dtype, shape, density,
                                             output):
    """Element-wise products and row dot products of random csr matrices with rows
    of 0-9 entries: short segments next to long ones and at the ends of the
    arrays, on C (all-pairs way where it fits) and on streams, against the
    reference."""
    sr = ep.semirings.get(semiring)
    rng = np.random.default_rng(seed)

    def rand_csr():
        mask = rng.random(shape) < density
        vals = rng.integers(1, 5, shape).astype(sr.dtype) * mask
        m = sp.csr_array(vals)
        m.eliminate_zeros()
        return sp.csr_array((m.data, m.indices.astype(index_dtype),
                             m.indptr.astype(index_dtype)), shape=shape)
    B = ep.tensor("B", 2, format="csr")
    M, N = rand_csr(), rand_csr()
    check_backends(A_csr[i, j] * B[i, j], {"A": M, "B": N}, semiring=semiring, output=output)
    check_backends(ep.sum(j, A_csr[i, j] * B[i, j]), {"A": M, "B": N}, semiring=semiring)


def test_short_intersections_without_simd_merge(monkeypatch):
    """Built without AVX2 (CFLAGS=-O2), the int64 kernel has no all-pairs compare
    and its short way is the two-finger merge: the same results."""
    monkeypatch.setenv("CFLAGS", "-O2")
    B = ep.tensor("B", 2, format="csr")
    kern = ep.Kernel(A_csr[i, j] * B[i, j], output="csr")
    M, N = _random_csr(300, 8, 700, 21), _random_csr(300, 8, 700, 22)    # rows of 0-6
    wide = [sp.csr_array((m.data, m.indices.astype(np.int64), m.indptr.astype(np.int64)),
                         shape=m.shape) for m in (M, N)]
    got = kern(A=wide[0], B=wide[1])
    assert kern.library("int64_t").flags[-1] == "-O2"
    np.testing.assert_array_equal(got.toarray(), M.multiply(N).toarray())


@pytest.mark.parametrize("semiring", ["real", "min_plus", "integer"])
@pytest.mark.parametrize("rank", [3, 16, 32])
@pytest.mark.parametrize("threads", [1, 2])
def test_output_blocks_in_registers_equal_reference(semiring, rank, threads):
    """MTTKRP adds, over two contracted levels, into one block out[i, 0:rank]:
    with rank 16 or 32 (BLOCK_SIZES) the nest runs with the rank a constant and
    the block in a local array, stored into out once per i; with rank 3 the
    nest writes out directly. SpMM (one contracted level) takes the block too,
    as out is zero on entry and its one step visits each i once (FRESH); the
    same SpMM with a second term that adds into out in a step of its own does
    not. All agree with the reference, on C and on the interpreter."""
    sr = ep.semirings.get(semiring)
    i, j, k, r = ep.indices("i j k r")
    B = ep.tensor("B", 3, format="csf")
    C, D, X = ep.tensor("C", 2), ep.tensor("D", 2), ep.tensor("X", 2)
    A = ep.tensor("A", 2, format="csr")
    rng = np.random.default_rng(rank)
    coords = np.unique(rng.integers(0, 9, (3, 60)), axis=1)
    vals = rng.integers(1, 5, coords.shape[1]).astype(sr.dtype)
    Bt = ep.Tensor.from_coords(coords, vals, (9, 9, 9), "csf", semiring=sr)
    M = _random_csr(12, 9, 40, 7)
    M.data = np.rint(M.data * 4 + 1)
    Cv, Dv, Xv = (rng.integers(0, 3, (9, rank)).astype(sr.dtype) for _ in range(3))
    Y, P, Q = ep.tensor("Y", 2), ep.tensor("P", 2, format="csr"), ep.tensor("Q", 2, format="csr")
    Yv = rng.integers(0, 3, (12, rank)).astype(sr.dtype)
    cases = [(ep.sum((j, k), B[i, j, k] * C[j, r] * D[k, r]), {"B": Bt, "C": Cv, "D": Dv},
              True),
             (ep.sum(j, A[i, j] * X[j, r]), {"A": M.astype(sr.dtype), "X": Xv}, True),
             (ep.sum(j, A[i, j] * X[j, r]) + Y[i, r], {"A": M.astype(sr.dtype), "X": Xv,
                                                      "Y": Yv}, False),
             # loops (j, i, k, r): the contracted j above i visits each out[i, :]
             # once per j, so the block under k (one contracted level) is not FRESH
             (ep.sum((j, k), P[j, i] * Q[i, k] * X[k, r]),
              {"P": _random_csr(9, 12, 30, 8).astype(sr.dtype),
               "Q": _random_csr(12, 9, 40, 9).astype(sr.dtype), "X": Xv}, False)]
    for e, inputs, blocked in cases:
        order = ("j", "i", "k", "r") if "P" in inputs else None
        kern = ep.compile(e, semiring=sr, threads=threads, order=order)
        assert ("if (dim_r == 16) {" in kern.c_source) == blocked, kern.explain()
        assert ("if (dim_r == 32) {" in kern.c_source) == blocked
        if blocked:
            assert re.search(r"out\[\(\(i_\w* \* (16|32)\) \+ r_t\w*\)\] = r_blk", kern.c_source)
        want = ep.evaluate(e, semiring=sr, backend="reference", **inputs)
        assert_same(kern(**inputs), want, sr, what=str(e))
        final, _, shape = _on_interpreter(e, sr, None, inputs, threads)
        assert_same(final["out"].reshape(shape), want, sr, what=str(e))
