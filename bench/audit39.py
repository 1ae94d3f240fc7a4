"""Issue 39's done-means on real data, thread CPU time (session 54's audit):

    python -m bench.audit39 --json PATH [--only PART[,PART]] [--seconds S] [--most NNZ]

Parts:
  spmv    y = A·x, a new x each call, on scikit-fem matrices (P1 and P2 Laplacians on
          triangles and tetrahedra, 2-D and 3-D linear elasticity), 1e3 to 5e6 stored
          entries: a csr input to a csr kernel and a csc input to a csc kernel, each
          against scipy's `A @ x` on the same array; a csc input to the csr kernel
          beside (targets ≤ 1.0×, geometric mean ≤ 0.9×).
  forms   the SpMV as users write it around: b + A·x, b − A·x, c·A·x, c + A·x (c a
          Python float), Σ_j −A[i,j]·x[j], x·A·x and |b − A·x|², a scipy csr input and
          a new x each call, to 1e6 entries, against scipy/numpy's `b + A @ x`,
          `b - A @ x`, `c * (A @ x)`, `c + A @ x`, `-(A @ x)`, `x @ (A @ x)` and
          `r @ r` of `r = b - A @ x` (≤ 1.0×).
  kinds   the same matrices (to 1e6 entries) passed as other kinds: a coo_array in
          row-major order without repeats and has_canonical_format False to a coo
          kernel (≤ 1.2× scipy's coo `A @ x`), pydata COO and GCXS, an ep.Tensor, and
          a numpy matrix (n ≤ 2000) against numpy's `A @ x`; each against scipy csr too.
  cg      150 scipy.sparse.linalg.cg iterations, LinearOperator over the csr kernel,
          against cg(A), on the stiffness plus mass matrices (SPD) (≤ 1.0×).
  graph   BFS levels, components, Bellman-Ford and PageRank on graphs the bench does
          not use: scikit-image's astronaut, coffee, moon and coins photographs as
          pixel graphs, a scikit-fem P1 tetrahedral mesh, networkx's les_miserables;
          a scipy csr each call, a csc and a coo one (csgraph given the same matrix),
          and a reused ep.graph.Graph (csgraph given the csr), against csgraph
          (dijkstra for Bellman-Ford) and graphblas-algorithms (≤ 1.0×).
  unsorted  scipy's own products B = A·A (its indices left unsorted) passed as they
          are, A to 1e5 entries: B·x with a new x, B + C and B ∘ C into csr (C sorted,
          B's rows reversed: another pattern) and A·B into csr (B the scattered
          operand), against scipy's `B @ x`, `B + C`, `B.multiply(C)` and `A @ B`;
          the merges also with a new matrix over B's pattern each call (new arrays
          and values, four in turn: "new B"), the kept order found by comparison,
          and with a product of another pattern each call (six in turn: "other B",
          more than the orders kept: sorted each call).

Each case's calls alternate one at a time (bench.timing.alternate_clocks), medians of
thread CPU time (the machine is shared); wall medians are in the JSON.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import datetime
import json
import sys

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as csg
from scipy.sparse.linalg import LinearOperator, cg

import etchpy as ep

from bench.kernels import rng_for
from bench.timing import alternate_clocks, fmt_time

PARTS = ("spmv", "forms", "kinds", "cg", "graph", "unsorted")
ITERATIONS = 150


def canonical(A, fmt="csr"):
    A = sp.csr_array(A)
    A.sum_duplicates()
    A.sort_indices()
    return A if fmt == "csr" else sp.csc_array(A)


def fem(family: str, refine: int, shift: float = 0.0):
    """A scikit-fem matrix: the Laplacian (or elasticity) of `family` on the unit
    square or cube refined `refine` times, plus `shift` times the mass matrix."""
    import skfem
    from skfem.models.elasticity import lame_parameters, linear_elasticity
    from skfem.helpers import dot
    from skfem.models.poisson import laplace, mass
    vector_mass = skfem.BilinearForm(lambda u, v, _: dot(u, v))
    mesh = skfem.MeshTri() if family.startswith("tri") or family == "elast2" else skfem.MeshTet()
    elem = {"triP1": skfem.ElementTriP1(), "triP2": skfem.ElementTriP2(),
            "tetP1": skfem.ElementTetP1(), "tetP2": skfem.ElementTetP2(),
            "elast2": skfem.ElementVector(skfem.ElementTriP1()),
            "elast3": skfem.ElementVector(skfem.ElementTetP1())}[family]
    basis = skfem.Basis(mesh.refined(refine), elem)
    if family.startswith("elast"):
        A = linear_elasticity(*lame_parameters(1e3, 0.3)).assemble(basis)
        M = vector_mass.assemble(basis) if shift else 0
    else:
        A = laplace.assemble(basis)
        M = mass.assemble(basis) if shift else 0
    return canonical(A + shift * M if shift else A)


LADDER = [  # (family, refinements, stored entries about)
    ("tetP1", 2, 1_175), ("elast2", 3, 1_728), ("triP2", 3, 2_945), ("tetP2", 2, 14_365),
    ("triP1", 6, 24_600), ("elast2", 5, 25_344), ("triP2", 5, 47_000), ("tetP1", 4, 57_000),
    ("elast3", 3, 69_871), ("tetP2", 3, 105_403), ("triP1", 8, 390_000),
    ("elast2", 7, 396_288), ("elast3", 4, 560_000), ("triP2", 7, 750_000),
    ("tetP2", 4, 806_207), ("triP1", 9, 1_570_000), ("triP2", 8, 3_000_000),
    ("tetP1", 6, 3_400_000)]


def matrices(most: int, shift: float = 0.0):
    for family, k, about in LADDER:
        if about <= most:
            yield f"{family} r{k}", fem(family, k, shift)


def row(part, case, ours, peer_name, peer, target=None, say=print, **extra) -> dict:
    r = {"part": part, "case": case, "etchpy_s": ours, "peer": peer_name, "peer_s": peer,
         "ratio": ours / peer, "target": target,
         "met": None if target is None else ours / peer <= target, **extra}
    mark = "" if target is None else f"  (≤ {target}: {'ok' if r['met'] else 'MISSED'})"
    say(f"    {case:<52} {fmt_time(ours):>9}  {peer_name:<24} {fmt_time(peer):>9}"
        f"  {r['ratio']:5.2f}×{mark}")
    return r


def pool_for(n, nnz, tag):
    rng = rng_for(f"audit39-{tag}-{n}")
    return [rng.random(n) for _ in range(8 if nnz < 10**6 else 3)]


def close(y, A, x):
    """y is A·x within rounding. abs(A) would sort an unsorted A in place (scipy
    sums its duplicates first): |A| is made from a copy."""
    M = A.copy()
    M.data = np.abs(M.data)
    assert np.all(abs(y - A @ x) <= 64 * np.finfo(float).eps * (M @ abs(x)) + 1e-30)


def new_x_pair(kern, A, peer, pool, seconds):
    """Alternate kern(A=A, x=new) and peer @ new; median CPU seconds."""
    close(kern(A=A, x=pool[0]), peer, pool[0])
    xs, ys = iter(pool * 10**6).__next__, iter(pool * 10**6).__next__
    t = alternate_clocks([lambda: kern(A=A, x=xs()), lambda: peer @ ys()],
                         seconds * (2 if peer.nnz > 10**6 else 1), 4000)
    return t[0][0], t[1][0]


def part_spmv(seconds, most, say):
    csr = ep.compile("y[i] = A[i, j] * x[j]", formats={"A": "csr"})
    csc = ep.compile("y[i] = A[i, j] * x[j]", formats={"A": "csc"})
    rows = []
    for name, A in matrices(most):
        C = sp.csc_array(A)
        pool = pool_for(A.shape[0], A.nnz, "spmv")
        head = f"{name} n={A.shape[0]:,} nnz={A.nnz:,}"
        for kind, kern, M in (("csr", csr, A), ("csc", csc, C), ("csc→csr kernel", csr, C)):
            ours, peer = new_x_pair(kern, M, M, pool, seconds)
            rows.append(row("spmv", f"{head}, {kind}", ours, f"scipy {M.format} A @ x", peer,
                            None if "→" in kind else 1.0, say, nnz=int(A.nnz), kind=kind))
    for kind in ("csr", "csc"):
        r = [x["ratio"] for x in rows if x["kind"] == kind]
        say(f"    geometric mean, {kind}: {float(np.exp(np.mean(np.log(r)))):.3f} "
            f"(≤ 0.9), max {max(r):.3f}")
    return rows


def part_forms(seconds, most, say):
    i, j = ep.indices("i j")
    A_, x_, b_, c_ = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1), ep.tensor("b", 1), \
        ep.tensor("c", 0)
    walk = ep.sum(j, A_[i, j] * x_[j])
    forms = {"b + A·x": (b_[i] + walk, lambda A, x, b: b + A @ x),
             "b − A·x": (b_[i] - walk, lambda A, x, b: b - A @ x),
             "c·A·x": (c_[()] * walk, lambda A, x, b: 0.5 * (A @ x)),
             "c + A·x": (c_[()] + walk, lambda A, x, b: 0.5 + A @ x),
             "Σ −A·x": (ep.sum(j, -A_[i, j] * x_[j]), lambda A, x, b: -(A @ x)),
             "x·A·x": (ep.sum(i, x_[i] * walk), lambda A, x, b: x @ (A @ x)),
             "|b − A·x|²": (ep.sum(i, (b_[i] - walk) * (b_[i] - walk)),
                           lambda A, x, b: (lambda r: r @ r)(b - A @ x))}
    kerns = {k: ep.compile(e, threads=1) for k, (e, _) in forms.items()}
    rows = []
    for name, A in matrices(min(most, 10**6)):
        pool = pool_for(A.shape[0], A.nnz, "forms")
        b = rng_for(f"audit39-forms-b-{A.shape[0]}").random(A.shape[0])
        for form, (_, peer) in forms.items():
            kern = kerns[form]
            args = {k: v for k, v in (("b", b), ("c", 0.5)) if k in kern.tensors}
            y = kern(A=A, x=pool[0], **args)
            assert np.allclose(y, peer(A, pool[0], b), rtol=1e-10, atol=1e-12)
            xs, ys = iter(pool * 10**6).__next__, iter(pool * 10**6).__next__
            t = alternate_clocks([lambda: kern(A=A, x=xs(), **args),
                                  lambda: peer(A, ys(), b)], seconds, 4000)
            rows.append(row("forms", f"{name} nnz={A.nnz:,}, {form}", t[0][0],
                            "scipy", t[1][0], 1.0, say, nnz=int(A.nnz), kind=form))
    return rows


def part_unsorted(seconds, most, say):
    two = {"A": "csr", "B": "csr"}
    spmv = ep.compile("y[i] = A[i, j] * x[j]", formats={"A": "csr"})
    kerns = {"B + C": (ep.compile("C[i, j] = A[i, j] + B[i, j]", formats=two, output="csr"),
                       lambda A, B, C: (B, C), lambda A, B, C: B + C),
             "B ∘ C": (ep.compile("C[i, j] = A[i, j] * B[i, j]", formats=two, output="csr"),
                       lambda A, B, C: (B, C), lambda A, B, C: B.multiply(C)),
             "A·B": (ep.compile("C[i, j] = A[i, k] * B[k, j]", formats=two, output="csr"),
                     lambda A, B, C: (A, B), lambda A, B, C: A @ B)}
    rows = []
    for name, A in matrices(min(most, 10**5)):
        B = A @ A
        assert not B.has_sorted_indices
        C = canonical(B[np.arange(B.shape[0])[::-1]])
        head = f"{name} B nnz={B.nnz:,}"
        ours, peer = new_x_pair(spmv, B, B, pool_for(B.shape[0], B.nnz, "unsorted"), seconds)
        assert not B.has_sorted_indices and not B.has_canonical_format      # still unsorted
        rows.append(row("unsorted", f"{head}, B·x", ours, "scipy B @ x", peer, None, say,
                        nnz=int(B.nnz), kind="B·x"))
        for form, (kern, args, peer_of) in kerns.items():
            x, y = args(A, B, C)
            want = peer_of(A, B, C)
            got = sp.csr_array(kern(A=x, B=y))
            assert abs(got - want).max() <= 1e-9 * (abs(want).max() + 1)
            t = alternate_clocks([lambda: kern(A=x, B=y), lambda: peer_of(A, B, C)],
                                 seconds, 2000)
            rows.append(row("unsorted", f"{head}, {form}", t[0][0], "scipy", t[1][0], None,
                            say, nnz=int(B.nnz), kind=form))
            if form != "A·B":
                for kind, pool in (("new B", _same_pattern(B)), ("other B", _patterns(A))):
                    rows.append(_each_call(kern, peer_of, A, C, pool, head, form, kind,
                                           seconds, say))
    return rows


def _same_pattern(B):
    """Four scipy matrices over B's unsorted pattern, new arrays and values."""
    rng = np.random.default_rng(0)
    return [sp.csr_array((rng.standard_normal(B.nnz), B.indices.copy(), B.indptr.copy()),
                         shape=B.shape) for _ in range(4)]


