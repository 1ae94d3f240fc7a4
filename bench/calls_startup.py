"""Start-up costs for `python -m bench calls`, each measured in new processes.

import  `import etchpy` against `import scipy.sparse`, each alone in a new
        interpreter, alternated; the cumulative microseconds `python -X importtime`
        reports for the module (numpy included on both sides). Bytecode is cached
        first (a warm-up run without PYTHONDONTWRITEBYTECODE), as an installed
        package has it; `etchpy_bytecode_cached` says whether that worked.
warm    a new process imports numpy, scipy.sparse and etchpy (the caller's
        imports), then times ep.compile plus the first call of a kernel the disk
        cache knows (a fresh cache directory, filled by one process first): an
        SpMV with a scipy csr input, and a dense matmul that calls BLAS. Target
        (issue 39): at most 10 ms.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import etchpy as ep

IMPORT_TARGET = 1.2          # import etchpy / import scipy.sparse
WARM_TARGET_S = 0.010

_WARM = r"""
import json, sys, time
import numpy as np, scipy.sparse as sp
t0 = time.perf_counter()
import etchpy as ep
t1 = time.perf_counter()
if sys.argv[1] == "spmv":
    A = sp.random_array((1000, 1000), density=0.01, format="csr", random_state=0)
    x = np.ones(1000)
    t2 = time.perf_counter()
    y = ep.compile("y[i] = A[i, j] * x[j]", formats={"A": "csr"})(A=A, x=x)
else:
    a, b = np.ones((200, 200)), np.ones((200, 200))
    t2 = time.perf_counter()
    y = ep.compile("C[i, k] = A[i, j] * B[j, k]")(A=a, B=b)
t3 = time.perf_counter()
from etchpy.runtime import blas, build
print(json.dumps({"import_s": t1 - t0, "load_s": t3 - t2, "compiles": build.stats["compiles"],
                  "blas": blas.source(), "scipy_linalg": "scipy.linalg" in sys.modules}))
"""


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env


def _import_us(module: str, env) -> float:
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                         env=env, capture_output=True, text=True, check=True).stderr
    for line in reversed(out.splitlines()):
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[2] == module:
            return float(parts[1]) * 1e-6
    raise RuntimeError(f"no importtime line for {module}")


def measure_import(runs: int, say=print) -> list[dict]:
    env = _env()
    for module in ("etchpy", "scipy.sparse"):       # write bytecode, warm the file cache
        _import_us(module, env)
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(_import_us("etchpy", env))
        theirs.append(_import_us("scipy.sparse", env))
    cached = os.path.exists(importlib.util.cache_from_source(ep.__file__))
    t_ours, t_theirs = float(np.median(ours)), float(np.median(theirs))
    row = {"part": "import", "case": "import etchpy", "etchpy_s": t_ours,
           "peer": "import scipy.sparse", "peer_s": t_theirs, "ratio": t_ours / t_theirs,
           "target": IMPORT_TARGET, "met": t_ours / t_theirs <= IMPORT_TARGET,
           "runs": runs, "etchpy_bytecode_cached": cached}
    say(f"    import etchpy {t_ours * 1e3:.0f} ms, import scipy.sparse {t_theirs * 1e3:.0f} ms:"
        f" {row['ratio']:.2f}× (target ≤ {IMPORT_TARGET}; bytecode cached: {cached})")
    return [row]


def measure_warm(runs: int, say=print) -> list[dict]:
    folder = tempfile.mkdtemp(prefix="etchpy-bench-warm-")
    env = _env(ETCHPY_CACHE_DIR=folder)
    rows = []
    try:
        for kind in ("spmv", "matmul"):
            _warm_child(kind, env)                    # fills the cache
        samples = {"spmv": [], "matmul": []}
        for _ in range(runs):
            for kind, out in samples.items():
                out.append(_warm_child(kind, env))
        for kind, out in samples.items():
            load = float(np.median([r["load_s"] for r in out]))
            imp = float(np.median([r["import_s"] for r in out]))
            row = {"part": "warm", "case": f"compile + first call, known kernel: {kind}",
                   "etchpy_s": load, "import_etchpy_s": imp, "target_s": WARM_TARGET_S,
                   "met": load <= WARM_TARGET_S, "runs": runs,
                   "compiles": max(r["compiles"] for r in out),
                   "blas": out[-1]["blas"], "scipy_linalg_imported": out[-1]["scipy_linalg"]}
            rows.append(row)
            say(f"    {kind:<7} compile + first call {load * 1e3:.1f} ms (target ≤ "
                f"{WARM_TARGET_S * 1e3:.0f} ms), import etchpy {imp * 1e3:.0f} ms, compiler "
                f"runs {row['compiles']}, BLAS from {row['blas']}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return rows


def _warm_child(kind: str, env) -> dict:
    out = subprocess.run([sys.executable, "-c", _WARM, kind], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])
