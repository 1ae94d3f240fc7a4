"""Start-up (issue 39): `import etchpy` imports nothing it does not need until it is
used, and a new process that compiles and calls a kernel the disk cache knows
(an SpMV, a dense product through BLAS) runs no compiler, imports neither the
C renderer's jinja2, nor cffi's cdef parser, nor scipy.linalg, nor the compiler's
back half (streams/, lower/, c/), and decodes no program from the manifests it
reads. Timings are
measured by `python -m bench calls`, not asserted here."""
import json
import os
import subprocess
import sys

NOT_AT_IMPORT = ("scipy", "scipy.sparse", "scipy.linalg", "jinja2", "cffi", "pycparser",
                 "dask", "distributed", "etchpy.distributed", "etchpy.relational",
                 "etchpy.graph", "etchpy.optimizer.sketch", "etchpy.optimizer.optimize",
                 "etchpy.lazy", "etchpy.streams", "etchpy.lower", "etchpy.c.render")

_IMPORT = f"""
import json, sys
import etchpy
print(json.dumps([m for m in {NOT_AT_IMPORT!r} if m in sys.modules]))
"""

_KNOWN = """
import json, sys
import numpy as np, scipy.sparse as sp
import etchpy as ep
from etchpy.runtime import build
from etchpy.runtime.signature import PlannedLater
A = sp.random_array((50, 40), density=0.1, format="csr", random_state=0)
x = np.arange(40.0)
spmv = ep.compile("y[i] = A[i, j] * x[j]", formats={"A": "csr"})
assert np.allclose(spmv(A=A, x=x), A @ x)
a, b = np.ones((30, 20)), np.ones((20, 10))
gemm = ep.compile("C[i, k] = A[i, j] * B[j, k]")
assert np.allclose(gemm(A=a, B=b), a @ b)
planned = [p for kern in (spmv, gemm) for p, _ in kern._planned.values()]
later = sum(isinstance(p, PlannedLater) for p in planned)   # recorded: not planned again
kernels = [spmv, gemm, *(p for p in planned if not isinstance(p, PlannedLater))]
loaded = [m for m in ("jinja2", "pycparser", "cffi", "scipy.linalg", "etchpy.optimizer.optimize",
                      "etchpy.lazy", "etchpy.streams", "etchpy.lower", "etchpy.c.render")
          if m in sys.modules]
decoded = [getattr(k.compiled, "decoded", True) for k in kernels]
program = type(spmv.compiled.program).__name__      # decoded now, not compiled again
print(json.dumps({"compiles": build.stats["compiles"], "loaded": loaded, "decoded": decoded,
                  "later": later,
                  "program": program,
                  "optimized": "etchpy.optimizer.optimize" in sys.modules}))
"""


def child(script, cache):
    env = dict(os.environ, ETCHPY_CACHE_DIR=str(cache))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_etchpy_leaves_heavy_modules_and_side_packages_unloaded(tmp_path):
    assert child(_IMPORT, tmp_path) == []


def test_the_names_loaded_on_first_use_are_there():
    import etchpy as ep
    for name in ("graph", "fixpoint", "partition", "relation", "Relation", "Keys", "decode",
                 "table", "Table", "sketch", "lazy", "LazyArray", "compute", "explain",
                 "approximate", "equivalent", "exp", "log", "sqrt", "abs", "maximum",
                 "minimum", "optimize"):
        assert name in dir(ep) and getattr(ep, name) is not None


def test_ep_lazy_is_callable_however_its_package_was_first_loaded(tmp_path):
    """ep.lazy is the package etchpy.lazy (loaded on first use), which a call wraps
    an array with: importing a submodule first, which binds the package as
    etchpy's attribute, leaves it callable."""
    script = """
import json, numpy as np
import etchpy.lazy.traced
import etchpy as ep
a = ep.lazy(np.arange(3.0))
print(json.dumps([float(v) for v in (a * 2).compute()] + [callable(ep.lazy.function)]))
"""
    assert child(script, tmp_path) == [0.0, 2.0, 4.0, True]


def test_a_known_kernel_loads_in_a_new_process_without_compiling_or_rendering(tmp_path):
    first = child(_KNOWN, tmp_path)
    # compiled here, each kernel let its program go once its manifest's parts were
    # encoded (runtime.signature._keep_encoded): it is the same text as a restored one
    assert first["compiles"] >= 2 and first["decoded"] and not any(first["decoded"])
    again = child(_KNOWN, tmp_path)
    assert again["compiles"] == 0 and again["loaded"] == []
    # restored from their manifests, the programs were never decoded: a call reads
    # only their faces (runtime.restored)
    # each call's size class planned to its kernel's own program (SpMV's) was
    # recorded: it is not planned again, nor its manifest read
    # (runtime.signature.PlannedLater)
    assert first["later"] == 0 and again["later"] >= 1
    assert len(again["decoded"]) == 4 - again["later"] and not any(again["decoded"])
    # lower/ loads when the program is asked for, which decodes it (no optimizer ran)
    assert again["program"] == "Program" and not again["optimized"]
