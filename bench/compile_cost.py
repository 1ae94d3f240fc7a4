"""etchpy's fixed costs: cold compile, warm load from the disk cache, per-call overhead.

cold      ETCHPY_CACHE_DIR points at a fresh empty directory, etchpy.runtime.build.clear_memo()
          is called, and a new ep.Kernel is built: plan + lowering, C text, C compiler,
          dlopen. Split into "plan+lower", "C text" and "cc+load".
memo      the same expression again in the same process: ep.compile (in-process kernel
          cache) + kernel.library (in-process memo).
warm disk a NEW Python process (same cache directory) times, inside itself,
          ep.compile(expr) + kernel.library("int32_t"): the .so is found on disk and
          dlopened, no compiler runs. Interpreter start-up and `import etchpy` are not
          included (the import is reported separately).
overhead  median time of one call on tiny inputs (SpMV n=4; A+B n=4 with a csr output;
          a 5-mode MTTKRP with n=2, five inputs),
          with prebuilt ep.Tensor inputs and with scipy/numpy inputs, next to scipy;
          SpMV also with a new x on every call (x.copy(), about 1 µs, included) and
          with Tuning.keep_last_call off (every call binds its inputs in full).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import etchpy as ep

from . import exprs
from .kernels import prebuild
from .sketches import ALWAYS, mttkrp5
from .timing import fmt_time, summarize

COLD_KERNELS = ("spmv", "spgemm", "sddmm", "mttkrp", "inner3", "minplus", "triangle")
ROOT = Path(__file__).resolve().parent.parent

_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import etchpy as ep
t1 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
from bench import exprs
expr, kw = exprs.get(sys.argv[2])
t2 = time.perf_counter()
k = ep.compile(expr, **kw)
lib = k.library("int32_t")
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "load_s": t3 - t2, "from_cache": lib.from_cache,
                  "stats": dict(ep.runtime.build.stats)}))
"""


