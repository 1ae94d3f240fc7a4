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

  mergechecks  A+B into csr (a union merge, which checks its scipy inputs in its
       own steps: lower.schedule.merge_steps) at 1e3-1e6 stored entries a matrix,
       random rows and 5-point stencils, real on one thread and two and min_plus
       (the last two at the two largest sizes): its C function's checked build
       against its unchecked one (target ≤ 1.03×), the checked build of session 40
       (merge_steps=False: each block's coordinates checked ahead) against the
       same, and the whole call against the kernel built with fused_checks=False
       (a full check pass before the call) and scipy's A + B.

Each case alternates its calls one at a time (bench.calls.alternate); medians.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import etchpy as ep
from etchpy.runtime import calling

from bench.kernels import per_row_csr, rng_for, stencil_csr
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


def _merge_pairs(rng, quick):
    """(label, A, B) at 1e3-1e6 stored entries a matrix: k = 5 random columns a
    row (both), and a 5-point stencil with the same pattern plus a diagonal
    three above (values new)."""
    for nnz in (1e3, 1e4) if quick else (1e3, 1e4, 1e5, 1e6):
        n = int(nnz) // 5
        yield "random rows", per_row_csr(rng, n, n, 5), per_row_csr(rng, n, n, 5)
        A = stencil_csr(int(round((nnz / 5) ** 0.5)))
        B = sp.csr_array(A + sp.eye_array(A.shape[0], k=3, format="csr"))
        B.data = rng.random(B.nnz)
        yield "stencil", A, B


MERGE_KINDS = (("real", 1), ("real", 2), ("min_plus", 1))     # semiring, threads


def part_mergechecks(quick, seconds, say, calls) -> list[dict]:
    """A+B: checked against unchecked build (in its steps, and session 40's
    checks ahead: merge_steps off), and the call against a pass and scipy."""
    text, rows = OPS["A+B"][0], []
    pairs = list(_merge_pairs(rng_for("calls-mergechecks"), quick))
    for sr, threads in MERGE_KINDS:
        fused, ahead, passed = (ep.compile(
            text, output="csr", formats={"A": "csr", "B": "csr"}, threads=threads,
            semiring=getattr(ep.semirings, sr), tuning=ep.Tuning(**kw))
            for kw in ({}, {"merge_steps": False}, {"fused_checks": False}))
        for label, A, B in pairs if sr == "real" and threads == 1 else pairs[-4:]:
            rows += _merge_case(calls, say, seconds, (fused, ahead, passed), A, B,
                                f"A+B {sr}{', 2 threads' if threads > 1 else ''} {label}")
    return rows


def _entries(M, op, width=None):
    """The values of M's stored entries in row-major order, those of rows r and
    r + n (A stacked over B, `width` given) combined by ufunc op."""
    coo = M.tocoo()
    rows = coo.row % (coo.shape[0] // 2) if width is not None else coo.row
    keys = rows.astype(np.int64) * coo.shape[1] + coo.col
    order = np.argsort(keys, kind="stable")
    keys, vals = keys[order], coo.data[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return op.reduceat(vals, starts) if len(vals) else vals


def _merge_case(calls, say, seconds, kernels, A, B, case) -> list[dict]:
    fused, ahead, passed = kernels
    got = fused(A=A, B=B)
    got = got.to_scipy(keep_fill=True) if isinstance(got, ep.Tensor) else got
    np.testing.assert_allclose(_entries(got, np.add), _entries(sp.vstack([A, B]).tocoo(), (
        np.add if fused.semiring.name == "real" else np.minimum), A.shape[1]))
    values = {"A": A, "B": B}
    (checked, frees), (plain, _), (before, _) = (c_call(fused, values), c_call(
        fused, values, trusted=True), c_call(ahead, values))
    t = calls.alternate([checked, plain, frees, before, lambda: fused(A=A, B=B),
                         lambda: passed(A=A, B=B), lambda: A + B],
                        seconds * (3 if A.nnz >= 1e6 else 1), most=3000)
    case += f" nnz={A.nnz:,}+{B.nnz:,}"
    c = t[1] - t[2]
    rows = [calls.row("mergechecks", case + ", C checked/unchecked", t[0] - t[2],
                      "the unchecked build", c, 1.03, nnz=int(A.nnz)),
            calls.row("mergechecks", case + ", C ahead/unchecked", t[3] - t[2],
                      "the unchecked build", c, None, nnz=int(A.nnz)),
            calls.row("mergechecks", case + ", call (fused)", t[4],
                      "a check pass first", t[5], None, nnz=int(A.nnz)),
            calls.row("mergechecks", case + ", call (fused)", t[4],
                      "scipy A + B", t[6], None, nnz=int(A.nnz))]
    for r in rows:
        calls.say_row(r, say)
    return rows
