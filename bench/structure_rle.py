"""Run-length images against numpy on the dense image (issue 40), one thread,
alternating call by call in one process, ratios of medians:

    python -m bench structure_rle [--rounds N] [--sizes 1,16] [--cpu]

Images: real ones from scikit-image (`skimage.data`: the horse silhouette and the
text page thresholded, binary masks; the camera posterised to 8 grey levels and
upscaled 4× nearest, flat grey regions), tiled to about 1 and 16 megapixels, float64;
without scikit-image, generated discs and bars of the same kinds. Each image's
mean run (pixels per run along a row) is printed. Images are packed once,
outside the timing (`ep.Tensor.from_dense(img, "rle")`, time printed).

rowsum   Σ_j I[i,j]                    vs img.sum(axis=1)
masked   Σ_ij I[i,j]·M[i,j]            vs the faster of np.vdot(img, mask) and (img*mask).sum()
masked / lanes off  the same kernel against itself with Tuning(run_lanes=0) (its rows
                                          one by one, a branch a list: beside)
blend    I[i,j] + M[i,j], output="rle" vs img + mask (written as runs, one per overlap:
                                          the blend of run-length images is one)
blend dense  the same into a dense output, beside (no target: it stores every
                                          pixel, bound by the stores' bandwidth)
hist     Σ_ij onehot(b, I[i,j], 256)   vs the faster of np.bincount and np.histogram on
                                          the dense uint8 image, and vs cv2.calcHist
                                          (opencv-python-headless, cv2.setNumThreads(1))
sparse   Σ_ij S[i,j]·T[i,j], both sparse_rle: a mask times itself shifted 7 columns
         (one piece per overlap of their runs) vs np.vdot, and vs the same kernel with
         Tuning(runs=False) (a leapfrog cell by cell, as before law 6 of runs.md)
--cpu times each call by its thread's CPU time (the calls and peers run on the
calling thread) instead of the wall clock.
masked and blend pair each mask with the grey image (tiled and cut to its shape).
The target of each is a ratio ≤ 1/3 (etchpy at least 3× faster), but rows marked
"beside", which are printed and not counted. The machine may be shared: the ratios
are medians of alternating calls, not quiet numbers.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse

import numpy as np

import etchpy as ep
from bench.timing import alternating_medians, fmt_ratio, fmt_time, timed

TARGET = 1 / 3
BESIDE = None      # a case's third item: printed beside, no target


def _sources():
    """{name: (kind, small image)}: real images where scikit-image is installed."""
    try:
        from skimage import data
    except ImportError:
        return _generated()
    camera = np.kron(data.camera() // 32, np.ones((4, 4), dtype=np.uint8))
    return {"horse": ("mask", data.horse()), "text": ("mask", data.text() < 100),
            "camera8": ("grey", camera)}


def _generated():
    """Discs and bars (masks) and flat grey bands, when no real image is at hand."""
    y, x = np.mgrid[:512, :512]
    discs = ((x % 128 - 64) ** 2 + (y % 128 - 64) ** 2) < 40 ** 2
    bars = (x // 24 + y // 48) % 3 == 0
    grey = ((x // 40) * 7 + (y // 30) * 3) % 8
    return {"discs": ("mask", discs), "bars": ("mask", bars), "grey8": ("grey", grey)}


def _tiled(a, mp):
    """`a` tiled (or cut) to about `mp` megapixels, float64, C-contiguous."""
    reps = max(1, round((mp * 1e6 / a.size) ** 0.5))
    out = np.tile(a, (reps, reps))
    side = int((mp * 1e6) ** 0.5)
    if out.size > 1.5 * mp * 1e6:
        out = out[:side, :side]
    return np.ascontiguousarray(out, dtype=np.float64)


def mean_run(img) -> float:
    return img.size / (np.count_nonzero(img[:, 1:] != img[:, :-1]) + img.shape[0])


def _packed(img):
    seconds, t = timed(lambda: ep.Tensor.from_dense(img, "rle"))
    return t, seconds


def cases(mp, rounds, clock=alternating_medians):
    i, j = ep.indices("i j")
    I, M = ep.tensor("I", 2, format="rle"), ep.tensor("M", 2, format="rle")
    rowsum = ep.compile(ep.sum(j, I[i, j]))
    masked = ep.compile(ep.sum((i, j), I[i, j] * M[i, j]))
    masked_off = ep.compile(ep.sum((i, j), I[i, j] * M[i, j]), tuning={"run_lanes": 0})
    blend = ep.compile(I[i, j] + M[i, j])
    blend_rle = ep.compile(I[i, j] + M[i, j], output="rle")
    b = ep.indices("b")[0]
    hist = ep.compile(ep.sum((i, j), ep.onehot(b, I[i, j], 256)))
    sources = _sources()
    grey = next(_tiled(a, mp) for kind, a in sources.values() if kind == "grey")
    for name, (kind, small) in sources.items():
        img = _tiled(small, mp)
        t, pack = _packed(img)
        head = f"{name} {img.shape[0]}×{img.shape[1]} run {mean_run(img):.0f}"
        print(f"  {head}: {len(t.vals)} runs, packed in {fmt_time(pack)}")
        yield f"rowsum  {head}", clock(
            [lambda: rowsum(I=t), lambda: img.sum(axis=1)], rounds)
        yield from _histograms(hist, t, img, head, rounds, clock)
        if kind != "mask":
            continue
        reps = (-(-img.shape[0] // grey.shape[0]), -(-img.shape[1] // grey.shape[1]))
        g = np.ascontiguousarray(np.tile(grey, reps)[:img.shape[0], :img.shape[1]])
        gt, _ = _packed(g)
        meds = clock([lambda: masked(I=gt, M=t), lambda: np.vdot(g, img),
                      lambda: (g * img).sum(), lambda: masked_off(I=gt, M=t)], rounds)
        yield f"masked  {head}", _best_peer(meds[:3])
        yield f"masked  {head} / lanes off", [meds[0], meds[3]], BESIDE
        assert np.array_equal(blend_rle(I=gt, M=t).to_dense(), g + img)
        meds = clock([lambda: blend(I=gt, M=t), lambda: blend_rle(I=gt, M=t),
                                    lambda: g + img], rounds)
        yield f"blend   {head}", [meds[1], meds[2]]
        yield f"blend dense {head}", [meds[0], meds[2]], BESIDE
        yield from _sparse_masked(img, head, rounds, clock)


def _sparse_masked(img, head, rounds, clock):
    """A mask times its shift by 7 columns, both sparse run lists, against
    numpy's vdot and against the leapfrog (runs off); values checked first."""
    i, j = ep.indices("i j")
    S, T = (ep.tensor(n, 2, format="sparse_rle") for n in "ST")
    expr = ep.sum((i, j), S[i, j] * T[i, j])
    meet, cells = ep.compile(expr), ep.compile(expr, tuning={"runs": False})
    shifted = np.ascontiguousarray(np.roll(img, 7, axis=1))
    s, t = (ep.Tensor.from_dense(x, "sparse_rle") for x in (img, shifted))
    assert meet(S=s, T=t) == cells(S=s, T=t) == np.vdot(img, shifted)
    meds = clock([lambda: meet(S=s, T=t), lambda: np.vdot(img, shifted),
                                lambda: cells(S=s, T=t)], rounds)
    yield f"sparse  {head} / numpy", [meds[0], meds[1]]
    yield f"sparse  {head} / runs off", [meds[0], meds[2]]


