"""ep.optimize's wall time on the optimizer bench's three expressions, for an
A/B of two trees of etchpy, one process per version, alternated:

    PYTHONPATH=OLD_TREE python -m bench.optimize_time
    PYTHONPATH=NEW_TREE python -m bench.optimize_time      # and again, in turn

Each prints the etchpy it imported and, per expression (bench.optimizer_times:
the 15-op and 40-op expressions, the squared loss with its sizes), the median
of 5 calls after a warm-up, garbage collection off while timed.
"""
from __future__ import annotations

import gc
import statistics
import time

import etchpy as ep

from . import optimizer_times as ot


def main() -> None:
    cases = [("15-op", ot.expr15(), {}), ("40-op", ot.expr40(), {}),
             ("squared loss", ot.squared_loss(), {"dims": ot.SQ_DIMS, "nnz": ot.SQ_NNZ})]
    out = []
    for name, e, opts in cases:
        ep.optimize(e, **opts)
        times = []
        for _ in range(5):
            gc.disable()
            t = time.perf_counter()
            ep.optimize(e, **opts)
            times.append(time.perf_counter() - t)
            gc.enable()
        out.append(f"{name} {statistics.median(times) * 1e3:.0f} ms")
    print(ep.__file__, "; ".join(out))


if __name__ == "__main__":
    main()
