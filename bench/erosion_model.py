"""Hand-written C models of the 3×3 erosion of an `rle` boolean image, to price
what the compiler does not yet do (issue 40), against etchpy's kernel and
numpy's nine slices, one thread, alternating call by call, medians:

    python -m bench erosion_model [--rounds N]

etchpy     the nine windows of one `rle` Tensor, compiled (three shift streams
           per output row, streams.shift_runs, met by the general meet)
streamed   the same algorithm by hand: per output row, three cursors of
           shift_meet's kind (the run holding w−1 and the run holding w+1,
           proofs_notes/shifts.md), met by taking the largest start and the
           smallest end, the stream with the smallest end advanced
shared     each input row's column erosion computed once (a true run [a, b)
           gives [a+1, b−1): the runs of a boolean `rle` row are maximal) into a
           ring of three rows of pieces, and each output row the meet of the
           three rows of the ring that it reads
Both models write the output with one memset per piece into np.zeros, as the
kernel writes its zeroed output. They need a C compiler (`cc`); no target:
they show where the kernel's time goes, not a peer.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import ctypes
import subprocess
import tempfile
from pathlib import Path

import numpy as np

import etchpy as ep
from bench.timing import alternating_medians, fmt_ratio, fmt_time
from bench.windows import erosion_expr, nine_slices, real_images, shapes_image

C = r"""
#include <stdint.h>
#include <string.h>
static int hrow(const int32_t *rseg, const int32_t *rend, const uint8_t *v, int64_t r,
                int64_t h, int32_t *s, int32_t *e) {
    int k = 0;
    if (r < 0 || r >= h) return 0;
    for (int32_t p = rseg[r]; p < rseg[r + 1]; p++) {
        int32_t a = p > rseg[r] ? rend[p - 1] : 0, b = rend[p];
        if (v[p] && b - a > 2) { s[k] = a + 1; e[k] = b - 1; k++; }
    }
    return k;
}
void shared(const int32_t *rseg, const int32_t *rend, const uint8_t *v, int64_t h,
            int64_t w, uint8_t *out, int32_t *buf) {
    int32_t *S[3], *E[3]; int K[3];
    for (int x = 0; x < 3; x++) { S[x] = buf + 2 * x * w; E[x] = S[x] + w; }
    K[0] = 0; K[1] = hrow(rseg, rend, v, 0, h, S[1], E[1]);
    for (int64_t i = 0; i < h; i++) {
        int x0 = i % 3, x1 = (i + 1) % 3, x2 = (i + 2) % 3;
        K[x2] = hrow(rseg, rend, v, i + 1, h, S[x2], E[x2]);
        int a = 0, b = 0, c = 0;
        uint8_t *o = out + i * w;
        while (a < K[x0] && b < K[x1] && c < K[x2]) {
            int32_t lo = S[x0][a], hi = E[x0][a];
            if (S[x1][b] > lo) lo = S[x1][b]; if (S[x2][c] > lo) lo = S[x2][c];
            if (E[x1][b] < hi) hi = E[x1][b]; if (E[x2][c] < hi) hi = E[x2][c];
            if (lo < hi) memset(o + lo, 1, hi - lo);
            if (E[x0][a] == hi) a++; else if (E[x1][b] == hi) b++; else c++;
        }
    }
}
typedef struct { int64_t r, q, re, r0, c, m; int ok; } cur;
static inline int64_t beg(const int32_t *rend, const cur *s, int64_t p) {
    return s->r0 < p ? rend[p - 1] : 0;
}
static void settle(const int32_t *rend, const uint8_t *v, cur *s, int64_t n) {
    s->ok = 0;
    while (!s->ok && s->r < s->re && s->c < n) {
        while (s->r < s->re && (rend[s->r] <= s->c - 1 || v[s->r] == 0)) s->r++;
        if (s->r < s->re) {
            int64_t b = beg(rend, s, s->r) + 1; if (b > s->c) s->c = b;
            if (s->r > s->q) s->q = s->r;
            while (s->q + 1 < s->re && rend[s->q] <= s->c + 1
                   && beg(rend, s, s->q + 1) == rend[s->q] && v[s->q + 1]) s->q++;
            s->ok = s->c + 1 < rend[s->q];
            if (!s->ok) s->r = s->q + 1;
        }
    }
    s->m = 0;
    if (s->ok) {
        int64_t a = rend[s->r] + 1, b = rend[s->q] - 1;
        s->m = a < b ? a : b; if (n < s->m) s->m = n;
    }
}
void streamed(const int32_t *rseg, const int32_t *rend, const uint8_t *v, int64_t h,
              int64_t w, uint8_t *out, int32_t *buf) {
    (void)buf;
    for (int64_t i = 0; i < h; i++) {
        cur s[3];
        for (int k = 0; k < 3; k++) {
            int64_t r = i - 1 + k;
            if (r < 0 || r >= h) { s[k].c = w; s[k].m = 0; continue; }
            s[k].r = s[k].q = s[k].r0 = rseg[r]; s[k].re = rseg[r + 1]; s[k].c = 0;
            settle(rend, v, &s[k], w);
        }
        uint8_t *o = out + i * w;
        while (s[0].c < s[0].m && s[1].c < s[1].m && s[2].c < s[2].m) {
            int64_t lo = s[0].c, hi = s[0].m, t;
            for (int k = 1; k < 3; k++) {
                if (s[k].c > lo) lo = s[k].c; if (s[k].m < hi) hi = s[k].m;
            }
            t = lo;
            if (lo < hi) { memset(o + lo, 1, hi - lo); t = hi; }
            for (int k = 0; k < 3; k++)
                if (s[k].m <= t) { s[k].c = t; settle(rend, v, &s[k], w); }
        }
    }
}
"""


def build():
    """The models' shared library (compiled once into a temporary directory)."""
    d = Path(tempfile.mkdtemp(prefix="erosion_model"))
    (d / "m.c").write_text(C)
    subprocess.run(["cc", "-O3", "-march=native", "-shared", "-fPIC", "-o", str(d / "m.so"),
                    str(d / "m.c")], check=True)
    lib = ctypes.CDLL(str(d / "m.so"))
    for f in (lib.shared, lib.streamed):
        f.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int64] * 2 + [ctypes.c_void_p] * 2
    return lib


