"""Q6's flat loop over lineitem in C, its compared columns float64 or narrow.

    python -m bench.tpch.q6_narrow [--lines N] [--rounds R]

A measurement, not a query: Q6's kernel (bench/tpch/tables.py `q6`) is one
branch-free loop over four float64 columns (the discounted price it sums, the
ship date, discount and quantity it compares). This harness runs that loop as
the kernel writes it and in other forms over the same synthetic lines (sf 1's
count; dates, discounts and quantities uniform over TPC-H's ranges), with the
compared columns in their own narrow dtypes (ship date days int32 or int16,
quantity int8, discount float32 or int8 hundredths) and the bounds in the
column's dtype, each form once a block mask (the tests over 1024 lines into a
byte mask, then the sum over the price where the mask holds, 8 lanes), and in
the form lower.schedule.flat_mask emits (Tuning.flat_mask: the same mask, then
one accumulator adding in the loop's order, a group of 8 failing lines skipped:
the loop's sum to the last bit). Every
form's answer is checked against numpy's; the forms are alternated call by call
and the medians of each call's thread CPU time printed, with the ratio to the
kernel's loop. docs/performance.md, "Q6: compared-only columns in a narrow
dtype (session 49)", has the numbers and what blocks building it.
"""
from __future__ import annotations

import argparse
import ctypes
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

C = r"""
#include <stdint.h>
double kernel_loop(int64_t n, const double *restrict v, const double *restrict sd,
                   const double *restrict dc, const double *restrict qt, const double *restrict p) {
    double acc = 0.0;      /* the loop etchpy's Q6 kernel is (one accumulator) */
    for (int64_t c = 0; c < n; c++)
        acc = (acc + ((((p[0] <= sd[c]) & (sd[c] < p[1])) & (((p[2] <= dc[c]) &
               (dc[c] <= p[3])) & (qt[c] < p[4]))) ? v[c] : 0.0));
    return acc;
}
#define LOOP(NAME, TS, TD, TQ) \
double NAME(int64_t n, const double *restrict v, const TS *restrict sd, \
            const TD *restrict dc, const TQ *restrict qt, const double *restrict p) { \
    double acc = 0.0;      /* the kernel's loop, its compared columns narrow */ \
    for (int64_t c = 0; c < n; c++) \
        acc = (acc + ((((p[0] <= sd[c]) & (sd[c] < p[1])) & (((p[2] <= dc[c]) & \
               (dc[c] <= p[3])) & (qt[c] < p[4]))) ? v[c] : 0.0)); \
    return acc; }
LOOP(loop_sd32, int32_t, double, double)
LOOP(loop_sd16_qt8_dc8, int16_t, int8_t, int8_t)
#define BLK(NAME, TS, TD, TQ) \
double NAME(int64_t n, const double *restrict v, const TS *restrict sd, \
            const TD *restrict dc, const TQ *restrict qt, const double *restrict p) { \
    TS s0 = (TS)p[0], s1 = (TS)p[1]; TD d0 = (TD)p[2], d1 = (TD)p[3]; TQ q1 = (TQ)p[4]; \
    double a[8] = {0}; int8_t m[1024]; \
    for (int64_t b = 0; b < n; b += 1024) { \
        int64_t e = n - b < 1024 ? n - b : 1024; \
        const TS *S = sd + b; const TD *D = dc + b; const TQ *Q = qt + b; \
        const double *V = v + b; \
        for (int64_t c = 0; c < e; c++) \
            m[c] = ((s0 <= S[c]) & (S[c] < s1)) & ((d0 <= D[c]) & (D[c] <= d1)) & (Q[c] < q1); \
        int64_t c = 0; \
        for (; c + 8 <= e; c += 8) \
            for (int l = 0; l < 8; l++) a[l] += m[c + l] ? V[c + l] : 0.0; \
        for (; c < e; c++) a[0] += m[c] ? V[c] : 0.0; \
    } \
    double acc = 0; for (int l = 0; l < 8; l++) acc += a[l]; return acc; }
BLK(mask_f64, double, double, double)
BLK(mask_sd32, int32_t, double, double)
BLK(mask_sd16_qt8, int16_t, double, int8_t)
BLK(mask_sd16_qt8_dc32, int16_t, float, int8_t)
BLK(mask_sd16_qt8_dc8, int16_t, int8_t, int8_t)
#define GRP(NAME, TS, TD, TQ) \
double NAME(int64_t n, const double *restrict v, const TS *restrict sd, \
            const TD *restrict dc, const TQ *restrict qt, const double *restrict p) { \
    TS s0 = (TS)p[0], s1 = (TS)p[1]; TD d0 = (TD)p[2], d1 = (TD)p[3]; TQ q1 = (TQ)p[4]; \
    double acc = 0.0; int8_t m[1024];  /* lower.schedule.flat_mask's form: one accumulator, */ \
    for (int64_t b = 0; b < n; b += 1024) {       /* the loop's additions in its order */ \
        int64_t e = n - b < 1024 ? n - b : 1024; \
        const TS *S = sd + b; const TD *D = dc + b; const TQ *Q = qt + b; \
        const double *V = v + b; \
        for (int64_t c = 0; c < e; c++) \
            m[c] = ((s0 <= S[c]) & (S[c] < s1)) & ((d0 <= D[c]) & (D[c] <= d1)) & (Q[c] < q1); \
        int64_t c = 0; \
        for (; c + 8 <= e; c += 8) \
            if (m[c] | m[c + 1] | m[c + 2] | m[c + 3] | m[c + 4] | m[c + 5] | m[c + 6] | m[c + 7]) \
                for (int l = 0; l < 8; l++) acc = acc + (m[c + l] ? V[c + l] : 0.0); \
        for (; c < e; c++) acc = acc + (m[c] ? V[c] : 0.0); \
    } \
    return acc; }
GRP(grp_f64, double, double, double)
GRP(grp_sd16_qt8_dc8, int16_t, int8_t, int8_t)
"""
FLAGS = ("-O3", "-march=native", "-mprefer-vector-width=256", "-falign-loops=64")
# form: (C function, ship date, discount, quantity column, bounds)
FORMS = {"kernel's loop, all float64": ("kernel_loop", "sd64", "dc64", "qt64", "b64"),
         "kernel's loop, date int32": ("loop_sd32", "sd32", "dc64", "qt64", "b64"),
         "kernel's loop, int16, int8, int8": ("loop_sd16_qt8_dc8", "sd16", "dc8", "qt8", "b8"),
         "block mask, all float64": ("mask_f64", "sd64", "dc64", "qt64", "b64"),
         "block mask, date int32": ("mask_sd32", "sd32", "dc64", "qt64", "b64"),
         "block mask, date int16, qty int8": ("mask_sd16_qt8", "sd16", "dc64", "qt8", "b64"),
         "... and discount float32": ("mask_sd16_qt8_dc32", "sd16", "dc32", "qt8", "b32"),
         "... or discount int8 hundredths": ("mask_sd16_qt8_dc8", "sd16", "dc8", "qt8", "b8"),
         "flat_mask's form, all float64": ("grp_f64", "sd64", "dc64", "qt64", "b64"),
         "flat_mask's form, int16, int8, int8": ("grp_sd16_qt8_dc8", "sd16", "dc8", "qt8", "b8")}


