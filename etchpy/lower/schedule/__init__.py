"""Schedule passes, one module each, each switched by its Tuning field. With
every pass off (tuning.NOOPT) the driver emits plain loops.

The passes the driver's Emitter runs are values, `PASSES`, in the order they
are tried at each of their points:

    group  the plan's steps, one group each, before any is lowered:
           run(lw, groups, claims) -> the `Claim`s it adds to those of the
           passes before it (lw: the driver's frozen Lowering; a claim's
           groups run together, lw.lower_step lowers one step alone)
    call   a step's lowered loop nest: run(lw, step, target, loops, filled) ->
           (statements, a note for its description) or None: the step as one
           library call, its loops kept for when none is bound; with `filled`
           the call sets every cell of the target (its contents before unread)
    step   a step's whole loop nest: run(em, s) -> statements or None
    level  the loops of one stream level inside a nest: run(em, s, ctx)
    loop   the form of one loop whose parts are worked out (`LoopParts`):
           run(em, s, parts) -> the loop's statements or None
    program  the whole lowered program: run(program, semiring, tuning) ->
           the program rewritten (`finish` runs them in order)

At the group and program points every pass whose switch is on runs, in
order (at the group point each sees the claims made before it); at the others the first pass whose switch is on and
whose `run` gives statements wins; where none does, the driver emits the plain
loop. A new pass is a module here, a `Pass` in `PASSES` and a Tuning switch.
The program point's passes (guarded fibres' prefetch, flat sums' tests as a
mask, a scatter's runs in a register, gathered sums, the size switch, gathered values' prefetch, far rows' values, threads only for work that
pays, dense stores' last block overlapped, rows' starts carried, a dense Σ over a leading axis a few rows a pass, values a loop does not change
computed before it) rewrite the whole program
once it is lowered (lower.driver.lower_plan); the checks fused into a kernel's reads (fused_checks)
make a variant of the whole program, which the pipeline declares
(pipeline.Compiled.checked) and the runtime runs where an input was bound
without its full check.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ... import imp


@dataclass(frozen=True)
class LoopParts:
    """One loop as the driver built it: `init` (with its room and prefetches),
    `step(v, next, on_ready)` one plain `while` over a stream v, `on_ready` the
    code of a ready state, `record(v)` that code for a phase v of the stream,
    `small`: on_ready is within tuning.unswitch_limit statements, and `fetch`
    the prefetches run at each step of the loop."""

    init: imp.Stmt
    step: Callable
    on_ready: imp.Stmt
    record: Callable
    small: bool
    fetch: imp.Stmt


@dataclass(frozen=True)
class Claim:
    """Groups of steps a group pass lowers together: `first`, the group at whose
    place they run; `covers`, every group they run (first among them);
    `into_out`, whether they add into the output; `lower()`, their (statements,
    description, filled), or None, and the driver then lowers each covered group
    on its own."""

    first: int
    covers: frozenset
    into_out: bool
    lower: Callable


@dataclass(frozen=True)
class Pass:
    """A schedule pass: its name, the Tuning switch that turns it off, its point
    (step, level or loop) and its `run` (see the module docstring)."""

    name: str
    switch: str
    at: str
    run: Callable


from . import (band_rows, blas, blocks, constant_sums, counted_sums, entry_chains, far_rows, mesh_runs, fixed_coordinates, flat_mask, flat_walks, fuse_temps, fused_rows, gather_sums,  # noqa: E402
               guard_blocks, guard_prefetch, invariants, khatri_rao, met_prefetch, overlap_tail, phases, pieces,
               prefetch, row_blocks, row_starts, row_streams, run_lanes, run_sums, saturated_sums,
               scatter_runs,
               size_switch, stacked_rows, thread_work, threads, unswitch, value_prefetch, window_blocks,
               window_walks)  # they need no name above

PASSES = (
    Pass("Khatri-Rao pairs", "khatri_rao", "group", khatri_rao.claim),
    Pass("fused temporaries", "fused_temporaries", "group", fuse_temps.claim),
    Pass("fused rows", "fused_rows", "group", fused_rows.claim),
    Pass("BLAS steps", "blas", "call", blas.run),
    Pass("threads", "threads", "step", threads.on_threads),
    Pass("window blocks", "window_walk", "step", window_blocks.run),   # and window_blocks > 0
    Pass("row blocks", "row_blocks", "step", row_blocks.run),
    Pass("band rows", "band_rows", "step", band_rows.run),
    Pass("row streams", "row_streams", "step", row_streams.run),
    Pass("run lanes", "runs", "step", run_lanes.run),              # and run_lanes >= 2
    Pass("flat walks", "flat_walks", "level", flat_walks.run),
    Pass("register blocks", "register_blocks", "level", blocks.run),
    Pass("fixed coordinates", "fixed_coordinates", "loop", fixed_coordinates.run),
    Pass("window walks", "window_walk", "loop", window_walks.run),
    Pass("phases", "phases", "loop", phases.run),
    Pass("unswitching", "unswitch", "loop", unswitch.run),
    Pass("constant sums", "constant_sums", "loop", constant_sums.run),
    Pass("entry chains", "entry_chains", "loop", entry_chains.run),
    Pass("run sums", "runs", "loop", run_sums.run),
    Pass("pieces", "pieces", "loop", pieces.run),
    Pass("saturated sums", "saturated_sums", "loop", saturated_sums.run),
    Pass("counted sums in lanes", "counted_lanes", "loop", counted_sums.run),
    Pass("prefetched runs", "prefetch", "loop", prefetch.run_loop),
    Pass("guarded fibres prefetched", "prefetch", "program",
         lambda prog, semiring, tuning: guard_prefetch.run(prog, tuning)),
    Pass("entries listed in blocks", "guard_blocks", "program",
         lambda prog, semiring, tuning: guard_blocks.run(prog, tuning)),
    Pass("flat sums' tests as a mask", "guard_blocks", "program", flat_mask.run),  # flat_mask > 0
    Pass("a scatter's runs in a register", "scatter_runs", "program", scatter_runs.run),
    Pass("gathered sums", "gather_sums", "program", gather_sums.run),
    Pass("size switch", "size_switch", "program",
         lambda prog, semiring, tuning: size_switch.run(prog, tuning)),
    Pass("gathered values prefetched", "prefetch", "program", value_prefetch.run),
    Pass("far rows' values", "prefetch", "program", far_rows.run),
    Pass("a mesh's rows unprefetched", "prefetch", "program", mesh_runs.run),   # mesh_runs 1
    Pass("intersections' rows prefetched", "prefetch", "program", met_prefetch.run),
    Pass("threads for work that pays", "threads", "program",
         lambda prog, semiring, tuning: thread_work.run(prog, tuning)),
    Pass("dense stores' last block overlapped", "overlap_tail", "program", overlap_tail.run),
    Pass("rows' starts carried", "carry_row_start", "program", row_starts.run),
    Pass("stacked rows", "stacked_rows", "program", stacked_rows.run),
    Pass("values a loop does not change before it", "hoist_invariants", "program", invariants.run),
)


def at(point: str, tuning) -> tuple:
    """The passes of `point` whose switch `tuning` has on, in their order."""
    on = vars(tuning)
    return tuple(p for p in PASSES if p.at == point and on[p.switch])


def finish(program, semiring, tuning):
    """`program` rewritten by the program point's passes whose switch `tuning` has
    on, in their order."""
    for p in at("program", tuning):
        program = p.run(program, semiring, tuning)
    return program
