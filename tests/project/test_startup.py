"""Start-up (issue 39): `import etchpy` imports nothing it does not need until it is
used, and a new process that compiles and calls a kernel the disk cache knows
(an SpMV, a dense product through BLAS) runs no compiler and imports neither the
C renderer's jinja2, nor cffi's cdef parser, nor scipy.linalg. Timings are
measured by `python -m bench calls`, not asserted here."""
import json
import os
import subprocess
import sys

NOT_AT_IMPORT = ("scipy", "scipy.sparse", "scipy.linalg", "jinja2", "cffi", "pycparser",
                 "dask", "distributed", "etchpy.distributed", "etchpy.relational",
                 "etchpy.graph")

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
A = sp.random_array((50, 40), density=0.1, format="csr", random_state=0)
x = np.arange(40.0)
assert np.allclose(ep.compile("y[i] = A[i, j] * x[j]", formats={"A": "csr"})(A=A, x=x), A @ x)
a, b = np.ones((30, 20)), np.ones((20, 10))
assert np.allclose(ep.compile("C[i, k] = A[i, j] * B[j, k]")(A=a, B=b), a @ b)
print(json.dumps({"compiles": build.stats["compiles"],
                  "loaded": [m for m in ("jinja2", "pycparser", "cffi", "scipy.linalg")
                             if m in sys.modules]}))
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
                 "table", "Table", "sketch"):
        assert name in dir(ep) and getattr(ep, name) is not None


def test_a_known_kernel_loads_in_a_new_process_without_compiling_or_rendering(tmp_path):
    first = child(_KNOWN, tmp_path)
    assert first["compiles"] >= 2
    assert child(_KNOWN, tmp_path) == {"compiles": 0, "loaded": []}
