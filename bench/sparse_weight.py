"""The price of a multiply-add through a csr operand against a dense one, measured
and as the one cost model prices it: what Tuning.blas_gain stands for (the
approximation search weighs a pruned csr weight against its dense original
through plan.product_cost, which divides a dense product's loops by it).

    python -m bench.sparse_weight [--rounds N] [--json PATH]

The product is the MLP bench's first layer, Y[i,k] = Σ_j X[i,j]·W[j,k] with X
360×784 dense and W 784×512, W stored dense (a BLAS call) or csr at densities
0.02, 0.1 and 0.3 (etchpy's sparse kernel), and dense with tuning blas=False
(the loops the model prices); one thread (bench._env). The three kernels are
called alternately in one process, N rounds; per multiply-add is the median
time over rows·k·cols (dense) or rows·nnz (csr). The model's figures are
plan.cost.plan_cost of each kernel's plan over the same sizes, per multiply-add,
and plan.product_cost's csr against BLAS; the measured BLAS gain is the loops'
time over BLAS's, per multiply-add (Tuning.blas_gain's source).
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import json
import time

import numpy as np
import scipy.sparse as sp

import etchpy as ep
from etchpy.plan.cost import Stats, plan_cost
from etchpy.plan.product_cost import product_cost
from etchpy.tuning import DEFAULT

ROWS, K, COLS = 360, 784, 512
EXPR = "Y[i,k] = X[i,j] * W[j,k]"


def _median_call(kern, inputs, times):
    t = time.perf_counter()
    kern(**inputs)
    times.append(time.perf_counter() - t)


def measure(density: float, rounds: int) -> dict:
    rng = np.random.default_rng(0)
    x = rng.random((ROWS, K))
    w = sp.random(K, COLS, density=density, format="csr", random_state=1)
    dense = ep.compile(EXPR)
    loops = ep.compile(EXPR, tuning={"blas": False})
    sparse = ep.compile(EXPR, formats={"W": "csr"})
    np.testing.assert_allclose(sparse(X=x, W=w), dense(X=x, W=w.toarray()), rtol=1e-9)
    wd, td, tl, ts = w.toarray(), [], [], []
    for _ in range(rounds):
        _median_call(dense, {"X": x, "W": wd}, td)
        _median_call(sparse, {"X": x, "W": w}, ts)
        _median_call(loops, {"X": x, "W": wd}, tl)
    dense_ns = float(np.median(td)) / (ROWS * K * COLS) * 1e9
    loops_ns = float(np.median(tl)) / (ROWS * K * COLS) * 1e9
    sparse_ns = float(np.median(ts)) / (ROWS * w.nnz) * 1e9
    dims = {"i": ROWS, "j": K, "k": COLS}
    model_d = plan_cost(dense.compiled.plan, Stats(dims)) / (ROWS * K * COLS)
    model_s = plan_cost(sparse.compiled.plan, Stats(dims, {"W": w.nnz})) / (ROWS * w.nnz)
    return {"density": density, "nnz": int(w.nnz), "dense_ns_per_madd": dense_ns,
            "csr_ns_per_madd": sparse_ns, "measured_ratio": sparse_ns / dense_ns,
            "dense_loops_ns_per_madd": loops_ns, "csr_to_loops_ratio": sparse_ns / loops_ns,
            "model_dense_per_madd": model_d, "model_csr_per_madd": model_s,
            "model_ratio": model_s / model_d, "blas_gain_measured": loops_ns / dense_ns,
            "model_csr_to_blas": _model_csr_to_blas(w.nnz)}


def _model_csr_to_blas(nnz: int) -> float:
    per = product_cost(ROWS, K, COLS, {"B": nnz}, DEFAULT) / (ROWS * nnz)
    return per / (product_cost(ROWS, K, COLS, {}, DEFAULT) / (ROWS * K * COLS))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    rows = [measure(d, args.rounds) for d in (0.02, 0.1, 0.3)]
    for r in rows:
        print(f"density {r['density']:<5} nnz {r['nnz']:>7}  measured csr/dense per "
              f"multiply-add {r['measured_ratio']:6.2f}  ({r['csr_ns_per_madd']:.3f} ns / "
              f"{r['dense_ns_per_madd']:.3f} ns)   against dense loops (blas off) "
              f"{r['csr_to_loops_ratio']:5.2f}   model {r['model_ratio']:5.2f}   BLAS gain "
              f"{r['blas_gain_measured']:5.2f}   model csr/BLAS {r['model_csr_to_blas']:5.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": time.strftime("%Y-%m-%d"), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