def model(fn, t, h: int, w: int):
    """A call of the model `fn` on the rle Tensor t: a fresh zeroed output."""
    rseg, rend = (np.ascontiguousarray(t.levels[1][k]) for k in ("rseg", "rend"))
    vals, buf = t.vals.view(np.uint8), np.empty(6 * w, np.int32)

    def call():
        out = np.zeros((h, w), bool)
        fn(rseg.ctypes.data, rend.ctypes.data, vals.ctypes.data, h, w, out.ctypes.data,
           buf.ctypes.data)
        return out
    return call


def rows(rounds: int):
    i, j = ep.indices("i j")
    images = {"shapes": shapes_image(1024, 1024, 1024)}
    images.update({k: v for k, v in real_images().items() if k in ("horse", "text", "camera")})
    lib, out = build(), []
    for label, im in images.items():
        h, w = im.shape
        kern = ep.compile(erosion_expr(ep.tensor("img", 2, "rle"), i, j, h, w),
                          semiring=ep.semirings.boolean)
        t = ep.Tensor.from_dense(im, "rle", semiring="boolean")
        p = np.pad(im, 1)
        calls = [lambda: kern(img=t), model(lib.streamed, t, h, w), model(lib.shared, t, h, w),
                 lambda: nine_slices(p, h, w)]
        want = nine_slices(p, h, w)
        assert all((f() == want).all() for f in calls)
        out.append((f"{label} {h}×{w}", alternating_medians(calls, rounds)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench erosion_model")
    ap.add_argument("--rounds", type=int, default=11)
    args = ap.parse_args(argv)
    print(f"{'image':24} {'etchpy':>9} {'streamed':>9} {'shared':>9} {'numpy':>9}"
          "   numpy / (etchpy, streamed, shared)")
    for label, (mine, streamed, shared, numpy) in rows(args.rounds):
        print(f"{label:24} {fmt_time(mine):>9} {fmt_time(streamed):>9} {fmt_time(shared):>9} "
              f"{fmt_time(numpy):>9}   {fmt_ratio(numpy / mine)}, {fmt_ratio(numpy / streamed)},"
              f" {fmt_ratio(numpy / shared)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
