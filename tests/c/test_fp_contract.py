"""Tuning.fp_contract: a float kernel with a dense output asks its compiler to
contract multiply-adds into FMA instructions (a pragma before anything else in
the file), which gcc's -std=c99 otherwise keeps off; other kernels' C is
unchanged."""
import ast
import os
import platform
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import tuning
from conftest import USER_CFLAGS

# contraction is gcc's at -O2 and above: etchpy's own flags, not the suite's -O1
pytestmark = pytest.mark.usefixtures("full_flags")

i, j = ep.indices("i j")
A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
SPMV = ep.sum(j, A[i, j] * x[j])
PRAGMA = '#pragma GCC optimize ("fp-contract=fast")'


@pytest.mark.parametrize("name", ["real", "real32", "complex", "max_times"])
def test_a_float_kernel_that_multiplies_asks_for_contraction(name):
    src = ep.compile(SPMV, semiring=ep.semirings.get(name)).c_source
    assert PRAGMA in src and "#pragma STDC FP_CONTRACT ON" in src
    assert src.index(PRAGMA) < src.index("#include")     # headers' inline functions too


@pytest.mark.parametrize("name", ["integer", "boolean", "min_plus", "max_plus"])
def test_kernels_with_no_float_multiply_are_unchanged(name):
    assert "FP_CONTRACT" not in ep.compile(SPMV, semiring=ep.semirings.get(name)).c_source


def test_a_sparse_output_keeps_every_product_rounded():
    """A sparse output's structure may depend on which cells sum to an exact zero:
    contracted, x·y − x·y would be x·y's rounding error, not 0."""
    B = ep.tensor("B", 2, format="csr")
    _, _, k_ = ep.indices("i j k")
    src = ep.compile(ep.sum(j, A[i, j] * B[j, k_]), output="csr").c_source
    assert "FP_CONTRACT" not in src
    v = 0.1 * (1 + 2.0**-30)
    M = sp.csr_array(np.array([[v, -v]]))
    N = sp.csr_array(np.array([[3.0], [3.0]]))
    got = ep.compile(ep.sum(j, A[i, j] * B[j, k_]), output="csr")(A=M, B=N)
    assert (M @ N).nnz == 0 and np.all(got.toarray() == 0.0)


@pytest.mark.parametrize("t", [tuning.NOOPT, tuning.DEFAULT.with_(fp_contract=False)])
def test_the_switch_turns_it_off(t):
    assert "FP_CONTRACT" not in ep.compile(SPMV, tuning=t).c_source


def _has_fma() -> bool:
    if platform.machine() in ("aarch64", "arm64"):
        return True
    try:
        with open("/proc/cpuinfo") as f:
            return " fma " in f.read(4096)
    except OSError:
        return False


ROW_SCRIPT = """
import numpy as np, scipy.sparse as sp, etchpy as ep
from etchpy import tuning
i, j = ep.indices("i j")
A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
SPMV = ep.sum(j, A[i, j] * x[j])
a, b = 1 + 2.0**-30, 1 - 2.0**-30
M = sp.csr_array((np.array([-1.0, a]), np.array([0, 1]), np.array([0, 2])), shape=(1, 2))
v = np.array([1.0, b])
build = ep.runtime.build
native = "-march=native" in build._final_flags(build.find_compiler(),
                                               build.cache_directory(), False)
print(repr((float(ep.compile(SPMV, tuning=tuning.NOOPT)(A=M, x=v)[0]),
            float(ep.compile(SPMV)(A=M, x=v)[0]), native)))
"""


def test_a_row_rounds_once_per_multiply_add(tmp_path):
    """Row [-1, a] times x = [1, b] with a·b = 1 - 2⁻⁶⁰ exactly: unfused, a·b rounds
    to 1 and the sum is 0; fused, it is -2⁻⁶⁰. Both are within the tests' tolerance
    of the exact sum; the unfused build (NOOPT: no lanes either) gives 0. Run as a
    user's first call: a process and a kernel cache of its own, built with the caller's
    CFLAGS or etchpy's own flags (under pytest-xdist the workers once read the suite's
    -Og default as the caller's, where gcc does not contract: tests/conftest.py)."""
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "CC") if k in os.environ}
    env["ETCHPY_CACHE_DIR"] = str(tmp_path / "cache")
    if USER_CFLAGS is not None:
        env["CFLAGS"] = USER_CFLAGS
    done = subprocess.run([sys.executable, "-c", ROW_SCRIPT], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    plain, fused, native = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    assert plain == 0.0
    assert fused in (0.0, -2.0**-60)
    if _has_fma() and native and USER_CFLAGS is None:     # etchpy's flags contract
        assert fused == -2.0**-60


def test_the_checked_and_unchecked_builds_are_both_rendered_with_contraction():
    """A scipy input runs the build with fused checks, a Tensor the one without:
    both are rendered under the kernel's tuning, so both allow contraction (which
    multiply-adds the compiler fuses is its choice per loop: see the next test)."""
    from etchpy import pipeline
    kern = ep.compile(SPMV)
    for checked in (True, False):
        src = pipeline.render_c(kern.compiled, "int32_t", checked=checked).c
        assert PRAGMA in src and ("input_error" in src) == checked


def _stencil(n: int = 45):
    one = sp.diags_array([1.0, -2.0, 1.0], offsets=[-1, 0, 1], shape=(n, n))
    M = sp.csr_array(sp.kron(sp.eye_array(n), one) + sp.kron(one, sp.eye_array(n)))
    M.data = np.random.default_rng(0).standard_normal(M.nnz)
    return M, np.random.default_rng(1).standard_normal(n * n)


@pytest.mark.parametrize("t", [tuning.DEFAULT.with_(fp_contract=False),
                               tuning.DEFAULT.with_(fp_contract=False, gather_sums=False)])
def test_without_contraction_a_scipy_input_and_a_tensor_give_the_same_bits(t):
    """The checked build (a scipy input) and the unchecked one (an ep.Tensor of the
    same arrays) sum in the same order; without contraction they round alike."""
    M, v = _stencil()
    kern = ep.compile(SPMV, tuning=t)
    assert np.array_equal(kern(A=M, x=v), kern(A=ep.Tensor.from_scipy(M), x=v))


def test_with_contraction_they_agree_to_the_last_bits():
    """With contraction on, gcc decides per loop which multiply-adds it fuses (its
    tuning for some processors leaves a row's sum chain unfused in one build and
    fuses it in the other's copied loop): the two builds may differ in the last
    bits, as docs/semirings.md says, and by no more."""
    M, v = _stencil()
    kern = ep.compile(SPMV)
    a, b = kern(A=M, x=v), kern(A=ep.Tensor.from_scipy(M), x=v)
    scale = np.abs(M) @ np.abs(v)
    assert np.all(np.abs(a - b) <= 8 * np.finfo(float).eps * scale)
