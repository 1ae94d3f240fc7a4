"""Structure the data already has (issue 40): banded and block-list levels against
csr and their peers, one thread, alternating with the peer call by call in one
process, ratios of medians (etchpy's time over the peer's: below 1 is faster):

    python -m bench structure [--rounds N] [--only band,triangle,blocks,fem,blend,factor]
                              [--widths 3,15,63,255] [--sizes 2,3,4,5,6,7,8] [--cpu]

band      y = Σ_j A[i,j]·x[j], A with 2h+1 diagonals (width 3 .. 255) at n = 1e6
          (n = 5e5 from width 255): format uniform_band (one band shape for every
          row) against etchpy's csr on the same matrix (target ≤ 1/1.3), BLAS dgbmv
          (scipy.linalg.blas, one thread; target ≤ 1.0 from width 15) and scipy's
          dia_array @ x (beside); format banded (a band per row) against csr beside
triangle  the same over a dense upper triangle at n = 1e4 (one band per row)
          against csr (≤ 1/1.3) and BLAS dtrmv (≤ 1.0)
blocks    y = Σ_j A[i,j]·x[j], A from a 9-point stencil on a square grid with d
          unknowns per node (dense d×d blocks, d = 2..8, about 5e5 rows): format
          blocks against etchpy's csr (≤ 1/1.2 for d ≥ 4, ≤ 1.0 below) and scipy's
          bsr_array @ x (≤ 1.0)
fem       scikit-fem operators renumbered by reverse Cuthill-McKee: Laplacians
          on a line (P1, P2, P4; 5e5 elements) and a P1 Laplacian on a strip of
          quadrilaterals (a channel 4 elements wide, 4e5 long), in uniform_band,
          banded and blocks against etchpy's csr (beside: real operators that
          nobody generated as bands)
blend     I[i,j] + M[i,j] of run-length images (bench.structure_rle's masks with
          its grey image, 1 and 16 MP): written as runs (output="rle", the blend of
          run-length images is one) against numpy's img + mask (≤ 1/3); into a
          dense output beside (it stores every pixel: bound by the stores)
factor    y = U·x, U the upper factor of a 3-D Poisson LU (32³, RCM, scipy's
          splu): a real triangle whose rows end anywhere (mean row ≈ 570), in
          banded against csr and against banded without row blocks (beside)
Each pair is timed alone (its arrays built, timed, then dropped), so only two
copies of a matrix are alive at once. Packing times are reported, not timed
against the peers.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import time

import numpy as np
import scipy.linalg.blas as blas
import scipy.sparse as sp

import etchpy as ep
from bench.timing import alternating_medians, fmt_ratio, fmt_time

i, j = ep.indices("i j")
X = ep.tensor("x", 1)


def spmv(fmt):
    """The SpMV kernel over an A declared in `fmt`."""
    A = ep.tensor("A", 2, fmt)
    return ep.compile(ep.sum(j, A[i, j] * X[j]))


def band_matrix(n, h, rng):
    """(banded tensor, csr sharing its values) of an n×n matrix with the diagonals
    -h..h: row i's band is max(0, i-h) .. min(n-1, i+h)."""
    rows = np.arange(n, dtype=np.int64)
    first = np.maximum(rows - h, 0)
    length = np.minimum(rows + h, n - 1) - first + 1
    bpos = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(length, out=bpos[1:])
    vals = rng.random(int(bpos[-1]))
    t = ep.Tensor((n, n), "banded", ({}, {"bfirst": first, "bpos": bpos}), vals)
    return t, vals, first, bpos


def band_csr(n, vals, first, bpos):
    """The same matrix as a scipy csr_array over the same values (int32 indices)."""
    length = np.diff(bpos)
    owner = np.repeat(np.arange(n), length)
    cols = (np.arange(len(vals)) - np.repeat(bpos[:-1], length) + first[owner]).astype(np.int32)
    return sp.csr_array((vals, cols, bpos.astype(np.int32)), shape=(n, n))


def uniform_band(n, h, vals, first, bpos):
    """The same matrix in format uniform_band: row i's 2h+1 slots hold columns
    i-h .. i+h (the slots outside the matrix hold 0), packed from the band values."""
    w = 2 * h + 1
    rows = np.arange(n, dtype=np.int64)
    slots = np.zeros((n, w))
    cols = rows[:, None] - h + np.arange(w)[None, :]
    inside = (cols >= 0) & (cols < n)
    slots[inside] = vals
    shape = np.array([-h, w, 1, n, n], dtype=np.int64)
    return ep.Tensor((n, n), "uniform_band", ({}, {"ushape": shape}), slots.reshape(-1))


