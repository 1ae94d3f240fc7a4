"""Index offsets (`i <= j + k`) as skips, against the same filter as a stored mask.

    python -m bench.offsets [--n N] [--rows R] [--repeat K]

Three queries, each timed three ways, calls alternated in one process and each
call's thread CPU time taken (time.thread_time), medians reported:

- band: Σ_ij A[i,j]·(i <= j + 3)·(i + 3 >= j), A an n × n csr with entries near
  and away from the diagonal; against A·M, M the band stored as a csr mask
  (n·7 entries), and against A's own values times a numpy mask (scipy: the band
  picked by `sp.triu`/`sp.tril` per call is not timed, the kernel is).
- triangle: Σ_ij A[i,j]·(i <= j + 10) on a 3000 × 3000 csr with 5% of its
  entries; against a stored csr triangle mask and a dense 0/1 mask.
- date window (TPC-H Q12's l_receiptdate <= l_commitdate + 30, per order):
  lines keyed (order, commit, receipt, line), the two dates coded as days (one
  range coding); Σ_{c,r,n} L[o,c,r,n]·(r <= c + 30) against L·W[c, r], W the
  window over days × days stored (csr, and dense), and against the dates as two
  value columns of lines keyed (order, line), `R[o, n] <= C[o, n] + 30` (each
  row tested in the loop: docs/relational.md's way). And the late lines over
  lines keyed (commit, receipt, order, line), Σ (r > c + 30), against the
  value columns' `R[o, n] > C[o, n] + 30`.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import scipy.sparse as sp

import etchpy as ep


def timed(calls: dict, repeat: int) -> dict:
    """{name: median thread-CPU ms}, the calls alternated `repeat` times."""
    times = {name: [] for name in calls}
    for _ in range(repeat):
        for name, call in calls.items():
            t0 = time.thread_time()
            call()
            times[name].append(time.thread_time() - t0)
    return {k: float(np.median(v)) * 1e3 for k, v in times.items()}


def band(n: int, repeat: int) -> dict:
    rng = np.random.default_rng(0)
    r = rng.integers(0, n, 8 * n)
    c = np.where(rng.random(len(r)) < 0.5, r + rng.integers(-6, 7, len(r)),
                 rng.integers(0, n, len(r))).clip(0, n - 1)
    A = sp.csr_array((rng.random(len(r)), (r, c)), shape=(n, n))
    A.sum_duplicates()
    M = sp.csr_array(sum(sp.eye(n, k=k, format="csr") for k in range(-3, 4)))
    i, j = ep.indices("i j")
    T, Mv = ep.tensor("A", 2, "csr"), ep.tensor("M", 2, "csr")
    At, Mt = ep.Tensor.from_scipy(A), ep.Tensor.from_scipy(M)
    skip = ep.compile(ep.sum((i, j), T[i, j] * (i <= j + 3) * (i + 3 >= j)))
    leap = ep.compile(ep.sum((i, j), T[i, j] * (i <= j + 3) * (i + 3 >= j)),
                      tuning={"clip_ranges": False})
    mask = ep.compile(ep.sum((i, j), T[i, j] * Mv[i, j]))
    want = (sp.triu(A, -3) - sp.triu(A, 4)).sum()
    for f in (lambda: skip(A=At), lambda: leap(A=At), lambda: mask(A=At, M=Mt)):
        assert np.isclose(f(), want)
    return {"nnz": A.nnz, "mask entries": M.nnz,
            **timed({"offset": lambda: skip(A=At), "offset, clip_ranges off": lambda: leap(A=At),
                     "csr mask": lambda: mask(A=At, M=Mt)}, repeat)}


def triangle(repeat: int, n: int = 3000) -> dict:
    A = sp.random(n, n, density=0.05, random_state=1, format="csr")
    i, j = ep.indices("i j")
    T, Mv, Dv = ep.tensor("A", 2, "csr"), ep.tensor("M", 2, "csr"), ep.tensor("D", 2)
    dense = (np.arange(n)[:, None] <= np.arange(n)[None, :] + 10).astype(float)
    At, Mt = ep.Tensor.from_scipy(A), ep.Tensor.from_scipy(sp.csr_array(dense))
    skip = ep.compile(ep.sum((i, j), T[i, j] * (i <= j + 10)))
    mask = ep.compile(ep.sum((i, j), T[i, j] * Mv[i, j]))
    dmask = ep.compile(ep.sum((i, j), T[i, j] * Dv[i, j]))
    want = sp.triu(A, -10).sum()
    for f in (lambda: skip(A=At), lambda: mask(A=At, M=Mt), lambda: dmask(A=At, D=dense)):
        assert np.isclose(f(), want)
    return {"nnz": A.nnz, "mask entries": Mt.nnz,
            **timed({"offset": lambda: skip(A=At), "csr mask": lambda: mask(A=At, M=Mt),
                     "dense mask": lambda: dmask(A=At, D=dense)}, repeat)}


def lines(rows: int, seed: int = 0) -> dict:
    """TPC-H-like lines: 4 per order, commit = order date + 30..90 days, receipt
    = ship date + 1..30, ship = order date + 1..121 (dates as days, 7 years)."""
    rng = np.random.default_rng(seed)
    orders = rows // 4
    order = np.repeat(np.arange(orders), 4)[:rows]
    odate = rng.integers(0, 2406, orders)[order]
    ship = odate + rng.integers(1, 122, rows)
    return {"order": order, "line": np.tile(np.arange(4), orders + 1)[:rows],
            "commit": odate + rng.integers(30, 91, rows),
            "receipt": ship + rng.integers(1, 31, rows)}


def window(rows: int, repeat: int) -> dict:
    cols = lines(rows)
    days = ep.Keys.of(cols["commit"], cols["receipt"], span_limit=np.inf, name="day")
    t0 = time.perf_counter()
    L = ep.relation(cols, ["order", "commit", "receipt", "line"],
                    coding={"commit": days, "receipt": days}, name="L")
    build = time.perf_counter() - t0
    o, c, r, n = ep.indices("o c r n")
    W, Wd = ep.tensor("W", 2, "csr"), ep.tensor("V", 2)
    d = len(days)
    dense = (np.arange(d)[None, :] <= np.arange(d)[:, None] + 30).astype(float)  # [c, r]
    Wt = ep.Tensor.from_scipy(sp.csr_array(dense))
    body = L.var()[o, c, r, n]
    skip = ep.compile(ep.sum((c, r, n), body * (r <= c + 30)))
    mask = ep.compile(ep.sum((c, r, n), body * W[c, r]))
    dmask = ep.compile(ep.sum((c, r, n), body * Wd[c, r]))
    want = np.bincount(cols["order"], cols["receipt"] <= cols["commit"] + 30,
                       minlength=L.tensor.shape[0])
    V = ep.relation(cols, ["order", "line"], values=["commit", "receipt"], name="V")
    C, R = V["commit"].var("C"), V["receipt"].var("R")       # docs/relational.md's way
    vals = ep.compile(ep.sum(n, R[o, n] <= C[o, n] + 30))
    ct, rt = V["commit"].tensor, V["receipt"].tensor
    for f in (lambda: skip(L=L.tensor), lambda: mask(L=L.tensor, W=Wt),
              lambda: dmask(L=L.tensor, V=dense), lambda: vals(C=ct, R=rt)):
        assert np.array_equal(f(), want)
    # dates first: Σ over every line of (r > c + 30), the late lines; a skip past
    # each commit day's on-time receipts, against the value columns' one walk
    F = ep.relation(cols, ["commit", "receipt", "order", "line"],
                    coding={"commit": days, "receipt": days}, name="F")
    late = ep.compile(ep.sum((c, r, o, n), F.var()[c, r, o, n] * (r > c + 30)))
    vlate = ep.compile(ep.sum((o, n), R[o, n] > C[o, n] + 30))
    assert late(F=F.tensor) == vlate(C=ct, R=rt) == (
        cols["receipt"] > cols["commit"] + 30).sum()
    return {"rows": rows, "days": d, "build s": round(build, 2),
            **timed({"late, dates first: offset": lambda: late(F=F.tensor),
                     "late: value columns": lambda: vlate(C=ct, R=rt)}, repeat),
            **timed({"offset": lambda: skip(L=L.tensor),
                     "csr mask": lambda: mask(L=L.tensor, W=Wt),
                     "dense mask": lambda: dmask(L=L.tensor, V=dense),
                     "value columns": lambda: vals(C=ct, R=rt)}, repeat)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--rows", type=int, default=6_000_000)
    ap.add_argument("--repeat", type=int, default=11)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", ep.PerformanceWarning)
    for name, got in (("band", band(args.n, args.repeat)), ("triangle", triangle(args.repeat)),
                      ("date window", window(args.rows, args.repeat))):
        print(name, {k: round(v, 3) if isinstance(v, float) else v for k, v in got.items()})


if __name__ == "__main__":
    main()
