"""imp.Gemm in C: the runtime binds scipy's gemm into the kernel when it loads
it; an unbound kernel runs the fallback loops, with the same results."""
import ctypes

import numpy as np
import pytest

import etchpy as ep
from etchpy.c.gemm import BIND_SYMBOL
from etchpy.runtime import blas

pytestmark = pytest.mark.usefixtures("shared_cache")

i, j, k, b = ep.indices("i j k b")


def test_runtime_binds_blas_and_fallback_loops_agree():
    A, B = ep.tensor("A", 2), ep.tensor("B", 2)
    kern = ep.compile(ep.sum(j, A[i, j] * B[j, k]))
    rng = np.random.default_rng(2)
    a, bm = rng.random((40, 30)), rng.random((30, 20))
    np.testing.assert_allclose(kern(A=a, B=bm), a @ bm, rtol=1e-13)
    lib = kern.library("int64_t")
    assert blas.bind(lib, kern.source("int64_t").c)       # bound when first loaded
    assert "ep_gemm_ready" in kern.source("int64_t").c
    bind = getattr(ctypes.CDLL(str(lib.path)), BIND_SYMBOL)
    bind.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int]
    bind(None, None, None, None, 0)                                  # unbound: the loops run
    try:
        np.testing.assert_allclose(kern(A=a, B=bm), a @ bm, rtol=1e-13)
    finally:
        bind(*blas.gemm_pointers())
    np.testing.assert_allclose(kern(A=a, B=bm), a @ bm, rtol=1e-13)


def test_batched_gemm_renders_a_loop_of_offsets_per_batch_index():
    P, Q = ep.tensor("P", 3), ep.tensor("Q", 3)
    kern = ep.compile(ep.sum(j, P[b, i, j] * Q[b, j, k]))
    text = kern.source("int64_t").c
    assert "for (int64_t out_b0 = 0; out_b0 < dim_b; out_b0++)" in text
    assert "out + out_b0 * (dim_i * dim_k)" in text
    rng = np.random.default_rng(3)
    p, q = rng.random((3, 4, 5)), rng.random((3, 5, 6))
    np.testing.assert_allclose(kern(P=p, Q=q), p @ q, rtol=1e-13)


def test_library_without_a_dense_product_is_not_bound():
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]))
    src = kern.source("int64_t").c
    assert "ep_gemm" not in src
    assert not blas.bind(kern.library("int64_t"), src)


def test_empty_extents_run_the_loops():
    """BLAS refuses zero extents; the kernel's loops handle them."""
    A, B = ep.tensor("A", 2), ep.tensor("B", 2)
    kern = ep.compile(ep.sum(j, A[i, j] * B[j, k]))
    for m, n, kk in [(0, 3, 4), (3, 0, 4), (3, 4, 0)]:
        a, bm = np.ones((m, kk)), np.ones((kk, n))
        np.testing.assert_array_equal(kern(A=a, B=bm), a @ bm)


_CHILD = r"""
import sys
import numpy as np
import etchpy as ep
from etchpy.runtime import blas
a, b = np.random.default_rng(0).random((30, 20)), np.random.default_rng(1).random((20, 10))
kern = ep.compile("C[i, k] = A[i, j] * B[j, k]")
np.testing.assert_allclose(kern(A=a, B=b), a @ b, rtol=1e-13)
assert blas._bound, "not bound"
print(blas.source(), "scipy.linalg" in sys.modules)
module = blas.load_cython_blas()                # step 3, as without a bundled OpenBLAS
print("scipy.linalg" in sys.modules)
import scipy.linalg.cython_blas as cb
print(cb is module)
"""


