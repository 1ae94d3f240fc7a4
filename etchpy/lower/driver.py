"""Streams to a whole Imp program with output writes (after Etch's Fig. 4).

    ⟦s⟧ at location L  =  declare state; init
                          while valid { if ready { ⟦value⟧ at L·index } ; next }

A contracted level keeps L; a run of contracted levels at the bottom adds into a
local accumulator that is written once. Where the values go is the target's
business (lower.target, lower.outputs); how the loops are scheduled is the
passes' (lower.schedule), each switched by its Tuning field.
"""
from __future__ import annotations

from .. import imp
from ..formats import Format
from dataclasses import dataclass

from ..imp import ONE, Alloc, Const, Decl, If, Var, While, seq
from ..plan import plan as planning
from ..plan.algorithms import NONE as NO_ALGORITHMS, Algorithms
from .. import streams
from ..streams import is_stream
from ..tuning import DEFAULT, Tuning
from .outputs import make_output
from .produced import Presence, note
from .program import Program, input_params
from . import schedule
from .schedule import LoopParts, entries, prefetch, unswitch
from .schedule.fused_rows import (box_known, writes_each_cell_at_most_once,
                                  writes_every_cell_once, written_box)
from .schedule.bounds import entries_bound, state_decls
from .schedule.bucket_threads import blocked_passes
from .schedule.kept_rows import with_kept_rows
from .target import Context, CountThenFill, Either, Want, cells
from .targets.dense import DenseTarget


@dataclass(frozen=True)
class Lowering:
    """What lowering one plan fixes once and every group and step reads: the
    plan, the semiring, the tensors' array names (`bindings`), the program's
    names, the output's target, the tuning, the threads, the presence of
    products (a sparse output's; else None) and the plan's algorithms."""

    plan: planning.Plan
    sr: object
    bindings: dict
    names: imp.Names
    target: object
    tuning: Tuning
    threads: int
    presence: Presence | None
    algorithms: Algorithms

    def stream(self, step):
        """(the stream lowerer, the stream) of one step."""
        return _step_stream(step, self.sr, self.bindings, self.names, self.tuning,
                            self.algorithms.for_step(step))

    def lower_step(self, step):
        """(statements, description, filled) of one step lowered alone."""
        return _lower_step(step, self)

    def emitter(self, target=None, markers=False, presence=None) -> "Emitter":
        return Emitter(self.names, self.sr, target or self.target, self.tuning,
                       self.threads, markers, presence)


