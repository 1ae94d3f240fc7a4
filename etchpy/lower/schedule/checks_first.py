"""Coordinates checked before each block of a full loop's parents
(Tuning.check_first, check_first_block; proofs_notes/validation.md,
"Coordinates checked before a block"): which fused inputs qualify, in which
loops (the far copies of their scalar walks), and the flat pass a block runs
first (segment_checks._scan calls `range_scan`). fused_checks.fuse applies it.
"""
from __future__ import annotations

from ... import host_facts, imp
from ...imp import (Accum, Assign, Bin, Const, Decl, GatherSum, Load, Not, Opaque, ParallelFor, Prefetch,
                    Ring, Var, While, lt, seq)


def inputs(ahead, early, nan, merged, tuning) -> frozenset[str]:
    """The inputs checked ahead whose every loop checked so is a full loop over
    their parents (no window's rows), read by no merge, their values needing no
    NaN test, when tuning.check_first holds: each block's pass of such a loop
    that is a far copy of its walks (`far_walks`) also tests the coordinates its
    segments hold, and its walks read them unclamped
    (proofs_notes/validation.md, "Coordinates checked before a block")."""
    if not tuning.check_first:
        return frozenset()
    window = {lv.tensor for loop, lvs, off in ahead for lv in lvs if off is not None}
    full = {lv.tensor for loop, lvs, off in ahead for lv in lvs if off is None}
    return frozenset((early & full) - window - nan - {lv.tensor for lv in merged})


def unclamped(loop, lvs, first, rewrite, near: bool = False, most: int = 0):
    """(loop with the walks of each level of `lvs` named in `first` that it
    walks as a serial far copy (`far_walks`), or that gather `most` or more arrays
    at its coordinates (`gathers`; Tuning.check_first_gathers, 0: none), or in any
    serial loop where `near` (Tuning.check_first_near, off by default: its near
    rows' scalar walks and its SIMD lanes too; loops split across threads keep
    their clamp: not measured) made `rewrite(loop, lv)`, their walks reading
    coordinates unclamped (lanes: an unchecked imp.GatherSum); the names of those
    levels, whose coordinates the loop's blocks must then test first)."""
    now = {lv.tensor for lv in lvs if lv.tensor in first and (
        near or far_walks(loop, lv) or 0 < most <= gathers(loop, lv))
        and not isinstance(loop, ParallelFor)}
    for lv in lvs:
        if lv.tensor in now:
            loop = rewrite(loop, lv)
    return loop, now


def gathers(loop, lv) -> int:
    """How many arrays `loop` reads at lv's coordinates (dense[crd[q]]; A·(x + y):
    two), each select testing lv's values counted as one more ([A > t]·x: two). A
    near row's walk of two or more through its clamped coordinate costs more than
    the pass testing its block's coordinates first; one gather (an SpMV's) less
    (docs/performance.md, "Walks gathering two arrays checked first")."""
    terms = list(imp.subterms(loop))
    return len({x.array for x in terms
                if isinstance(x, Load) and isinstance(x.index, Load) and x.index.array == lv.crd}
               ) + sum(isinstance(x, imp.Select) and any(
                   isinstance(y, Load) and y.array == lv.vals for y in imp.subterms(x.cond))
                       for x in terms)


def far_walks(loop, lv) -> bool:
    """Whether `loop` is a far copy of lv's scalar walks (value_prefetch: it
    prefetches another array's values, the ones its walks gather, the call's
    far pick true) and sums none of its segments in SIMD lanes (imp.GatherSum):
    there the clamp costs more than a pass testing a small block's coordinates
    first; near rows and lanes keep the clamp (docs/performance.md, session 52)."""
    stmts = list(imp.statements(loop))
    return (not any(isinstance(s, GatherSum) and s.crd == lv.crd for s in stmts)
            and any(isinstance(s, Prefetch) and s.array not in (lv.pos, lv.crd, lv.vals)
                    for s in stmts))


def range_scan(c, ev, lv, bad: str, names, base: str):
    """The coordinates of the block's segments (pos[c] .. pos[ev], pos already
    passed) each inside [0, dim): one flat pass with no branch taking their
    greatest as unsigned numbers at the arrays' own width (imp `umax`: a negative
    coordinate is greater than any in [0, dim); one instruction a lane where it
    vectorises), then one test that it is below dim; before the block runs
    (fused_checks.Level.first)."""
    k, last, most = (names.fresh(f"{base}_{part}") for part in ("fk", "flast", "fmax"))
    kv, at = Var(k), Load(lv.crd, Var(k))
    return seq(
        Decl(k, "index", Load(lv.pos, c)), Decl(last, "index", Load(lv.pos, ev)),
        Decl(most, "coord", Const(0)),
        While(lt(kv, Var(last)), seq(Assign(most, Bin("umax", Var(most), at)),
                                     Assign(k, Bin("+", kv, Const(1))))),
        Assign(bad, Bin("|", Var(bad), Not(Bin("<u", Var(most), Var(lv.dim))))))