def band_storage(n, h, vals, first, bpos):
    """dgbmv's band storage (2h+1, n), Fortran order: a[h + i - j, j] = A[i, j]."""
    a = np.zeros((2 * h + 1, n), order="F")
    rows = np.arange(n)
    for d in range(-h, h + 1):          # column j = i + d
        ok = (rows + d >= 0) & (rows + d < n)
        r = rows[ok]
        a[h - d, r + d] = vals[bpos[r] + r + d - first[r]]
    return a


def band(time_them, widths):
    rng = np.random.default_rng(0)
    out, banded, csr, uniform = [], spmv("banded"), spmv("csr"), spmv("uniform_band")
    for w in widths:
        n, h = (500_000 if w >= 255 else 1_000_000), w // 2
        t0 = time.perf_counter()
        t, vals, first, bpos = band_matrix(n, h, rng)
        pack = time.perf_counter() - t0
        x = rng.random(n)
        label, ulabel = f"banded SpMV w={w} n={n:.0e}", f"uniform SpMV w={w} n={n:.0e}"
        m = band_csr(n, vals, first, bpos)
        med = time_them([lambda: banded(A=t, x=x), lambda: csr(A=m, x=x)])
        out.append((label, med, "etchpy csr", None))
        u = uniform_band(n, h, vals, first, bpos)
        del t
        med = time_them([lambda: uniform(A=u, x=x), lambda: csr(A=m, x=x)])
        out.append((ulabel, med, "etchpy csr", 1 / 1.3))
        del m
        a = band_storage(n, h, vals, first, bpos)
        med = time_them([lambda: uniform(A=u, x=x),
                                   lambda: blas.dgbmv(n, n, h, h, 1.0, a, x)])
        out.append((ulabel, med, "BLAS dgbmv", 1.0 if w >= 15 else None))
        del a
        dia = sp.dia_array((band_storage(n, h, vals, first, bpos)[::-1].copy(),
                            np.arange(-h, h + 1)), shape=(n, n))
        med = time_them([lambda: uniform(A=u, x=x), lambda: dia @ x])
        out.append((ulabel, med, "scipy dia_array", None))
        t0 = time.perf_counter()
        assert ep.Tensor.from_scipy(dia).format == ep.Format.named("uniform_band", 2)
        print(f"  (packed w={w} in {fmt_time(pack)}; dia_array read into uniform_band in "
              f"{fmt_time(time.perf_counter() - t0)})")
        del dia, u, vals
    return out


def triangle(time_them, n=10_000):
    rng = np.random.default_rng(1)
    full = np.triu(rng.random((n, n)))
    t0 = time.perf_counter()
    rows = np.arange(n, dtype=np.int64)         # row i's band: columns i .. n-1
    bpos = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(n - rows, out=bpos[1:])
    t = ep.Tensor((n, n), "banded", ({}, {"bfirst": rows, "bpos": bpos}),
                  full[np.triu(np.ones((n, n), dtype=bool))])
    print(f"  (packed the triangle in {fmt_time(time.perf_counter() - t0)})")
    x = rng.random(n)
    banded = spmv("banded")
    m = sp.csr_array(full)
    med = time_them([lambda: banded(A=t, x=x), lambda: spmv("csr")(A=m, x=x)])
    out = [(f"upper triangle n={n:.0e}", med, "etchpy csr", 1 / 1.3)]
    del m
    f = np.asfortranarray(full)
    med = time_them([lambda: banded(A=t, x=x), lambda: blas.dtrmv(f, x)])
    return out + [(f"upper triangle n={n:.0e}", med, "BLAS dtrmv", 1.0)]


