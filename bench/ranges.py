"""A range predicate becomes a skip: time scales with the range, not the table.

    python -m bench.ranges [--rows N] [--repeat R]

One relation O over n order keys (one compressed level, sorted codes) and the
query Σ_o O[o] · ep.between(o, lo, hi), with lo, hi parameters (one kernel for
every range). For ranges of 0.1% to 100% of the keys it reports the median
time of the warm call (default: the product clipped to the range), the same
with Tuning.clip_ranges off (a leapfrog with the range), and the same sum with
the filter as a dense 0/1 mask multiplied in (a scan with a test). Calls
alternate between the three.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import etchpy as ep


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=4_000_000)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", ep.PerformanceWarning)
    rng = np.random.default_rng(0)
    n = args.rows
    keys = np.sort(rng.choice(4 * n, n, replace=False))      # sparse keys, as TPC-H's
    O = ep.relation({"o": keys, "p": rng.random(n)}, ["o"], values="p",
                    coding={"o": ep.Keys(np.arange(4 * n), name="o")},
                    levels=["compressed"], name="O")
    (o,) = ep.indices("o")
    query = ep.sum(o, O.var()[o] * ep.between(o, "lo", "hi"))
    skip = ep.compile(query)
    leap = ep.compile(query, tuning={"clip_ranges": False})
    scan = ep.compile(ep.sum(o, O.var()[o] * ep.tensor("M", 1)[o]))
    print(f"rows {n}, key codes {4 * n}; median of {args.repeat} warm calls (ms)")
    print(f"{'range':>8} {'between':>10} {'leapfrog':>10} {'dense mask':>11} {'mask/between':>13}")
    for frac in (0.001, 0.01, 0.1, 1.0):
        lo = int(2 * n * (1 - frac))
        hi = lo + int(4 * n * frac)
        mask = ((np.arange(4 * n) >= lo) & (np.arange(4 * n) < hi)).astype(float)
        a = skip(O=O.tensor, lo=lo, hi=hi)
        b = scan(O=O.tensor, M=mask)
        assert np.isclose(a, b), (a, b)
        assert np.isclose(leap(O=O.tensor, lo=lo, hi=hi), b)
        calls = {"between": lambda: skip(O=O.tensor, lo=lo, hi=hi),
                 "leapfrog": lambda: leap(O=O.tensor, lo=lo, hi=hi),
                 "mask": lambda: scan(O=O.tensor, M=mask)}
        times = {name: [] for name in calls}
        for _ in range(args.repeat):
            for name, call in calls.items():
                t0 = time.perf_counter()
                call()
                times[name].append(time.perf_counter() - t0)
        ma, ml, mb = (np.median(times[x]) * 1e3 for x in ("between", "leapfrog", "mask"))
        print(f"{frac:>8.1%} {ma:>10.3f} {ml:>10.3f} {mb:>11.3f} {mb / ma:>13.1f}")


if __name__ == "__main__":
    main()
