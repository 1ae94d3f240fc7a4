"""Input checks fused into a kernel's own reads (proofs_notes/validation.md).

An input whose index arrays were bound without a prior pass over them (a scipy
csr or csc array) is checked by the kernel itself when every read of its last
level is a whole walk of it: a loop that the stream lowering marked with the
level's streams.Walk fact where it built the loop (imp.While.walk: `while (q <
e)`, stepping q by one last, reading the level's crd and values at q only).
No format, role or array name is asked: any format whose last level reads as a
unique segment below a located level gets the checks. Such a loop gets the
checks of that level (`fuse`):

    int64_t q_prev = -1;
    if ((uint64_t)e < (uint64_t)q || (uint64_t)pos[n_parents] < (uint64_t)e)
        { error = 4; e = q; }       /* unless 0 <= q <= e <= nnz: nnz >= 0 is checked before */
    while (q < e && q_prev < crd[q] && crd[q] < dim) { q_prev = crd[q]; <body> }
    if (q < e) error = 4;

so the body runs only for positions inside crd with coordinates inside the
dimension and strictly increasing within the segment (an `order_free` body,
which only ⊕-accumulates into a dense output or scatters into a row workspace
drained in order, needs no order: its condition is `q < e && (uint64_t)crd[q] <
(uint64_t)dim`), and the kernel returns
ERROR_CODE when any segment it opens is malformed (the runtime then checks
that input in full, and canonicalises it or raises an InputError naming it).
A walk inside a parallel loop reports through the loop's flag (imp.ParallelFor.flag:
one slot per block of rows, raised after the loop). A level read any other way (a merge
that may stop early, a gallop, a search) is not fused: `fused_tensors` leaves it out, and
the runtime checks that input in full before the call, as it always did. A coo input's
scatter walk is found by its streams.Scatter note (lower.schedule.coo_checks)."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ... import host_facts, imp, tuning as _tuning
from ...expr.nodes import Access, Lit, Mul
from ...errors import CHECK_FAILED
from ...expr.windows import WindowVar
from ...streams import Walk
from . import (checks_first, coo_checks, merge_checks, merge_steps, met_checks, row_checks,
               row_starts, segment_checks, walk_chains)
from ..program import program_names
from .checked_walks import checked_loop, rows_in_order
from .order_free import drained_lists, order_free
from ...imp import (Assign, Bin, Const, Decl, GatherPick, GatherSum, If, Load, ParallelFor,
                   Prefetch, Seq, Var, While, seq)

ERROR_CODE = CHECK_FAILED     # the kernel's return code when a fused check fails


@dataclass(frozen=True)
class Level:
    """The walked level of one input (a streams.Walk fact): its arrays and C
    sizes, and how the program reads it."""
    tensor: str
    pos: str
    crd: str
    vals: str
    dim: str            # the level's dimension (a C parameter)
    parents: str        # its number of parent positions (a C parameter)
    dense_output: bool = False      # the program's output is dense
    drained: frozenset = frozenset()    # lists only sorted drains read (order_free.drained_lists)
    nan: bool = False   # its walks also check that each value is not NaN
    ahead: bool = False     # its segments are checked ahead of the loop opening them
                            # (lower.schedule.segment_checks), not as each opens
    bad: str | None = None  # the kernel's one count of bad coordinates, tested after
                            # its loops, for its serial clamped walks (checked_walks.clamped_loop)
    lanes: str | None = None    # with `bad`: C's SIMD maximum of its lanes' coordinates,
                                # tested after the program (imp.GatherSum.lanes_max)
    merged: bool = False    # read by union merges (merge_checks): its coordinates too
                            # are checked ahead of each block (segment_checks._scan)
    after: bool = False     # its coordinates are checked after each block of a window's
                            # rows (segment_checks.block_loop): its clamped walks count none
    first: bool = False     # its coordinates tested before each block (lower.schedule.checks_first)
    met: bool = False       # read by intersections (met_checks): their seeks and short
                            # intersections move its q inside its segments
    stepped: bool = False   # with `merged`: checked in a union's steps (merge_steps), only
                            # its segments' bounds ahead of each block (no coordinate scan)


def candidates(prog) -> dict[str, Level]:
    """The level of every input of `prog` that some loop of it walks whole (the
    streams.Walk noted on the loop, imp.While.walk), by tensor name."""
    arrays = {p.name for p in prog.params if p.kind == "in_array"}
    walks = [w for n in imp.statements(prog.body)
             if isinstance(n, While) and isinstance(w := n.walk, Walk) and w.crd in arrays]
    dense, drained = prog.output.mode == "dense", drained_lists(prog.body) if walks else frozenset()
    return {w.tensor: Level(w.tensor, w.pos, w.crd, w.vals, w.dim, w.parents, dense, drained)
            for w in walks}


def fused_tensors(prog, tuning: _tuning.Tuning = _tuning.DEFAULT) -> frozenset[str]:
    """The inputs whose checks the kernel of `prog` makes itself: none when
    `tuning.fused_checks` is off."""
    if not tuning.fused_checks:
        return frozenset()
    body = unnarrowed(prog.body)
    return frozenset(name for name, lv in candidates(prog).items()
                     if _walks(body, lv)) | frozenset(_coo_walks(prog))


def unnarrowed(body):
    """body without the narrowings of its window walks (streams.WindowWalk, noted
    on their loops' Walk): each then walks its whole segment, which it checks as
    it reads it; the narrowing's searches rely on an order nobody checked, and
    the walk's test of each coordinate against the window gives the same ready
    states either way (proofs_notes/windows.md, "A window walk")."""
    for n in imp.statements(body):
        if isinstance(n, While) and isinstance(n.walk, Walk) and n.walk.narrow is not None:
            body = replace_loop(body, n.walk.narrow, seq())
    return body


def _coo_walks(prog) -> dict:
    """{name: (its streams.Scatter, its walk loop, q)} for each input read by
    one scatter walk (lower.schedule.coo_checks)."""
    out = {}
    for name, lv in coo_checks.candidates(prog).items():
        got = coo_checks.walk(prog.body, lv, order_free)
        if got is not None:
            out[name] = (lv, *got)
    return out


def _walks(body, lv: Level) -> bool:
    """Whether every read of lv's crd and values is inside a walk loop of it
    (`_walk_var`); prefetches may point anywhere, and hint reads (imp.Load.hint,
    guarded in bounds by their own tests) steer only prefetches. A walk inside a parallel loop
    counts: the loop then raises the error as a flag (`_flagged`)."""
    ok, found = True, False

    def visit(node, walk: str | None):
        nonlocal ok, found
        if not ok:
            return
        match node:
            case Prefetch() | Load(hint=True) | GatherPick():   # hints: in bounds, steer
                return                                          # no result
            case GatherSum(fallback=loop):      # its reads are its fallback's
                visit(loop, walk)
                return
            case While(cond, loop_body) if (q := _walk_var(node, lv)) is not None:
                found = True
                visit(cond, q)
                visit(loop_body, q)
                return
            case Load(array, index) if array in (lv.crd, lv.vals):
                if walk is None or index != Var(walk):
                    ok = False
                return
        inside = imp.parts(node)          # a loop's note is not a read
        if not isinstance(node, (tuple, list)) and lv.crd in inside:
            ok = False          # a Seek, a short intersection, ... reads crd
            return
        for value in inside:
            visit(value, walk)

    visit(body, None)
    return ok and found


def _flagged(node, err: str):
    """node with every parallel loop whose body sets `err` (a fused check
    inside it) raising it as its flag (imp.ParallelFor.flag): each block of
    rows reports in its own slot, and the error is set after the loop when any
    block's is."""
    if isinstance(node, ParallelFor) and err in imp.scalars_assigned(node.body) | {
            n.error for n in imp.statements(node.body) if isinstance(n, GatherSum)}:
        return replace(node, body=_flagged(node.body, err), flag=err)
    if isinstance(node, (Load, Var, Const, Bin)):
        return node
    return imp.map_parts(node, lambda x: _flagged(x, err), notes=True)


def _walk_var(loop: While, lv: Level) -> str | None:
    """q when `loop` walks lv's level whole (its Walk note), else None."""
    w = loop.walk
    return w.q if isinstance(w, Walk) and w.crd == lv.crd else None


def fuse(prog, tuning: _tuning.Tuning = _tuning.DEFAULT, semiring=None):
    """`prog` with the checks of every fused input in its walk loops: its `fused`
    names them and its `error` is the variable the checks report in; None when
    nothing is fused (the pass is a program variant, Compiled.checked). Where
    `semiring` refuses NaN, a fused input whose every stored value the walks
    read (`reads_every_value`) has its values checked there too (each value
    equal to itself): its `fused_nan` names those inputs. Made from `prog` with
    its rows' starts read from pos again (row_starts.undone), it carries them
    where its rows' walks keep their plain form (Tuning.carry_row_start and
    carry_checked_start: row_starts.carry)."""
    got = _fuse(replace(prog, body=row_starts.undone(prog.body)), tuning, semiring)
    if got is None or not (tuning.carry_row_start and tuning.carry_checked_start):
        return got
    return replace(got, body=row_starts.carry(got.body, row_starts.segment_starts(got),
                                              program_names(got), flat=True))


def _fuse(prog, tuning, semiring):
    """fuse's program from `prog`, its starts read from pos."""
    fused = fused_tensors(prog, tuning)
    levels = [lv for name, lv in sorted(candidates(prog).items()) if name in fused]
    coo = _coo_walks(prog) if fused else {}
    merges, stepped, rest = merge_steps.split(prog, tuning)     # union merges: in their steps,
    met = _met(prog, tuning)                                    # or ahead (merge_checks)
    if not levels and not coo and not merges and not met:       # intersections: ahead, whole
        return None
    merged = [Level(n, w.pos, w.crd, w.vals, w.dim, w.parents, merged=True)
              for n, (w, *_) in sorted(rest.items())] + met
    refuses = (semiring is not None and not semiring.allows_nan
               and np.dtype(semiring.dtype).kind == "f")
    nan = frozenset(lv.tensor for lv in levels if refuses and reads_every_value(prog, lv.tensor))
    err = (names := program_names(prog)).fresh("input_error")
    steps = [Level(n, w.pos, w.crd, w.vals, w.dim, w.parents, merged=True, stepped=True)
             for n, (w, *_) in sorted(stepped.items()) if n not in fused]
    steps = merge_steps.bounds_ahead(prog, steps, tuning)       # their bounds: a block ahead
    body = merge_steps.rewrite(unnarrowed(prog.body), stepped, err, ERROR_CODE, names,
                               frozenset(lv.tensor for lv in steps))
    planned = segment_checks.plan(replace(prog, body=body), levels + merged + steps) \
        if tuning.check_block > 0 else []
    ahead = [a for a in planned if a[2] is None or tuning.check_windows]
    skipped = {lv.tensor for loop, lvs, off in planned if off is not None
               and not tuning.check_windows for lv in lvs}   # some segments opened unchecked
    early = {lv.tensor for loop, lvs, off in ahead for lv in lvs} - skipped
    after = _after(ahead, early, nan, tuning)
    first = checks_first.inputs(ahead, early, nan, merged + steps, tuning)
    k = walk_chains.count(semiring, tuning)
    zero = Const(semiring.zero, "value") if k > 1 else None
    body, longs = _blocks(body, ahead, after, first, err, names, tuning,
                          lambda n: walk_chains.chain(n, k, names, zero))
    body = unpicked(body, longs, names) if k > 1 else body
    bad, once = names.fresh("input_bad"), tuning.check_count_once   # (lanes: their maximum)
    for lv in levels:
        body = _rewrite(body, replace(lv, nan=lv.tensor in nan, ahead=lv.tensor in early,
                                      after=lv.tensor in after, bad=bad if once else None,
                                      lanes=once and tuning.check_lanes_once
                                      and names.fresh(f"{bad}_lanes") or None), err, names)
    for name, (lv, loop, q) in sorted(coo.items()):
        body = replace_loop(body, loop, coo_checks.checked(loop, q, lv,
                                                            Assign(err, Const(ERROR_CODE))))
    body = _flagged(merge_checks.rewrite(body, {n: ws for n, ws in rest.items() if n not in early},
                                         err, ERROR_CODE, names), err)
    if bad in imp.scalars_assigned(body):       # one test after the loops, not one a walk
        body = seq(Decl(bad, "index", Const(0)), body,
                   If(Bin("!=", Var(bad), Const(0)), Assign(err, Const(ERROR_CODE))))
    return replace(prog, body=seq(Decl(err, "index", Const(0)), body), error=err,
                   fused=fused | frozenset(merges) | {m.tensor for m in met}, fused_nan=nan)


def _blocks(body, ahead, after, first, err: str, names, tuning, chain):
    """(body with each loop of `ahead` run a block of parents at a time, its levels'
    segments checked ahead (segment_checks.block_loop), in the loops checks_first.unclamped
    takes their coordinates too; or, where tuning.check_rows holds (or the host's row_checks
    is 1 and the loop's walks are gathered or scattered sums: an SpMV's rows, a csc SpMV's
    columns) and row_checks.takes it, each row testing its own segment as it opens
    (row_checks.row_loop); either way, where checks_first.long_rows holds, the loop's walks
    tested first, check_block rows at a time, made `chain(walks)`; {pos: (that test, Level)})."""
    def blocked(loop, lvs, within, now, off, size=tuning.check_first_block):
        return segment_checks.block_loop(
            within, [replace(lv, after=lv.tensor in after, first=lv.tensor in now)
                     for lv in lvs], err, ERROR_CODE, size if now else tuning.check_block, names,
            tuning.chunks_per_thread * (loop.threads if isinstance(loop, ParallelFor) else 1),
            off, tuning.prefetch and not tuning.met_prefetch)   # else met_prefetch hints

    def unclamp(n, lv):
        return _rewrite(n, replace(lv, ahead=True, first=True), err, names)

    host_rows, longs = host_facts.resolved(tuning).row_checks > 0, {}
    near = (tuning.check_first_near, tuning.check_first_gathers)
    for loop, lvs, off in ahead:
        within, now = checks_first.unclamped(loop, lvs, first, unclamp, *near)
        rows = tuning.check_rows or host_rows and all(checks_first.sums(loop, lv) for lv in lvs)
        if rows and off is None and row_checks.takes(loop, lvs, body, now):
            new = row_checks.row_loop(within, lvs, err, ERROR_CODE, names)
        else:
            new = blocked(loop, lvs, within, now, off)
        if (long := checks_first.long_rows(loop, lvs, first, now, tuning)) is not None:
            tested, them = checks_first.unclamped(loop, lvs, first, unclamp, True)
            new = If(long, chain(blocked(loop, lvs, tested, them, off, tuning.check_block)), new,
                     split=True)     # by the rows' mean, a check_block of rows at a time
            longs.update((lv.pos, (long, lv)) for lv in lvs)
        body = replace_loop(body, loop, new)
    return body, longs


def unpicked(body, longs: dict, names):
    """body with each lanes pick (imp.GatherPick without crd) over a level of
    `longs` ({pos: (test, Level)}) made 0 where the test holds and the rows gather
    from shared lines (ep_near_pick, made only there; the pick renamed, then `pick
    := near ? 0 : it`): they run the chained walks; random rows keep the lanes,
    faster there (a pick only steers)."""
    if isinstance(body, GatherPick) and body.crd is None and body.pos in longs:
        long, lv = longs[body.pos]
        made, near, pick = (names.fresh(n) for n in (body.var, f"{lv.tensor}_near", "near"))
        return seq(Decl(near, "index", Const(0)), If(long, seq(
            GatherPick(pick, lv.pos, lv.parents, lv.crd, lv.dim, 2, near=8), Assign(near, Var(pick))),
            split=True), replace(body, var=made),
            Decl(body.var, "index", imp.Select(Var(near), Const(0), Var(made))))
    return imp.map_parts(body, lambda x: unpicked(x, longs, names))


def _met(prog, tuning) -> list[Level]:
    """The levels of inputs read only by intersections (met_checks.fusable) whose
    every segment a full loop over their parents opens (segment_checks.plan,
    no window's rows): each is checked whole, a block of parents ahead."""
    cands = [Level(n, w.pos, w.crd, w.vals, w.dim, w.parents, merged=True, met=True)
             for n, (w, *_) in sorted(met_checks.fusable(prog, tuning).items())]
    planned = segment_checks.plan(prog, cands) if cands else []
    full = {lv.tensor for _, lvs, off in planned if off is None for lv in lvs}
    full -= {lv.tensor for _, lvs, off in planned if off is not None for lv in lvs}
    return [lv for lv in cands if lv.tensor in full]


def _after(ahead, early, nan, tuning) -> frozenset[str]:
    """The inputs checked ahead (`early`) whose every loop checked so is over a
    window's rows (an offset), when tuning.check_after holds and their values
    need no NaN test: each block of rows then checks their coordinates after it
    runs, in one flat pass, and their clamped walks count none
    (proofs_notes/validation.md, "Coordinates checked after a block")."""
    if not tuning.check_after:
        return frozenset()
    window = {lv.tensor for loop, lvs, off in ahead for lv in lvs if off is not None}
    full = {lv.tensor for loop, lvs, off in ahead for lv in lvs if off is None}
    return frozenset((early & window) - full - nan)


def reads_every_value(prog, name: str) -> bool:
    """Whether a walk of `prog` reads every stored value of input `name`: one
    step into a dense output, no conversion, its body a product of literals and
    accesses in which `name` appears once, with distinct indices, and every other
    access is to a dense tensor. Each index then ranges over its whole dimension
    and no other factor can skip a stored entry of `name`."""
    plan = prog.plan
    if len(plan.steps) != 1 or plan.conversions or prog.output.mode != "dense":
        return False
    factors, mine = _factors(plan.steps[0].body), 0
    for f in factors or ():
        if isinstance(f, Lit):
            continue
        if not isinstance(f, Access) or isinstance(f.tensor, WindowVar):
            return False
        if f.tensor.name == name:
            mine += 1
            if f.tensor.iso or len(set(f.indices)) != len(f.indices):
                return False
        elif not f.tensor.format.is_dense:
            return False
    return factors is not None and mine == 1


def _factors(e):
    """The factors of a product of literals and accesses, else None."""
    if isinstance(e, Mul):
        a, b = _factors(e.a), _factors(e.b)
        return None if a is None or b is None else a + b
    return [e] if isinstance(e, (Access, Lit)) else None


def _rewrite(node, lv: Level, err: str, names: imp.Names):
    """`node` with every walk loop of lv checked (see the module docstring)."""
    match node:
        case While(_, body) if (q := _walk_var(node, lv)) is not None:
            body = _rewrite(body, lv, err, names)
            return seq(_in_order(node.walk, lv, err, names),
                       *checked_loop(q, node.walk.end, body, lv, err, names, lv.dense_output,
                                     node.walk.appends, node.walk.inside))
        case GatherSum(fallback=While(_, body) as loop) if (
                node.crd == lv.crd and (q := _walk_var(loop, lv)) is not None):
            body = _rewrite(body, lv, err, names)
            guard, rest = checked_loop(q, loop.walk.end, body, lv, err, names, lv.dense_output)
            guard = seq(_in_order(loop.walk, lv, err, names), guard)
            if not (lv.dense_output and order_free(body, Load(lv.crd, Var(q)))) or (
                    lv.nan and node.ops == ("+", "*")):
                return seq(guard, rest)     # the loop checks the order or NaN: it alone
            if lv.first:        # its block's pass tested its coordinates: lanes unchecked
                return seq(guard, replace(node, fallback=rest))
            lanes = lv.lanes if lv.bad is not None and lv.ahead and node.ops == ("+", "*") \
                and not node.square else None   # ahead: measured so (ep_gather_clamped masks)
            return seq(guard, replace(node, fallback=rest, dim=lv.dim, error=err, lanes_max=lanes))
        case Seq(stmts):
            return Seq(tuple(_rewrite(s, lv, err, names) for s in stmts))
        case ParallelFor() if lv.bad is not None:      # threads: a count per walk
            return _rewrite(node, replace(lv, bad=None, lanes=None), err, names)
    if isinstance(node, (Load, Var, Const, Bin)):
        return node
    return imp.map_parts(node, lambda x: _rewrite(x, lv, err, names), notes=True)


def _in_order(walk: Walk, lv: Level, err: str, names: imp.Names):
    """A flat walk's test of its rows' order (checked_walks.rows_in_order); else nothing."""
    return seq() if walk.rows is None else rows_in_order(walk, lv, err, names)


def replace_loop(node, loop: While, by):
    """node with the loop `loop` (one occurrence) replaced by the statement `by`."""
    if node == loop:
        return by
    if isinstance(node, (Load, Var, Const, Bin)):
        return node
    return imp.map_parts(node, lambda x: replace_loop(x, loop, by), notes=True)
