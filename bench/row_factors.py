"""A row's factor computed once a row (Tuning.hoist_invariants, session 86), and a
libm map of a vector made once a cell (Tuning.map_temps), against the kernel
without it and scipy as written.

    python -m bench.row_factors [--rounds N] [--new] [--off hoist_invariants | map_temps]

Kernels whose loop over a row's entries multiplies by a factor of the row alone
(`y[j] = Σ_i A[i,j]·exp(d[i])`, `y[i] = Σ_j A[i,j]·x[j]·exp(d[i])`, the gradients
`Aᵀ(exp(A x) − d)` and `Aᵀ(A x − d)`, whose factor is read from the kernel's
temporary) or by a map along the inner index (`y[i] = Σ_j A[i,j]·exp(x[j])`), on
scikit-fem's P1 Laplacian (1.4e3 and 8.3e4 entries), the 3-D 7-point Poisson stencil 25³, a
k-NN graph of scikit-learn's digits (1e5) and a random csr 5000² at 1%; and the
broadcasts `M[i,j]·exp(d[i])`, `Σ_i M[i,j]·exp(d[i])`, `M[i,j]·exp(x[j])` on a dense
300² M. Each kernel is compiled with the default Tuning and with `--off`'s switch
off (both passed as a Tuning) and run alternated call by call with scipy's form
(each order in turn), thread CPU medians; the same scipy matrix each call, and the
same dense operands or, with --new, the next of 8 new ones. Needs the bench extra.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import time

import numpy as np
import scipy.sparse as sp

import etchpy as ep

i, j, k = ep.indices("i j k")
A, d, x = ep.tensor("A", 2, format="csr"), ep.tensor("d", 1), ep.tensor("x", 1)
FORMS = {
    "y[j] = Σi A[i,j]·exp(d[i])": (ep.sum(i, A[i, j] * ep.exp(d[i])),
                                   lambda M, dv, xv: M.T @ np.exp(dv)),
    "y[i] = Σj A[i,j]·x[j]·exp(d[i])": (ep.sum(j, A[i, j] * x[j] * ep.exp(d[i])),
                                        lambda M, dv, xv: np.exp(dv) * (M @ xv)),
    "y[i] = Σj A[i,j]·exp(x[j])": (ep.sum(j, A[i, j] * ep.exp(x[j])),
                                   lambda M, dv, xv: M @ np.exp(xv)),
    "Aᵀ(exp(Ax) − d)": (ep.sum(i, A[i, j] * (ep.exp(ep.sum(k, A[i, k] * x[k])) - d[i])),
                        lambda M, dv, xv: M.T @ (np.exp(M @ xv) - dv)),
    "Aᵀ(Ax − d)": (ep.sum(i, A[i, j] * (ep.sum(k, A[i, k] * x[k]) - d[i])),
                   lambda M, dv, xv: M.T @ (M @ xv - dv)),
}


Md = ep.tensor("M", 2)
DENSE = {   # a dense 300² M: the broadcast form's row loop
    "C[i,j] = M[i,j]·exp(d[i])": (Md[i, j] * ep.exp(d[i]), lambda M, dv, xv: M * np.exp(dv)[:, None]),
    "y[j] = Σi M[i,j]·exp(d[i])": (ep.sum(i, Md[i, j] * ep.exp(d[i])),
                                   lambda M, dv, xv: np.exp(dv) @ M),
    "C[i,j] = M[i,j]·exp(x[j])": (Md[i, j] * ep.exp(x[j]), lambda M, dv, xv: M * np.exp(xv)),
}


def matrices():
    from bench.calls import stencil3_csr
    from bench.calls_kernels import fem_p1, knn_digits
    return {"P1 2-D 1.4e3": fem_p1(4), "P1 2-D 8.3e4": fem_p1(7), "3-D Poisson 1.1e5": stencil3_csr(25),
            "k-NN digits 1e5": knn_digits(1797, 56),
            "random 5000² 1%": sp.random_array((5000, 5000), density=0.01, format="csr",
                                               random_state=1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=201)
    ap.add_argument("--new", action="store_true",
                    help="new dense operands each call (a pool of 8), as a solver loop passes")
    ap.add_argument("--off", default="hoist_invariants",
                    help="the Tuning switch the off side turns off (or map_temps)")
    args = ap.parse_args(argv)
    on, off = ep.Tuning(), ep.Tuning(**{args.off: False})
    runs = [(label, sp.csr_array(M), FORMS) for label, M in matrices().items()]
    runs.append(("dense 300²", np.random.default_rng(2).random((300, 300)), DENSE))
    for label, M, forms in runs:
        rng = np.random.default_rng(0)
        pool = [(rng.standard_normal(M.shape[0]) / 4, rng.standard_normal(M.shape[1]) / 8)
                for _ in range(8 if args.new else 1)]
        for name, (e, peer) in forms.items():
            text = str(e)
            given = [{t: v for t, v in (("A", M), ("M", M), ("d", dv), ("x", xv))
                      if f"{t}[" in text} for dv, xv in pool]     # made before the timing
            kon, koff = ep.compile(e, tuning=on), ep.compile(e, tuning=off)
            np.testing.assert_allclose(kon(**given[0]), peer(M, *pool[0]),
                                       rtol=1e-9, atol=1e-9)
            times: dict = {s: [] for s in ("off", "on", "scipy")}
            for r in range(args.rounds):
                g, p = given[r % len(pool)], pool[r % len(pool)]   # --new: the next operands
                sides = {"off": lambda: koff(**g), "on": lambda: kon(**g),
                         "scipy": lambda: peer(M, *p)}
                for s, f in (sides.items() if r % 2 else reversed(sides.items())):
                    t = time.thread_time()
                    f()
                    times[s].append(time.thread_time() - t)
            m = {s: np.median(v) * 1e6 for s, v in times.items()}
            print(f"{label:18s} {name:33s} off {m['off']:7.1f} µs  on {m['on']:7.1f} µs  "
                  f"scipy {m['scipy']:7.1f} µs  on/scipy {m['on'] / m['scipy']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