def _histograms(hist, t, img, head, rounds, clock):
    """The 256-bin histogram of the rle image against numpy's (the faster of
    bincount and histogram) and OpenCV's on the dense uint8 image; the counts
    are checked equal first."""
    u8 = np.ascontiguousarray(img, dtype=np.uint8)
    assert np.array_equal(hist(I=t), np.bincount(u8.ravel(), minlength=256))
    fns = [lambda: hist(I=t), lambda: np.bincount(u8.ravel(), minlength=256),
           lambda: np.histogram(u8, bins=256, range=(0, 256))]
    try:
        import cv2
        cv2.setNumThreads(1)
        fns.append(lambda: cv2.calcHist([u8], [0], None, [256], [0, 256]))
    except ImportError:
        print("    (no cv2: pip install opencv-python-headless for cv2.calcHist)")
    meds = clock(fns, rounds)
    yield f"hist    {head} / numpy", [meds[0], min(meds[1:3])]
    if len(meds) > 3:
        yield f"hist    {head} / cv2", [meds[0], meds[3]]


def _best_peer(meds):
    return [meds[0], min(meds[1:])]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench structure_rle", description=__doc__)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--sizes", default="1,16", help="megapixels, comma-separated")
    ap.add_argument("--cpu", action="store_true",
                    help="time each call by its thread's CPU time (bench.structure.cpu_medians), "
                         "not the wall clock")
    args = ap.parse_args(argv)
    if args.cpu:
        from bench.structure import cpu_medians as clock
    else:
        clock = alternating_medians
    missed = 0
    for mp in (float(s) for s in args.sizes.split(",")):
        print(f"about {mp:g} megapixels (float64, one thread; etchpy / numpy, target ≤ "
              f"{TARGET:.2f}):")
        for label, (ours, peer), *target in cases(mp, args.rounds, clock):
            goal = target[0] if target else TARGET
            missed += goal is not None and ours / peer > goal
            print(f"    {label:<40} {fmt_time(ours):>9} {fmt_time(peer):>9}  "
                  f"{fmt_ratio(ours / peer):>5}{'  beside' if goal is None else ''}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
