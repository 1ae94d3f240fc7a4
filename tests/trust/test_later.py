"""Rows of issue 26 fixed in its second part (runtime/kernel.py, runtime/inputs.py,
c/, the export): each failed before that part, as an xfail(strict=True) test."""
import os
import re
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.runtime import build

HAVE_CC = bool(os.environ.get("CC")) or any(map(shutil.which, build.COMPILER_CANDIDATES))
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="no C compiler on PATH")
CXX = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")

i, j = ep.indices("i j")
A, x, z = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1), ep.tensor("z", 1)
SPMV = ep.sum(j, A[i, j] * x[j])


def test_a_second_retry_request_is_a_clear_error_not_a_recursion():
    """A kernel answering "retry with the every-size build" (3) from that build too
    (two cached .so files swapped once did this) raises a clear error."""
    kern = ep.compile(SPMV, name="retry_twice")
    kern(A=sp.eye(3, format="csr"), x=np.ones(3))

    class Three:
        def __getattr__(self, name):
            return lambda *args: 3
    for lib in list(kern._libs.values()):
        kern._libs[next(k for k, v in kern._libs.items() if v is lib)] = build.Library(
            lib.ffi, Three(), lib.path, lib.c_path, lib.key, True, lib.flags)
    kern._entries.clear()            # resolved again from the swapped libraries
    kern._plans.clear()              # (call plans hold the C function they call)
    kern._plan = kern._first = None
    kern._larger = kern              # the every-size build answers 3 as well
    try:
        with pytest.raises(ep.EtchpyError):
            kern(A=sp.eye(3, format="csr"), x=np.ones(3))
    except RecursionError:
        pytest.fail("RecursionError")


FORBIDDEN = ["idx_t", "val_t", "ep_max", "ep_kernel", "int", "double", "restrict", "free",
             "malloc", "memcpy", "class", "template", "size_t", "int64_t", "omp_get_thread_num"]


@pytest.mark.parametrize("name", FORBIDDEN)
def test_export_refuses_names_that_collide(tmp_path, name):
    with pytest.raises(ep.EtchpyError, match=re.escape(name)):
        ep.export_c(SPMV, name, tmp_path)
    assert not list(tmp_path.iterdir())


@needs_cc
@pytest.mark.parametrize("name", ["spmv", "pos", "out", "n", "acc", "row"])
def test_exported_identifiers_carry_the_kernel_prefix_and_compile(tmp_path, name):
    """Every file-scope identifier starts with `name_` or `ep_`; the files compile as
    C11 and the header as C++17, with -Wall -Werror; two kernels link together."""
    c_path, h_path = ep.export_c(SPMV, name, tmp_path)
    ep.export_c(ep.sum(j, A[i, j] * x[j]), f"{name}2", tmp_path)
    for text in (c_path.read_text(), h_path.read_text()):
        declared = re.findall(r"^(?:typedef\s.*?\b(\w+)\s*;|#define\s+(\w+))", text, re.M)
        for names in declared:
            for ident in set(filter(None, names)) - {"_DEFAULT_SOURCE"}:   # feature macro
                assert ident.startswith((f"{name}_", "ep_", f"{name.upper()}_", "EP_")), ident
    cc = build.find_compiler().command
    for path in (c_path, tmp_path / f"{name}2.c"):
        out = subprocess.run([*cc, "-std=c11", "-Wall", "-Werror", "-c", str(path), "-o",
                              str(path.with_suffix(".o"))], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
    if CXX:
        use = tmp_path / "use.cpp"
        use.write_text(f'#include "{name}.h"\n#include "{name}2.h"\nint main() {{ return 0; }}\n')
        out = subprocess.run([CXX, "-std=c++17", "-Wall", "-Werror", "-I", str(tmp_path),
                              str(use), str(c_path.with_suffix(".o")),
                              str((tmp_path / f"{name}2.o")), "-o", str(tmp_path / "use")],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr


def test_boolean_treats_any_nonzero_byte_as_true():
    y = np.array([2], dtype=np.uint8).view(bool)           # a byte holding 2
    e = ep.sum(j, x[j] * z[j])
    for backend in ("reference", "streams", "c"):
        assert bool(ep.evaluate(e, semiring="boolean", backend=backend,
                                x=y, z=np.array([True]))), backend


@needs_cc
def test_exported_boolean_kernel_treats_nonzero_as_true(tmp_path):
    c_path, _ = ep.export_c(ep.sum(j, x[j] * z[j]), "dotb", tmp_path, semiring="boolean")
    main = tmp_path / "main.c"
    main.write_text(textwrap.dedent("""\
        #include "dotb.h"
        #include <stdio.h>
        int main(void) {
            dotb_val_t y[1] = {2}, z[1] = {1}, out[1] = {0};
            int rc = dotb(1, y, 1, z, out);
            printf("%d %d\\n", rc, out[0] != 0);
            return 0;
        }
    """))
    exe = tmp_path / "run"
    cc = build.find_compiler().command
    built = subprocess.run([*cc, "-std=c99", "-o", str(exe), str(main), str(c_path), "-lm"],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    assert subprocess.run([str(exe)], capture_output=True, text=True).stdout.split() == ["0", "1"]


def test_coo_header_describes_its_levels(tmp_path):
    Q = ep.tensor("Q", 2, format="coo")
    _, h_path = ep.export_c(ep.sum(j, Q[i, j] * x[j]), "coomv", tmp_path)
    header = " ".join(h_path.read_text().replace("*", " ").split())
    # level 0 of coo repeats a row once per entry: no blanket "no duplicates" claim
    assert "strictly increasing within each segment (sorted, no duplicates)" not in header
    assert re.search(r"pos0.*\{\s*0\s*,\s*nnz\s*\}", header)


def test_malformed_scipy_input_to_a_dense_tensor_is_an_input_error():
    script = textwrap.dedent("""
        import numpy as np, scipy.sparse as sp, etchpy as ep
        i, j = ep.indices("i j")
        D, x = ep.tensor("D", 2), ep.tensor("x", 1)
        m = sp.csr_array(np.eye(4))
        m.indices[1] = 10**9
        try:
            ep.compile(ep.sum(j, D[i, j] * x[j]))(D=m, x=np.ones(4))
        except ep.InputError as e:
            assert "D" in str(e)
            print("InputError")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "InputError", out.stderr[-500:]


def test_strided_scipy_values_with_contiguous_indices():
    m = sp.random(8, 8, density=0.5, format="csr", random_state=1)
    wide = np.zeros(2 * m.nnz)
    wide[::2] = m.data
    s = sp.csr_array((wide[::2], m.indices.copy(), m.indptr.copy()), shape=m.shape)
    np.testing.assert_allclose(ep.evaluate(SPMV, A=s, x=np.arange(8.0)), m @ np.arange(8.0))