class Emitter:
    """Emits the loop nest of one stream into one target."""

    def __init__(self, names: imp.Names, sr, target, tuning: Tuning, threads: int = 1,
                 markers=False, presence: Presence | None = None):
        self.names, self.sr, self.target, self.tuning = names, sr, target, tuning
        self.threads = threads
        self.markers = markers       # the step fills shared marker scratch in its loops
        self.presence = presence or Presence(sr)     # which values are products
        self.buffer = None           # window walks' hits gathered in blocks (window_blocks)

    def with_target(self, target) -> "Emitter":
        return Emitter(self.names, self.sr, target, self.tuning, self.threads, self.markers,
                       self.presence)

    def emit_step(self, s) -> imp.Stmt:
        """A step's loop nest: the first step pass (schedule.PASSES) that takes
        it, else its plain loops."""
        for p in schedule.at("step", self.tuning):
            out = p.run(self, s)
            if out is not None:
                return out
        return self.emit(s, self.top())

    def top(self) -> Context:
        """The context a step's outermost level starts from: fresh when the target
        is a dense output that is zero on entry and written by this step alone (so
        a cell prefix bound by free levels only is visited once)."""
        return Context(fresh=self.target.fresh)

    def row_body(self, s, ctx: Context | None = None) -> imp.Stmt:
        """One ready state of the free level s (its coordinate, entered and left).
        A level whose coordinate the target appends on entry (target.tentative)
        over a nest that may produce nothing (lower.produced) keeps a flag that
        every product below sets, and the target settles the entry after the
        nest: kept when a product was made, else taken back."""
        iv = self.names.fresh(f"{s.var}_")
        ctx = ctx if ctx is not None else Context()
        made = None
        if self.target.tentative(s.var) and not self.presence.certain(s.value):
            made = self.names.fresh("made")
            ctx = ctx.with_(made=made)
        if (span := s.facts.get(streams.Span)) is not None:     # a piece written whole
            ctx = ctx.with_(span=span.end)
        enter, ctx = self.target.enter(s.var, Var(iv), ctx)
        body = seq(enter, self.emit(s.value, ctx),
                   imp.SKIP if made is None else
                   self.target.settle(s.var, ctx, Var(made)),
                   self.target.after(s.var, ctx))
        if made is not None:
            body = seq(Decl(made, "bool", imp.FALSE), body)
        if iv not in imp.names_used(body):    # a counting pass may not need the index
            return body
        return seq(Decl(iv, "index", s.index), body)

    def emit(self, s, ctx: Context, blocks=True) -> imp.Stmt:
        if not is_stream(s):
            return self.write(ctx, s)
        if streams.Repeats in s.facts:       # a cell may be written again (schedule.entries)
            ctx = ctx.with_(fresh=False)
        for p in schedule.at("level", self.tuning) if blocks else ():
            out = p.run(self, s, ctx)
            if out is not None:
                return out
        if all(lv.contracted for lv in streams.levels_of(s)):
            return self.contracted(s, ctx)
        if s.contracted:
            return self.loop(s, lambda v: self.emit(v.value, ctx.with_(fresh=False)))
        room, ctx_in = self.target.reserve(s.var, streams.most_bound(s), ctx)
        s = streams.with_prefetch(s, self.target.scatter_blocks(s.var))
        return seq(self.loop(s, lambda v: self.row_body(v, ctx_in), room),
                   self.target.leave(s.var, ctx))

    def write(self, ctx: Context, v) -> imp.Stmt:
        """The leaf value v written at ctx. Into a target whose writes make entries,
        or under an entry appended tentatively (ctx.made, which it then sets),
        only where v is a product: a position taken back was never written."""
        w, here = self.target.write(ctx, v), self.presence.of(v)
        if ctx.made is not None:
            w = seq(w, imp.Assign(ctx.made, imp.TRUE))
        elif not self.target.sparse_writes:
            return w
        return imp.if_(here, w)

    def contracted(self, s, ctx: Context) -> imp.Stmt:
        """A nest of contracted levels added into a local accumulator, written
        once. Into a target whose writes make entries, or under an entry
        appended tentatively (ctx.made), written only if a flag set by the adds
        says that some product was added."""
        acc = self.names.fresh("acc")
        w = self.target.write(ctx, Var(acc))
        if ctx.made is not None:
            w = seq(w, imp.Assign(ctx.made, imp.TRUE))
        guarded = ((self.target.sparse_writes or ctx.made is not None)
                   and not self.presence.certain(s))
        made = self.names.fresh("made") if guarded else None
        out = seq(Decl(acc, "value", Const(self.sr.zero, "value")),
                  self.accumulate(s, acc, made))
        if made is None:
            return seq(out, w)
        return seq(Decl(made, "bool", imp.FALSE), out, If(Var(made), w))

    def accumulate(self, s, acc, made=None) -> imp.Stmt:
        if not is_stream(s):
            add = imp.Assign(acc, imp.Ring("add", Var(acc), s))
            return add if made is None else seq(add, note(made, self.presence.of(s)))
        return self.loop(s, lambda v: self.accumulate(v.value, acc, made),
                         runs=not is_stream(s.value))

    def loop(self, s, record, room=imp.SKIP, runs=False) -> imp.Stmt:
        """init, then `while valid: (if ready: record) ; next`, where record(v) is the
        code for one ready record of v (s, or one of its phases, run in turn). `room`
        runs right after init (it reads s.most, the output space the loop needs).
        `runs`: the loop only adds up a leaf's values (SpMV's row), so little but
        memory holds it back, and its arrays may be prefetched (prefetch_runs)."""
        tn = self.tuning
        fetch, far = prefetch.prefetch_ahead(self, s)
        merged = streams.merged_note(s)     # the segments a union walks whole: opened by init
        if not (runs and tn.prefetch):
            s = s.derive(s.facts.keep(*[k for k in streams.RUN_FACTS if k is not streams.Runs],
                                      streams.Merged, streams.Met))   # phases note them
        s = prefetch.runs_read(s, on_ready := record(s), tn)   # (its prefetches: what it reads)
        least = tn.piece_short if streams.Pieces in s.facts else tn.run_short
        init = seq(s.init, merged, far, If(prefetch.runs_wanted(s, least, tn),
                              prefetch.prefetch_runs(s, tn, self.names, start=True))
                   if streams.Runs in s.facts else imp.SKIP, room)
        seg = s.facts.get(streams.Segment)
        hide = streams.hidden(seg.q, tn) if seg and not _one_entry(s, tn) else imp.SKIP

        def step(v, nxt, on_ready):
            return While(v.valid, seq(hide, fetch, imp.if_(v.ready, on_ready), nxt),
                         streams.walk_of(v, nxt))

        parts = LoopParts(init, step, on_ready, record,
                          unswitch.size(on_ready) <= tn.unswitch_limit, fetch)
        body = next((b for p in schedule.at("loop", tn)
                     if (b := p.run(self, s, parts)) is not None),
                    seq(init, step(s, s.next, on_ready)))
        ahead = "" if fetch == imp.SKIP else "; rows of large operands prefetched ahead"
        if streams.Runs in s.facts and streams.Pieces in s.facts and tn.run_lines > 1:
            ahead += f"; each run's lines prefetched {tn.piece_ahead} ahead"
        elif streams.Runs in s.facts:
            ahead += f"; its arrays prefetched {tn.run_ahead} ahead"
        return seq(imp.Comment(f"{'Σ ' if s.contracted else ''}{s.var}: {s.search}{ahead}"),
                   *state_decls(s, body), body)


