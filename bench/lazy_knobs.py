"""The lazy programs with nothing to fuse, main's plan against today's, in one process.

    python -m bench.lazy_knobs [--rounds N] [--n N ...]
                               [--memo | --blas | --operands | --nodes | --blocks | --tall
                                | --l2]
                               [--new]

For each of bench.lazy's programs with nothing to fuse (sparse X n×n at 1%,
and dense X n/5 × n/5), ranks 10 and 20: the peer (numpy/scipy as written),
*before* (`lazy_row_block_bytes=0, lazy_matvec_library_work=0.8`: no row
blocks, a sparse matvec priced as any library product, as on main before
2026-11-30) and *after* (the defaults, passed as a Tuning too so that both
etchpy sides hash one), alternating call by call (bench.timing), medians.
Prints the speedup over the peer before -> after. With --memo, *before* is the
C operators without their memo (Tuning.lazy_c_memo off: session 39's) and
*after* with it, both under tuning=None (its C switch set before each call).
With --blas, *before* is a replay's dense products by numpy's matmul and
*after* by the binder's BLAS call (Tuning.lazy_c_blas), under tuning=None: the
BLAS unbound before each *before* call (its product then returns None and
numpy's matmul runs: a C call more than with the switch off) and bound again
before each *after* call. With --operands, *before* is a kernel's dense
contraction over element-wise work in its own loops (Tuning.blas_operands
off) and *after* as a temporary and a GEMM (on), both passed as a Tuning (each
compute then pays for its tuning argument: bench.lazy's rows have none).
With --nodes, *before* is the C operators without their node memo and *after*
with it (Tuning.lazy_node_bytes), under tuning=None: the memo switched off
before each *before* call, keeping what it holds (the binder's
`lazy_node_memo(-1)`), and on again before each *after* call.
With --new, every side (the peer too) is given a new second array each call
(w, or V: `w + 0.0` made inside the timed call, the last one dropped, as
`w = w - lr * g` does); alone it compares main's plan and today's as without
it; with --nodes, *before* is the node memo without and *after* with its giving
a dropped array's leaf to the new one (the binder's `lazy_rebind`, session 44's
memo against today's), and with --blas *before* is also without it.
With --blocks, *before* is session 45's row blocks (`lazy_row_block_bytes=1 MiB,
lazy_row_block_min=0`: any X of two blocks cut) and *after* today's (2 MiB
blocks, only an X of at least 16 MiB), both passed as a Tuning.
With --tall, *before* is a replay's thin dense products by BLAS as written
(`lazy_blas_tall=0`) and *after* with the long extent as BLAS's M over an
operand of at least 1 MiB (the default), both passed as a Tuning.
With --l2, *before* is a dense X cut into row blocks by lazy_row_block_min only
(`lazy_row_block_l2=0`) and *after* also when X is larger than a host level-2
cache of at least 1 MiB, by its halves (`lazy_row_block_l2=1 MiB`: the default
but on AMD Zen 3/4, etchpy.host_facts), both passed as a Tuning.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse

import numpy as np

import etchpy as ep
from bench import lazy as programs
from bench.timing import alternating_medians

BEFORE = dict(lazy_row_block_bytes=0, lazy_matvec_library_work=0.8)
AFTER = dict(lazy_row_block_bytes=2 << 20, lazy_row_block_min=16 << 20,
             lazy_matvec_library_work=1.0)
BLOCKS = (dict(lazy_row_block_bytes=1 << 20, lazy_row_block_min=0),
          dict(lazy_row_block_bytes=2 << 20, lazy_row_block_min=16 << 20))


def _switch(what: str, new: bool = False):
    """fn(on) setting the binder's C switch of `what` ("memo" or "blas"); with
    new, the node memo's rebinding (lazy_rebind) too."""
    from etchpy.lazy import c_nodes
    from etchpy.runtime import binder, blas
    mod = binder.module()
    if new and what == "nodes":         # the node memo on, its rebinding off -> on
        return mod.lazy_rebind
    if new:
        inner = _switch(what)
        return lambda on: (mod.lazy_rebind(on), inner(on))
    if what == "nodes":
        on_bytes = c_nodes.DEFAULT[2]
        return lambda on: mod.lazy_node_memo(on_bytes if on else -1)
    if what == "memo":          # the C switch c_nodes.use sets (a C call, not the lock)
        return mod.lazy_memo
    c_nodes.product()           # bound once, then unbound or bound again per call
    pointers = tuple(int(p) for p in blas.gemm_pointers())
    return lambda on: mod.lazy_blas(*(pointers if on else (0,) * 5))


