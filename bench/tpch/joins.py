"""Joins of sparse relations beside Q5: default plans against the best hand order.

    python -m bench.tpch.joins [--sf 0.1] [--rounds N] [--only NAME,...]

Sums of products of relations built from the TPC-H data (bench.tpch.q5's O, C,
L, S, R) and of random graphs (triangle, path). For each: (a) ep.compile's
defaults, (b) optimize=False as written, (c) the best loop order by hand (every
order with optimize=False, the fastest of a short timing kept), timed
alternating call by call, one thread; prints default/best hand and
default/optimize=False (ratios of medians) and the default's loop orders.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse

import numpy as np

import etchpy as ep
from bench.plans import random_csr
from bench.timing import fmt_ratio, fmt_time, timed
from bench.tpch import data, q5


def cases(sf: float) -> dict:
    """name -> (expression, loop indices, inputs)."""
    rel = q5.relations(data.tables(sf))
    o, c, s, n, i, j, k, l = ep.indices("o c s n i j k l")
    O, C, L, S = (ep.tensor(t, 2, "csr") for t in "OCLS")
    R = ep.tensor("R", 1, "csf")
    A, B, D = (ep.tensor(t, 2, "csr") for t in "ABD")
    g = {"A": random_csr(2000, 8, 1), "B": random_csr(2000, 8, 2), "D": random_csr(2000, 8, 3)}
    pick = lambda names: {t: rel[t] for t in names}
    q5_body = O[o, c] * C[c, n] * L[o, s] * S[s, n] * R[n]
    return {
        "Q5": (ep.sum((o, c, s), q5_body), (o, c, s, n), rel),
        "Q5 total": (ep.sum((o, c, s, n), q5_body), (o, c, s, n), rel),
        "Q5 per order": (ep.sum((c, s, n), q5_body), (o, c, s, n), rel),
        "Q9-like O·L·S": (ep.sum((o, s), O[o, c] * L[o, s] * S[s, n]), (o, c, s, n),
                          pick("OLS")),
        "C·O·L over (n,s)": (ep.sum((c, o), C[c, n] * O[o, c] * L[o, s]), (o, c, s, n),
                             pick("COL")),
        "O·L·C over n": (ep.sum((o, c, s), O[o, c] * L[o, s] * C[c, n]), (o, c, s, n),
                         pick("OLC")),
        "triangle": (ep.sum((i, j, k), A[i, j] * B[j, k] * D[i, k]), (i, j, k), g),
        "path A·B·D": (ep.sum((j, k), A[i, j] * B[j, k] * D[k, l]), (i, j, k, l), g),
        "path summed": (ep.sum((i, j, k, l), A[i, j] * B[j, k] * D[k, l]), (i, j, k, l), g),
    }


def run_case(expr, idx, inputs, rounds: int) -> dict:
    default, plain = ep.compile(expr), ep.compile(expr, optimize=False)
    order, hand, _ = q5.best_order(expr, idx, inputs)
    calls = {"default": default, "optimize=False": plain, "best hand": hand}
    want = np.asarray(plain(**inputs))
    ok = all(np.allclose(np.asarray(k(**inputs)), want) for k in calls.values())
    times = {name: [] for name in calls}
    for _ in range(rounds):
        for name, k in calls.items():
            times[name].append(timed(lambda: k(**inputs))[0])
    med = {name: float(np.median(v)) for name, v in times.items()}
    orders = [f"{st.target}:{''.join(st.order)}" for st in default.plan.steps]
    return {"medians_s": med, "best_hand_order": "".join(order), "same": ok,
            "default_orders": orders, "conversions": len(default.plan.conversions)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.tpch.joins", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sf", type=float, default=0.1)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--only", help="comma-separated case names")
    args = ap.parse_args(argv)
    all_cases = cases(args.sf)
    names = args.only.split(",") if args.only else list(all_cases)
    print(f"{'case':<18} {'default':>9} {'d/hand':>7} {'d/opt=F':>7}  hand  default plan")
    bad = 0
    for name in names:
        r = run_case(*all_cases[name], args.rounds)
        m = r["medians_s"]
        bad += not r["same"]
        print(f"{name:<18} {fmt_time(m['default']):>9} "
              f"{fmt_ratio(m['default'] / m['best hand']):>7} "
              f"{fmt_ratio(m['default'] / m['optimize=False']):>7}  {r['best_hand_order']:<5} "
              f"{' '.join(r['default_orders'])}{' +conv' if r['conversions'] else ''}"
              f"{'' if r['same'] else '  ANSWERS DIFFER'}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
