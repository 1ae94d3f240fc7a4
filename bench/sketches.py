"""Sketch-guided optimization against unguided saturation (docs/sketches.md).

    python -m bench sketches --json PATH [--repeat N] [--min-seconds S] [--only NAME]

Workloads: expressions where saturation at the default limits misses the plan a
sketch names. (A masked 8-chain written as one flat Σ is not one: unguided
saturation plans those as well as any split plan; `python -m bench
chain_survey` shows it on random shapes.) For each: the optimizer's time and
e-nodes unguided (default limits) and guided (the workload's sketches; e-nodes summed over the searches,
a restart's start term counted once, `guided_nodes_with_restarts` counting it
again),
whether the unguided result satisfies the last sketch, and the run time of
both plans' kernels, alternating call by call, as a ratio of medians
(`speedup` = unguided / sketched; each kernel is called `--repeat` times, or
more for a short kernel, until its samples span about `--min-seconds`; `calls`
says how many). Both kernels compile the optimizer's
rewrite whatever the plan cost model says (rewrite_margin = inf) and are
checked against each other. Writes a JSON list, one object per workload, with
`targets_met`: which of the issue's targets the workload meets (the unguided
plan misses the sketch, guided in <= 1 s, <= 10% of the e-nodes counting each
restart's start term again (`node_share_with_restarts`), >= 2x, every
search's extraction exact).
"""
from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

import etchpy as ep
from etchpy.expr.walk import accesses
from etchpy.lazy.optimize import leaf_inputs
from etchpy.lazy.ra import to_expr
from etchpy.optimizer.sketch import satisfies

from .kernels import random_csr, rng_for
from .timing import timed

sk = ep.sketch
ALWAYS = {"rewrite_margin": math.inf}


def _chain(name, sizes, sparse, written, mask_nnz=30_000, density=0.02):
    """The matrices A1..An (n = len(sizes) - 1; those in `sparse` csr, `density`
    dense), the mask M (csr, `mask_nnz` nonzeros) and M ∘ (A1 ··· An) written as
    one flat Σ or left-deep."""
    n = len(sizes) - 1
    ix = ep.indices(" ".join(f"i{k}" for k in range(n + 1)))
    rng = rng_for(name)
    mats, ins, nnz = [], {}, {}
    for k in range(n):
        tname, shape = f"A{k + 1}", (sizes[k], sizes[k + 1])
        if k in sparse:
            ins[tname] = random_csr(rng, *shape, max(1, int(density * shape[0] * shape[1])))
            nnz[tname] = int(ins[tname].nnz)
        else:
            ins[tname] = rng.random(shape)
        mats.append(ep.tensor(tname, 2, format="csr" if k in sparse else "dense"))
    M = ep.tensor("M", 2, format="csr")
    ins["M"] = random_csr(rng, sizes[0], sizes[n], mask_nnz)
    nnz["M"] = int(ins["M"].nnz)
    if written == "flat":
        body = M[ix[0], ix[n]]
        for k in range(n):
            body = body * mats[k][ix[k], ix[k + 1]]
        expr = ep.sum(tuple(ix[1:n]), body)
    else:
        cur = mats[0][ix[0], ix[1]]
        for k in range(1, n):
            cur = ep.sum(ix[k], cur * mats[k][ix[k], ix[k + 1]])
        expr = M[ix[0], ix[n]] * cur
    return expr, ins, {f"i{k}": d for k, d in enumerate(sizes)}, nnz


def chain8_leftdeep():
    """Written left-deep, ((A1·A2)·A3)···A8 then ∘ M; thin only at i4 (8), A2 and A7
    sparse. Unguided (iteration limit) samples M at i7 (300); two sketches: pull
    the Σ of the right half out, then split at i4 with each half multiplied from
    its thin end (each half's order stated: a hole there takes whatever order the
    graph holds when the sketch is first satisfied)."""
    expr, ins, dims, nnz = _chain("sketch-chain8-leftdeep", [2000, 300, 300, 300, 8, 300,
                                                             300, 300, 2000], {1, 6},
                                  "leftdeep")
    pulled = sk.sum("i4 i5 i6 i7", sk.mul("M", "A5", "A6", "A7", "A8"))
    # the left half from its thin end, A1·(A2·(A3·A4)), the right one ((A5·A6)·A7)·A8
    left = sk.sum("i1", sk.mul("A1", sk.sum("i2", sk.mul("A2", sk.sum("i3", sk.mul(
        "A3", "A4"))))))
    right = sk.sum("i7", sk.mul("A8", sk.sum("i6", sk.mul("A7", sk.sum("i5", sk.mul(
        "A5", "A6"))))))
    return dict(subject=expr, expr=expr, ins=ins, opts={"dims": dims, "nnz": nnz},
                sketches=[pulled, sk.sum("i4", sk.mul("M", left, right))])