def _fresh(args, new: bool):
    """fn() giving the arguments: args, or with new a new second array each call."""
    if not new:
        return lambda: args
    return lambda: [args[0], args[1] + 0.0, *args[2:]]


def _sides(prog, args, memo: str | None, new: bool = False):
    """before and after: main's plan and today's (tunings), or with memo ("memo"
    or "blas"), the C switch off and on (tuning=None); new: a new w each call."""
    fresh = _fresh(args, new)
    if memo in ("operands", "blocks", "tall", "l2"):
        before, after = {"operands": (ep.Tuning(blas_operands=False), ep.Tuning()),
                         "blocks": (ep.Tuning(**BLOCKS[0]), ep.Tuning(**BLOCKS[1])),
                         "tall": (ep.Tuning(lazy_blas_tall=0), ep.Tuning()),
                         "l2": (ep.Tuning(lazy_row_block_l2=0),
                                ep.Tuning(lazy_row_block_l2=1 << 20))}[memo]
        return tuple((lambda t=t: ep.compute(*prog(ep, *(ep.lazy(a) for a in fresh())), tuning=t))
                     for t in (before, after))
    if memo:
        switch = _switch(memo, new and memo in ("nodes", "blas"))

        def memo_side(on):
            def call():
                switch(on)
                return ep.compute(*prog(ep, *(ep.lazy(a) for a in fresh())))
            return call
        return memo_side(False), memo_side(True)

    def side(knobs):
        tuning = ep.Tuning(**knobs)
        return lambda: ep.compute(*prog(ep, *(ep.lazy(a) for a in fresh())), tuning=tuning)
    return side(BEFORE), side(AFTER)


def rows(n: int, rank: int, rounds: int, memo: str | None = None, new: bool = False):
    """(label, peer, before, after) medians for the unfused programs at n."""
    for kind, arrays in (("sparse X", programs.data(n, rank)),
                         ("dense X", programs.dense_data(n, rank))):
        for name, prog in programs.PROGRAMS:
            if name not in programs.UNFUSED:
                continue
            args = programs.arguments(prog, arrays)

            def peer(prog=prog, fresh=_fresh(args, new)):
                return prog(np, *fresh())

            before, after = _sides(prog, args, memo, new)
            assert programs.same((after(),), peer()) and programs.same((before(),), peer())
            yield (f"n={n} rank={rank} {kind} {name}",
                   *alternating_medians([peer, before, after], rounds))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.lazy_knobs", description=__doc__)
    ap.add_argument("--rounds", type=int, default=31)
    ap.add_argument("--n", type=int, nargs="+", default=[5000, 500])
    ap.add_argument("--memo", action="store_true", help="the C operators' memo off -> on")
    ap.add_argument("--blas", action="store_true", help="replayed products by BLAS off -> on")
    ap.add_argument("--nodes", action="store_true", help="the C operators' node memo off -> on")
    ap.add_argument("--operands", action="store_true",
                    help="element-wise operands of a kernel's GEMM made temporaries off -> on")
    ap.add_argument("--blocks", action="store_true",
                    help="a dense X's row blocks: session 45's (any X) -> today's")
    ap.add_argument("--tall", action="store_true",
                    help="a replay's thin dense products with the long extent as BLAS's M "
                         "off -> on")
    ap.add_argument("--l2", action="store_true",
                    help="a dense X larger than the host's L2 by row blocks off -> on")
    ap.add_argument("--new", action="store_true",
                    help="a new w (or V) each call, every side; with --nodes or --blas, "
                         "a dropped array's leaf given to the new one off -> on")
    args = ap.parse_args(argv)
    switch = ("memo" if args.memo else "blas" if args.blas else "nodes" if args.nodes else
              "operands" if args.operands else "blocks" if args.blocks else
              "tall" if args.tall else "l2" if args.l2 else None)
    for n in args.n:
        for rank in (10, 20):
            for label, tp, tb, ta in rows(n, rank, args.rounds, switch, args.new):
                print(f"{label:<48} peer {tp * 1e6:9.1f} µs  before {tb * 1e6:9.1f}  "
                      f"after {ta * 1e6:9.1f}  speedup {tp / tb:.2f} -> {tp / ta:.2f}",
                      flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
