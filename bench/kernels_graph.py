"""The benchmark graph kernels (bench/kernels.py): min-plus and or-and relaxation
steps, triangle counting."""
from __future__ import annotations

import sqlite3
import time

import numpy as np
import scipy.sparse as sp

from .cases import Case, Impl
from .kernel_impls import _gb, etchpy_impls, gb_impl
from .kernel_inputs import (er_degree_ordered_upper, per_row_csr, rmat_degree_ordered_upper,
                            rng_for)


# ------------------------------------------------------------------ graph kernels

def graph_data(ctx):
    if "graph" not in ctx.cache:
        rng = rng_for("graph")
        n, k = (100_000, 5) if ctx.quick else (1_000_000, 5)
        W = per_row_csr(rng, n, n, k)             # W[u, v]: edge u -> v, weight in [0, 1)
        Wc = W.tocsc()
        Wc.sort_indices()
        Wb = sp.csc_matrix((np.ones(Wc.nnz, dtype=bool), Wc.indices, Wc.indptr),
                           shape=Wc.shape)
        Wbr = sp.csr_matrix((np.ones(W.nnz, dtype=bool), W.indices, W.indptr), shape=W.shape)
        d = rng.random(n) * 10.0
        d[rng.random(n) < 0.5] = np.inf          # half the vertices not reached yet
        f = rng.random(n) < 0.05                  # a 5% frontier
        nonempty = np.diff(Wc.indptr) > 0
        starts = Wc.indptr[:-1][nonempty]
        ctx.cache["graph"] = dict(n=n, k=k, W=W, Wc=Wc, Wb=Wb, Wbr=Wbr, d=d, f=f,
                                  nonempty=nonempty, starts=starts)
    return ctx.cache["graph"]


def gen_minplus(ctx):
    G = graph_data(ctx)
    n, Wc, d, W = G["n"], G["Wc"], G["d"], G["W"]
    info = {}
    impls = etchpy_impls("minplus", {"W": Wc, "d": d}, info)

    def build():
        idx, data, nonempty, starts = Wc.indices, Wc.data, G["nonempty"], G["starts"]

        def f():
            vals = d[idx] + data
            out = np.full(n, np.inf)
            out[nonempty] = np.minimum.reduceat(vals, starts)
            np.minimum(out, d, out=out)
            return out
        return f
    impls.append(Impl("numpy", build,
                      note="np.minimum.reduceat(d[csc rows] + csc data) per column, "
                           "then min with d"))
    if _gb(ctx):
        gb = _gb(ctx)

        def build_gb():
            Wg = gb.io.from_scipy_sparse(W)
            fin = np.flatnonzero(np.isfinite(d))
            dg = gb.Vector.from_coo(fin, d[fin], size=n)   # ∞ = not stored

            def f():
                out = dg.dup()
                out(accum=gb.binary.min) << dg.vxm(Wg, gb.semiring.min_plus)
                out.wait()
                return out
            return f, lambda v: v.to_dense(fill_value=np.inf)
        impls.append(Impl("GraphBLAS", build_gb,
                          note="out = d.dup(); out(accum=min) << d.vxm(W, min_plus); "
                               "d stores finite entries only"))
    yield Case("minplus", f"n={n:,} {G['k']}/row nnz={Wc.nnz:,}", impls,
               sizes={"n": n, "per_row": G["k"], "nnz": int(Wc.nnz)},
               notes=["W declared csc (pull); half of d is ∞"], info=info)


def gen_orand(ctx):
    G = graph_data(ctx)
    n, Wb, f = G["n"], G["Wb"], G["f"]
    info = {}
    impls = etchpy_impls("orand", {"W": G["Wbr"], "f": f}, info)

    def build():
        idx, nonempty, starts = Wb.indices, G["nonempty"], G["starts"]

        def fn():
            out = np.zeros(n, dtype=bool)
            out[nonempty] = np.logical_or.reduceat(f[idx], starts)
            return out
        return fn
    impls.append(Impl("numpy", build, note="np.logical_or.reduceat(f[csc rows]) per column"))
    if _gb(ctx):
        impls.append(gb_impl(
            ctx, lambda gb: (gb.io.from_scipy_sparse(G["W"].astype(bool)),
                             gb.Vector.from_coo(np.flatnonzero(f), True, size=n, dtype=bool)),
            lambda gb, Wg, fg: fg.vxm(Wg, gb.semiring.lor_land),
            lambda gb, v: v.to_dense(fill_value=False),
            "f.vxm(W, lor_land) with f a sparse bool vector (push)"))
    yield Case("orand", f"n={n:,} {G['k']}/row frontier {int(f.sum()):,}", impls,
               sizes={"n": n, "per_row": G["k"], "nnz": int(Wb.nnz), "frontier": int(f.sum())},
               notes=["etchpy: W csr and the frontier a sparse bool vector (push), the "
                      "same information GraphBLAS gets; numpy pulls over csc W"], info=info)