def _one_entry(s, tuning) -> bool:
    """The loop of s runs over one position (a singleton level's segment: it
    counts from p to p + 1), so hiding its counter from the C compiler
    (streams.hidden) would only keep it from folding the loop away; False when
    Tuning.unhide_one_entry is off."""
    c = s.facts.get(streams.Counter)
    return tuning.unhide_one_entry and c is not None and c.end == imp.add(c.first, ONE)


def emit_loops(em: Emitter, s) -> imp.Stmt:
    """The loop nest of one step. A workspace output that may be either kind gets
    two nests, one per kind (dense or hash), chosen once per call: the hot loop
    tests nothing. A counting sort runs the loops twice, to count, then to fill."""
    match em.target.passes():
        case None:
            return em.emit_step(s)
        case Either(cond, when_true, when_false):
            return If(Var(cond), em.with_target(when_true).emit_step(s),
                      em.with_target(when_false).emit_step(s))
        case CountThenFill(count, between, fill):
            threaded = blocked_passes(em, s)
            if threaded is not None:
                return threaded
            return seq(imp.Comment("count the entries of each row"),
                       imp.Block(em.with_target(count).emit_step(s)), between,
                       imp.Comment("write each entry at its row's cursor"),
                       imp.Block(em.with_target(fill).emit_step(s)))


def lower_plan(plan: planning.Plan, semiring, tensors: dict, out_format: Format | None,
               names: imp.Names | None = None, threads: int = 1,
               hash_workspace: bool = True, tuning: Tuning = DEFAULT,
               algorithms: Algorithms = NO_ALGORITHMS) -> Program:
    """The Imp program of a plan; `tensors` maps input names to their TensorVar.
    `tuning` holds every knob of lowering (etchpy.tuning). Every name the program
    declares comes from `names`, which first claims the names of the C ABI (the
    inputs' arrays and dimensions, the output's arrays), so that no index name
    can collide with them.

    With hash_workspace False, a workspace output has only its dense kind, and
    the program refuses (`Program.refuse_above`) a dimension that would need the
    hash table: half the C text for the common case, and the caller lowers the
    plan again, with both kinds, for an input that is refused.

    `algorithms` (plan.algorithms.choose) fixes, per step, the intersection
    way per index and which reused levels get markers; the default decides
    nothing (the streams' own defaults)."""
    names = names or imp.Names()
    params, dims = input_params(tensors, plan)
    bindings = {n: streams.array_names(n, tv.format, tv.iso)
                for n, tv in {**tensors, **plan.temps}.items()}
    for name in [p.name for p in params] + [b.vals for n, b in bindings.items()
                                            if n in plan.temps]:
        names.fresh(name)
    for v in dict.fromkeys(v for step in plan.steps for v in step.order):
        names.fresh(f"dim_{v}")
    target, out_params, output = _output(plan, semiring, tensors, out_format, names, tuning,
                                         hash_workspace)
    body, texts = [target.setup()], []
    # a sparse output's entries are its products, so its temporaries say where theirs are
    presence = Presence(semiring, {}) if target.sparse_writes else None
    lw = Lowering(plan, semiring, bindings, names, target, tuning, threads, presence,
                  algorithms)
    for stmts, text, filled in _lower_groups(lw):
        if filled is True:  # every cell is stored once: no zero fill, no zeroed flag
            body[0] = imp.SKIP
        elif filled and box_known(filled, params, plan):
            body[0] = target.clear_outside(filled)    # only the cells outside the box
        else:
            filled = False
        if filled:
            out_params = [p for p in out_params if p.kind != "out_zeroed"]
        body += stmts
        texts.append(text)
    body.append(target.finish())
    program = Program(tuple(params + out_params), seq(*body), output, plan, tuple(dims),
                      tuple(texts), target.refusals(), algorithms)
    return schedule.finish(program, semiring, tuning)


def _lower_groups(lw: Lowering):
    """(statements, description, filled) of the plan's steps, one group each, in
    order: the claims of the group passes (schedule.PASSES: a Khatri-Rao pair
    under its size test, a chain of temporaries fused into their readers, the
    steps into a dense output in one nest) at their first group's place, every
    other step on its own."""
    groups = [[step] for step in lw.plan.steps]
    claims: list = []
    for p in schedule.at("group", lw.tuning):
        claims += p.run(lw, groups, tuple(claims))
    first = {c.first: c for c in claims}
    skip = {n for c in claims for n in c.covers}
    for n, (step,) in enumerate(groups):
        claim = first.get(n)
        if claim is not None:
            done = claim.lower()
            if done is not None:
                yield done
                continue
            skip -= claim.covers          # its groups run one by one
        elif n in skip:
            continue
        yield lw.lower_step(step)