def long_rows(loop, lvs, first, now, tuning):
    """The Imp condition on which the call tests the serial near rows' scalar
    walks of a level of `lvs` (`loop` a full loop over its parents, no SIMD
    lanes, not a far copy: `now` lacks it) before each block instead of
    clamping them, where they are gathered sums (gather_sums.gathered: an
    SpMV's rows; a csc input's scattered columns were not measured): its rows'
    mean length (entries over rows, pos[parents] / parents, exact) at least
    Tuning.check_first_from (the host's at -1; 0: never); None where nothing qualifies, where check_first_near already
    tests every loop first, for a loop split across threads, or for a copy
    whose rows prefetch their own arrays where only rows of a mean below
    run_mean_below <= check_first_from reach it (prefetch.runs_wanted: the
    test could not hold there). Either arm is sound alone
    (proofs_notes/validation.md, "Near rows checked first by their mean
    length"): the mean only picks one."""
    host = host_facts.resolved(tuning)
    least = host.check_first_from
    if least <= 0 or tuning.check_first_near or isinstance(loop, ParallelFor):
        return None
    stmts = list(imp.statements(loop))
    short = 0 < host.run_mean_below <= least
    for lv in lvs:
        if lv.tensor in first and lv.tensor not in now and scalar_sums(stmts, lv, short):
            parents = Var(lv.parents)
            return Bin("<=", Bin("*", Const(least), parents), Load(lv.pos, parents))
    return None


def scalar_sums(stmts: list, lv, short: bool) -> bool:
    """Some walk among `stmts` (a loop's statements) is a gathered sum of lv's
    rows, none sums them in SIMD lanes, and (`short`: run_mean_below <=
    check_first_from) none prefetches its coordinates: the loops long_rows (and
    long_chains, for the build without checks) give the long rows' arm."""
    return any(isinstance(s, While) and gathered(s, lv.crd, lv.vals) for s in stmts) and not any(
        isinstance(s, GatherSum) and s.crd == lv.crd
        or short and isinstance(s, Prefetch) and s.array == lv.crd for s in stmts)


def sums(loop, lv) -> bool:
    """Whether some walk in `loop` is a gathered sum of lv's segment (`gathered`:
    an SpMV's rows) or a scattered one (`scattered`: a csc SpMV's columns), the
    walks Tuning.row_checks was measured on."""
    return any(isinstance(s, While) and (gathered(s, lv.crd, lv.vals) or scattered(s, lv.crd, lv.vals))
               for s in imp.statements(loop))


def scattered(loop: While, crd: str, vals: str):
    """(q, e, out) when `loop` is `while (q < e) { i := crd[q]; out[i] ⊕= v; q :=
    q + 1 }` with v reading vals[q] and `out` another array (prefetches and
    opaque marks around it), else None: a column of a csc matrix times a value,
    added into a dense output."""
    if (walk := _steps(loop, 2)) is None:
        return None
    q, e, stmts = walk
    match stmts[0], stmts[1]:
        case Decl(i, _, Load(c, Var(at))), Accum(out, Var(j), value) if (
                c == crd and at == q and j == i and out not in (crd, vals)
                and Load(vals, Var(q)) in imp.subterms(value)):
            return q, e, out
    return None


def _steps(loop: While, n: int):
    """(q, e, its n statements) when `loop` is `while (q < e) { n statements; q :=
    q + 1 }` (prefetches and opaque marks aside), else None."""
    match loop.cond:
        case Bin("<", Var(q), Var(e)):
            pass
        case _:
            return None
    stmts = [s for s in imp.seq_parts(loop.body) if not isinstance(s, (Opaque, Prefetch))]
    return (q, e, stmts[:n]) if len(stmts) == n + 1 and stmts[n] == imp.incr(q) else None


def gathered(loop: While, crd: str, vals: str):
    """(acc, q, e, dense) when `loop` is `while (q < e) { acc := acc + vals[q] *
    dense[crd[q]]; q := q + 1 }` (either factor first; prefetches and opaque
    marks around it), else None (gather_sums' walk; here for long_rows, since
    gather_sums imports fused_checks, which imports this module)."""
    if (walk := _steps(loop, 1)) is None:
        return None
    q, e, stmts = walk
    match stmts[0]:
        case Assign(acc, Ring("add", Var(a), Ring("mul", x, y))) if a == acc and acc != q:
            pass
        case _:
            return None
    at = Var(q)
    for value, gather in ((x, y), (y, x)):
        match value, gather:
            case Load(v, i), Load(dense, Load(c, j)) if (
                    v == vals and c == crd and i == at and j == at and dense not in (vals, crd)):
                return acc, q, e, dense
    return None


def squared(loop: While, crd: str, vals: str):
    """(acc, q, e, None) when `loop` is `while (q < e) { acc := acc + vals[q] *
    vals[q]; q := q + 1 }` (a product of an access with itself: streams.from_expr),
    else None: gather_sums' lanes with each value squared (GatherSum.square)."""
    if (walk := _steps(loop, 1)) is None:
        return None
    q, e, stmts = walk
    match stmts[0]:
        case Assign(acc, Ring("add", Var(a), Ring("mul", Load(v, Var(at)), Load(w, Var(bt))))) if (
                a == acc and acc != q and v == w == vals and at == bt == q and vals != crd):
            return acc, q, e, None
    return None


def summed(loop: While, crd: str, vals: str):
    """(acc, q, e, None) when `loop` is `while (q < e) { acc := acc ⊕ vals[q]; q :=
    q + 1 }` (prefetches and opaque marks around it; its checks, when fused,
    read crd), else None: a plain sum of a segment's values (row sums, a sum of
    all entries), gather_sums' lanes with no gather."""
    if (walk := _steps(loop, 1)) is None:
        return None
    q, e, stmts = walk
    match stmts[0]:
        case Assign(acc, Ring("add", Var(a), Load(v, Var(at)))) if (
                a == acc and acc != q and v == vals and at == q and vals != crd):
            return acc, q, e, None
    return None
