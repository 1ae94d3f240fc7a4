"""One walks called on ep.Tensors (runtime.shared, runtime.walk_plans), against the
same kernel with Tuning(one_walk=False) (its inputs merged level by level as written)
and against scipy where scipy has the operation:

    python -m bench.one_walk_calls [--seconds S] [--json PATH]

One Tensor A (a random matrix, sorted, of 16 to 4.5e4 stored entries) given for
every input name, so the inputs share one structure: Σ A·B, C = A∘B (csr out),
y = Σ_j A·B, C = A + B, Σ A alone (csr, coo, csf), Σ A·A. Each call alternates with
its peers one at a time (bench.timing.alternate_clocks), medians of thread CPU time.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import datetime
import json
import os

import numpy as np
import scipy.sparse as sp

import etchpy as ep

from bench.timing import alternate_clocks, fmt_time

PAIRS = {                # statement: scipy's form on the csr matrix A (None: none)
    "s = A[i,j]*B[i,j]": lambda A: A.multiply(A).sum(),
    "C[i,j] = A[i,j]*B[i,j]": lambda A: A.multiply(A),
    "y[i] = A[i,j]*B[i,j]": lambda A: np.asarray(A.multiply(A).sum(axis=1)).ravel(),
    "C[i,j] = A[i,j]+B[i,j]": lambda A: A + A,
    "s = A[i,j]*A[i,j]": lambda A: A.multiply(A).sum(),
}
ALONE = {"csr": "s = A[i,j]", "coo": "s = A[i,j]", "csf": "s = A[i,j,k]"}
SIZES = ((8, 0.25), (100, 0.05), (300, 0.03), (1000, 0.01), (3000, 0.005))


def kernels(text, fmt):
    formats = {n: fmt for n in "ABC" if n in text}
    return (ep.compile(text, formats=formats),
            ep.compile(text, formats=formats, tuning=ep.Tuning(one_walk=False)))


def tensor(n, density, fmt, order=2):
    rng = np.random.default_rng(n)
    if order == 2:
        A = sp.random_array((n, n), density=density, format="csr", random_state=rng)
        A.sort_indices()
        coo = A.tocoo()
        coords, vals = np.array(coo.coords), coo.data
    else:                           # about as many entries as the n×n matrix, in a cube
        count = max(16, int(density * n * n))
        n = max(4, round(2 * count ** (1 / 3)))
        coords = np.unique(rng.integers(0, n, size=(count, 3)), axis=0).T
        vals, A = rng.random(coords.shape[1]), None
    return ep.Tensor.from_coords(coords, vals, (n,) * order, fmt), A


def rows(seconds):
    out = []
    cases = [(t, "csr", 2, peer) for t, peer in PAIRS.items()]
    cases += [(t, fmt, 3 if fmt == "csf" else 2, (lambda A: A.sum()) if fmt != "csf" else None)
              for fmt, t in ALONE.items()]
    for text, fmt, order, peer in cases:
        one, written = kernels(text, fmt)
        for n, density in SIZES:
            T, A = tensor(n, density, fmt, order)
            ins = {"A": T, **({"B": T} if "B" in text else {})}
            fns = [lambda: one(**ins), lambda: written(**ins)]
            if peer is not None and A is not None:
                fns.append(lambda: peer(A))
            t = alternate_clocks(fns, seconds)
            row = {"statement": text, "format": fmt, "nnz": int(T.nnz),
                   "one_walk": t[0][0], "as_written": t[1][0],
                   "scipy": t[2][0] if len(t) > 2 else None}
            out.append(row)
            scipy = "" if row["scipy"] is None else \
                f"  scipy {fmt_time(row['scipy']):>9}  {row['one_walk'] / row['scipy']:5.2f}×"
            print(f"  {text:26} {fmt:4} nnz={row['nnz']:7,}  one walk "
                  f"{fmt_time(row['one_walk']):>9}  as written {fmt_time(row['as_written']):>9}"
                  f"  {row['one_walk'] / row['as_written']:5.2f}×{scipy}", flush=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=0.3)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"one walks on ep.Tensors: {stamp}, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    out = rows(args.seconds)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"stamp": stamp, "rows": out}, fh, indent=1)


if __name__ == "__main__":
    main()
