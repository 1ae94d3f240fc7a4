"""Per-level algorithms chosen from the fibre statistics (plan.algorithms),
against the old default and against each strategy forced.

    python -m bench.algos [--rounds N] [--quick]

One thread, one process. Each case compiles the same expression under several
Tunings: `chosen` (the default: the planner picks per level), `old`
(`algorithm_choice=False`: per segment pair at run time, markers wherever they
can be made) and each strategy forced through the Tuning's thresholds
(`merge`: fibre_spread and gallop_ratio huge, so a plain merge; `gallop`:
gallop_ratio 1; `per pair`: fibre_spread 0; `no marker`: markers off; `old`
makes a marker wherever one can be made). Each kernel is called once to plan it for the
inputs' size class and checked against the first; then all are called in turn,
round after round, and the median of each is reported with its ratio to
`chosen`'s (above 1: slower than chosen). `--quick` divides the sizes by 4.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse

import numpy as np
import scipy.sparse as sp

import etchpy as ep
from etchpy.tuning import Tuning
from bench.timing import fmt_ratio, fmt_time, timed

HUGE = 10.0 ** 12
VARIANTS = {
    "chosen": Tuning(),
    "old": Tuning(algorithm_choice=False),
    "merge": Tuning(fibre_spread=HUGE, gallop_ratio=10 ** 12),
    "gallop": Tuning(fibre_spread=HUGE, gallop_ratio=1),
    "per pair": Tuning(fibre_spread=0.0),
    "no marker": Tuning(markers=False),
}


def _csr(rows, cols, per_row, seed, spread=False):
    """A rows×cols canonical csr matrix with about `per_row` random columns a row
    (with `spread`, row lengths drawn from 1..2·per_row-1... uniformly)."""
    rng = np.random.default_rng(seed)
    counts = (rng.integers(1, 2 * per_row, rows) if spread
              else np.full(rows, per_row))
    r = np.repeat(np.arange(rows), counts)
    m = sp.csr_matrix((rng.random(len(r)), (r, rng.integers(0, cols, len(r)))),
                      shape=(rows, cols))
    m.sum_duplicates()
    return m


def cases(scale: int):
    """(name, expression, inputs, variants, loop order or None) per case."""
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    sv = ep.Format([ep.Compressed()])
    x = ep.tensor("x", 1, sv)
    dot = ep.sum((i, j), A[i, j] * B[i, j])
    n = 8000 // scale
    inner = ep.sum(j, A[i, j] * B[k, j])
    intersect = ("chosen", "old", "merge", "gallop", "per pair")
    out = [
        ("skewed Σ A·B (rows 4 vs 400)", dot,
         {"A": _csr(n, n, 4, 1), "B": _csr(n, n, 400, 2)}, intersect),
        ("short Σ A·B (rows 3 vs 3)", dot,
         {"A": _csr(8 * n, n, 3, 13), "B": _csr(8 * n, n, 3, 14)}, intersect),
        ("balanced Σ A·B (rows 8 vs 8)", dot,
         {"A": _csr(4 * n, n, 8, 3), "B": _csr(4 * n, n, 8, 4)}, intersect),
        ("mixed Σ A·B (rows 1..63 vs 1..63)", dot,
         {"A": _csr(2 * n, n, 32, 5, True), "B": _csr(2 * n, n, 32, 6, True)}, intersect),
        ("A·Bᵀ marker pays (rows 40, |j| 2e3)", inner,
         {"A": _csr(n // 8, 2000, 40, 7), "B": _csr(n // 8, 2000, 40, 8)},
         ("chosen", "old", "no marker")),
        ("A·Bᵀ marker loses (rows 4 vs 400, |j| 4e6)", inner,
         {"A": _csr(n // 40, 4_000_000 // scale, 4, 9),
          "B": _csr(n // 40, 4_000_000 // scale, 400, 10)},
         ("chosen", "old", "no marker"), ("i", "k", "j")),
    ]
    v = sp.random(1, 50 * n, density=8 / (50 * n), format="csr", random_state=11)
    out.append(("SpMSpV x 8 entries, rows 400", ep.sum(j, A[i, j] * x[j]),
                {"A": _csr(n, 50 * n, 400, 12),
                 "x": ep.Tensor.from_dense(v.toarray()[0], sv)}, intersect))
    return [c if len(c) == 5 else c + (None,) for c in out]


def run_case(expr, inputs, names, rounds, order=None):
    """{variant: median seconds} and whether every variant agreed with the first."""
    kerns = {nm: ep.compile(expr, tuning=VARIANTS[nm], order=order,
                            optimize=None if order is None else True) for nm in names}
    answers = {nm: np.asarray(kerns[nm](**inputs)) for nm in names}
    first = answers[names[0]]
    ok = all(np.allclose(a, first) for a in answers.values())
    times = {nm: [] for nm in names}
    for r in range(rounds):             # each round starts from another variant
        for nm in names[r % len(names):] + names[:r % len(names)]:
            times[nm].append(timed(lambda: kerns[nm](**inputs))[0])
    return {nm: float(np.median(t)) for nm, t in times.items()}, ok, kerns["chosen"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.algos", description=__doc__)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="sizes divided by 4")
    ap.add_argument("--explain", action="store_true", help="print the chosen algorithms")
    ap.add_argument("--case", type=int, action="append", help="only these cases (0-based)")
    args = ap.parse_args(argv)
    bad = 0
    for n, (name, expr, inputs, names, order) in enumerate(cases(4 if args.quick else 1)):
        if args.case and n not in args.case:
            continue
        med, ok, chosen = run_case(expr, inputs, names, args.rounds, order)
        bad += not ok
        cells = "  ".join(f"{nm} {fmt_time(med[nm])} ({fmt_ratio(med[nm] / med['chosen'])})"
                          for nm in names)
        print(f"{name}: {cells}  same: {'yes' if ok else 'NO'}")
        if args.explain:
            text = chosen.explain().splitlines()
            at = [n for n, ln in enumerate(text) if ln.startswith("algorithms")]
            print("\n".join("    " + ln for ln in text[at[0] + 1:at[0] + 3]) if at else
                  "    (no decision)")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
