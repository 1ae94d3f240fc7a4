"""Time one tensora kernel; runs in-process or as a script in tensora's own venv.

tensora pins llvmlite, which clashes with the numba that pydata sparse needs, so the
benchmark can run tensora from a separate interpreter (see bench/peers.py). This file
imports only numpy and tensora, never etchpy or the bench package, so that it works
there too.

Protocol (script mode): ``python tensora_worker.py DIR``. DIR holds ``spec.json``
(assignment, formats, output_format, repeat, budget, impl_budget) and ``inputs.npz``
(a dense input as ``<name>``; a sparse one as ``<name>.coords`` (ndim x nnz),
``<name>.vals`` and ``<name>.dims``). The worker writes ``out.npy`` (the result as a
dense array) and prints a JSON record: version, backend, compile, warmup, samples,
budget_note.

Timing follows bench/cases.py: tensora's cffi backend compiles the kernel once
(reported as `compile`), one warm-up call, then up to `repeat` calls back to back with
the garbage collector paused, within the same budgets as every other implementation.
"""
from __future__ import annotations

import gc
import json
import sys
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np


def _timed(fn):
    was = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        out = fn()
        return time.perf_counter() - t0, out
    finally:
        if was:
            gc.enable()


def _tensor(ta, fmt, arrays, name):
    if name in arrays:
        return ta.Tensor.from_numpy(np.ascontiguousarray(arrays[name], dtype=float))
    coords = arrays[name + ".coords"]
    dims = tuple(int(d) for d in arrays[name + ".dims"])
    return ta.Tensor.from_soa(tuple(c.tolist() for c in coords),
                              arrays[name + ".vals"].astype(float).tolist(),
                              dimensions=dims, format=fmt)


def run(spec: dict, arrays) -> tuple[dict, np.ndarray]:
    import tensora as ta   # an optional peer, imported only when it is timed
    formats = dict(spec["formats"])
    inputs = {n: _tensor(ta, f, arrays, n) for n, f in formats.items()}
    formats[spec["output"]] = spec["output_format"]
    t0 = time.perf_counter()
    method = ta.tensor_method(spec["assignment"], formats, ta.BackendCompiler.cffi)
    compile_s = time.perf_counter() - t0
    call = lambda: method(**inputs)          # noqa: E731
    warm, out = _timed(call)
    rec = {"version": version("tensora"), "backend": "cffi", "compile": compile_s,
           "warmup": warm, "samples": []}
    result = np.asarray(out.to_numpy(), dtype=float)
    del out
    if warm > spec["budget"]:
        rec["samples"].append(warm)
        rec["budget_note"] = "one run exceeded the budget: the warm-up is the only sample"
        return rec, result
    runs = min(spec["repeat"], max(1, int(spec["impl_budget"] // max(warm, 1e-9))))
    if runs < spec["repeat"]:
        rec["budget_note"] = f"{runs} runs (of {spec['repeat']}) to stay within the budget"
    for _ in range(runs):
        t, out = _timed(call)
        del out
        rec["samples"].append(t)
        if t > spec["budget"]:
            rec["budget_note"] = f"stopped after {len(rec['samples'])} runs (budget)"
            break
    return rec, result


def main(argv) -> int:
    work = Path(argv[1])
    spec = json.loads((work / "spec.json").read_text())
    with np.load(work / "inputs.npz") as z:
        arrays = {k: z[k] for k in z.files}
    rec, result = run(spec, arrays)
    np.save(work / "out.npy", result)
    print(json.dumps(rec))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