def stencil_blocks(d, rows=500_000):
    """A bsr_array of a 9-point stencil on a k×k grid, d unknowns per node."""
    k = int(np.sqrt(rows // d))
    nodes = np.arange(k * k)
    r, c = nodes // k, nodes % k
    I, J = [], []
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            ok = (r + dr >= 0) & (r + dr < k) & (c + dc >= 0) & (c + dc < k)
            I.append(nodes[ok])
            J.append(nodes[ok] + dr * k + dc)
    I, J = np.concatenate(I), np.concatenate(J)
    pattern = sp.csr_array((np.ones(len(I)), (I, J)), shape=(k * k, k * k))
    pattern.sort_indices()
    data = np.random.default_rng(d).random((pattern.nnz, d, d))
    return sp.bsr_array((data, pattern.indices, pattern.indptr), shape=(k * k * d,) * 2)


def blocks(time_them, sizes):
    out, fmt, csr = [], spmv("blocks"), spmv("csr")
    for d in sizes:
        b = stencil_blocks(d)
        n = b.shape[0]
        x = np.random.default_rng(0).random(n)
        m = b.tocsr()
        t0 = time.perf_counter()
        t = ep.Tensor.from_scipy(m, "blocks")
        print(f"  (packed d={d}, {len(t.levels[1]['bfirst'])} runs, in "
              f"{fmt_time(time.perf_counter() - t0)})")
        label = f"block SpMV d={d} n={n:.1e}"
        med = time_them([lambda: fmt(A=t, x=x), lambda: csr(A=m, x=x)])
        out.append((label, med, "etchpy csr", 1 / 1.2 if d >= 4 else 1.0))
        del m
        med = time_them([lambda: fmt(A=t, x=x), lambda: b @ x])
        out.append((label, med, "scipy bsr_array", 1.0))
    return out


def fem_operators():
    """(name, csr_array) of scikit-fem Laplacians, renumbered by reverse
    Cuthill-McKee (scipy.sparse.csgraph), with int32 indices."""
    import skfem
    from scipy.sparse.csgraph import reverse_cuthill_mckee
    from skfem.models.poisson import laplace
    line = skfem.MeshLine(np.linspace(0, 1, 500_001))
    strip = skfem.MeshQuad.init_tensor(np.linspace(0, 100, 400_001), np.linspace(0, 1, 5))
    for name, mesh, element in (("line P1", line, skfem.ElementLineP1()),
                                ("line P2", line, skfem.ElementLineP2()),
                                ("line P4", line, skfem.ElementLinePp(4)),
                                ("strip Q1", strip, skfem.ElementQuad1())):
        m = sp.csr_array(laplace.assemble(skfem.Basis(mesh, element)))
        p = reverse_cuthill_mckee(m, symmetric_mode=True)
        m = sp.csr_array(m[p][:, p])
        m.sort_indices()
        yield name, m


def fem(time_them):
    out, x = [], None
    kernels = {f: spmv(f) for f in ("csr", "uniform_band", "banded", "blocks")}
    for name, m in fem_operators():
        x = np.random.default_rng(2).random(m.shape[0])
        for f in ("uniform_band", "banded", "blocks"):
            t = ep.Tensor.from_scipy(m, f)
            med = time_them([lambda: kernels[f](A=t, x=x), lambda: kernels["csr"](A=m, x=x)])
            stored = len(t.vals) / m.nnz
            out.append((f"{name} {f} ({stored:.2g}x)", med, "etchpy csr", None))
            del t
    return out


def factor(time_them, m=32):
    """y = U x with U the upper factor of a 3-D Poisson LU (m³ unknowns, 7-point
    stencil, reverse Cuthill-McKee, natural column order, scipy's splu): a real
    triangle whose rows end anywhere. banded against csr and against banded
    without row blocks (Tuning.row_blocks)."""
    import scipy.sparse.linalg as spla
    from scipy.sparse.csgraph import reverse_cuthill_mckee
    t1, eye = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m)), sp.identity(m)
    a = (sp.kron(sp.kron(t1, eye), eye) + sp.kron(sp.kron(eye, t1), eye)
         + sp.kron(sp.kron(eye, eye), t1)).tocsr()
    p = reverse_cuthill_mckee(a, symmetric_mode=True)
    lu = spla.splu(a[p][:, p].tocsc(), permc_spec="NATURAL", diag_pivot_thresh=0.0,
                   options=dict(SymmetricMode=True))
    u = sp.csr_array(lu.U)
    u.sort_indices()
    t, x = ep.Tensor.from_scipy(u, "banded"), np.random.default_rng(3).random(u.shape[0])
    label = f"Poisson {m}^3 LU's U (row {u.nnz / u.shape[0]:.0f})"
    off = ep.compile(ep.sum(j, ep.tensor("A", 2, "banded")[i, j] * X[j]),
                     tuning=dict(row_blocks=False))
    on = spmv("banded")
    out = [(label, time_them([lambda: on(A=t, x=x), lambda: spmv("csr")(A=u, x=x)]),
            "etchpy csr", None)]
    return out + [(label, time_them([lambda: on(A=t, x=x), lambda: off(A=t, x=x)]),
                   "without row blocks", None)]