def _columns(n: int) -> tuple[dict, float]:
    """The synthetic lines' columns by form name, and numpy's Q6 sum over them
    (1994, discount 0.06 ± 0.01, quantity < 24)."""
    rng = np.random.default_rng(1)
    sd, dc, qt = rng.integers(8035, 10440, n), rng.integers(0, 11, n), rng.integers(1, 51, n)
    price = rng.uniform(900.0, 105000.0, n) * (1.0 - dc / 100.0)
    lo, hi, eps = 8766.0, 9131.0, 1e-9
    cols = {"v": price, "sd64": sd.astype(np.float64), "sd32": sd.astype(np.int32),
            "sd16": sd.astype(np.int16), "dc64": dc / 100.0,
            "dc32": (dc / 100.0).astype(np.float32), "dc8": dc.astype(np.int8),
            "qt64": qt.astype(np.float64), "qt8": qt.astype(np.int8),
            "b64": np.array([lo, hi, 0.05 - eps, 0.07 + eps, 24.0]),
            "b32": np.array([lo, hi, float(np.float32(0.05)), float(np.float32(0.07)), 24.0]),
            "b8": np.array([lo, hi, 5.0, 7.0, 24.0])}
    keep = (sd >= lo) & (sd < hi) & (dc >= 5) & (dc <= 7) & (qt < 24)
    return cols, float(price[keep].sum())


def _library(where: Path):
    src, lib = where / "q6_narrow.c", where / "q6_narrow.so"
    src.write_text(C)
    subprocess.run(["gcc", *FLAGS, "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return ctypes.CDLL(str(lib))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=6001215)
    ap.add_argument("--rounds", type=int, default=21)
    args = ap.parse_args(argv)
    cols, want = _columns(args.lines)
    with tempfile.TemporaryDirectory() as tmp:
        lib = _library(Path(tmp))
        calls = {}
        for form, (fn_name, *names) in FORMS.items():
            fn = getattr(lib, fn_name)
            fn.restype = ctypes.c_double
            ptrs = [cols[k].ctypes.data_as(ctypes.c_void_p) for k in ("v", *names)]
            calls[form] = (fn, (ctypes.c_int64(args.lines), *ptrs))
        times = {form: [] for form in FORMS}
        for _ in range(args.rounds):
            loop = None                          # the kernel's loop's sum, this round
            for form, (fn, call_args) in calls.items():
                t = time.thread_time()
                got = fn(*call_args)
                times[form].append(time.thread_time() - t)
                assert abs(got - want) <= 1e-9 * abs(want), (form, got, want)
                loop = got if loop is None else loop
                if form.startswith("flat_mask's form, all"):   # the loop's sum, to the bit
                    assert got == loop, (form, got, loop)
    base = statistics.median(times["kernel's loop, all float64"])
    for form, ts in times.items():
        m = statistics.median(ts)
        print(f"{form:38s} {m * 1e3:7.2f} ms  {base / m:5.2f}x")


if __name__ == "__main__":
    main()