def _patterns(A):
    """Six scipy products A·(P A Pᵀ), P random permutations: unsorted, each of
    its own pattern, more than etchpy keeps orders of (LIMITS.sorted_inputs)."""
    rng = np.random.default_rng(1)
    out = []
    for _ in range(6):
        p = rng.permutation(A.shape[0])
        out.append(sp.csr_array(A @ sp.csr_array(A[p][:, p])))
    return out


def _each_call(kern, peer_of, A, C, pool, head, form, kind, seconds, say):
    """`form` on the next matrix of `pool` each call, in turn, alternating with
    scipy on the same matrices."""
    turn = [0, 0]

    def take(side):
        turn[side] += 1
        return pool[turn[side] % len(pool)]
    t = alternate_clocks([lambda: kern(A=take(0), B=C), lambda: peer_of(A, take(1), C)],
                         seconds, 2000)
    return row("unsorted", f"{head}, {form} ({kind})", t[0][0], "scipy", t[1][0], None, say,
               nnz=int(pool[0].nnz), kind=f"{form} {kind}")


def in_order_coo(A):
    """A's entries as a coo_array in row-major order without repeats, its
    has_canonical_format False (scipy then thinks it may hold repeats)."""
    C = A.tocoo()
    B = sp.coo_array((C.data.copy(), (C.row.copy(), C.col.copy())), shape=A.shape)
    B.has_canonical_format = False
    return B


