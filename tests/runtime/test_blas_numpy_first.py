"""BLAS kernels call numpy's own OpenBLAS even when scipy.linalg.cython_blas is
imported (Tuning.blas_numpy_first; runtime.blas): the gemv numpy's `a_F @ v` calls,
and one BLAS thread pool in the process. Off, scipy's capsules come first (the
order before). Either way the products agree with numpy's for every order of the
matrix and every kind of vector."""
import os
import subprocess
import sys

import numpy as np
import pytest

import etchpy as ep
from etchpy.runtime import blas

i, j = ep.indices("i j")
MATVEC = ep.sum(j, ep.tensor("M", 2)[i, j] * ep.tensor("x", 1)[j])

_CHILD = r"""
import numpy as np
import scipy.linalg.cython_blas
import etchpy as ep
from etchpy.runtime import blas
i, j = ep.indices("i j")
e = ep.sum(j, ep.tensor("M", 2)[i, j] * ep.tensor("x", 1)[j])
a, v = np.random.default_rng(0).random((40, 30)), np.random.default_rng(1).random(30)
for first in (True, False):
    kern = ep.compile(e, tuning=ep.Tuning(blas_numpy_first=first))
    for m in (a, np.asfortranarray(a)):
        np.testing.assert_allclose(kern(M=m, x=v), m @ v, rtol=1e-13)
    print(blas.source(first))
"""


def test_numpys_openblas_comes_before_an_imported_cython_blas():
    """In this process (scipy.linalg imported): the addresses bound by default are
    numpy's OpenBLAS's; with the switch off, the capsules' once cython_blas was
    imported before the first off kernel (else numpy's too, as the order says)."""
    from scipy.linalg import cython_blas
    numpy_own = blas.bundled_library("numpy")
    if numpy_own is None:
        pytest.skip("numpy bundles no OpenBLAS here")
    assert blas.gemm_pointers() == numpy_own and blas.source() == "numpy"
    off = blas.gemm_pointers(numpy_first=False)
    assert off == {"capsules": blas._from_capsules(cython_blas),
                   "numpy": numpy_own}[blas.source(numpy_first=False)]


@pytest.mark.slow
def test_an_imported_cython_blas_does_not_win_over_numpys_openblas():
    """A new process that imported scipy.linalg.cython_blas before its first BLAS
    kernel binds numpy's OpenBLAS by default (the old order bound scipy's capsules,
    a second OpenBLAS whose gemv "N" ran 1.1-1.2x numpy's on this host), and the
    capsules with the switch off (a new process: about 2 s, marked slow)."""
    if blas.bundled_library("numpy") is None:
        pytest.skip("numpy bundles no OpenBLAS here")
    for first in (True, False):         # built here, the child loads them from the cache
        kern = ep.compile(MATVEC, tuning=ep.Tuning(blas_numpy_first=first))
        a = np.ones((40, 30))
        kern(M=a, x=np.ones(30)), kern(M=np.asfortranarray(a), x=np.ones(30))
    out = subprocess.run([sys.executable, "-c", _CHILD], env=dict(os.environ),
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["numpy", "capsules"]


@pytest.mark.parametrize("first", [True, False])
@pytest.mark.parametrize("order", ["C", "F", "T"])
@pytest.mark.parametrize("vec", ["float64", "float32", "strided", "int32"])
def test_matvec_of_every_order_and_vector_kind_agrees_with_numpy(first, order, vec):
    kern = ep.compile(MATVEC, tuning=ep.Tuning(blas_numpy_first=first))
    rng = np.random.default_rng(3)
    a = rng.random((37, 29)) - 0.5
    m = {"C": a, "F": np.asfortranarray(a), "T": np.ascontiguousarray(a.T).T}[order]
    v = rng.random(58) - 0.5
    x = {"float64": v[:29], "float32": v[:29].astype(np.float32), "strided": v[::2],
         "int32": (v[:29] * 100).astype(np.int32)}[vec]
    for _ in range(3):                  # the general path, then the call plan
        np.testing.assert_allclose(kern(M=m, x=x), m @ x.astype(np.float64), rtol=1e-12,
                                   atol=1e-12)
