"""The sanitizer profile (issue 26, item 5): kernels built with ASan and UBSan
(ETCHPY_SANITIZE=1) run a profile of the property tests and the fuzz test in a
subprocess with the ASan runtime preloaded; and a C program drives exported kernels
(the golden cases, plus one per format × semiring) under the same flags. Any
sanitizer report ends that process with an error. Longer runs: see the README.
"""
import contextlib
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import etchpy as ep
from etchpy.expr.walk import accesses
from etchpy.runtime import build
from etchpy.runtime.kernel import Kernel
from etchpy.runtime.inputs import as_tensor
from tuned import golden_cases

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
SANITIZE = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer", "-g")
EXAMPLES = os.environ.get("ETCHPY_SANITIZE_EXAMPLES", "3")


def compiler():
    try:
        return build.find_compiler().command
    except ep.CompileError:
        return None


def asan_runtime():
    cc = compiler()
    if cc is None:
        return None
    out = subprocess.run([*cc, "-print-file-name=libasan.so"], capture_output=True,
                         text=True).stdout.strip()
    return out if os.path.isabs(out) and os.path.exists(out) else None


ASAN = asan_runtime()
needs_asan = pytest.mark.skipif(ASAN is None, reason="no ASan runtime for the C compiler")
SANITIZER_ENV = {"ASAN_OPTIONS": "detect_leaks=0:halt_on_error=1:abort_on_error=0",
                 "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}

# Runs pytest with a small Hypothesis profile (tests/conftest.py loads it by name).
RUNNER = textwrap.dedent("""
    import sys
    import pytest
    from hypothesis import HealthCheck, settings
    settings.register_profile("sanitize", max_examples=int(sys.argv[1]), derandomize=True,
                              deadline=None, suppress_health_check=list(HealthCheck))
    sys.exit(pytest.main(["-q", "-x", "-p", "no:cacheprovider", *sys.argv[2:]]))
""")


# The sanitized kernels at -O0 unless the caller set CFLAGS (conftest.py records them):
# the sanitizers check the same reads and writes at any level, -march=native keeps the
# vector paths compiled, and gcc builds the run's hundred kernels in 3/4 of -Og's time.
SANITIZED_CFLAGS = os.environ.get("ETCHPY_SUITE_CFLAGS") or "-O0 -march=native"

# The central property under the sanitizers on one semiring per value type and
# fill (float64, float32, complex64, int64, bool; +inf as the zero): the others
# differ from these in their operators only, not in what the kernels index. A
# longer run (ETCHPY_SANITIZE_EXAMPLES set) takes every semiring.
SANITIZED = ("real", "real32", "complex64", "integer", "boolean", "min_plus")
CENTRAL = f"{TESTS / 'end_to_end' / 'test_backends.py'}::test_c_equals_streams_equals_reference"
CENTRAL_IDS = ([CENTRAL] if "ETCHPY_SANITIZE_EXAMPLES" in os.environ
               else [f"{CENTRAL}[{name}]" for name in SANITIZED])


@pytest.mark.heavy
@needs_asan
def test_property_profile_under_asan_and_ubsan(tmp_path):
    # the nested pytest is not an xdist worker: without the worker's variables, and
    # its base temporary directory (where shared_cache's modules keep their cache)
    # in tmp_path, so no kernel it builds outlives this test or comes from another run
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PYTEST_XDIST_") and k != "PYTEST_CURRENT_TEST"}
    env.update(SANITIZER_ENV, LD_PRELOAD=ASAN, ETCHPY_SANITIZE="1", CFLAGS=SANITIZED_CFLAGS,
               ETCHPY_CACHE_DIR=str(tmp_path / "cache"), HYPOTHESIS_PROFILE="sanitize",
               ETCHPY_FUZZ_EXAMPLES=os.environ.get("ETCHPY_FUZZ_EXAMPLES", "80"))
    selected = [str(HERE / "test_fuzz.py"), str(HERE / "test_tensor_trust.py"),
                str(HERE / "test_changed_inputs.py"), str(HERE / "test_segment_checks.py"),
                str(HERE / "test_scipy_structured_arrays.py"), str(HERE / "test_lazy_inputs.py"),
                *CENTRAL_IDS,
                f"{TESTS / 'end_to_end' / 'test_backends.py'}::test_sparse_outputs_match_reference"]
    with kernels_removed(tmp_path / "cache", tmp_path / "base"):
        out = subprocess.run([sys.executable, "-c", RUNNER, EXAMPLES,
                              f"--basetemp={tmp_path / 'base'}", *selected],
                             env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
        report = out.stdout[-3000:] + out.stderr[-3000:]
        assert out.returncode == 0, report
        assert "Sanitizer" not in out.stderr and "runtime error" not in out.stderr, report
        own = list((tmp_path / "cache").glob("etchpy_kernel-*.so"))
        shared = list((tmp_path / "base" / "cache").glob("etchpy_kernel-*.so"))
        assert own and shared and all(b"__asan" in so.read_bytes() for so in own + shared)


@contextlib.contextmanager
def kernels_removed(*folders):
    """The ASan kernels a test built (about a hundred a run) removed when it ends,
    passed or failed: pytest keeps the temporary directories of its last three runs,
    and the sanitizer's report, not its kernels, says what went wrong."""
    try:
        yield
    finally:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


OVERFLOW = textwrap.dedent("""
    import numpy as np
    from etchpy.runtime import build
    lib = build.load("double past(const double *a, long n) { return a[n]; }",
                     "double past(const double *a, long n);", name="overflow")
    a = np.zeros(4)
    print(lib.lib.past(lib.ffi.from_buffer("double[]", a), 4))
""")


@needs_asan
def test_the_profile_reports_a_read_past_an_array(tmp_path):
    """The same environment turns a one-element overread into a fatal report."""
    env = dict(os.environ, **SANITIZER_ENV, LD_PRELOAD=ASAN, ETCHPY_SANITIZE="1",
               ETCHPY_CACHE_DIR=str(tmp_path / "cache"))
    with kernels_removed(tmp_path / "cache"):
        out = subprocess.run([sys.executable, "-c", OVERFLOW], env=env, capture_output=True,
                             text=True, timeout=300)
    assert out.returncode != 0 and "AddressSanitizer" in out.stderr, out.stderr[-2000:]


# --------------------------------------------------------------------------- exported C

i, j = ep.indices("i j")
x = ep.tensor("x", 1)
GOLDEN = golden_cases()
for _fmt in ("dense", "csr", "csc", "dcsr", "coo"):
    for _sr in ("real", "min_plus", "integer", "boolean"):
        _M = ep.tensor("M", 2, format=_fmt)
        GOLDEN[f"mv_{_fmt}_{_sr}"] = dict(expr=ep.sum(j, _M[i, j] * x[j]), semiring=_sr)
SIZES = {"i": 7, "j": 6, "k": 5, "r": 3, "u": 6, "v": 6}


def inputs_for(kern, rng):
    """Random inputs for every tensor of ``kern``, as the kernel would bind them."""
    values = {}
    for name, tv in kern.tensors.items():
        ixs = next(a.indices for a in accesses(kern.source_expr) if a.tensor.name == name)
        shape = tuple(SIZES[ix.name] for ix in ixs)
        dense = rng.integers(0, 4, size=shape).astype(np.float64)
        dense[rng.random(shape) < 0.5] = 0
        if kern.semiring.name == "min_plus":
            dense[dense == 0] = np.inf
        elif kern.semiring.name == "boolean":
            dense = (dense != 0).astype(np.float64)
        values[name] = as_tensor(kern.semiring.cast(dense), tv, kern.semiring)
    return values


def driver(name, kern, tensors) -> str:
    """A C main that calls the exported kernel on ``tensors`` and prints its output."""
    lines = [f'#include "{name}.h"', "#include <stdio.h>", "#include <stdint.h>",
             "#include <stdlib.h>", "int main(void) {"]
    args, outs = [], []
    idx, val = f"{name}_idx_t", f"{name}_val_t"
    for p in kern.program.params:
        if p.kind == "dim":
            tname, mode = p.name.rsplit("_dim", 1)
            args.append(str(tensors[tname].shape[int(mode)]))
        elif p.kind == "in_array":
            tname, _, role = p.name.partition("_")
            t = tensors[tname]
            arr = t.vals if role == "vals" else t.levels[int(role[-1])][role[:-1]]
            ctype = val if p.type == "value" else idx
            data = ", ".join(_c_value(a) for a in arr.tolist()) or "0"
            lines.append(f"  static const {ctype} {p.name}[] = {{{data}}};")
            args.append(p.name)
        elif p.kind == "out_dense":
            n = int(np.prod([SIZES[ix.name] for ix in kern.out_indices]))
            lines.append(f"  {val} *{p.name} = calloc({max(n, 1)}, sizeof({val}));")
            args.append(p.name)
            outs.append(f'  for (int q = 0; q < {n}; q++) printf("%.17g\\n", (double){p.name}[q]);'
                        f"\n  free({p.name});")
        elif p.kind == "out_zeroed":
            args.append("0")          # out is not known to hold the zero: fill it
        elif p.kind == "out_grown":
            ctype = val if p.type == "value" else idx
            lines.append(f"  {ctype} *{p.name} = NULL;")
            args.append(f"&{p.name}")
        else:
            lines.append(f"  int64_t {p.name} = 0;")
            args.append(f"&{p.name}")
    grown = [p.name for p in kern.program.params if p.kind == "out_grown"]
    counts = [p.name for p in kern.program.params if p.kind == "out_count"]
    lines.append(f"  int rc = {name}({', '.join(args)});")
    lines.append('  if (rc != 0) { printf("rc %d\\n", rc); return 1; }')
    lines += outs
    for c in counts:
        lines.append(f'  printf("count %lld\\n", (long long){c});')
    if counts:
        vals = next(g for g in grown if g.endswith("vals"))
        lines.append(f"  for (int64_t q = 0; q < {counts[-1]}; q++) "
                     f'printf("%.17g\\n", (double){vals}[q]);')
    for g in grown:
        lines.append(f"  {name}_free({g});")
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def _c_value(a):
    if isinstance(a, float) and not np.isfinite(a):
        return "(1.0/0.0)" if a > 0 else "(-1.0/0.0)"
    return repr(int(a)) if isinstance(a, (bool, np.bool_)) else repr(a)


def expected(kern, tensors):
    out = kern(**tensors)
    if hasattr(out, "tocsr"):
        m = out.tocsr() if kern.out_format.name == "csr" else out.tocsc()
        return ["count", int(m.nnz)], [float(v) for v in m.data]
    return None, [float(v) for v in np.ravel(out)]


@pytest.mark.heavy
@needs_asan
def test_exported_kernels_under_asan_and_ubsan(tmp_path):
    """Every golden case and one kernel per format × semiring, exported, compiled
    with the sanitizers into a C program, run, and compared with the Python call."""
    cc = compiler()
    rng = np.random.default_rng(26)
    env = dict(os.environ, **SANITIZER_ENV)
    env.pop("LD_PRELOAD", None)
    for name, case in sorted(GOLDEN.items()):
        case = dict(case)
        kern = Kernel(case.pop("expr"), name=name, every_size=True, **case)
        tensors = inputs_for(kern, rng)
        ep.export_c(kern.source_expr, name, tmp_path, semiring=kern.semiring,
                    output=case.get("output", "dense"), threads=case.get("threads"))
        (tmp_path / f"main_{name}.c").write_text(driver(name, kern, tensors))
        exe = tmp_path / f"run_{name}"
        openmp = ("-fopenmp",) if case.get("threads", 1) > 1 else ()
        built = subprocess.run([*cc, "-std=c99", *SANITIZE, *openmp, "-O1", "-o", str(exe),
                                str(tmp_path / f"main_{name}.c"), str(tmp_path / f"{name}.c"),
                                "-lm"], capture_output=True, text=True)
        assert built.returncode == 0, (name, built.stderr)
        ran = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, env=env)
        exe.unlink()                  # its C stays; the ASan program is rebuilt at will
        assert ran.returncode == 0 and not ran.stderr, (name, ran.stdout, ran.stderr)
        count, values = expected(kern, tensors)
        printed = ran.stdout.split()
        if count is not None:
            assert printed[:2] == ["count", str(count[1])], (name, printed)
            printed = printed[2:]
        np.testing.assert_allclose([float(p) for p in printed], values, err_msg=name)