def test_a_first_blas_call_does_not_import_scipy_linalg(tmp_path):
    """A new process binds gemm without running scipy.linalg's __init__: from the
    OpenBLAS numpy or a scipy wheel bundles, else from cython_blas loaded on its own
    (the module that a later `import scipy.linalg` hands out)."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, ETCHPY_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out[0] in ("numpy", "bundled", "capsules") and out[1:] == ["False", "False", "True"]


@pytest.mark.parametrize("package", ["numpy", "scipy"])
def test_each_bundled_openblas_is_called_with_its_own_extent_width(package):
    """numpy's OpenBLAS takes 64-bit extents (ILP64), scipy's int ones: a kernel
    bound to either computes the same products, gemm and gemv alike."""
    pointers = blas.bundled_library(package)
    if pointers is None:
        pytest.skip(f"no OpenBLAS bundled with {package} here")
    A, B = ep.tensor("A", 2), ep.tensor("B", 2)
    kern = ep.compile(ep.sum(j, A[i, j] * B[j, k]))
    rng = np.random.default_rng(5)
    cases = [(rng.random((40, 30)), rng.random((30, 20))),
             (rng.random((1, 30)), rng.random((30, 20))),
             (rng.random((40, 30)), rng.random((30, 1)))]
    for a, bm in cases:                 # each size class's library, loaded and bound
        kern(A=a, B=bm)
    binds = [getattr(ctypes.CDLL(path), BIND_SYMBOL) for path in sorted(blas._bound)]
    for bind in binds:
        bind.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int]
        bind(*pointers)
    try:
        for a, bm in cases:
            np.testing.assert_allclose(kern(A=a, B=bm), a @ bm, rtol=1e-13)
    finally:
        for bind in binds:
            bind(*blas.gemm_pointers())


def _chain():
    A, B, C = ep.tensor("A", 2), ep.tensor("B", 2), ep.tensor("C", 2)
    (l,) = ep.indices("l")
    return ep.sum(k, ep.sum(j, A[i, j] * B[j, k]) * C[k, l]), (i, l)


def test_a_gemm_sets_its_target_unfilled():
    """A temporary and an output that a GEMM sets are not zero-filled first: the
    temporary is allocated unfilled, each Gemm overwrites, the output takes no
    zeroed flag; the fallback loops clear the target before adding (unbound,
    zero extents), so a garbage `out` buffer still gets the product. The Imp
    interpreter, which fills an unfilled array with garbage, agrees."""
    from etchpy import imp
    from etchpy.imp import Alloc, Gemm
    from etchpy.testing import imp_evaluate
    e, out = _chain()
    kern = ep.compile(e, out_indices=out)
    rng = np.random.default_rng(4)
    ins = {"A": rng.random((9, 8)), "B": rng.random((8, 7)), "C": rng.random((7, 6))}
    want = ins["A"] @ ins["B"] @ ins["C"]
    np.testing.assert_allclose(kern(**ins), want, rtol=1e-12)
    prog = kern._current().compiled.program
    body = list(imp.statements(prog.body))
    gemms = [s for s in body if isinstance(s, Gemm)]
    assert len(gemms) == 2 and all(g.overwrite for g in gemms)
    assert [s.fill for s in body if isinstance(s, Alloc) and s.array == gemms[0].c_array] == [None]
    assert not any(p.kind == "out_zeroed" for p in prog.params)
    np.testing.assert_allclose(imp_evaluate(e, ins, out_indices=out), want, rtol=1e-12)
    lib = kern.library("int64_t")
    bind = getattr(ctypes.CDLL(str(lib.path)), BIND_SYMBOL)
    bind.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int]
    bind(None, None, None, None, 0)                                  # unbound: the loops run
    try:
        buf = np.full((9, 6), np.nan)
        np.testing.assert_allclose(kern(**ins, out=buf), want, rtol=1e-12)
    finally:
        bind(*blas.gemm_pointers())
    for m, kk, n in [(3, 0, 4), (0, 2, 3), (2, 3, 0)]:
        small = {"A": np.ones((m, kk)), "B": np.ones((kk, 5)), "C": np.ones((5, n))}
        buf = np.full((m, n), np.nan)
        np.testing.assert_array_equal(kern(**small, out=buf), np.ones((m, kk)) @ small["B"]
                                      @ small["C"])