def measure_compile(say=print) -> dict:
    out = {"kernels": {}, "compiler": None}
    try:
        c = ep.runtime.build.find_compiler()
        out["compiler"] = c.version
    except Exception as exc:
        out["compiler"] = f"not found: {exc}"
    tmp = tempfile.mkdtemp(prefix="etchpy-bench-cache-")
    old = os.environ.get("ETCHPY_CACHE_DIR")
    os.environ["ETCHPY_CACHE_DIR"] = tmp
    try:
        for name in COLD_KERNELS:
            r = out["kernels"].setdefault(name, {})
            try:
                expr, kw = exprs.get(name)
                ep.runtime.build.clear_memo()
                compiles0 = ep.runtime.build.stats["compiles"]
                t0 = time.perf_counter()
                k = ep.Kernel(expr, **kw)
                t1 = time.perf_counter()
                k.source("int32_t")
                t2 = time.perf_counter()
                lib = k.library("int32_t")
                t3 = time.perf_counter()
                r.update({"cold_s": t3 - t0, "plan_lower_s": t1 - t0, "c_text_s": t2 - t1,
                          "cc_load_s": t3 - t2,
                          "compiler_runs": ep.runtime.build.stats["compiles"] - compiles0,
                          "cold_from_cache": lib.from_cache})
                # the same expression again, same process: in-process caches
                ep.compile(expr, **kw).library("int32_t")        # populate ep.compile cache
                samples = []
                for _ in range(50):
                    s0 = time.perf_counter()
                    ep.compile(expr, **kw).library("int32_t")
                    samples.append(time.perf_counter() - s0)
                r["memo_s"] = float(np.median(samples))
            except Exception as exc:
                r["error"] = f"cold: {type(exc).__name__}: {exc}"
                continue
            try:
                env = dict(os.environ, ETCHPY_CACHE_DIR=tmp)
                proc = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT), name],
                                      env=env, capture_output=True, text=True, timeout=300)
                if proc.returncode != 0:
                    raise RuntimeError(proc.stderr.strip().splitlines()[-1])
                child = json.loads(proc.stdout.strip().splitlines()[-1])
                r.update({"warm_disk_s": child["load_s"], "import_s": child["import_s"],
                          "warm_from_cache": child["from_cache"],
                          "warm_compiler_runs": child["stats"]["compiles"],
                          "warm_cache_hits": child["stats"]["cache_hits"]})
            except Exception as exc:
                r["error"] = f"warm subprocess: {type(exc).__name__}: {exc}"
            say(f"    {name:<9} cold {fmt_time(r.get('cold_s'))} "
                f"(plan+lower {fmt_time(r.get('plan_lower_s'))}, C text "
                f"{fmt_time(r.get('c_text_s'))}, cc+load {fmt_time(r.get('cc_load_s'))}); "
                f"warm from disk, new process {fmt_time(r.get('warm_disk_s'))} "
                f"(compiler runs: {r.get('warm_compiler_runs', '?')}); "
                f"in-process repeat {fmt_time(r.get('memo_s'))}"
                + (f"  ! {r['error']}" if "error" in r else ""))
    finally:
        if old is None:
            os.environ.pop("ETCHPY_CACHE_DIR", None)
        else:
            os.environ["ETCHPY_CACHE_DIR"] = old
        ep.runtime.build.clear_memo()
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _per_call(fns, calls, rounds=10):
    """Per-call time samples of each of fns: calls each, spread over `rounds`
    rounds in which every fn takes its turn, so that a slow spell of the shared
    machine hits all of them alike (as the kernel table's rounds do)."""
    samples = [[] for _ in fns]
    for _ in range(rounds):
        for fn, out in zip(fns, samples):
            for _ in range(calls // rounds):
                t0 = time.perf_counter()
                fn()
                out.append(time.perf_counter() - t0)
    return samples


def measure_overhead(say=print, calls=2000) -> dict:
    A = sp.csr_matrix(np.array([[1.0, 0, 2, 0], [0, 3, 0, 0], [4, 0, 5, 6], [0, 0, 0, 7]]))
    B = sp.csr_matrix(np.array([[0, 1.0, 2, 0], [0, 0, 0, 1], [1, 0, 0, 0], [0, 2, 0, 7]]))
    x = np.arange(4, dtype=float)
    out = {"calls": calls}
    rows = []
    spmv_e, spmv_kw = exprs.get("spmv")
    add_e, add_kw = exprs.get("ewise_add")
    k1 = ep.compile(spmv_e, **spmv_kw)
    k2 = ep.compile(add_e, **add_kw)
    t1 = prebuild(k1, {"A": A, "x": x})
    t2 = prebuild(k2, {"A": A, "B": B})
    # five inputs: a csf Tensor and four numpy matrices
    w = mttkrp5(n=2, rank=16, nnz=4)
    k3 = ep.compile(w["expr"], optimizer_options={**w["opts"], "sketches": w["sketches"]},
                    tuning=ALWAYS)
    k1_off = ep.compile(spmv_e, **spmv_kw, tuning={"keep_last_call": False})
    rows = [
        ("etchpy SpMV n=4, ep.Tensor inputs", lambda: k1(**t1)),
        ("etchpy SpMV n=4, Tensor A, a new x", lambda: k1(A=t1["A"], x=x.copy())),
        ("etchpy SpMV n=4, Tensors, no kept call", lambda: k1_off(**t1)),
        ("etchpy SpMV n=4, scipy/numpy inputs", lambda: k1(A=A, x=x)),
        ("scipy SpMV n=4 (A @ x)", lambda: A @ x),
        ("etchpy A+B n=4 → csr, ep.Tensor inputs", lambda: k2(**t2)),
        ("etchpy A+B n=4 → csr, scipy inputs", lambda: k2(A=A, B=B)),
        ("scipy A+B n=4", lambda: A + B),
        ("etchpy 5-mode MTTKRP n=2, 5 inputs", lambda: k3(**w["ins"])),
    ]
    working = []
    for label, fn in rows:
        try:
            fn()                                   # warm-up, and does it run at all
            working.append((label, fn))
        except Exception as exc:
            out[label] = {"error": f"{type(exc).__name__}: {exc}"}
            say(f"    {label:<42} FAILED: {exc}")
    samples = _per_call([fn for _, fn in working], calls)
    for (label, _), ts in zip(working, samples):
        s = out[label] = summarize(ts)
        say(f"    {label:<42} {fmt_time(s['median'])} per call "
            f"(IQR {fmt_time(s['q1'])}–{fmt_time(s['q3'])})")
    return out
