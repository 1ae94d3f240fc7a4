"""Names of exported kernels (issue 26): what export_c accepts compiles as C11, and
its header as C++17, with -Wall -Werror, beside other kernels; what it refuses is
named in the error."""
import re
import shutil
import subprocess

import pytest

import etchpy as ep
from etchpy.c.export_names import HEADER_NAMES, refusal
from etchpy.runtime import build

HAVE_CC = any(map(shutil.which, build.COMPILER_CANDIDATES))
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="no C compiler on PATH")
CXX = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")

i, j = ep.indices("i j")
A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
Q = ep.tensor("Q", 2, format="coo")
EXPRS = [ep.sum(j, A[i, j] * x[j]), ep.sum(j, Q[i, j] * x[j])]

# names a user may well choose, including ones near the refused ones; those
# accepted must compile
CANDIDATES = ["spmv", "a", "n", "x", "A", "pos", "crd", "out", "acc", "row", "dim_i", "vals",
              "kernel", "etchpy_kernel", "idx", "val", "index2", "select2", "Free", "MALLOC",
              "ep", "EP", "epx_max", "H", "spmv_free2", "int64", "omp", "restrict2", "cplusplus",
              "linux2", "key", "offset", "fma2", "abs2", "INT8", "MAP", "NDEBUG", "assert",
              "errno", "override", "final", "y2", "stream", "I", "complex"]
REFUSED = ["idx_t", "val_t", "ep_max", "EP_PREFETCH", "Ep_x", "int", "double", "restrict",
           "free", "malloc", "memcpy", "class", "template", "size_t", "int64_t", "main",
           "omp_get_thread_num", "index", "select", "y0", "j1", "gamma", "div", "NAN", "M_PI",
           "INT8_C", "u_char", "uint", "linux", "std", "and", "bool", "_x", "a__b", "madvise",
           "MADV_HUGEPAGE", "signgam", "fd_set", "random", "nullptr", "static_assert", "né", "printf", "isalpha", "cexp"]


@pytest.mark.parametrize("name", REFUSED)
def test_refused_names_are_named_in_the_error(tmp_path, name):
    with pytest.raises(ep.EtchpyError, match=re.escape(repr(name))):
        ep.export_c(EXPRS[0], name, tmp_path)
    assert not list(tmp_path.iterdir())


@needs_cc
def test_every_macro_of_the_included_headers_is_refused(tmp_path):
    """The list of declared names covers at least the macros this machine's
    headers define (with the macros of the compiler itself)."""
    src = tmp_path / "inc.c"
    src.write_text("#define _DEFAULT_SOURCE\n" + "".join(
        f"#include <{h}>\n" for h in ("stdint.h", "stdlib.h", "string.h", "math.h",
                                      "sys/mman.h")))
    cc = build.find_compiler().command
    out = subprocess.run([*cc, "-E", "-dM", str(src)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    macros = set(re.findall(r"^#define (\w+)", out.stdout, re.M))
    assert {m for m in macros if refusal(m) is None} == set()
    assert len(HEADER_NAMES) > 500


@needs_cc
def test_accepted_names_compile_as_c11_and_cxx17_together(tmp_path):
    accepted = [n for n in CANDIDATES if refusal(n) is None]
    assert len(accepted) > 30
    for k, name in enumerate(accepted):
        ep.export_c(EXPRS[k % 2], name, tmp_path)
    cc = build.find_compiler().command
    objs = []
    for name in accepted:
        objs.append(tmp_path / f"{name}.o")
        out = subprocess.run([*cc, "-std=c11", "-Wall", "-Werror", "-c", str(tmp_path / f"{name}.c"),
                              "-o", str(objs[-1])], capture_output=True, text=True)
        assert out.returncode == 0, (name, out.stderr)
    main = tmp_path / "main.c"
    main.write_text("".join(f'#include "{n}.h"\n' for n in accepted) + "int main(void) { return 0; }\n")
    out = subprocess.run([*cc, "-std=c11", "-Wall", "-Werror", "-I", str(tmp_path), str(main),
                          *map(str, objs), "-lm", "-o", str(tmp_path / "c_main")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    if CXX is None:
        pytest.skip("no C++ compiler (c++, g++ or clang++) on PATH: the C++17 half is not checked")
    use = tmp_path / "use.cpp"
    use.write_text(main.read_text())
    out = subprocess.run([CXX, "-std=c++17", "-Wall", "-Werror", "-I", str(tmp_path), str(use),
                          *map(str, objs), "-lm", "-o", str(tmp_path / "cxx_main")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