def part_kinds(seconds, most, say):
    import sparse
    kern = {f: ep.compile("y[i] = A[i, j] * x[j]", formats={"A": f})
            for f in ("coo", "csr", "dense")}
    rows = []
    for name, A in matrices(min(most, 10**6)):
        pool = pool_for(A.shape[0], A.nnz, "kinds")
        head = f"{name} nnz={A.nnz:,}"
        B = in_order_coo(A)
        ours, peer = new_x_pair(kern["coo"], B, B, pool, seconds)
        rows.append(row("kinds", f"{head}, coo in order (canonical False)", ours,
                        "scipy coo A @ x", peer, 1.2, say, nnz=int(A.nnz), kind="coo"))
        for kind, M, k in (("pydata COO", sparse.COO.from_scipy_sparse(A), "coo"),
                           ("pydata GCXS", sparse.GCXS.from_scipy_sparse(A), "csr"),
                           ("ep.Tensor csr", ep.Tensor.from_scipy(A, "csr"), "csr")):
            P = B if k == "coo" else A     # a coo layout against scipy's coo
            ours, peer = new_x_pair(kern[k], M, P, pool, seconds)
            rows.append(row("kinds", f"{head}, {kind}", ours, f"scipy {P.format} A @ x", peer,
                            1.2 if k == "coo" else 1.0, say, nnz=int(A.nnz), kind=kind))
            if kind.startswith("pydata"):
                xs = iter(pool * 10**6).__next__
                t = alternate_clocks([lambda: kern[k](A=M, x=xs()), lambda: M @ xs()],
                                     seconds / 2, 2000)
                rows.append(row("kinds", f"{head}, {kind}", t[0][0], "pydata A @ x",
                                t[1][0], None, say, nnz=int(A.nnz), kind=kind + " own"))
        if A.shape[0] <= 2000:
            D = A.toarray()
            xs, ys = iter(pool * 10**6).__next__, iter(pool * 10**6).__next__
            close(kern["dense"](A=D, x=pool[0]), A, pool[0])
            t = alternate_clocks([lambda: kern["dense"](A=D, x=xs()), lambda: D @ ys()],
                                 seconds, 4000)
            rows.append(row("kinds", f"{name} n={A.shape[0]}, numpy dense", t[0][0],
                            "numpy A @ x", t[1][0], 1.0, say, kind="numpy"))
    return rows


