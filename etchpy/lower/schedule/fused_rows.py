"""Fused rows, switched by tuning.fused_rows: the steps of a dense output that
each write every cell once share one loop nest.

`c + Σ_j A[j,i]·w[j]` is two steps, `out[i] ⊕= c` and `out[i] ⊕= Σ_j …`.
Lowered one by one they fill out with zero, add c into every cell, then add
each column's sum: three passes over out, two of them reading it. When every
step's free levels come first, each a full range (streams.Full, ready
throughout: coordinates 0..n-1 once each, in order), and everything below
them is contracted, the steps' streams advance in lockstep: their k-th states
sit at the same coordinate. One loop then runs all the inits, walks the first
step's levels, and at each cell adds every step's value into one register,
which is stored once; every stream's `next` runs after the body. The output is
neither filled nor read (proofs_notes/lowering.md, "Fused rows").
"""
from __future__ import annotations

from ... import imp
from ...imp import Alloc, Assign, Const, Decl, Var, While, seq
from ... import streams
from ...streams import is_stream
from ...streams.window import Inside
from ..target import Context
from . import Claim
from .blas import gemm_step
from .kept_rows import with_kept_rows
from .bounds import state_decls
from .threads import plain_counted, threads_on


def writes_every_cell_once(s, n_axes: int, runs: bool = False) -> bool:
    """Do the loops write each output cell exactly once? True when the free levels
    come first, each a range visiting every coordinate once (ready throughout), and
    everything below them is contracted into one accumulator (or is the leaf).
    `runs`: a level whose states are its fibre's coordinates once each, in order
    (streams.Covers: a dense run list, or a product or sum of one) counts as
    such a range too, though it does not advance as a counter does (so fused
    rows, which walk steps in lockstep, leave it out; proofs_notes/runs.md,
    "A covering run stream writes every cell")."""
    free, s = full_levels(s, runs)
    return (free == n_axes and not (streams.is_stream(s) and not s.contracted)
            and all(lv.contracted for lv in streams.levels_of(s)))


def full_levels(s, runs: bool = False) -> tuple:
    """(how many of a stream's outer levels are free ranges visiting every
    coordinate once, ready throughout (with `runs`, a covering run stream counts),
    the stream below them)."""
    free = 0
    while streams.is_stream(s) and not s.contracted and s.ready == imp.TRUE and (
            streams.Full in s.facts or (runs and streams.Covers in s.facts)):
        free, s = free + 1, s.value
    return free, s


def visits_each(s, n: int) -> bool:
    """Do a stream's first n levels visit every point of their box, once each?"""
    return full_levels(s)[0] >= n


def writes_each_cell_at_most_once(s, n_axes: int) -> bool:
    """Do the loops write each output cell at most once? True when the free levels
    come first (each ready at an index once at most: the stream contract, unless
    read one entry at a time, streams.Repeats) and everything below them is
    contracted into one accumulator (or is the leaf)."""
    free = 0
    while streams.is_stream(s) and not s.contracted:
        if streams.Repeats in s.facts:
            return False
        free, s = free + 1, s.value
    return free == n_axes and all(lv.contracted for lv in streams.levels_of(s))


def written_box(s, n_axes: int):
    """The box the loops store each cell of once, when it is not every cell: per
    free level's index (they come first, everything below is contracted) its
    counted range, (lo, hi) of an Inside level (a window's, or windows' intersection:
    every t in [lo, hi) ready once, proofs_notes/windows.md) or (0, its size)
    of a full range, at least one of them Inside; None otherwise. Cells outside
    the box are never written; `lo` and `hi` name no state of the loops."""
    box, state, windowed = [], set(), False
    while streams.is_stream(s) and not s.contracted:
        inside = s.facts.get(Inside)
        if s.ready != imp.TRUE:
            return None
        if inside is not None:
            box.append((s.var, inside.lo, inside.hi))
            windowed = True
        elif streams.Full in s.facts:
            box.append((s.var, imp.ZERO, streams.dim_var(s.var)))
        else:
            return None
        state |= {name for name, _ in s.state}
        s = s.value
    if not windowed or len(box) != n_axes or not all(
            lv.contracted for lv in streams.levels_of(s)):
        return None
    used = set().union(*(imp.names_used(e) for _, lo, hi in box for e in (lo, hi)))
    return None if used & state else {v: (lo, hi) for v, lo, hi in box}