def lazy_chain_tight():
    """The left-deep workload as a lazy program, M * (A1 @ A2 @ ... @ A8), its guided
    searches under a tight node limit (400 e-nodes a search; unguided saturation
    at the default limits, and at 400 e-nodes as `unguided_tight_*`); its leaves
    are X0 (M), X1..X8."""
    expr, ins, _, _ = _chain("sketch-chain8-leftdeep", [2000, 300, 300, 300, 8, 300, 300,
                                                        300, 2000], {1, 6}, "leftdeep")
    prod = ep.lazy(ins["A1"])
    for k in range(2, 9):
        prod = prod @ ep.lazy(ins[f"A{k}"])
    y = ep.lazy(ins["M"]) * prod
    names: dict = {}
    e, _ = to_expr(y, names)
    sized = ep.optimize(y, limits={"iterations": 0})
    opts = {"dims": sized.dims, "nnz": sized.nnz}
    # M is X0 and Ak is Xk; the translator names the axes: find the thin one (A4's
    # column) and the right half's bound ones
    axes = {a.tensor.name: [ix.name for ix in a.indices] for a in accesses(e)}
    thin, out = axes["X4"][1], axes["X8"][1]
    right = sorted({n for k in range(5, 9) for n in axes[f"X{k}"]} - {out})
    pulled = sk.sum(right, sk.mul("X0", "X5", "X6", "X7", "X8"))
    a5, a6, a7 = (axes[f"X{k}"][1] for k in (5, 6, 7))      # i5, i6, i7 of the chain
    right = sk.sum(a7, sk.mul("X8", sk.sum(a6, sk.mul("X7", sk.sum(a5, sk.mul(
        "X5", "X6"))))))
    a1, a2, a3 = (axes[f"X{k}"][1] for k in (1, 2, 3))      # i1, i2, i3 of the chain
    left = sk.sum(a1, sk.mul("X1", sk.sum(a2, sk.mul("X2", sk.sum(a3, sk.mul("X3", "X4"))))))
    return dict(subject=y, expr=e, ins=leaf_inputs(y, names), opts=opts,
                sketches=[pulled, sk.sum(thin, sk.mul("X0", left, right))],
                guided_limits={"nodes": 400})


def chain10_flat():
    """M ∘ (A1 ··· A10) written as one flat Σ, small (24 per inner index, thin at
    i5: 3; A3 and A8 sparse, 20%; M 2000 nonzeros). Unguided saturation stops
    (no improvement) with most Σ still at the top; one sketch states the plan:
    M sampled at i5, each half multiplied from its thin end."""
    sizes = [400, 24, 24, 24, 24, 3, 24, 24, 24, 24, 400]
    expr, ins, dims, nnz = _chain("sketch-chain10-flat", sizes, {2, 7}, "flat",
                                  mask_nnz=2000, density=0.2)
    left = "A5"
    for k in range(4, 0, -1):                    # Σ_i1 A1·(Σ_i2 A2·(… A4·A5))
        left = sk.sum(f"i{k}", sk.mul(f"A{k}", left))
    right = "A6"
    for k in range(7, 11):                       # Σ_i9 A10·(Σ_i8 A9·(… A7·A6))
        right = sk.sum(f"i{k - 1}", sk.mul(f"A{k}", right))
    return dict(subject=expr, expr=expr, ins=ins, opts={"dims": dims, "nnz": nnz},
                sketches=[sk.sum("i5", sk.mul("M", left, right))])