def part_cg(seconds, most, say):
    kern = ep.compile("y[i] = A[i, j] * x[j]", formats={"A": "csr"})
    rows = []
    for name, A in matrices(most, shift=1.0):
        n = A.shape[0]
        b = rng_for(f"audit39-cg-{n}").random(n)
        op = LinearOperator(A.shape, matvec=lambda x, A=A: kern(A=A, x=x), dtype=A.dtype)
        ours = lambda op=op, b=b: cg(op, b, rtol=1e-300, atol=0.0, maxiter=ITERATIONS)[0]  # noqa
        peer = lambda A=A, b=b: cg(A, b, rtol=1e-300, atol=0.0, maxiter=ITERATIONS)[0]  # noqa
        mine, theirs = ours(), peer()      # sums reassociated: 150 steps drift apart
        assert np.linalg.norm(mine - theirs) <= 1e-4 * np.linalg.norm(theirs)
        t = alternate_clocks([ours, peer], seconds * (3 if A.nnz > 10**6 else 1), 400)
        rows.append(row("cg", f"{name} + mass n={n:,} nnz={A.nnz:,}", t[0][0], "scipy cg(A)",
                        t[1][0], 1.0, say, nnz=int(A.nnz)))
    return rows


def real_graphs():
    import networkx as nx
    import skimage.data as data
    from bench.calls_graph import _int32, pixel_graph
    yield "les_miserables (networkx)", _int32(nx.to_scipy_sparse_array(
        nx.les_miserables_graph(), weight="weight", dtype=float))
    for img in ("coins", "moon", "astronaut", "coffee"):
        a = getattr(data, img)()
        yield f"{img} pixels {a.shape[0]}×{a.shape[1]}", pixel_graph(
            a.mean(axis=2).round() if a.ndim == 3 else a, 8)
    A = fem("tetP1", 5)
    A.data = np.random.default_rng(5).uniform(1.0, 10.0, A.nnz)
    yield "scikit-fem P1 tetrahedra r5", _int32(A + A.T)


