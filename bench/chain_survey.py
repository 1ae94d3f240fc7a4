"""Which masked chains does unguided saturation plan well? (docs/sketches.md)

    python -m bench chain_survey --json PATH [--shapes N] [--lengths 8,10]

For random masked chains M ∘ (A1 ··· An) written as one flat Σ (the shape of
bench.sketches' chain workloads: n = 8 with 2000 at the ends, inner sizes drawn
from 8, 16, 300, 400, two factors csr at 2%, M with 30 000 nonzeros; n = 10
with 400 at the ends, inner sizes from 3, 24, 30, two factors csr at 20%, M
with 2 000 nonzeros), this compares the plan of unguided saturation at the
default limits with the best of the split plans: M sampled at one index i_p,
or at two, i_p and i_q, with each part (A1..Ap, Ap+1..Aq, Aq+1..An) bracketed
by the matrix-chain order for dense factors. Both are priced by the
optimizer's own cost (optimizer.extract.node_cost), so `ratio` =
unguided cost / best split cost says how far unguided saturation is from a
plan a sketch could name (below 1: unguided found one better than every split
plan). No kernel is run. Writes a JSON list, one object per chain, and prints
per length the median and largest ratio and how many chains are at 2 or more.
"""
from __future__ import annotations

import argparse
import json

import numpy as np

import etchpy as ep

from .kernels import rng_for
from .sketches import _chain

# per chain length: (end size, inner sizes drawn from, sparse density, M's nonzeros)
FAMILIES = {8: (2000, (8, 16, 300, 400), 0.02, 30_000), 10: (400, (3, 24, 30), 0.2, 2000)}


def _ordered(mats, ix, sizes, a: int, b: int, memo: dict):
    """(dense cost, expression) of A_{a+1} ··· A_b bracketed by the matrix-chain
    order: the product over indices ix[a] .. ix[b]."""
    if b - a == 1:
        return 0, mats[a][ix[a], ix[b]]
    if (a, b) not in memo:
        options = []
        for c in range(a + 1, b):
            (cl, el), (cr, er) = (_ordered(mats, ix, sizes, a, c, memo),
                                  _ordered(mats, ix, sizes, c, b, memo))
            options.append((cl + cr + sizes[a] * sizes[c] * sizes[b], c, el, er))
        cost, c, el, er = min(options, key=lambda t: t[:2])
        memo[a, b] = cost, ep.sum(ix[c], el * er)
    return memo[a, b]


def split_plans(sizes, sparse, opts) -> list:
    """[(optimizer cost, p, q, plan)] of every split plan, cheapest first."""
    n = len(sizes) - 1
    ix = ep.indices(" ".join(f"i{k}" for k in range(n + 1)))
    mats = [ep.tensor(f"A{k + 1}", 2, format="csr" if k in sparse else "dense")
            for k in range(n)]
    M, memo, out = ep.tensor("M", 2, format="csr"), {}, []
    for p in range(1, n):
        for q in range(p, n):
            parts = [_ordered(mats, ix, sizes, 0, p, memo)[1],
                     _ordered(mats, ix, sizes, q, n, memo)[1]]
            if q > p:
                parts.append(_ordered(mats, ix, sizes, p, q, memo)[1])
            body = M[ix[0], ix[n]]
            for part in parts:
                body = body * part
            plan = ep.sum((ix[p], ix[q]) if q > p else ix[p], body)
            cost = ep.optimize(plan, **opts, limits={"iterations": 0}).cost_before
            out.append((cost, p, q, plan))
    return sorted(out, key=lambda t: t[:3])


def survey(length: int, shapes: int) -> list[dict]:
    end, inner, density, mask_nnz = FAMILIES[length]
    rng = rng_for(f"chain-survey-{length}")
    rows = []
    for s in range(shapes):
        sizes = [end, *(int(x) for x in rng.choice(inner, length - 1)), end]
        sparse = {int(x) for x in rng.choice(length, 2, replace=False)}
        expr, _, dims, nnz = _chain(f"chain-survey-{length}-{s}", sizes, sparse, "flat",
                                    mask_nnz=mask_nnz, density=density)
        opts = {"dims": dims, "nnz": nnz}
        plain = ep.optimize(expr, **opts)
        best, p, q, plan = split_plans(sizes, sparse, opts)[0]
        rows.append({"length": length, "sizes": sizes,
                     "sparse": [f"A{k + 1}" for k in sorted(sparse)],
                     "unguided_cost": plain.cost_after, "best_split_cost": best,
                     "ratio": round(plain.cost_after / best, 3), "split_at": [p, q],
                     "unguided_nodes": plain.stats["nodes"], "unguided_stop": plain.stats["stop"],
                     "unguided_expr": str(plain.expr), "best_split_expr": str(plan)})
        print(json.dumps({k: rows[-1][k] for k in ("length", "sizes", "sparse", "ratio",
                                                    "unguided_stop")}), flush=True)
    return rows


def summary(rows: list[dict]) -> dict:
    """Per chain length: chains, the median and largest ratio, and how many are >= 2."""
    out = {}
    for length in sorted({r["length"] for r in rows}):
        ratios = np.array([r["ratio"] for r in rows if r["length"] == length])
        out[length] = {"chains": int(ratios.size), "median_ratio": float(np.median(ratios)),
                       "max_ratio": float(ratios.max()), "at_least_2": int((ratios >= 2).sum())}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench chain_survey")
    ap.add_argument("--json", required=True, help="where to write the JSON list")
    ap.add_argument("--shapes", type=int, default=12, help="random chains per length")
    ap.add_argument("--lengths", default="8,10", help="chain lengths (8 and/or 10)")
    args = ap.parse_args(argv)
    rows = []
    for length in (int(x) for x in args.lengths.split(",")):
        rows += survey(length, args.shapes)
    with open(args.json, "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1)
    for length, s in summary(rows).items():
        print(f"{length} matrices: {s['chains']} chains, unguided cost / best split plan's: "
              f"median {s['median_ratio']:.2f}, largest {s['max_ratio']:.3g}, "
              f"{s['at_least_2']} at 2 or more")
    return 0
