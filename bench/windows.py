"""Windows (expr.windows) against their peers, one thread, alternating call by
call in one process, ratios of medians (peer time / etchpy time: > 1 is etchpy
faster):

    python -m bench windows [--rounds N] [--only spmv,erosion]

spmv     Σ_j A[i[lo:hi], j[lo:hi]]·x[j] on 1e6-row csr matrices (a 2-D Poisson
         operator, 1000² grid, random ones, 5 and 10 a row, and scikit-fem's P2
         disc Laplacian when it imports) with windows of 1%, 10%, 20%, 25%, 30% and 50%
         of the rows and columns, and strided ones (i[lo:hi:2], 10% and 50%), one kernel for all
         (the bounds are parameters), the operand a scipy csr_matrix and its
         ep.Tensor, against scipy's `A[lo:hi, lo:hi] @ x` (slice, then
         multiply); target ≥ 2
erosion  3×3 binary erosion with scipy.ndimage's border (outside is false), a
         product of nine shifted windows in the boolean semiring, on dense
         boolean images (generated shapes: disks, bars and glyph-like strokes,
         1024² to 4096²; and scikit-image's horse, binary blobs, text, camera
         and coins, thresholded and tiled to about 2 MP), against numpy's nine
         shifted slices of the zero-padded image (`out &= p[di:di+h, dj:dj+w]`,
         the pad made outside the timing); target ≥ 2.
         scipy.ndimage.binary_erosion and cv2.erode (one thread, on the image's
         bytes as uint8, a zero border) beside.
erosion_rle  the same erosion on run-length images (`rle` and `sparse_rle`, packed
         once outside the timing, packing time printed): the generated shapes and
         the scikit-image ones, each with its mean run (pixels per run along a
         row); a window of a run list is its runs restricted and shifted, and the
         nine meet once per overlap of their runs. Against numpy's nine slices of
         the dense image; target ≥ 2 where the mean run is ≥ 64.
elements_rle  other structuring elements on run-length images (scikit-image's
         horse, text and camera thresholded, tiled to about 2 MP): a 5×5 box,
         a cross (plus) and a 1×7 row, as products of shifted windows of one
         `sparse_rle` / `rle` Tensor, against numpy's slices of the zero-padded
         dense image, one `&=` per offset. No target (the erosion's is ≥ 2).
calls    the cost of a call where the window is small (a 200×150 operand, a window
         of 50×100 or of its columns only, bounds given as parameters each call,
         Python ints or numpy int64): the windowed kernel against the same
         product without a window on the slice made ahead (a plain kernel's
         call, the call-overhead floor); csr, dense and ep.Tensor operands; scipy's
         slice-then-multiply beside; and the 3×3 erosion of a 32×32 boolean
         image as nine windows of one rle / sparse_rle Tensor against the same on
         the dense image. No target: issues 39 and 40 ask the windowed call to
         cost about what a plain kernel's does.
The machine is shared (2 cores, other work running): medians, not minima.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse

import numpy as np
import scipy.ndimage as ndi
import scipy.sparse as sp

import etchpy as ep
from bench.kernels import per_row_csr
from bench.timing import alternating_medians, fmt_ratio, fmt_time, timed


def poisson_2d(m: int):
    """The 5-point Laplacian on an m×m grid, csr, m² rows."""
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    eye = sp.identity(m)
    return (sp.kron(t, eye) + sp.kron(eye, t)).tocsr()


def spmv_rows(rounds):
    i, j = ep.indices("i j")
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    plain = ep.compile(ep.sum(j, A[i["lo":"hi"], j["lo2":"hi2"]] * x[j]))
    strided = ep.compile(ep.sum(j, A[i["lo":"hi":2], j["lo2":"hi2"]] * x[j]))
    rng = np.random.default_rng(0)
    rows = []
    for label, M in spmv_matrices(rng):
        n, T = M.shape[0], ep.Tensor.from_scipy(M, "csr")
        for frac, step in ((0.01, 1), (0.10, 1), (0.20, 1), (0.25, 1), (0.30, 1), (0.50, 1),
                           (0.10, 2), (0.50, 2)):
            lo, hi = n // 4, n // 4 + int(frac * n)
            v = rng.random(hi - lo)
            kern = plain if step == 1 else strided
            for name, op in (("", M), (", Tensor", T)):
                y = kern(A=op, x=v, lo=lo, hi=hi, lo2=lo, hi2=hi)
                assert np.allclose(y, M[lo:hi:step, lo:hi] @ v)
                med = alternating_medians([
                    lambda: kern(A=op, x=v, lo=lo, hi=hi, lo2=lo, hi2=hi),
                    lambda: M[lo:hi:step, lo:hi] @ v], rounds)
                what = f"{label}, window {frac:.0%}" + (", step 2" if step > 1 else "") + name
                rows.append((what, med[0], med[1], "scipy A[lo:hi, lo:hi] @ x", 2.0))
    return rows


def spmv_matrices(rng):
    """(label, csr_matrix) of the sliced SpMV, each made when reached."""
    yield "poisson 1000²", poisson_2d(1000)
    yield "random 1e6, 5 a row", per_row_csr(rng, 10**6, 10**6, 5).tocsr()
    yield "random 1e6, 10 a row", per_row_csr(rng, 10**6, 10**6, 10).tocsr()
    from bench.calls_graph import fem_graph
    try:
        M = sp.csr_matrix(fem_graph(7))
    except ImportError:         # scikit-fem not installed
        return
    yield f"scikit-fem P2 disc ({M.shape[0]} rows)", M


def shapes_image(h: int, w: int, seed: int) -> np.ndarray:
    """A boolean image of disks, bars and thin glyph-like strokes (runs of tens
    to hundreds of pixels), deterministic."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    img = np.zeros((h, w), dtype=bool)
    for _ in range(h * w // 20000):
        cy, cx, r = rng.integers(0, h), rng.integers(0, w), rng.integers(5, 60)
        img |= (yy - cy) ** 2 + (xx - cx) ** 2 < r * r
    for _ in range(h * w // 40000):
        y0, x0 = rng.integers(0, h), rng.integers(0, w)
        img[y0:y0 + rng.integers(2, 8), x0:x0 + rng.integers(20, 300)] = True
        img[y0:y0 + rng.integers(20, 120), x0:x0 + rng.integers(2, 6)] = True
    return img


def erosion_expr(img, i, j, h: int, w: int):
    """Π over di, dj in 0..2 of img[i[di-1 : di-1+h], j[dj-1 : dj-1+w]]."""
    e = None
    for di in range(3):
        for dj in range(3):
            a = img[i[di - 1:di - 1 + h], j[dj - 1:dj - 1 + w]]
            e = a if e is None else e * a
    return e


def nine_slices(p: np.ndarray, h: int, w: int) -> np.ndarray:
    out = p[0:h, 0:w].copy()
    for di in range(3):
        for dj in range(3):
            if di or dj:
                out &= p[di:di + h, dj:dj + w]
    return out


def real_images():
    """{name: boolean image}: scikit-image's horse and binary blobs, its text page,
    camera and coins thresholded, each tiled to about 2 megapixels; {} without
    scikit-image."""
    try:
        from skimage import data
    except ImportError:
        return {}
    small = {"horse": data.horse(), "blobs": data.binary_blobs(512, rng=1),
             "text": data.text() < 100, "camera": data.camera() > 100,
             "coins": data.coins() > 110}
    out = {}
    for name, a in small.items():
        reps = max(1, round((2e6 / a.size) ** 0.5))
        out[name] = np.ascontiguousarray(np.tile(a, (reps, reps)), dtype=bool)
    return out


def _erode_cv2():
    """cv2.erode with a 3×3 box and a zero border on one thread, or None."""
    try:
        import cv2
    except ImportError:
        return None
    cv2.setNumThreads(1)
    box = np.ones((3, 3), np.uint8)
    return lambda u8: cv2.erode(u8, box, borderType=cv2.BORDER_CONSTANT, borderValue=0)


def erosion_rows(rounds):
    i, j = ep.indices("i j")
    img = ep.tensor("img", 2)
    rows, cv = [], _erode_cv2()
    images = {f"shapes {h}×{h}": shapes_image(h, h, h) for h in (1024, 2048, 4096)}
    images.update({f"{name} {a.shape[0]}×{a.shape[1]}": a for name, a in real_images().items()})
    for label, im in images.items():
        h, w = im.shape
        kern = ep.compile(erosion_expr(img, i, j, h, w), semiring=ep.semirings.boolean)
        p = np.pad(im, 1)
        box = np.ones((3, 3), dtype=bool)
        want = ndi.binary_erosion(im, structure=box, border_value=0)
        assert (kern(img=im) == want).all() and (nine_slices(p, h, w) == want).all()
        calls = [lambda: kern(img=im), lambda: nine_slices(p, h, w),
                 lambda: ndi.binary_erosion(im, structure=box)]
        if cv is not None:
            u8 = im.view(np.uint8)
            assert (cv(u8).view(bool) == want).all()
            calls.append(lambda: cv(u8))
        med = alternating_medians(calls, rounds)
        what = f"erosion 3×3, {label} ({im.mean():.0%} set)"
        rows.append((what, med[0], med[1], "numpy nine slices", 2.0))
        rows.append((what, med[0], med[2], "scipy.ndimage.binary_erosion", None))
        if cv is not None:
            rows.append((what, med[0], med[3], "cv2.erode (1 thread, uint8)", None))
    return rows


def erosion_rle_rows(rounds):
    from bench.structure_rle import mean_run
    i, j = ep.indices("i j")
    rows = []
    images = {f"shapes {h}×{h}": shapes_image(h, h, h) for h in (1024, 2048, 4096)}
    images.update({f"{name} {a.shape[0]}×{a.shape[1]}": a for name, a in real_images().items()})
    for label, im in images.items():
        h, w = im.shape
        p, run = np.pad(im, 1), mean_run(im)
        want = nine_slices(p, h, w)
        for fmt in ("rle", "sparse_rle"):
            kern = ep.compile(erosion_expr(ep.tensor("img", 2, fmt), i, j, h, w),
                              semiring=ep.semirings.boolean)
            pack, t = timed(lambda: ep.Tensor.from_dense(im, fmt, semiring="boolean"))
            assert (kern(img=t) == want).all()
            med = alternating_medians([lambda: kern(img=t), lambda: nine_slices(p, h, w)],
                                      rounds)
            what = f"erosion {fmt}, {label} (run {run:.0f}, packed {fmt_time(pack)})"
            rows.append((what, med[0], med[1], "numpy nine slices", 2.0 if run >= 64 else None))
    return rows


ELEMENTS = {"box 5×5": [(a, b) for a in range(-2, 3) for b in range(-2, 3)],
            "cross": [(-1, 0), (0, -1), (0, 0), (0, 1), (1, 0)],
            "row 1×7": [(0, b) for b in range(-3, 4)]}


def element_expr(img, i, j, offsets, h: int, w: int):
    """Π over (di, dj) in offsets of img[i[di:di+h], j[dj:dj+w]]."""
    e = None
    for di, dj in offsets:
        a = img[i[di:di + h], j[dj:dj + w]]
        e = a if e is None else e * a
    return e


def element_slices(p: np.ndarray, offsets, h: int, w: int, pad: int) -> np.ndarray:
    out = np.ones((h, w), dtype=bool)
    for di, dj in offsets:
        out &= p[pad + di:pad + di + h, pad + dj:pad + dj + w]
    return out


def element_rle_rows(rounds):
    from bench.structure_rle import mean_run
    i, j = ep.indices("i j")
    rows = []
    images = {k: v for k, v in real_images().items() if k in ("horse", "text", "camera")}
    for (name, im), (el, offs), fmt in [(a, b, f) for a in images.items()
                                       for b in ELEMENTS.items()
                                       for f in ("rle", "sparse_rle")]:
        h, w = im.shape
        p = np.pad(im, 3)
        want = element_slices(p, offs, h, w, 3)
        kern = ep.compile(element_expr(ep.tensor("img", 2, fmt), i, j, offs, h, w),
                          semiring=ep.semirings.boolean)
        t = ep.Tensor.from_dense(im, fmt, semiring="boolean")
        assert (kern(img=t) == want).all()
        med = alternating_medians([lambda: kern(img=t),
                                   lambda: element_slices(p, offs, h, w, 3)], rounds)
        rows.append((f"{el} {fmt}, {name} (run {mean_run(im):.0f})", med[0], med[1],
                     f"numpy {len(offs)} slices", None))
    return rows


def call_rows(rounds):
    i, j = ep.indices("i j")
    rng = np.random.default_rng(1)
    M = per_row_csr(rng, 200, 150, 8).tocsr()
    x = ep.tensor("x", 1)
    rows = []
    operands = (("csr", M, "csr"), ("dense", M.toarray(), "dense"),
                ("ep.Tensor csr", ep.Tensor.from_scipy(M), "csr"))
    bounds = {"ints": (10, 60, 20, 120),
              "np.int64": tuple(np.int64(b) for b in (10, 60, 20, 120))}
    for (label, src, fmt), (kind, (lo, hi, lo2, hi2)) in [
            (o, b) for o in operands for b in bounds.items()]:
        A = ep.tensor("A", 2, fmt)
        plain = ep.compile(ep.sum(j, A[i, j] * x[j]))
        dense = M.toarray()
        for where, e, piece, params in (
                ("window 50×100", A[i["lo":"hi"], j["lo2":"hi2"]], dense[10:60, 20:120],
                 dict(lo=lo, hi=hi, lo2=lo2, hi2=hi2)),
                ("columns 20:120 only", A[i, j["lo2":"hi2"]], dense[:, 20:120],
                 dict(lo2=lo2, hi2=hi2))):
            windowed = ep.compile(ep.sum(j, e * x[j]))
            piece = sp.csr_array(piece) if fmt == "csr" else np.ascontiguousarray(piece)
            v = rng.random(100)
            y = windowed(A=src, x=v, **params)
            assert np.allclose(y, plain(A=piece, x=v))
            med = alternating_medians([lambda: windowed(A=src, x=v, **params),
                                       lambda: plain(A=piece, x=v)], 50 * rounds)
            rows.append((f"call, {label} 200×150, {where}, {kind}", med[0], med[1],
                         "the plain kernel on the slice", None))
    rows += stencil_call_rows(rounds)
    sliced = alternating_medians([lambda: M[10:60, 20:120] @ v], 50 * rounds)[0]
    rows.append(("scipy's slice @ x, 200×150 csr, 50×100", sliced, sliced, "itself", None))
    return rows


def stencil_call_rows(rounds):
    """The call of the 3×3 erosion on a small (32×32) boolean image: nine windows
    of one run-length Tensor (bound once by the plan) against the same nine of
    the dense image."""
    i, j = ep.indices("i j")
    im = shapes_image(32, 32, 5)
    rows = []
    dense = ep.compile(erosion_expr(ep.tensor("img", 2), i, j, 32, 32),
                       semiring=ep.semirings.boolean)
    for fmt in ("rle", "sparse_rle"):
        kern = ep.compile(erosion_expr(ep.tensor("img", 2, fmt), i, j, 32, 32),
                          semiring=ep.semirings.boolean)
        t = ep.Tensor.from_dense(im, fmt, semiring="boolean")
        assert (kern(img=t) == dense(img=im)).all()
        med = alternating_medians([lambda: kern(img=t), lambda: dense(img=im)], 50 * rounds)
        rows.append((f"call, erosion of a 32×32 bool {fmt} Tensor", med[0], med[1],
                     "the same on the dense bool image", None))
    return rows


SECTIONS = {"spmv": spmv_rows, "erosion": erosion_rows, "erosion_rle": erosion_rle_rows,
            "elements_rle": element_rle_rows, "calls": call_rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench windows")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--only", default=",".join(SECTIONS))
    args = ap.parse_args(argv)
    print(f"{'case':48} {'etchpy':>10} {'peer':>10} {'ratio':>7}  peer (target)")
    for name in args.only.split(","):
        for what, mine, peer, who, target in SECTIONS[name](args.rounds):
            goal = f" (≥ {target:g})" if target else ""
            print(f"{what:48} {fmt_time(mine):>10} {fmt_time(peer):>10} "
                  f"{fmt_ratio(peer / mine):>7}  {who}{goal}")
    return 0
