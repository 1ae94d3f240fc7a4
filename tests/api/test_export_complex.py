"""Exported complex kernels: C99 `double _Complex` in C, `std::complex<double>` in C++.

The header declares the value type once for each language (the two share a
layout: two parts, real first); a C main and a C++ main call one kernel built
by gcc, without Python.
"""
import shutil
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
WARN = ["-Wall", "-Wextra", "-Werror"]


def _matrix():
    M = sp.random_array((12, 9), density=0.3, format="csr", rng=np.random.default_rng(4))
    M.data = M.data + 1j * np.linspace(-1, 1, M.nnz)
    return M


def _arrays(M, xv, real_t):
    def values(name, z):
        body = ", ".join(f"{float(c.real)!r}, {float(c.imag)!r}" for c in z) or "0"
        return f"static const {real_t} {name}[] = {{{body}}};"

    def ints(name, a):
        return f"static const int64_t {name}[] = {{{', '.join(str(int(v)) for v in a)}}};"
    return "\n".join([ints("pos", M.indptr), ints("crd", M.indices),
                      values("vals", M.data), values("x", xv)])


def _run(cmd, exe):
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    parts = np.array(out.split(), dtype=float).reshape(-1, 2)
    return parts[:, 0] + 1j * parts[:, 1]


def _export(tmp_path, semiring="complex"):
    i, j = ep.indices("i j")
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    e = ep.sum(j, A[i, j] * ep.map("conj", x[j]))
    ep.export_c(e, "zspmv", tmp_path, semiring=semiring)
    subprocess.run(["gcc", "-std=c99", *WARN, "-c", str(tmp_path / "zspmv.c"),
                    "-o", str(tmp_path / "zspmv.o")], check=True, capture_output=True, text=True)


def test_exported_complex_spmv_from_c(tmp_path):
    _export(tmp_path)
    M, xv = _matrix(), np.linspace(-1, 1, 9) * (1 - 2j)
    main = f"""
#include <stdio.h>
#include <complex.h>
#include "zspmv.h"
{_arrays(M, xv, "double")}
int main(void) {{
    zspmv_val_t y[12];
    int rc = zspmv(12, 9, pos, crd, (const zspmv_val_t *)vals, 9, (const zspmv_val_t *)x, y);
    if (rc) return 10 + rc;
    for (int i = 0; i < 12; i++) printf("%.17g %.17g\\n", creal(y[i]), cimag(y[i]));
    return 0;
}}
"""
    (tmp_path / "main.c").write_text(main)
    got = _run(["gcc", "-std=c99", *WARN, "-o", str(tmp_path / "main"), str(tmp_path / "main.c"),
                str(tmp_path / "zspmv.o"), "-lm"], tmp_path / "main")
    np.testing.assert_allclose(got, M @ np.conj(xv), rtol=1e-14)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_exported_complex_spmv_from_cpp(tmp_path):
    """C++ sees the values as std::complex<double>; the kernel itself is C."""
    _export(tmp_path)
    M, xv = _matrix(), np.linspace(-1, 1, 9) * (2 + 1j)
    main = f"""
#include <complex>
#include <cstdio>
#include <type_traits>
#include "zspmv.h"
static_assert(std::is_same<zspmv_val_t, std::complex<double>>::value, "value type");
{_arrays(M, xv, "double")}
int main() {{
    zspmv_val_t y[12];
    int rc = zspmv(12, 9, pos, crd, reinterpret_cast<const zspmv_val_t *>(vals), 9,
                   reinterpret_cast<const zspmv_val_t *>(x), y);
    if (rc) return 10 + rc;
    for (int i = 0; i < 12; i++) std::printf("%.17g %.17g\\n", y[i].real(), y[i].imag());
    return 0;
}}
"""
    (tmp_path / "main.cpp").write_text(main)
    got = _run(["g++", "-std=c++11", *WARN, "-o", str(tmp_path / "main"),
                str(tmp_path / "main.cpp"), str(tmp_path / "zspmv.o"), "-lm"], tmp_path / "main")
    np.testing.assert_allclose(got, M @ np.conj(xv), rtol=1e-14)


def test_exported_complex64_sparse_output_compiles_without_warnings(tmp_path):
    """complex64 (float _Complex, std::complex<float>), a sparse output and a
    complex literal build warning-free, with and without OpenMP."""
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    e = ep.sum(j, A[i, j] * B[j, k] * 2j)
    ep.export_c(e, "cgemm", tmp_path, semiring="complex64", output="csr", threads=2)
    assert "std::complex<float>" in (tmp_path / "cgemm.h").read_text()
    for omp in ([], ["-fopenmp"]):
        subprocess.run(["gcc", "-std=c99", *WARN, *omp, "-c", str(tmp_path / "cgemm.c"),
                        "-o", str(tmp_path / "cgemm.o")], check=True, capture_output=True,
                       text=True)
