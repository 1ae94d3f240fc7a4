"""Run-length outputs and sparse run lists (issue 40), one thread, alternating
call by call in one process, medians:

    python -m bench structure_rle_out [--rounds N] [--sizes 1,4]

On the images of `bench.structure_rle` (tiled to about `sizes` megapixels):

rowsum rle     Σ_j I[i,j] into an rle vector: written as runs (output mode
               spans) vs the same kernel's dense vector
colsum rle     Σ_i I[i,j] into an rle vector: a sum over the outer loop, so
               computed dense and packed after the call (output mode dense),
               vs the dense vector
transpose rle  I[j,i] into row runs: computed dense and packed after the call
               vs the dense kernel plus `Tensor.from_dense` in Python (the
               same work), and column runs (a runs level in mode order
               (1, 0), which the kernel writes as runs) vs the same
sparse runs    Σ_j I[i,j] with I in sparse_rle vs I in rle (the fill's runs
               not stored, not walked): ratio sparse / dense run list
blend rle      I[i,j] + M[i,j] into rle (each mask with the grey image, as in
               bench.structure_rle): its run arrays presized from the
               operands' runs vs grown from 1024 (Tuning first_capacity_limit
               =1024, the allocation before presizing), and vs numpy's img + mask
sparse out     S[i,j]·T[i,j] into sparse_rle, both operands sparse_rle (a mask
               and its shift by 7 columns): written as runs (output mode
               spans, one run per overlap, no run of the fill) vs numpy's
               img * shifted on the dense images

Each line prints etchpy's median, its peer's and their ratio. The machine may
be shared: the ratios are medians of alternating calls, not quiet numbers.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse

import numpy as np

import etchpy as ep
from bench.structure_rle import _sources, _tiled, mean_run
from bench.timing import alternating_medians, fmt_ratio, fmt_time

COLUMNS = ep.Format(["dense", "runs"], (1, 0))


def kernels():
    i, j = ep.indices("i j")
    I = ep.tensor("I", 2, format="rle")
    S = ep.tensor("S", 2, format="sparse_rle")
    M = ep.tensor("M", 2, format="rle")
    return {
        "rowsum rle": ep.compile(ep.sum(j, I[i, j]), output="rle"),
        "rowsum": ep.compile(ep.sum(j, I[i, j])),
        "colsum rle": ep.compile(ep.sum(i, I[i, j]), output="rle"),
        "colsum": ep.compile(ep.sum(i, I[i, j])),
        "transpose rle": ep.compile(I[j, i], output="rle", out_indices=(i, j)),
        "transpose": ep.compile(I[j, i], out_indices=(i, j)),
        "transpose columns": ep.compile(I[j, i], output=COLUMNS, out_indices=(i, j)),
        "sparse rowsum": ep.compile(ep.sum(j, S[i, j])),
        "sparse product": ep.compile(S[i, j] * ep.tensor("T", 2, format="sparse_rle")[i, j],
                                     output="sparse_rle"),
        "blend": ep.compile(I[i, j] + M[i, j], output="rle"),
        "blend grown": ep.compile(I[i, j] + M[i, j], output="rle",
                                  tuning={"first_capacity_limit": 1024}),
    }


def cases(mp, rounds):
    k = kernels()
    for name, (kind, small) in _sources().items():
        img = _tiled(small, mp)
        t, s = ep.Tensor.from_dense(img, "rle"), ep.Tensor.from_dense(img, "sparse_rle")
        head = f"{name} {img.shape[0]}×{img.shape[1]} run {mean_run(img):.0f}"
        print(f"  {head}: {len(t.vals)} runs in rle, {len(s.vals)} in sparse_rle")
        assert np.array_equal(k["transpose rle"](I=t).to_dense(), img.T)
        meds = alternating_medians([lambda: k["rowsum rle"](I=t), lambda: k["rowsum"](I=t),
                                    lambda: k["colsum rle"](I=t), lambda: k["colsum"](I=t)],
                                   rounds)
        yield f"rowsum rle / dense     {head}", meds[0:2]
        yield f"colsum rle / dense     {head}", meds[2:4]
        meds = alternating_medians([
            lambda: k["transpose rle"](I=t),
            lambda: ep.Tensor.from_dense(k["transpose"](I=t), "rle"),
            lambda: k["transpose columns"](I=t)], rounds)
        yield f"transpose rle / dense+pack {head}", meds[0:2]
        yield f"transpose columns / dense+pack {head}", [meds[2], meds[1]]
        meds = alternating_medians([lambda: k["sparse rowsum"](S=s), lambda: k["rowsum"](I=t)],
                                   rounds)
        yield f"sparse runs / runs     {head}", meds
        if kind == "mask":
            yield from _blends(k, t, img, grey(mp, img.shape), head, rounds)
            yield from _sparse_out(k, s, img, head, rounds)


def grey(mp, shape):
    """The grey image of the sources, tiled and cut to `shape`."""
    g = next(_tiled(a, mp) for kind, a in _sources().values() if kind == "grey")
    reps = (-(-shape[0] // g.shape[0]), -(-shape[1] // g.shape[1]))
    return np.ascontiguousarray(np.tile(g, reps)[:shape[0], :shape[1]])


def _blends(k, t, img, g, head, rounds):
    gt = ep.Tensor.from_dense(g, "rle")
    meds = alternating_medians([lambda: k["blend"](I=gt, M=t), lambda: k["blend grown"](I=gt, M=t),
                                lambda: g + img], rounds)
    yield f"blend rle presized / grown {head}", meds[0:2]
    yield f"blend rle presized / numpy {head}", [meds[0], meds[2]]


def _sparse_out(k, s, img, head, rounds):
    shifted = np.ascontiguousarray(np.roll(img, 7, axis=1))
    st = ep.Tensor.from_dense(shifted, "sparse_rle")
    assert np.array_equal(k["sparse product"](S=s, T=st).to_dense(), img * shifted)
    meds = alternating_medians([lambda: k["sparse product"](S=s, T=st),
                                lambda: img * shifted], rounds)
    yield f"sparse out / numpy     {head}", meds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench structure_rle_out", description=__doc__)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--sizes", default="1,4", help="megapixels, comma-separated")
    args = ap.parse_args(argv)
    for mp in (float(x) for x in args.sizes.split(",")):
        print(f"about {mp:g} megapixels (float64, one thread; etchpy / peer):")
        for label, (ours, peer) in cases(mp, args.rounds):
            print(f"    {label:<52} {fmt_time(ours):>9} {fmt_time(peer):>9}  "
                  f"{fmt_ratio(ours / peer):>5}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
