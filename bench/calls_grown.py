"""The cost of a call (issue 39) for kernels that grow a sparse output, a part of
`python -m bench calls`:

  grown  A+B, A∘B (element-wise product), SpGEMM A·B and a transpose (C[j,i] =
       A[i,j] into csr), each with a csr output from inputs of every kind (scipy
       csr, csc (a csc output), coo, pydata GCXS and COO when it imports,
       ep.Tensor csr), the same arrays on every call and new ones: the call, the
       kernel's C function called with prebuilt arguments (its output arrays
       freed after it, the cost of the three free calls' cffi taken off), their
       difference (the time outside the kernel; target ≤ 2 µs on inputs of ≤ 16
       entries), and scipy's own operation on scipy csr inputs (A + B,
       A.multiply(B), A @ B, A.T.tocsr()). n = 4 (≤ 16 entries) for every kind;
       n = 16 and 100 and 5e3 and 5e4 stored entries for scipy csr and
       ep.Tensor inputs.

  mergechecks  A+B into csr (a union merge, which checks its scipy inputs'
       segments as it opens them: lower.schedule.merge_checks) at 1e3-1e6 stored
       entries a matrix: its C function's checked build against its unchecked one
       (target ≤ 1.03×), and the whole call against the kernel built with
       fused_checks=False (a full check pass before the call) and scipy's A + B.

Each case alternates its calls one at a time (bench.calls.alternate); medians.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import etchpy as ep
from etchpy.runtime import calling

from bench.kernels import per_row_csr, rng_for
from bench.timing import fmt_time

OPS = {"A+B": ("C[i, j] = A[i, j] + B[i, j]", lambda A, B: A + B),
       "A∘B": ("C[i, j] = A[i, j] * B[i, j]", lambda A, B: A.multiply(B)),
       "A·B": ("C[i, j] = A[i, k] * B[k, j]", lambda A, B: A @ B),
       "Aᵀ": ("C[j, i] = A[i, j]", lambda A, B: A.T.tocsr())}


def _kinds(quick):
    """(name, declared format, output format, make an input of that kind from csr M)."""
    kinds = [("scipy csr", "csr", "csr", lambda M: M.copy()),
             ("scipy csc", "csc", "csc", lambda M: M.tocsc()),
             ("scipy coo", "coo", "csr", lambda M: M.tocoo()),
             ("ep.Tensor csr", "csr", "csr", lambda M: ep.Tensor.from_scipy(M, "csr"))]
    try:
        import sparse
    except ImportError:
        return kinds
    return kinds + [("pydata GCXS csr", "csr", "csr", sparse.GCXS.from_scipy_sparse),
                    ("pydata COO", "coo", "csr", sparse.COO.from_scipy_sparse)]


def _matrices(quick):
    """(label, A, B) pairs: n = 4, 16, 100 at a third full, then 5e3 and 5e4 entries."""
    rng = rng_for("calls-grown")
    out = []
    for n in (4, 16, 100):
        A, B = (sp.random_array((n, n), density=0.3, format="csr", dtype=np.float64,
                                random_state=int(rng.integers(1 << 30))) for _ in "AB")
        out.append((f"n={n}", A, B))
    for n, k in ((1000, 5),) + (() if quick else ((5000, 10),)):
        out.append((f"n={n:,} nnz≈{n * k:,}", per_row_csr(rng, n, n, k),
                    per_row_csr(rng, n, n, k)))
    return out


def c_call(kern, inputs, trusted=False):
    """(the kernel's C function with the arguments of a call on `inputs`, its output
    arrays freed after it; the same three free calls on NULL: their cffi cost).
    `trusted`: its build without fused checks (what an ep.Tensor input runs)."""
    made = kern._make(inputs, None)
    runner, lib, types, function, in_args, bound, out_shape, idx, _ = made
    if trusted:
        ctype = "int32_t" if np.dtype(idx) == np.int32 else "int64_t"
        plain = runner.library(ctype + calling.TRUSTED)
        name, = (f for f in dir(plain.lib) if not f.endswith("_free"))
        function = getattr(plain.lib, name)
        lib = plain         # its own free: each build keeps its own spare buffers
    args = list(in_args)
    _, grown = runner._output_args(args, None, out_shape, bound, lib, types)
    free = getattr(lib.lib, f"{runner.name}_free")
    cells = [c for name, c in grown.items() if "count" not in name]
    null = lib.ffi.NULL

    def inner():
        if function(*args):
            raise RuntimeError("the kernel refused its inputs")
        for c in cells:
            free(c[0])

    def frees():                # inner's loop without the function and on NULL
        for _ in cells:
            free(null)

    return inner, frees


def _case(op, kind, A, B, seconds, calls):
    """(call, C function, outside, peer) medians for one op, input kind and pair."""
    name, fmt, out, make = kind
    text, peer = OPS[op]
    names = ("A",) if op == "Aᵀ" else ("A", "B")
    kern = ep.compile(text, output=out, formats=dict.fromkeys(names, fmt))
    pair = dict(zip(names, (A, B)))
    pool = [{k: make(v) for k, v in pair.items()} for _ in range(8)]
    want = peer(A, B).toarray()
    got = kern(**pool[0])
    np.testing.assert_allclose(got.to_dense() if isinstance(got, ep.Tensor) else got.toarray(),
                               want, rtol=1e-12)
    same = pool[0]
    fresh = calls.cycling(pool)
    inner, frees = c_call(kern, pool[0])
    t = calls.alternate([lambda: kern(**same), lambda: kern(**fresh()), inner, frees,
                         lambda: peer(A, B)], seconds)
    c = t[2] - t[3]
    return t[0], t[1], c, t[4]


def part_grown(quick, seconds, say, calls) -> list[dict]:
    rows = []
    for label, A, B in _matrices(quick):
        kinds = _kinds(quick) if label == "n=4" else \
            [k for k in _kinds(quick) if k[0] in ("scipy csr", "ep.Tensor csr")]
        for op in OPS:
            for kind in kinds:
                try:
                    same, new, c, peer = _case(op, kind, A, B, seconds / 2, calls)
                except ep.EtchpyError as exc:       # a kind this op does not take
                    say(f"    {op} {label} {kind[0]}: not run ({type(exc).__name__})")
                    continue
                for arrays, t in (("same arrays", same), ("new arrays", new)):
                    rows.append({"part": "grown", "case": f"{op} {label}, {kind[0]}, {arrays}",
                                 "etchpy_s": t, "c_call_s": c, "outside_s": t - c,
                                 "peer": "scipy", "peer_s": peer, "ratio": t / peer,
                                 "target_s": 2e-6 if A.shape[0] == 4 else None,
                                 "met": t - c <= 2e-6 if A.shape[0] == 4 else None})
                say(f"    {op} {label:<16} {kind[0]:<16} call {fmt_time(same):>9} / new "
                    f"{fmt_time(new):>9}, C {fmt_time(c):>9}: outside {fmt_time(same - c):>9}"
                    f" / {fmt_time(new - c):>9}; scipy {fmt_time(peer):>9} "
                    f"({same / peer:4.2f}× / {new / peer:4.2f}×)")
    return rows


def part_mergechecks(quick, seconds, say, calls) -> list[dict]:
    """A+B: checked against unchecked build, and the call against a pass and scipy."""
    text = OPS["A+B"][0]
    fused, passed = (ep.compile(text, output="csr", formats={"A": "csr", "B": "csr"},
                                tuning=ep.Tuning(fused_checks=f)) for f in (True, False))
    rng, rows = rng_for("calls-mergechecks"), []
    for nnz in (1e3, 1e4) if quick else (1e3, 1e4, 1e5, 1e6):
        n = int(nnz) // 5
        A, B = per_row_csr(rng, n, n, 5), per_row_csr(rng, n, n, 5)
        got = fused(A=A, B=B)
        assert abs(got - (A + B)).max() <= 1e-12 * abs(A + B).max()
        (checked, frees), (plain, _) = c_call(fused, {"A": A, "B": B}), c_call(
            fused, {"A": A, "B": B}, trusted=True)
        t = calls.alternate([checked, plain, frees, lambda: fused(A=A, B=B),
                             lambda: passed(A=A, B=B), lambda: A + B],
                            seconds * (3 if nnz >= 1e6 else 1), most=3000)
        case = f"A+B nnz={A.nnz:,}+{B.nnz:,}"
        rows.append(calls.row("mergechecks", case + ", C checked/unchecked", t[0] - t[2],
                              "the unchecked build", t[1] - t[2], 1.03, nnz=int(A.nnz)))
        rows.append(calls.row("mergechecks", case + ", call (fused)", t[3],
                              "a check pass first", t[4], None, nnz=int(A.nnz)))
        rows.append(calls.row("mergechecks", case + ", call (fused)", t[3],
                              "scipy A + B", t[5], None, nnz=int(A.nnz)))
        for r in rows[-3:]:
            calls.say_row(r, say)
    return rows