TRIANGLE_SQL = ("SELECT count(*) FROM u AS e1 JOIN u AS e2 ON e2.a = e1.b "
                "JOIN u AS e3 ON e3.a = e1.a AND e3.b = e2.b")


def gen_triangle(ctx):
    rng = rng_for("triangle")
    n, m = (10_000, 100_000) if ctx.quick else (100_000, 1_000_000)
    yield _triangle_case(ctx, "ER", n, *er_degree_ordered_upper(rng, n, m))
    scale = 13 if ctx.quick else 17                    # 8,192 or 131,072 vertices
    rng = rng_for("triangle-rmat")
    yield _triangle_case(ctx, f"R-MAT scale {scale}", 1 << scale,
                         *rmat_degree_ordered_upper(rng, scale, m))


def _triangle_case(ctx, graph, n, U, eu, ev):
    info = {}
    impls = etchpy_impls("triangle", {"U": U}, info, norm=int)
    impls.append(Impl("scipy", lambda: ((lambda: (U @ U).multiply(U).sum()), int),
                      note="(U @ U).multiply(U).sum()"))
    if _gb(ctx):
        gb = _gb(ctx)

        def build_gb():
            Ug = gb.io.from_scipy_sparse(U)

            def f():
                Cm = gb.Matrix(gb.dtypes.INT64, n, n)
                Cm(Ug.S) << Ug.mxm(Ug, gb.semiring.plus_pair)
                return Cm.reduce_scalar(gb.monoid.plus).new().value
            return f, int
        impls.append(Impl("GraphBLAS", build_gb,
                          note="C<U.S> = U plus_pair U; reduce (masked plus_pair)"))
    if "duckdb" in ctx.peers:
        duckdb = ctx.peers["duckdb"]

        def build_duck():
            con = duckdb.connect()
            con.execute("SET threads TO 1")
            edges = {"a": eu, "b": ev}              # noqa: F841 (DuckDB scans the local)
            con.execute("CREATE TABLE u AS SELECT * FROM edges")
            return (lambda: con.execute(TRIANGLE_SQL).fetchone()[0]), int
        impls.append(Impl("DuckDB", build_duck, note="3-way self-join count(*), 1 thread"))
    if "sqlite3" in ctx.peers:
        budget = ctx.budget

        def build_sqlite():
            con = sqlite3.connect(":memory:")
            con.execute("CREATE TABLE u (a INTEGER NOT NULL, b INTEGER NOT NULL, "
                        "PRIMARY KEY (a, b)) WITHOUT ROWID")
            con.executemany("INSERT INTO u VALUES (?, ?)", zip(eu.tolist(), ev.tolist()))
            con.commit()
            deadline = [float("inf")]
            con.set_progress_handler(lambda: int(time.perf_counter() > deadline[0]), 100_000)

            def f():
                deadline[0] = time.perf_counter() + budget
                try:
                    return con.execute(TRIANGLE_SQL).fetchone()[0]
                except sqlite3.OperationalError as exc:
                    if "interrupt" in str(exc):
                        raise TimeoutError(f"SQLite query interrupted after the "
                                           f"{budget:g} s budget") from None
                    raise
            return f, int
        impls.append(Impl("SQLite", build_sqlite,
                          note=f"same SQL, (a,b) primary key; interrupted after {budget:g} s"))
    return Case("triangle", f"{graph} n={n:,} m={U.nnz:,}", impls,
               sizes={"n": n, "m": int(U.nnz)},
               notes=["U: strictly upper triangle after relabelling vertices by degree",
                      "etchpy over the integer semiring"], info=info)
