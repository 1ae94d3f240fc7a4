"""The plans of a 5-mode MTTKRP side by side (docs/performance.md, sketches).

    PYTHONPATH=. python -m bench.mttkrp_plans [--dims 20,20,20,20,20] [--nnz 1000000]
                                              [--rank 32] [--repeat 9] [--unfused]

out[i,r] = Σ_{j,k,l,m} X[i,j,k,l,m]·B[j,r]·C[k,r]·D[l,r]·E[m,r], X csf. Each
plan's kernel is compiled with rewrite_margin = inf (the plan is compiled
whatever the plan cost model says) and timed alternating call by call; the
report is each plan's median and its ratio to the written nest's:
`written` (no rewrite: one fused nest over X's entries), `unguided`
(saturation at the default limits), `partial` (the sketch of
bench.sketches.mttkrp5: B·C outside, X·D·E inside) and `levels` (one factor
per level of X: Σ_j B·(Σ_k C·(Σ_l D·(Σ_m E·X)))), with the optimizer's
estimate of each. The factored plans run their temporaries fused into their
readers (Tuning.fused_temporaries); `--unfused` also times them with every
temporary a dense array of its own.
"""
from __future__ import annotations

import argparse
import math

import numpy as np

import etchpy as ep

from .timing import timed

sk = ep.sketch
ALWAYS = {"rewrite_margin": math.inf}


def plans(dims, nnz, rank, repeat, seed=1, unfused=False) -> list[dict]:
    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(0, math.prod(dims), nnz, dtype=np.int64))
    coords = np.stack(np.unravel_index(keys, dims))
    i, j, k, l, m, r = ep.indices("i j k l m r")
    X = ep.tensor("X", 5, format="csf")
    B, C, D, E = (ep.tensor(c, 2) for c in "BCDE")
    expr = ep.sum((j, k, l, m), X[i, j, k, l, m] * B[j, r] * C[k, r] * D[l, r] * E[m, r])
    ins = {c: rng.random((dims[q + 1], rank)) for q, c in enumerate("BCDE")}
    ins["X"] = ep.Tensor.from_coords(coords, rng.random(len(keys)), tuple(dims), "csf", name="X")
    opts = {"dims": {**dict(zip("ijklm", dims)), "r": rank}, "nnz": {"X": len(keys)}}
    levels = sk.sum("j", sk.mul("B", sk.sum("k", sk.mul("C", sk.sum("l", sk.mul(
        "D", sk.sum("m", sk.mul("E", "X"))))))))
    partial = sk.sum("j k", sk.mul("B", "C", sk.sum("l m", sk.mul("X", "D", "E"))))
    variants = {"written": {**opts, "limits": {"iterations": 0}}, "unguided": opts,
                "partial": {**opts, "sketches": [partial]},
                "levels": {**opts, "sketches": [levels]}}
    tunings = {n: ALWAYS for n in variants}
    if unfused:             # the factored plans again, each temporary a dense array
        for n in ("partial", "levels"):
            variants[f"{n}/dense"] = variants[n]
            tunings[f"{n}/dense"] = {**ALWAYS, "fused_temporaries": False}
    kernels = {n: ep.compile(expr, optimizer_options=o, tuning=tunings[n])
               for n, o in variants.items()}
    want = kernels["written"](**ins)
    for n, kern in kernels.items():
        assert np.allclose(kern(**ins), want), n
    times: dict = {n: [] for n in kernels}
    for _ in range(repeat):
        for n, kern in kernels.items():
            times[n].append(timed(lambda: kern(**ins))[0])
    base = float(np.median(times["written"]))
    rows = []
    for n, o in variants.items():
        opt = ep.optimize(expr, **o)
        med = float(np.median(times[n]))
        rows.append({"plan": n, "ms": round(1e3 * med, 3), "vs_written": round(med / base, 2),
                     "cost": opt.cost_after, "expr": str(opt.expr)})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.mttkrp_plans")
    ap.add_argument("--dims", default="20,20,20,20,20")
    ap.add_argument("--nnz", type=int, default=1_000_000)
    ap.add_argument("--rank", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--unfused", action="store_true",
                    help="also time partial and levels with fused_temporaries off")
    args = ap.parse_args(argv)
    dims = [int(d) for d in args.dims.split(",")]
    for row in plans(dims, args.nnz, args.rank, args.repeat, unfused=args.unfused):
        print(f"{row['plan']:13s} {row['ms']:9.3f} ms  {row['vs_written']:5.2f}x written  "
              f"cost {row['cost']:.3g}  {row['expr']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