def claim(lw, groups, claims) -> list:
    """The group pass (schedule.PASSES): the steps into a dense output, when they
    are consecutive groups of one step each, none is a BLAS call or taken by an
    earlier claim, no earlier claim adds into the output, and `fusable` holds
    of their streams, as one Claim of one nest that stores every cell once. Their
    streams are lowered here, before any group is."""
    plan, target = lw.plan, lw.target
    outs = [n for n, g in enumerate(groups) if any(st.target == "out" for st in g)]
    taken = {n for c in claims for n in c.covers}
    if (any(c.into_out for c in claims) or target.dense_axes is None or len(outs) < 2
            or outs != list(range(outs[0], outs[0] + len(outs))) or taken & set(outs)):
        return []
    steps = [groups[n][0] for n in outs]
    if any(gemm_step(st, plan, lw.sr, lw.bindings, target, lw.tuning, imp.SKIP, False)
           is not None for st in steps):
        return []                           # a step that is a BLAS call keeps it
    lows, ss = zip(*[lw.stream(st) for st in steps])
    em = lw.emitter(markers=any(low.scratch for low in lows))
    if not fusable(em, ss, len(plan.out)):
        return []
    loops = emit_fused(em, list(ss), Context(fresh=True))
    used = imp.names_used(loops)
    stmts = [Alloc(arr, typ, size, fill) for low in lows
             for arr, typ, size, fill in low.scratch if arr in used]
    stmts += [imp.Comment(f"out[{','.join(plan.out)}] ⊕= "
                          + (f"Σ_{{{','.join(st.bound)}}} " if st.bound else "")
                          + f"{st.body}   order ({', '.join(st.order)})") for st in steps]
    text = "out: " + " + ".join("; ".join(streams.describe(s)) for s in ss)
    done = (stmts + with_kept_rows(lows, loops), text + " (in one nest)", True)
    return [Claim(outs[0], frozenset(outs), True, lambda: done)]

def fusable(em, ss, n_axes: int) -> bool:
    """May the streams `ss` of several steps into em's dense output share one
    nest? Only when each writes every cell once over the same free indices in
    the same order; not on threads (each step's rows are split on their own there)."""
    t = em.target
    return (em.tuning.fused_rows and len(ss) > 1 and not threads_on(em)
            and t.dense_axes is not None and not t.keeps_flags
            and all(writes_every_cell_once(s, n_axes) for s in ss)
            and len({_free_vars(s) for s in ss}) == 1)


def _free_vars(s) -> tuple:
    """The indices of the free levels of `s`, outermost first: streams walked in
    lockstep must visit the output's axes in the same order."""
    out = []
    while streams.is_stream(s) and not s.contracted:
        out.append(s.var)
        s = s.value
    return tuple(out)


def emit_fused(em, ss, ctx) -> imp.Stmt:
    """One nest for the streams `ss` (`fusable`): the first one's free levels,
    every stream's state stepped with them (a counter equal to first's at every
    step is first's: `_same_counter`), and at each cell the sum of every step's
    value in a register, stored once."""
    first = ss[0]
    if not is_stream(first) or first.contracted:
        return _cell(em, ss, ctx)
    iv = em.names.fresh(f"{first.var}_")
    enter, inner = em.target.enter(first.var, Var(iv), ctx)
    merged = {s: _same_counter(first, s) for s in ss[1:]}
    own = [s for s in ss if merged.get(s) is None]          # the others step with first
    same = {streams.counter_range(s)[0]: c for s, c in merged.items() if c is not None}
    body = seq(Decl(iv, "index", first.index), enter,
               imp.rename(emit_fused(em, [s.value for s in ss], inner), same))
    loop = seq(*[s.init for s in own],
               While(first.valid, seq(body, *[s.next for s in own])))
    decls = [d for s in own for d in state_decls(s, loop)]
    return seq(imp.Comment(f"{first.var}: {first.search}; {len(ss)} steps in lockstep, "
                           f"each cell stored once"), *decls, loop)


def _same_counter(first, s) -> str | None:
    """first's counter when `s`, walked in lockstep with it, is a plain counted loop
    from the same start (threads.plain_counted: its init sets the counter, its next
    adds one, nothing else): its counter equals first's at every step, and the nest
    reads first's instead (a row's segment then opens at pos[c], pos[c + 1] of the
    loop's own counter, as in a step of its own: segment_checks)."""
    if not (plain_counted(first) and plain_counted(s)):
        return None
    (c, start, _), (c2, start2, _) = streams.counter_range(first), streams.counter_range(s)
    return c if start == start2 and c != c2 else None


def _cell(em, ss, ctx) -> imp.Stmt:
    """The values of one cell added into a register, then stored: the sums first,
    in step order, from the zero, then the plain values (⊕ commutes). `b + Σ`
    adds b once its sum is done, as numpy's `b + A @ x` rounds, and the sum's
    chain of adds does not wait for b's load."""
    reg = em.names.fresh("cell")
    sums, values = [s for s in ss if is_stream(s)], [s for s in ss if not is_stream(s)]
    start = Const(em.sr.zero, "value") if sums else values.pop(0)
    adds = [em.accumulate(s, reg) for s in sums]
    adds += [Assign(reg, imp.Ring("add", Var(reg), v)) for v in values]
    return seq(Decl(reg, "value", start), *adds, em.target.write(ctx, Var(reg), once=True))


def box_known(box, params, plan) -> bool:
    """Whether a written box's bounds read only the kernel's parameters and sizes
    (so its cells outside can be cleared before any step runs)."""
    known = {p.name for p in params} | {f"dim_{v}" for step in plan.steps for v in step.order}
    return all(imp.names_used(e) <= known for lo_hi in box.values() for e in lo_hi)
