"""What binding a scipy bsr or dia input costs, and the share of it that checks
the arrays (issue 41: would fused checks pay for these inputs?).

    python -m bench.structured_bind [--rounds N] [--n N]

Neither input is bound over scipy's own arrays: runtime.structured_inputs
regroups the values into row blocks / row bands and builds the index arrays on
every call (bsr: block-column indices times C, dia: each row's band). What a
kernel could check as it reads is what the binder checks of what it built from
(bsr: indptr, then the block-list level's check; dia: its offsets distinct),
so a fused check saves at most the 'checks' line, never the regrouping. One
thread (bench._env); the jobs are called in turn, N rounds, medians.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import statistics
import time
import warnings

import numpy as np
import scipy.sparse as sp

import etchpy as ep
from etchpy.formats import Format
from etchpy.formats.compressed import check_pointers
from etchpy.runtime import structured_inputs as si

SR = ep.semirings.real


def jobs(n: int) -> dict:
    """The timed calls, by label, over an n×n bsr (2×2 blocks) and dia (5 bands)."""
    rng = np.random.default_rng(0)
    bsr = sp.random_array((n, n), density=10 / n, rng=rng, format="csr").tobsr(blocksize=(2, 2))
    bsr.sum_duplicates()
    dia = sp.dia_array((rng.random((5, n)), [-2, -1, 0, 1, 2]), shape=(n, n))
    x = rng.random(n)
    fb, fd = Format.named("blocks", 2), Format.named("banded", 2)
    kb = ep.compile("y[i] = A[i,j] * x[j]", formats={"A": fb})
    kd = ep.compile("y[i] = A[i,j] * x[j]", formats={"A": fd})
    level = si.from_bsr(bsr, fb, SR, "A")[0][1]

    def bsr_checks():
        ptr = np.asarray(bsr.indptr, dtype=np.int64)
        check_pointers(ptr, n // 2, len(bsr.indices), "A", "indptr", "indices", "block rows")
        fb.levels[1].check(level, n, n, "A")

    def dia_checks():
        offsets = np.asarray(dia.offsets, dtype=np.int64)
        return len(np.unique(offsets)) == len(offsets)
    return {"bsr bind": lambda: si.from_bsr(bsr, fb, SR, "A"), "bsr checks": bsr_checks,
            "bsr call": lambda: kb(A=bsr, x=x),
            "dia bind": lambda: si.from_dia(dia, fd, SR, "A"), "dia checks": dia_checks,
            "dia call": lambda: kd(A=dia, x=x)}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.structured_bind")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--n", type=int, default=200_000)
    args = p.parse_args(argv)
    warnings.simplefilter("ignore", ep.PerformanceWarning)
    todo = jobs(args.n)
    times: dict = {k: [] for k in todo}
    for _ in range(args.rounds):
        for label, job in todo.items():
            t = time.perf_counter()
            job()
            times[label].append(time.perf_counter() - t)
    for label, got in times.items():
        print(f"{label:11s} median {statistics.median(got) * 1e3:9.3f} ms"
              f"  (min {min(got) * 1e3:.3f})")


if __name__ == "__main__":
    main()
