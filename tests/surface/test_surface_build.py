"""Issue 21, trap 9: `Kernel.build(**example_inputs)` builds the shared object for
that input signature ahead of time, without running the kernel."""
import numpy as np
import scipy.sparse as sp

import etchpy as ep
from etchpy.runtime import build as build_mod

i, j = ep.indices("i j")
A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
SPMV = ep.sum(j, A[i, j] * x[j])
M = sp.random(20, 10, density=0.3, format="csr", random_state=4)


def test_build_compiles_the_signature_of_the_example_inputs(tmp_path, monkeypatch):
    monkeypatch.setenv("ETCHPY_CACHE_DIR", str(tmp_path))   # an empty cache
    kern = ep.compile(SPMV, name="ahead_of_time")
    assert not list(tmp_path.rglob("ahead_of_time*.so"))
    x32 = np.ones(10, np.float32)
    assert kern.build(A=M.astype(np.float32), x=x32) is kern
    built = list(tmp_path.rglob("ahead_of_time*.so"))
    assert len(built) == 1                         # the float32, int32-index variant
    compiles = build_mod.stats["compiles"]
    y = kern(A=M.astype(np.float32), x=x32)
    assert build_mod.stats["compiles"] == compiles  # nothing left to build
    assert not set(tmp_path.rglob("ahead_of_time*.so")) - set(built)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, M @ np.ones(10), rtol=1e-6)