def part_graph(seconds, most, say):
    from etchpy import graph
    from bench.calls_graph import cases
    rows = []
    for gname, A in real_graphs():
        if A.nnz > most:
            continue
        G = graph.Graph(A)
        say(f"    {gname}: n={A.shape[0]:,}, nnz={A.nnz:,}, "
            f"{csg.connected_components(A, directed=False)[0]:,} components")
        for way, arg in (("scipy csr", A), ("scipy csc", sp.csc_array(A)),
                         ("scipy coo", in_order_coo(A)), ("reused Graph", G)):
            given = arg if way.startswith("scipy") else A     # the peer given the same
            for alg, ours, peer_name, peer, reference, agree in cases(A, given):
                if not agree(ours(arg), reference()):
                    raise AssertionError(f"{alg} on {gname} ({way}): disagree")
                t = alternate_clocks([lambda arg=arg: ours(arg), peer], seconds, 2000)
                rows.append(row("graph", f"{alg} {gname}, {way}", t[0][0], peer_name,
                                t[1][0], 1.0, say, nnz=int(A.nnz), algorithm=alg, input=way))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.audit39", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--most", type=int, default=5 * 10**6, help="largest stored entries")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    parts = [p for p in args.only.split(",") if p] or list(PARTS)
    say = lambda *a: print(*a, flush=True)      # noqa: E731
    rows = []
    for part in parts:
        say(f"== {part} {datetime.datetime.now(datetime.timezone.utc):%H:%M:%S} UTC, load "
            f"{open('/proc/loadavg').read().split()[0]} ==")
        rows += globals()[f"part_{part}"](args.seconds, args.most, say)
    with open(args.json, "w", encoding="utf-8") as f:
        json.dump({"command": "python -m bench.audit39 " + " ".join(sys.argv[1:]),
                   "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