def mttkrp5(n=10, rank=16, nnz=20_000, seed="sketch-mttkrp5"):
    """5-mode MTTKRP, out[i,r] = Σ_{j,k,l,m} X[i,j,k,l,m]·B[j,r]·C[k,r]·D[l,r]·E[m,r],
    X a csf tensor (n per mode, about `nnz` nonzeros), rank `rank`. Unguided
    saturation sums j, k into one temporary over (i, l, m, r), then l, then m;
    the sketch asks for B·C outside and X·D·E inside: a temporary over
    (i, j, k, r), which runs as a workspace over r per fibre of X
    (Tuning.fused_temporaries)."""
    rng = rng_for(seed)
    keys = np.unique(rng.integers(0, n ** 5, nnz, dtype=np.int64))
    coords = np.stack([(keys // n ** (4 - d)) % n for d in range(5)])
    i, j, k, l, m, r = ep.indices("i j k l m r")
    X = ep.tensor("X", 5, format="csf")
    B, C, D, E = (ep.tensor(c, 2) for c in "BCDE")
    expr = ep.sum((j, k, l, m), X[i, j, k, l, m] * B[j, r] * C[k, r] * D[l, r] * E[m, r])
    ins = {c: rng.random((n, rank)) for c in "BCDE"}
    ins["X"] = ep.Tensor.from_coords(coords, rng.random(len(keys)), (n,) * 5, "csf",
                                     name="X")
    dims = {**{c: n for c in "ijklm"}, "r": rank}
    want = sk.sum("j k", sk.mul("B", "C", sk.sum("l m", sk.mul("X", "D", "E"))))
    return dict(subject=expr, expr=expr, ins=ins, opts={"dims": dims, "nnz": {"X": len(keys)}},
                sketches=[want])


def mttkrp5_large():
    """The same MTTKRP at 20 per mode, 10⁶ nonzeros (9.4·10⁵ distinct), rank 32."""
    return mttkrp5(20, 32, 1_000_000, "sketch-mttkrp5-large")


WORKLOADS = {"chain8_mask_leftdeep": chain8_leftdeep,
             "chain10_mask_flat": chain10_flat,
             "lazy_chain8_mask_nodes400": lazy_chain_tight, "mttkrp5": mttkrp5,
             "mttkrp5_large": mttkrp5_large}


def _calls(first_s: float, repeat: int, min_seconds: float) -> int:
    """How many timed calls a kernel gets: `repeat`, or more when a call is short, so
    that its samples span about `min_seconds` (at most 2000): a sub-millisecond
    kernel's median then rests on hundreds of samples, not a handful."""
    return max(repeat, min(2000, int(min_seconds / max(first_s, 1e-6))))


def measure(name: str, repeat: int, min_seconds: float = 0.5) -> dict:
    w = WORKLOADS[name]()
    expr, ins, opts, sketches = w["expr"], w["ins"], w["opts"], w["sketches"]
    gopts = {**opts, "limits": w["guided_limits"]} if "guided_limits" in w else opts
    t0 = time.perf_counter()
    plain = ep.optimize(w["subject"], **opts)
    unguided_s = time.perf_counter() - t0
    extra = _tight(w, gopts, sketches) if gopts is not opts else {}
    t0 = time.perf_counter()
    try:
        guided = ep.optimize(w["subject"], **gopts, sketches=sketches)
        guided_s = time.perf_counter() - t0
        k_guided = ep.compile(expr, optimizer_options={**gopts, "sketches": sketches},
                              tuning=ALWAYS)
    except ep.SketchError as err:       # a limit hit first (a loaded machine): say so
        return {"workload": name, "error": str(err), "unguided_s": round(unguided_s, 4),
                "unguided_nodes": plain.stats["nodes"]}
    k_plain = ep.compile(expr, optimizer_options=opts, tuning=ALWAYS)
    a, b = k_plain(**ins), k_guided(**ins)
    assert np.allclose(_dense(a), _dense(b), rtol=1e-6), name
    first = max(timed(lambda: k_plain(**ins))[0], timed(lambda: k_guided(**ins))[0])
    tp, tg = [], []
    for _ in range(_calls(first, repeat, min_seconds)):
        tp.append(timed(lambda: k_plain(**ins))[0])
        tg.append(timed(lambda: k_guided(**ins))[0])
    speedup = float(np.median(tp) / np.median(tg))
    found = bool(satisfies(plain.expr, sketches[-1]))
    share = guided.stats["nodes"] / plain.stats["nodes"]
    share_all = guided.stats["nodes with restarts"] / plain.stats["nodes"]
    extraction = [x.extraction for x in guided.searches]
    return {"workload": name, "guided_s": round(guided_s, 4),
            "unguided_s": round(unguided_s, 4),
            "guided_nodes": guided.stats["nodes"], "unguided_nodes": plain.stats["nodes"],
            "guided_nodes_with_restarts": guided.stats["nodes with restarts"],
            "unguided_stop": plain.stats["stop"], "unguided_found": found,
            "speedup": round(speedup, 3), "node_share": round(share, 4),
            "node_share_with_restarts": round(share_all, 4),
            "extraction": extraction,
            "targets_met": {"unguided_misses": not found, "guided_within_1s": guided_s <= 1.0,
                            "nodes_within_10pct": share_all <= 0.10,
                            "speedup_2x": speedup >= 2.0,
                            "exact": all(x.startswith("exact") for x in extraction)},
            "calls": len(tg), "guided_ms": round(1e3 * float(np.median(tg)), 3),
            "unguided_ms": round(1e3 * float(np.median(tp)), 3),
            "cost_guided": guided.cost_after, "cost_unguided": plain.cost_after,
            "guided_expr": str(guided.expr), "unguided_expr": str(plain.expr), **extra}


def _tight(w, gopts, sketches) -> dict:
    """Unguided saturation under the guided searches' limits: its e-nodes, stop, and
    whether it found the sketched plan."""
    plain = ep.optimize(w["subject"], **gopts)
    return {"guided_limits": gopts["limits"], "unguided_tight_nodes": plain.stats["nodes"],
            "unguided_tight_stop": plain.stats["stop"],
            "unguided_tight_found": bool(satisfies(plain.expr, sketches[-1]))}


def _dense(v):
    return v.todense() if hasattr(v, "todense") else np.asarray(v)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench sketches")
    ap.add_argument("--json", required=True, help="where to write the JSON list")
    ap.add_argument("--repeat", type=int, default=7,
                    help="timed calls of each kernel at least (more for short kernels)")
    ap.add_argument("--min-seconds", type=float, default=0.5,
                    help="a short kernel is called until its samples span about this long")
    ap.add_argument("--only", choices=sorted(WORKLOADS))
    args = ap.parse_args(argv)
    rows = []
    for name in [args.only] if args.only else WORKLOADS:
        rows.append(measure(name, args.repeat, args.min_seconds))
        print(json.dumps(rows[-1]))
    with open(args.json, "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1)
    return 0