def _output(plan, sr, tensors, out_format, names, tuning, hash_workspace):
    """The output's target, parameters and record. A sparse output computed by one
    step may size its first allocation by a bound on its entries."""
    out_steps = [step for step in plan.steps if step.target == "out"]
    only = out_steps[0] if len(out_steps) == 1 else None
    bound = None if only is None else (
        lambda axes, pre: entries_bound(only.body, axes, tensors, names, pre))
    return make_output(Want(out_format, plan.out, only, tuning, sr, names, bound,
                            hash_workspace))


def _step_stream(step, sr, bindings, names, tuning, algorithms):
    """(the stream lowerer, the stream) of one step."""
    low = streams.Lowerer(sr, bindings, names, markers=True, tuning=tuning, algorithms=algorithms)
    return low, streams.lower_step(sr, bindings, step.body, step.order, step.bound,
                                   lowerer=low)


def _lower_step(step, lw: Lowering):
    """(statements, description, whether it stores every cell of a dense output
    once) of one step of the plan. With `lw.presence` (the output is sparse), a
    temporary whose cells may get no product keeps flags (lower.produced),
    recorded in presence.has for the steps that read it. A temporary that its
    one step stores each cell of once, or sets by a call (BLAS, its fallback
    loops after a fill), is not filled first (tuning.first_store)."""
    stmts, sr, names, presence, has = [], lw.sr, lw.names, lw.presence, None
    low, s = lw.stream(step)
    if step.target == "out":
        target = lw.target
    else:
        tvals = lw.bindings[step.target].vals
        size = cells(step.out)
        stmts.append(Alloc(tvals, "value", size, Const(sr.zero, "value")))
        if presence is not None and not presence.certain(s):
            has = presence.has[tvals] = names.fresh(f"{tvals}_has")
            stmts.append(Alloc(has, "bool", size, imp.FALSE))
        target = DenseTarget(tvals, step.out, sr, names, has=has)
    s = entries.split(s, target, lw.tuning)
    filled = False
    owns = step.target == "out" and target.dense_axes is not None and sum(
        1 for st in lw.plan.steps if st.target == "out") == 1
    alone = step.target != "out" and has is None and lw.tuning.first_store and sum(
        st.target == step.target for st in lw.plan.steps) == 1
    if owns:
        filled = _owned(target, s, len(step.out), lw.tuning)
    elif alone and target.own(writes_every_cell_once(s, len(step.out), lw.tuning.runs)):
        stmts[0], filled = Alloc(tvals, "value", size, None), True
    text = f"{step.target}: " + "; ".join(streams.describe(s))
    stmts.append(imp.Comment(f"{step.target}[{','.join(step.out)}] ⊕= "
                             + (f"Σ_{{{','.join(step.bound)}}} " if step.bound else "")
                             + f"{step.body}   order ({', '.join(step.order)})"))
    loops = emit_loops(lw.emitter(target, bool(low.scratch), presence), s)
    sets = (owns or alone) and filled is not True     # a call sets every cell: no fill
    for p in schedule.at("call", lw.tuning):
        called = p.run(lw, step, target, seq(target.clear(lw.names.fresh("set_k")), loops)
                       if sets else loops, filled is True or sets)
        if called is not None:
            loops, text = called[0], text + called[1]
            if sets and alone:
                stmts[0] = Alloc(tvals, "value", size, None)
            filled = True if sets and owns else filled
            break
    used = imp.names_used(loops)           # a marker built but never read is dropped
    stmts += [Alloc(arr, typ, size, fill) for arr, typ, size, fill in low.scratch
              if arr in used]
    stmts += with_kept_rows([low], loops)
    return stmts, text, filled if step.target == "out" else False


def _owned(target, s, n_axes, tuning):
    """The one step writing a dense output owns it (DenseTarget.own): True when its
    loops store every cell once (no fill), the box they store each cell of once
    when that is not every cell and the output can clear the rest (tuning.fill_gaps:
    only the cells outside it are filled, schedule.fused_rows.written_box), else
    False (the whole output filled first)."""
    filled = target.own(writes_every_cell_once(s, n_axes, tuning.runs), tuning.fused_rows
                        and writes_each_cell_at_most_once(s, n_axes))
    if filled or not (tuning.fill_gaps and target.store and target.zeroed
                      and hasattr(target, "clear_outside")):
        return filled
    return written_box(s, n_axes) or False
