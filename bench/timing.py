"""Timing primitives: one timed call, summaries, and human-readable durations."""
from __future__ import annotations

import gc
import random
import time

import numpy as np


def timed(fn):
    """(seconds, result) of one call of `fn()`, with the garbage collector paused."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        out = fn()
        t1 = time.perf_counter()
    finally:
        if was_enabled:
            gc.enable()
    return t1 - t0, out


def alternating_medians(fns, rounds: int) -> list[float]:
    """Median seconds of each of `fns` over `rounds` rounds, each round calling
    every one of them once, in turn (`timed`: the collector paused per call).
    Round r starts at fns[r % len(fns)]: each function follows each other one
    equally often, so none always runs right after a call that warmed the
    caches with its own arrays (two kernels over the same inputs, called one
    after the other, otherwise favour the second)."""
    samples = [[] for _ in fns]
    n = len(fns)
    for r in range(rounds):
        for k in range(n):
            at = (r + k) % n
            samples[at].append(timed(fns[at])[0])
    return [float(np.median(s)) for s in samples]


def alternate_clocks(fns, seconds: float, most: int = 20000) -> list[tuple[float, float]]:
    """[(median thread CPU seconds, median wall seconds)] of each of `fns`, called
    alternately one call at a time until about `seconds` have passed (at least 15
    calls each), the collector paused. Each round calls them in a new order (a
    seeded shuffle), so that each follows every other about equally often: a call
    right after another library's runs in that one's cache and branch state (any
    dense 300² matvec right after a plain np.einsum measured about 1 µs slower,
    2026-11-30)."""
    for fn in fns:
        fn()
    t0 = time.perf_counter()
    for fn in fns:
        fn()
    first = time.perf_counter() - t0
    calls = int(min(most, max(15, seconds / max(first, 1e-7))))
    cpu, wall = [[] for _ in fns], [[] for _ in fns]
    order = list(zip(fns, cpu, wall))
    shuffle, tclock, wclock = random.Random(0).shuffle, time.thread_time, time.perf_counter
    gc.disable()
    try:
        for _ in range(calls):
            shuffle(order)
            for fn, c, w in order:
                t, u = tclock(), wclock()
                fn()
                w.append(wclock() - u)
                c.append(tclock() - t)
    finally:
        gc.enable()
    return [(float(np.median(c)), float(np.median(w))) for c, w in zip(cpu, wall)]


def summarize(samples) -> dict:
    """median, min, max and the quartiles of a list of durations (seconds)."""
    a = np.asarray(samples, dtype=float)
    if a.size == 0:
        return {"n": 0}
    return {"n": int(a.size), "median": float(np.median(a)), "min": float(a.min()),
            "max": float(a.max()), "q1": float(np.percentile(a, 25)),
            "q3": float(np.percentile(a, 75))}


def fmt_time(s) -> str:
    """1.23 µs / 4.56 ms / 7.89 s with three significant digits."""
    if s is None or not np.isfinite(s):
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if s >= scale or unit == "ns":
            v = s / scale
            return f"{v:.3g} {unit}" if v < 100 else f"{v:.0f} {unit}"
    return f"{s} s"


def fmt_spread(summary) -> str:
    """'3.12 ms (3.05–3.40)': median and min–max, in the median's unit."""
    if not summary or summary.get("n", 0) == 0:
        return "—"
    med = summary["median"]
    if summary["n"] == 1:
        return f"{fmt_time(med)} (1 run)"
    unit_scale = next(sc for u, sc in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9))
                      if med >= sc or u == "ns")
    lo, hi = summary["min"] / unit_scale, summary["max"] / unit_scale
    return f"{fmt_time(med)} ({_num(lo)}–{_num(hi)})"


def _num(v) -> str:
    """Three significant digits, never in exponent notation."""
    return f"{v:.0f}" if v >= 100 else f"{v:.3g}"


def fmt_ratio(r) -> str:
    """2 decimals, or 2 significant digits below 0.1 (0.0025, not 0.00)."""
    if r is None:
        return "—"
    return f"{r:.2f}" if r >= 0.1 else f"{r:.2g}"


def paired_medians(f, g, reps: int) -> tuple[float, float]:
    """(median thread CPU seconds of f, of g) over `reps` rounds, f and g called
    in turn in each round."""
    a, b = [], []
    for _ in range(reps):
        t = time.thread_time()
        f()
        a.append(time.thread_time() - t)
        t = time.thread_time()
        g()
        b.append(time.thread_time() - t)
    return float(np.median(a)), float(np.median(b))