def blend(time_them, sizes=(1.0, 16.0)):
    """Each mask of bench.structure_rle plus its grey image, both rle: the
    blend written as runs against numpy (the row with a target), and into a
    dense output beside; values checked first."""
    from bench.structure_rle import _sources, _tiled
    I, M = ep.tensor("I", 2, format="rle"), ep.tensor("M", 2, format="rle")
    runs, dense = ep.compile(I[i, j] + M[i, j], output="rle"), ep.compile(I[i, j] + M[i, j])
    sources, out = _sources(), []
    masks = [(name, small) for name, (kind, small) in sources.items() if kind == "mask"]
    for mp in sizes:
        grey = next(_tiled(a, mp) for kind, a in sources.values() if kind == "grey")
        out += _blends(time_them, runs, dense, masks, grey, mp)
    return out


def _blends(time_them, runs, dense, masks, grey, mp):
    from bench.structure_rle import _tiled, mean_run
    out = []
    for name, small in masks:
        img = _tiled(small, mp)
        reps = (-(-img.shape[0] // grey.shape[0]), -(-img.shape[1] // grey.shape[1]))
        g = np.ascontiguousarray(np.tile(grey, reps)[:img.shape[0], :img.shape[1]])
        t, gt = ep.Tensor.from_dense(img, "rle"), ep.Tensor.from_dense(g, "rle")
        assert np.array_equal(runs(I=gt, M=t).to_dense(), g + img)
        label = f"blend {name} {mp:g} MP run {mean_run(img):.0f}"
        med = time_them([lambda: runs(I=gt, M=t), lambda: g + img])
        out.append((label + " (rle out)", med, "numpy img + mask", 1 / 3))
        med = time_them([lambda: dense(I=gt, M=t), lambda: g + img])
        out.append((label + " (dense out)", med, "numpy img + mask", None))
    return out


def cpu_medians(fns, rounds: int) -> list[float]:
    """alternating_medians by the calling thread's CPU time: on a machine shared by
    more runnable jobs than cores a call's wall time counts the slices it waited
    for; its CPU time does not (memory traffic of the others still counts)."""
    samples = [[] for _ in fns]
    for r in range(rounds):
        for k in range(len(fns)):
            at = (r + k) % len(fns)
            t0 = time.thread_time()
            fns[at]()
            samples[at].append(time.thread_time() - t0)
    return [float(np.median(s)) for s in samples]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench structure", description=__doc__)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--only", default="band,triangle,blocks")
    ap.add_argument("--widths", default="3,15,63,255")
    ap.add_argument("--sizes", default="2,3,4,5,6,7,8")
    ap.add_argument("--cpu", action="store_true",
                    help="time each call by its thread's CPU time (the kernels and peers "
                         "run on the calling thread), not the wall clock")
    args = ap.parse_args(argv)
    widths = [int(w) for w in args.widths.split(",")]
    sizes = [int(d) for d in args.sizes.split(",")]
    clock = cpu_medians if args.cpu else alternating_medians

    def time_them(fns):
        return clock(fns, args.rounds)
    cases = {"band": lambda: band(time_them, widths),
             "triangle": lambda: triangle(time_them),
             "blocks": lambda: blocks(time_them, sizes),
             "fem": lambda: fem(time_them),
             "blend": lambda: blend(time_them),
             "factor": lambda: factor(time_them)}
    missed = 0
    print(f"{'case':<30} {'etchpy':>9} {'peer':>9}  {'ratio':>5} {'target':>6}  peer")
    for name in args.only.split(","):
        for label, (ours, peer), who, target in cases[name]():
            ratio = ours / peer
            missed += target is not None and ratio > target
            goal = "beside" if target is None else f"{target:.2f}"
            print(f"{label:<30} {fmt_time(ours):>9} {fmt_time(peer):>9}  "
                  f"{fmt_ratio(ratio):>5} {goal:>6}  {who}", flush=True)
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
