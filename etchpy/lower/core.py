"""Streams to a whole Imp program with output writes (after Etch's Fig. 4).

    ⟦s⟧ at location L  =  declare state; init
                          while valid { if ready { ⟦value⟧ at L·index } ; next }

A contracted level keeps L; a run of contracted levels at the bottom adds into a
local accumulator that is written once. Where the values go is the target's
business:

    dense    out[flat(L)] ⊕= v, the output filled with zero first (also temporaries
             and scalars, as 1-element arrays)
    append   sparse output assembled in order: the loop order visits the output's
             levels in storage order, all contracted indices below them; levels are
             dense (position p·n + i) or compressed (crd/pos appended, grown by
             doubling); unvisited rows get their pos filled forward at the end
    coords   any other case: (coordinates, value) records are appended and the
             runtime canonicalises them (sorts, combines duplicates with ⊕)

A `Program` lists its parameters (the ABI), its body, and what the output is.
"""
from __future__ import annotations

import copy
import dataclasses

from dataclasses import dataclass, field

from .. import imp
from ..plan import plan as planning
from .. import streams
from ..expr.nodes import Access, Add, Mul, accesses
from ..formats import Compressed, Dense, Format
from ..tuning import DEFAULT, Tuning
from ..imp import (ONE, ZERO, Accum, Alloc, Assign, Bin, Bit, Const, Decl, ForSorted, If, Load,
                  Move, Not, Reserve, Ring, SetBit, Store, Var, While, eq, incr, lt, not_, or_,
                  select, seq)
from ..streams import is_stream

INITIAL_CAPACITY = 1024
# A bound from the input sizes above this many positions is not trusted for the
# first allocation (an intersection's bound can far exceed its result): the
# arrays start here and grow.
FIRST_CAPACITY_LIMIT = 1 << 24


@dataclass(frozen=True)
class Param:
    name: str
    kind: str      # dim | in_array | out_dense | out_zeroed | out_grown | out_count
    type: str      # index | value
    doc: str


@dataclass(frozen=True)
class Output:
    mode: str                       # dense | append | workspace | bucket | coords
    axes: tuple[str, ...]
    format: Format | None
    arrays: dict = field(default_factory=dict)   # role -> Imp array name
    counts: dict = field(default_factory=dict)   # role -> Imp variable holding a length


def describe_output(out: Output) -> list[str]:
    """How the output arrays are laid out, for the exported header."""
    if out.mode == "dense":
        return [f"out: row-major over ({', '.join(out.axes)}), one value per coordinate."]
    if out.mode == "coords":
        crds = ", ".join(f"out_crd{m}[n] (index {ax})" for m, ax in enumerate(out.axes))
        return [f"{crds} and out_vals[n], for n < count: one record per value produced,",
                "in loop order, not sorted; equal coordinates are to be combined with",
                "the semiring's add."]
    lines = [f"format {out.format}: storage level k holds index "
             f"({', '.join(out.axes[m] for m in out.format.mode_order)})[k]."]
    parents = "1"
    for k, lv in enumerate(out.format.levels):
        ax = out.axes[out.format.mode_order[k]]
        if isinstance(lv, Compressed):
            lines.append(f"level {k} (compressed, {ax}): out_pos{k} has {parents} + 1 entries; "
                         f"the children of position p are out_crd{k}[out_pos{k}[p] .. "
                         f"out_pos{k}[p+1]-1], sorted; out_crd{k} has count{k} entries.")
            parents = f"count{k}"
        else:
            lines.append(f"level {k} (dense, {ax}): position p·dim_{ax} + {ax}.")
            parents = f"{parents}·dim_{ax}" if parents != "1" else f"dim_{ax}"
    lines.append(f"out_vals has one value per position of the last level ({parents}).")
    return lines


@dataclass(frozen=True)
class Program:
    params: tuple[Param, ...]
    body: imp.Stmt
    output: Output
    plan: planning.Plan
    dims: tuple                     # (index var, tensor, mode) for every access mode
    streams_text: tuple = ()
    # (index, largest size): the kernel returns 3, before allocating anything, when
    # that index's dimension is larger (a dense-only workspace, see lower_plan)
    refuse_above: tuple = ()


def output_mode(plan: planning.Plan, fmt: Format | None) -> str:
    if fmt is None or fmt.is_dense:
        return "dense"
    steps = [s for s in plan.steps if s.target == "out"]
    if len(steps) == 1 and appendable(fmt) and _order_matches(steps[0], fmt, plan.out):
        return "append"
    if len(steps) == 1 and appendable(fmt) and isinstance(fmt.levels[-1], Compressed) \
            and _order_matches(steps[0], fmt, plan.out, skip_last=True):
        return "workspace"
    if len(steps) == 1 and bucketable(fmt) \
            and tuple(steps[0].order[:1]) == (plan.out[fmt.mode_order[1]],):
        return "bucket"
    return "coords"


def bucketable(fmt: Format) -> bool:
    """Two levels, dense then unique compressed (csr, csc): filled by one counting
    sort when the loops run over the compressed level's index first."""
    return (len(fmt.levels) == 2 and isinstance(fmt.levels[0], Dense)
            and isinstance(fmt.levels[1], Compressed) and fmt.levels[1].unique)


def appendable(fmt: Format) -> bool:
    """Dense levels, unique compressed levels, then dense levels again (csr, csc,
    dcsr, csf, (compressed, compressed, dense), …)."""
    sparse = [k for k, lv in enumerate(fmt.levels) if not isinstance(lv, Dense)]
    return all(isinstance(fmt.levels[k], Compressed) and fmt.levels[k].unique
               for k in range(sparse[0], sparse[-1] + 1)) if sparse else True


def sparse_prefix(fmt: Format) -> int:
    """The number of levels up to and including the last compressed one."""
    sparse = [k for k, lv in enumerate(fmt.levels) if not isinstance(lv, Dense)]
    return sparse[-1] + 1 if sparse else 0


def _order_matches(step: planning.Step, fmt: Format, out, skip_last=False) -> bool:
    """The loop order starts with the output's levels down to the last compressed
    one (all but the last level for a workspace); trailing dense levels may come
    anywhere later, since their block is allocated when its parent is appended."""
    storage = [out[m] for m in fmt.mode_order][:sparse_prefix(fmt)]
    if skip_last:
        storage = storage[:-1]
    return list(step.order[:len(storage)]) == storage


def lower_plan(plan: planning.Plan, semiring, tensors: dict, out_format: Format | None,
               names: imp.Names | None = None, threads: int = 1,
               hash_workspace: bool = True, tuning: Tuning = DEFAULT) -> Program:
    """The Imp program of a plan; `tensors` maps input names to their TensorVar.
    `tuning` holds every knob of lowering (etchpy.tuning).

    With hash_workspace False, a workspace output has only its dense kind, and
    the program refuses (`Program.refuse_above`) a dimension that would need the
    hash table: half the C text for the common case, and the caller lowers the
    plan again, with both kinds, for an input that is refused."""
    names = names or imp.Names()
    for v in _all_vars(plan):
        names.fresh(f"dim_{v}")
    sr = semiring
    mode = output_mode(plan, out_format)
    params, dims = _input_params(tensors, plan)
    bindings = {n: streams.array_names(n, tv.format) for n, tv in tensors.items()}
    out_axes = plan.out
    body = []
    out_steps = [step for step in plan.steps if step.target == "out"]
    only = out_steps[0].body if len(out_steps) == 1 else None
    bound = None if only is None else (
        lambda axes, pre: entries_bound(only, axes, tensors, names, pre))
    target_out, out_params, output, finish = _make_output(
        mode, out_axes, out_format, sr, names, bound, out_steps[0] if only else None,
        hash_workspace)
    body.append(target_out.setup())
    setup_at = len(body) - 1
    texts = []
    for name, tv in plan.temps.items():
        bindings[name] = streams.array_names(name, tv.format)
    for step in plan.steps:
        if step.target == "out":
            target = target_out
        else:
            tvals = bindings[step.target].vals
            size = _product([streams.dim_var(v) for v in step.out])
            body.append(Alloc(tvals, "value", size, Const(sr.zero, "value")))
            target = DenseTarget(tvals, step.out, sr, fill=False)
        low = streams.Lowerer(sr, bindings, names, markers=True, tuning=tuning)
        s = streams.lower_step(sr, bindings, step.body, step.order, step.bound, lowerer=low)
        if step.target == "out" and len(out_steps) == 1 and isinstance(target, DenseTarget):
            target.fresh = True                # zero (filled or passed so), one writer
            if writes_every_cell_once(s, len(step.out)):
                body[setup_at] = imp.SKIP      # no zero fill: every cell is stored once
                target.store = True
                out_params = [p for p in out_params if p.kind != "out_zeroed"]
        texts.append(f"{step.target}: " + "; ".join(streams.describe(s)))
        body.append(imp.Comment(f"{step.target}[{','.join(step.out)}] ⊕= "
                                + (f"Σ_{{{','.join(step.bound)}}} " if step.bound else "")
                                + f"{step.body}   order ({', '.join(step.order)})"))
        loops = _emit_loops(s, names, sr, target, threads, markers=bool(low.scratch))
        used = imp.names_used(loops)           # a marker built but never read is dropped
        body += [Alloc(arr, typ, size, fill) for arr, typ, size, fill in low.scratch
                 if arr in used]
        body.append(loops)
    body.append(finish)
    refuse = target_out.refusals() if isinstance(target_out, WorkspaceTarget) else ()
    return Program(tuple(params + out_params), seq(*body), output, plan, tuple(dims),
                   tuple(texts), refuse)


def writes_every_cell_once(s, n_axes: int) -> bool:
    """Do the loops write each output cell exactly once? True when the free levels
    come first, each a range visiting every coordinate once (ready throughout), and
    everything below them is contracted into one accumulator (or is the leaf)."""
    free = 0
    while streams.is_stream(s) and not s.contracted:
        if not (streams.Dense in s.facts and s.ready == imp.TRUE):
            return False
        free, s = free + 1, s.value
    return free == n_axes and all(lv.contracted for lv in streams.levels_of(s))


def _emit_loops(s, names, sr, target, threads, markers) -> imp.Stmt:
    """The loop nest of one step. A workspace output that may be either kind gets
    two nests, one per kind (dense or hash), chosen once per call: the hot loop
    tests nothing."""
    if isinstance(target, WorkspaceTarget) and target.hashed is None:
        return If(Var("ws_hash"),
                  Emitter(names, sr, target.way(True), threads, markers).emit_step(s),
                  Emitter(names, sr, target.way(False), threads, markers).emit_step(s))
    if isinstance(target, BucketTarget):
        threaded = target.blocked_passes(s, names, sr, threads, markers)
        if threaded is not None:
            return threaded
        return seq(imp.Comment("count the entries of each row"),
                   imp.Block(Emitter(names, sr, target.way(True), threads,
                                     markers).emit_step(s)),
                   target.between(),
                   imp.Comment("write each entry at its row's cursor"),
                   imp.Block(Emitter(names, sr, target.way(False), threads,
                                     markers).emit_step(s)))
    return Emitter(names, sr, target, threads, markers).emit_step(s)


def _all_vars(plan):
    out = []
    for s in plan.steps:
        out += [v for v in s.order if v not in out]
    return out


def _input_params(tensors: dict, plan) -> tuple[list[Param], list]:
    params: list[Param] = []
    for name in sorted(tensors):
        tv = tensors[name]
        for m in range(tv.order):
            params.append(Param(f"{name}_dim{m}", "dim", "index", f"size of mode {m} of {name}"))
        b = streams.array_names(name, tv.format)
        for k, arrays in enumerate(b.levels):
            for role, arr in arrays.items():
                params.append(Param(arr, "in_array", "index",
                                    f"{name} level {k} ({tv.format.levels[k]}) {role}"))
        params.append(Param(b.vals, "in_array", "value", f"{name} values"))
    dims = []
    for step in plan.steps:
        for acc in accesses(step.body):
            if acc.tensor.name in tensors:
                for m, ix in enumerate(acc.indices):
                    dims.append((ix.name, acc.tensor.name, m))
    return params, dims


def _product(factors):
    out = ONE
    for f in factors:
        out = imp.mul(out, f)
    return out

# ------------------------------------------------------------------- targets


# The flag by which a caller passes a dense output already filled with zeros.
ZEROED = "out_zeroed"

# ctx key: the output cells under the coordinates bound so far are zero and are
# written by nothing but the value emitted under them. True right after a target
# appended a position that brings its own zero block of the output's dense tail
# (AppendTarget._owns_block), and at the top of the one step that writes a dense
# output that is zero on entry (Emitter.top; free levels keep it, as a stream's
# ready coordinates are strictly increasing). A local block over the last axis
# (Emitter.emit_block) may then store its values instead of adding them in.
# Descending through a contracted level drops it: that level's states would
# each flush a block into the same cells.
FRESH = "fresh"


class FlatTarget:
    """A target whose levels need nothing on entry, exit or ahead of their loops:
    only `write` (and setup/finish) does work. enter binds the index."""

    def reserve(self, var, most, ctx):
        return imp.SKIP, ctx            # nothing appended ahead of its loop

    def enter(self, var, index, ctx):
        return imp.SKIP, {**ctx, var: index}

    def leave(self, var, ctx):
        return imp.SKIP

    def after(self, var, ctx):
        return imp.SKIP

    def scatter_blocks(self, var) -> tuple:
        """Blocks this target writes at the coordinate t of var, scattered and
        known ahead of time (streams.Block, written=True); none here."""
        return ()


class DenseTarget(FlatTarget):
    """out[flat(coordinates)] ⊕= v over a row-major array with axes `axes`."""

    def __init__(self, array: str, axes, sr, fill=True):
        self.array, self.axes, self.sr, self.fill = array, tuple(axes), sr, fill
        self.store = False       # True: each cell is written exactly once (no fill)
        self.fresh = False       # True: zero on entry, and the one step writing it

    def setup(self):
        """The zero fill, skipped when the caller says `out` already holds zeros."""
        if not self.fill:
            return imp.SKIP
        k = "out_k"
        size = _product([streams.dim_var(v) for v in self.axes])
        return imp.if_(not_(Var(ZEROED)), seq(
            Decl(k, "index", ZERO),
            While(lt(Var(k), size),
                  seq(Store(self.array, Var(k), Const(self.sr.zero, "value")), incr(k)))))

    def write(self, ctx, v, once=False):
        """out[cell] ⊕= v; a store when every cell is written once (`store`), or
        this cell is (`once`: a FRESH block's flush)."""
        flat = ZERO
        for ax in self.axes:
            flat = imp.add(imp.mul(flat, streams.dim_var(ax)), ctx[ax])
        return Store(self.array, flat, v) if self.store or once else Accum(self.array, flat, v)

    def finish(self):
        return imp.SKIP


class BlockTarget(FlatTarget):
    """blk[r] ⊕= v: the local block of Emitter.emit_block."""

    def __init__(self, array: str, var: str):
        self.array, self.var = array, var

    def write(self, ctx, v):
        return Accum(self.array, ctx[self.var], v)


class AppendTarget:
    """A sparse output built in order: dense levels, compressed levels, and a dense
    tail. Appending a position at the last compressed level also appends its
    zero-filled dense block, into which the tail's values accumulate."""

    def __init__(self, axes, fmt: Format, sr, names: imp.Names, bound=None):
        self.sr = sr
        self.fmt = fmt
        # bound(axes): an upper bound, read from the inputs at entry, on the distinct
        # coordinates over those axes (entries_bound), or None. It sets the first
        # capacity of each compressed level, so that appends rarely grow the arrays.
        self.bound = bound
        self.bounds: dict = {}          # level -> first capacity (see _first_capacity)
        self.bound_pre: list = []
        self.storage = [axes[m] for m in fmt.mode_order]
        self.level_of = {v: k for k, v in enumerate(self.storage)}
        self.head = sparse_prefix(fmt)
        self.tail = self.storage[self.head:]         # trailing dense levels
        self.block = _product([streams.dim_var(v) for v in self.tail])
        self.arrays: dict[str, str] = {}
        self.count: dict[int, str] = {}
        for k, lv in enumerate(fmt.levels):
            if isinstance(lv, Compressed):
                self.arrays[f"pos{k}"] = f"out_pos{k}"
                self.arrays[f"crd{k}"] = f"out_crd{k}"
                self.count[k] = f"out_count{k}"
        self.arrays["vals"] = "out_vals"

    def _parents(self, k):
        """The number of parent positions of level k, as an Imp expression."""
        n = ONE
        for kk in range(k):
            if isinstance(self.fmt.levels[kk], Compressed):
                n = Var(self.count[kk])
            else:
                n = imp.mul(n, streams.dim_var(self.storage[kk]))
        return n

    def _static_parents(self, k):
        return all(isinstance(lv, Dense) for lv in self.fmt.levels[:k])

    def setup(self):
        out = []
        for k, lv in enumerate(self.fmt.levels):
            if not isinstance(lv, Compressed):
                continue
            out.append(Decl(self.count[k], "index", ZERO))
            npos = imp.add(self._parents(k), ONE) if self._static_parents(k) \
                else Const(INITIAL_CAPACITY)
            out.append(Alloc(self.arrays[f"pos{k}"], "index", npos, ZERO))
            cap = self._first_capacity(k)
            out.append(Alloc(self.arrays[f"crd{k}"], "index", cap, None))
        last = len(self.fmt.levels) - 1
        if self._static_parents(last + 1):        # no compressed level: every cell
            size = _product([streams.dim_var(v) for v in self.storage])
            out.append(Alloc("out_vals", "value", size, Const(self.sr.zero, "value")))
        else:
            # without a tail each value is stored when appended; with one, values
            # accumulate into their block, so vals is zero everywhere past the
            # appended blocks: allocated zeroed (calloc: no pass) and grown zeroed
            cap = imp.mul(self._first_capacity(self.head - 1), self.block)
            out.append(Alloc("out_vals", "value", cap, self._zero() if self.tail else None))
        return seq(*self.bound_pre, *out)

    def _first_capacity(self, k):
        """Positions allocated up front at compressed level k (appends grow them):
        the bound on the distinct coordinates of the levels down to k, kept
        between INITIAL_CAPACITY and FIRST_CAPACITY_LIMIT. A bound that needs a
        pass over the inputs is computed once, by statements kept in
        self.bound_pre for setup to run first."""
        if k in self.bounds:
            return self.bounds[k]
        b = None if self.bound is None else self.bound(self.storage[:k + 1], self.bound_pre)
        cap = Const(INITIAL_CAPACITY) if b is None else imp.min_(
            imp.max_(b, Const(INITIAL_CAPACITY)), Const(FIRST_CAPACITY_LIMIT))
        self.bounds[k] = cap
        return cap

    def enter(self, var, index, ctx):
        k = self.level_of[var]
        parent = ctx.get("pos", ZERO)
        if var in self.tail:                    # located in the block at write time
            return imp.SKIP, {**ctx, var: index}
        if isinstance(self.fmt.levels[k], Dense):
            return imp.SKIP, {**ctx, var: index, "pos": imp.add(
                imp.mul(parent, streams.dim_var(var)), index)}
        cnt, crd = self.count[k], self.arrays[f"crd{k}"]
        p = f"out_p{k}"
        grow = imp.SKIP if ctx.get(("reserved", var)) else self._room(k, imp.add(Var(cnt), ONE))
        stmts = seq(Decl(p, "index", Var(cnt)), grow, Store(crd, Var(p), index), incr(cnt))
        return stmts, {**ctx, var: index, "pos": Var(p), FRESH: self._owns_block(k)}

    def _owns_block(self, k) -> bool:
        """Does appending a position at level k append its own zero block of the
        tail (see FRESH)? Only the last compressed level of a plain append."""
        return type(self) is AppendTarget and bool(self.tail) and k == self.head - 1

    def reserve(self, var, most, ctx):
        """Before the loop over var: room for `most` more appends at var's level, so
        that enter appends without a capacity test (`most` bounds the loop's ready
        states, each of which appends one position). (SKIP, ctx) where var's level
        appends nothing or no bound is known."""
        k = self.level_of.get(var)
        if (most is None or k is None or var in self.tail
                or not isinstance(self.fmt.levels[k], Compressed)):
            return imp.SKIP, ctx
        return (self._room(k, imp.add(Var(self.count[k]), most)),
                {**ctx, ("reserved", var): True})

    def _room(self, k, n):
        """Room for positions 0..n-1 at compressed level k: its crd, and the pos of
        the level below or the value blocks under them (already zero when there
        is a tail: vals is kept zero past the appended blocks)."""
        grow = [Reserve(self.arrays[f"crd{k}"], "index", n)]
        if k + 1 < self.head:
            grow.append(Reserve(self.arrays[f"pos{k + 1}"], "index", imp.add(n, ONE)))
        else:
            grow.append(Reserve("out_vals", "value", imp.mul(n, self.block),
                                self._zero() if self.tail else None))
        return seq(*grow)

    def _zero(self):
        return Const(self.sr.zero, "value")

    def after(self, var, ctx):
        return imp.SKIP

    def scatter_blocks(self, var) -> tuple:
        return ()                       # appends in order: nothing scattered

    def leave(self, var, ctx):
        """After all children of one parent at var's level: close the segment."""
        k = self.level_of[var]
        if not isinstance(self.fmt.levels[k], Compressed):
            return imp.SKIP
        parent = ctx.get("pos", ZERO)
        return Store(self.arrays[f"pos{k}"], imp.add(parent, ONE), Var(self.count[k]))

    def write(self, ctx, v, vals="out_vals", once=False):
        """vals[cell] ⊕= v; with `once` (a cell of a FRESH block written once) a
        store, which never reads the output (its memory is fresh)."""
        if not self.tail:
            return Store(vals, ctx.get("pos", ZERO), v)
        flat = ctx.get("pos", ZERO)
        for t in self.tail:
            flat = imp.add(imp.mul(flat, streams.dim_var(t)), ctx[t])
        return Store(vals, flat, v) if once else Accum(vals, flat, v)

    def finish(self):
        out = []
        for k, lv in enumerate(self.fmt.levels):
            if isinstance(lv, Compressed) and self._static_parents(k):
                r, pos = f"out_r{k}", self.arrays[f"pos{k}"]
                nxt = Load(pos, imp.add(Var(r), ONE))
                out.append(seq(Decl(r, "index", ZERO), While(
                    lt(Var(r), self._parents(k)),
                    seq(If(lt(nxt, Load(pos, Var(r))),
                           Store(pos, imp.add(Var(r), ONE), Load(pos, Var(r)))), incr(r)))))
        return seq(*out)

    def counts(self):
        return {f"count{k}": var for k, var in self.count.items()}


# A workspace over a dimension larger than this is a hash table (memory grows with
# the touched coordinates), not a dense accumulator (memory grows with the dimension).
HASH_WORKSPACE_DIM = 1 << 22
HASH_INITIAL = 256                  # first table size (a power of two)
EMPTY = Const(-1)


def mark_first(counter: str, k: imp.Expr) -> imp.Stmt:
    """On the first touch of coordinate k: mark it in ws_bits and push it on
    ws_list at `counter`."""
    return If(Not(Bit("ws_bits", k)), seq(SetBit("ws_bits", k, True),
                                          Store("ws_list", Var(counter), k), incr(counter)))


def move_out(crd: str, at: str, k: imp.Expr, zero: imp.Expr) -> imp.Stmt:
    """Entry `at` of the output is k with the workspace's value there, which is
    reset to zero; `at` moves on."""
    return seq(Store(crd, Var(at), k), Store("out_vals", Var(at), Load("ws_vals", k)),
               Store("ws_vals", k, zero), incr(at))


class WorkspaceTarget(AppendTarget):
    """Like append, but the last (compressed) level arrives out of order.

    Values for the last level go into a workspace along with a list of touched
    coordinates; once all loops under the last in-order level finish, the list
    is sorted and appended as one sorted segment, and the workspace is cleared.

    The workspace is chosen at run time from the dimension n of that level (by
    the program, testing ws_hash; or, in a program lowered with
    hash_workspace=False, which has the dense kind only, by the caller, when the
    program refuses a larger n):

    * n ≤ HASH_WORKSPACE_DIM: a dense accumulator `ws_vals[n]` with a touched
      bit per coordinate in `ws_bits`; the flush walks the touched coordinates
      in order (`ForSorted`: C walks the bits, or quicksorts the list when the
      touched coordinates are sparse in their range) and moves each value out;
    * larger n: an open-addressing hash table (`hs_keys`, `hs_vals`, linear
      probing, capacity a power of two kept at least twice the touched count and
      doubled by rehashing), with `hs_slot[t]` the table slot of the t-th touched
      coordinate so that clearing costs O(touched); the list is quicksorted and
      each coordinate looked up again in order.
    """

    def __init__(self, axes, fmt: Format, sr, names: imp.Names, bound=None):
        super().__init__(axes, fmt, sr, names, bound)
        self.last = len(fmt.levels) - 1
        self.ws_var = self.storage[self.last]
        self.flush_after = self.storage[self.last - 1] if self.last > 0 else None
        self.hashed = None           # which workspace: True, False, or None (test ws_hash)

    def way(self, hashed: bool) -> "WorkspaceTarget":
        """This target writing only to the hash table (True) or the dense one."""
        t = copy.copy(self)
        t.hashed = hashed
        return t

    def _pick(self, hashed: imp.Stmt, dense: imp.Stmt) -> imp.Stmt:
        if self.hashed is None:
            return If(Var("ws_hash"), hashed, dense)
        return hashed if self.hashed else dense

    def setup(self):
        size = streams.dim_var(self.ws_var)
        zero = Const(self.sr.zero, "value")
        if self.hashed is False:        # the dense workspace alone (larger n: refused)
            return seq(super().setup(), Decl("ws_n", "index", ZERO),
                       Alloc("ws_vals", "value", size, zero),
                       Alloc("ws_list", "index", size, ZERO),
                       Alloc("ws_bits", "bits", imp.sort_bits_words(size), ZERO))
        hashed = Var("ws_hash")
        dense_size = select(hashed, ONE, size)
        table = select(hashed, Const(HASH_INITIAL), ONE)
        return seq(super().setup(), Decl("ws_n", "index", ZERO),
                   Decl("ws_hash", "bool", lt(Const(HASH_WORKSPACE_DIM), size)),
                   Alloc("ws_vals", "value", dense_size, zero),
                   Alloc("ws_list", "index", select(hashed, Const(HASH_INITIAL), size), ZERO),
                   Alloc("ws_bits", "bits", imp.sort_bits_words(dense_size), ZERO),
                   Decl("hs_cap", "index", table), Decl("hs_h", "index", ZERO),
                   Decl("hs_t", "index", ZERO),
                   Alloc("hs_keys", "index", table, EMPTY),
                   Alloc("hs_vals", "value", table, zero),
                   Alloc("hs_slot", "index", table, ZERO),
                   Alloc("hs_tmp", "value", ONE, zero))

    def refusals(self) -> tuple:
        """(index, largest size) pairs this target cannot take: a dense-only
        workspace refuses a dimension past HASH_WORKSPACE_DIM."""
        if self.hashed is False:
            return ((self.ws_var, HASH_WORKSPACE_DIM),)
        return ()

    def enter(self, var, index, ctx):
        if var == self.ws_var:
            return imp.SKIP, {**ctx, var: index}
        return super().enter(var, index, ctx)

    def reserve(self, var, most, ctx):
        if var == self.ws_var:           # the flush reserves the sorted row
            return imp.SKIP, ctx
        return super().reserve(var, most, ctx)

    def leave(self, var, ctx):
        return imp.SKIP if var == self.ws_var else super().leave(var, ctx)

    def after(self, var, ctx):
        return self.flush(ctx) if var == self.flush_after else imp.SKIP

    def write(self, ctx, v, once=False):     # never FRESH (see _owns_block)
        k = ctx[self.ws_var]
        dense = seq(mark_first("ws_n", k), Accum("ws_vals", k, v))
        return self._pick(self.hash_write(k, v), dense)

    def _probe(self, key, until) -> imp.Stmt:
        """hs_h := the slot of `key`: its hash, then linear steps while `until`
        (a condition on hs_keys[hs_h]) does not hold."""
        mask = Bin("-", Var("hs_cap"), ONE)
        return seq(Assign("hs_h", Bin("hash", key, mask)),
                   While(not_(until(Load("hs_keys", Var("hs_h")))),
                         Assign("hs_h", Bin("&", imp.add(Var("hs_h"), ONE), mask))))

    def hash_write(self, k, v) -> imp.Stmt:
        h, n = Var("hs_h"), Var("ws_n")
        zero = Const(self.sr.zero, "value")
        insert = seq(Store("hs_keys", h, k), Store("hs_vals", h, zero),
                     Reserve("ws_list", "index", imp.add(n, ONE)),
                     Reserve("hs_slot", "index", imp.add(n, ONE)),
                     Store("ws_list", n, k), Store("hs_slot", n, h), incr("ws_n"))
        return seq(self._probe(k, lambda at: or_(eq(at, EMPTY), eq(at, k))),
                   If(eq(Load("hs_keys", h), EMPTY), insert),
                   Accum("hs_vals", h, v),
                   If(lt(Var("hs_cap"), imp.mul(Const(2), n)), self.rehash()))

    def rehash(self) -> imp.Stmt:
        """Double the table: save the values by touched order, clear, reinsert."""
        t, n, h = Var("hs_t"), Var("ws_n"), Var("hs_h")
        key = Load("ws_list", t)

        def each(limit, body):
            return seq(Assign("hs_t", ZERO), While(lt(t, limit), seq(body, incr("hs_t"))))
        return seq(
            Reserve("hs_tmp", "value", n),
            each(n, Store("hs_tmp", t, Load("hs_vals", Load("hs_slot", t)))),
            Assign("hs_cap", imp.mul(Const(2), Var("hs_cap"))),
            Reserve("hs_keys", "index", Var("hs_cap")),
            Reserve("hs_vals", "value", Var("hs_cap")),
            each(Var("hs_cap"), Store("hs_keys", t, EMPTY)),
            each(n, seq(self._probe(key, lambda at: eq(at, EMPTY)),
                        Store("hs_keys", h, key), Store("hs_vals", h, Load("hs_tmp", t)),
                        Store("hs_slot", t, h))))

    def flush(self, ctx):
        last, cnt = self.last, self.count[self.last]
        crd, pos = self.arrays[f"crd{last}"], self.arrays[f"pos{last}"]
        need = imp.add(Var(cnt), Var("ws_n"))
        k, t = Var("ws_k"), Var("ws_t")
        zero = Const(self.sr.zero, "value")
        move = move_out(crd, cnt, k, zero)
        hs_move = seq(self._probe(k, lambda at: eq(at, k)), Store(crd, Var(cnt), k),
                      Store("out_vals", Var(cnt), Load("hs_vals", Var("hs_h"))), incr(cnt))
        hs_clear = seq(Decl("ws_t", "index", ZERO), While(lt(t, Var("ws_n")), seq(
            Store("hs_keys", Load("hs_slot", t), EMPTY), incr("ws_t"))))
        size = streams.dim_var(self.ws_var)
        return seq(Reserve(crd, "index", need), Reserve("out_vals", "value", need),
                   self._pick(seq(ForSorted("ws_k", "ws_list", Var("ws_n"), size, None, hs_move),
                                  hs_clear),
                              ForSorted("ws_k", "ws_list", Var("ws_n"), size, "ws_bits", move)),
                   Assign("ws_n", ZERO),
                   Store(pos, imp.add(ctx.get("pos", ZERO), ONE), Var(cnt)))

    def finish(self):
        head = self.flush({}) if self.flush_after is None else imp.SKIP
        return seq(head, super().finish())


class RowCountTarget:
    """Pass 1 of a sparse output filled by threads, row by row: each row (an
    iteration of the outermost loop, over the output's first level) counts its
    entries into pos[row + 1]. For a workspace output it counts the distinct
    coordinates it touches (per-thread marks and touched list, cleared at the
    end of the row). A dense first level numbers the rows by their index; a
    compressed one (dcsr, fibers) by the iteration (ctx "iteration", see
    Emitter.row_frame)."""

    def __init__(self, base: AppendTarget):
        self.base = base
        self.pos = base.arrays["pos1"]
        self.row_var = base.storage[0]
        self.workspace = isinstance(base, WorkspaceTarget)
        self.hyper = isinstance(base.fmt.levels[0], Compressed)

    def row(self, index, ctx):
        return ctx["iteration"] if self.hyper else index

    def reserve(self, var, most, ctx):
        return imp.SKIP, ctx            # nothing appended ahead of its loop

    def enter(self, var, index, ctx):
        if var == self.row_var:
            return Decl("row_n", "index", ZERO), {**ctx, var: index,
                                                   "row": self.row(index, ctx)}
        if self.workspace or var in self.base.tail:    # a tail is located at write time
            return imp.SKIP, {**ctx, var: index}
        return incr("row_n"), {**ctx, var: index}

    def write(self, ctx, v):
        if not self.workspace:
            return imp.SKIP
        return mark_first("row_n", ctx[self.base.ws_var])

    def after(self, var, ctx):
        if var != self.row_var:
            return imp.SKIP
        t = Var("ws_t")
        clear = imp.SKIP if not self.workspace else seq(
            Decl("ws_t", "index", ZERO),
            While(lt(t, Var("row_n")), seq(SetBit("ws_bits", Load("ws_list", t), False),
                                           incr("ws_t"))))
        return seq(clear, Store(self.pos, imp.add(ctx["row"], ONE), Var("row_n")))

    def leave(self, var, ctx):
        return imp.SKIP

    def scatter_blocks(self, var) -> tuple:
        return ()

    def private(self):
        if not self.workspace:
            return ()
        size = streams.dim_var(self.base.ws_var)
        return (("ws_bits", "bits", imp.sort_bits_words(size), ZERO),
                ("ws_list", "index", size, ZERO))


class RowFillTarget(RowCountTarget):
    """Pass 2: each row writes its entries from pos[row] on (the counts are exact,
    so nothing grows). A workspace output sorts each row's touched list in its
    own per-thread workspace and moves it out."""

    def __init__(self, base: AppendTarget):
        super().__init__(base)
        self.starts, self.crd = self.pos, base.arrays["crd1"]     # where rows are written

    def enter(self, var, index, ctx):
        crd = self.crd
        if var == self.row_var:
            # ws_n: this row's touched count, private to the iteration
            row = self.row(index, ctx)
            first = seq(Decl("row_q", "index", Load(self.starts, row)),
                        Decl("ws_n", "index", ZERO) if self.workspace else imp.SKIP,
                        Store(self.base.arrays["crd0"], row, index) if self.hyper
                        else imp.SKIP)
            return first, {**ctx, var: index, "row": row}
        if self.workspace or var in self.base.tail:
            return imp.SKIP, {**ctx, var: index}
        return (seq(Decl("out_p1", "index", Var("row_q")), incr("row_q"),
                    Store(crd, Var("out_p1"), index)),
                {**ctx, var: index, "pos": Var("out_p1"), FRESH: self.base._owns_block(1)})

    def write(self, ctx, v, once=False):
        return self.base.write(ctx, v, once=once)

    def after(self, var, ctx):
        if var != self.row_var or not self.workspace:
            return imp.SKIP
        b = self.base
        move = move_out(b.arrays["crd1"], "row_q", Var("ws_k"), Const(b.sr.zero, "value"))
        return seq(ForSorted("ws_k", "ws_list", Var("ws_n"), streams.dim_var(b.ws_var),
                             "ws_bits", move),
                   Assign("ws_n", ZERO))

    def private(self):
        if not self.workspace:
            return ()
        size = streams.dim_var(self.base.ws_var)
        return (("ws_vals", "value", size, Const(self.base.sr.zero, "value")),
                ("ws_list", "index", size, ZERO),
                ("ws_bits", "bits", imp.sort_bits_words(size), ZERO))


class RowBoundFillTarget(RowFillTarget):
    """Pass 2 of rows filled within bounds: as RowFillTarget, each row into its
    bounded range of bd_crd and bd_vals (from bd_pos[row]), and its entry count
    kept in pos[row + 1]."""

    def __init__(self, base: AppendTarget):
        super().__init__(base)
        self.starts, self.crd = "bd_pos", "bd_crd"

    def write(self, ctx, v, once=False):
        return self.base.write(ctx, v, vals="bd_vals", once=once)

    def after(self, var, ctx):
        if var != self.row_var:
            return imp.SKIP
        row = ctx["row"]
        return Store(self.pos, imp.add(row, ONE), Bin("-", Var("row_q"), Load("bd_pos", row)))


def rows_on_threads(target) -> bool:
    """A sparse output whose rows threads can fill (within bounds, or after a
    counting pass): a dense or unique compressed first level over one unique
    compressed level, appended in order, maybe with a dense tail (csr, csc,
    dcsr, TTM's fibers); or a dense first level over the dense workspace."""
    if type(target) not in (AppendTarget, WorkspaceTarget):
        return False
    levels = target.fmt.levels
    if len(levels) < 2 or not (isinstance(levels[1], Compressed) and levels[1].unique):
        return False
    if type(target) is WorkspaceTarget:
        return target.hashed is False and len(levels) == 2 and isinstance(levels[0], Dense)
    return (type(target) is AppendTarget and target.head == 2
            and (isinstance(levels[0], Dense) or levels[0].unique))


class CoordsTarget(FlatTarget):
    """(coordinates, value) records, to be canonicalised by the runtime."""

    def __init__(self, axes, sr):
        self.axes, self.sr = tuple(axes), sr
        self.arrays = {f"crd{m}": f"out_crd{m}" for m in range(len(self.axes))}
        self.arrays["vals"] = "out_vals"

    def setup(self):
        cap = Const(INITIAL_CAPACITY)
        out = [Decl("out_count", "index", ZERO)]
        out += [Alloc(a, "index", cap, ZERO) for r, a in self.arrays.items() if r != "vals"]
        out.append(Alloc("out_vals", "value", cap, Const(self.sr.zero, "value")))
        return seq(*out)

    def write(self, ctx, v):
        n = Var("out_count")
        need = imp.add(n, ONE)
        out = []
        for m, ax in enumerate(self.axes):
            out += [Reserve(f"out_crd{m}", "index", need), Store(f"out_crd{m}", n, ctx[ax])]
        out += [Reserve("out_vals", "value", need), Store("out_vals", n, v), incr("out_count")]
        return seq(*out)

    def finish(self):
        return imp.SKIP

    def counts(self):
        return {"count": "out_count"}


def prefix_sums(pos: str, rows: imp.Expr, var: str) -> imp.Stmt:
    """pos[r+1] holds row r's count -> pos[r] is where row r starts, for r ≤ rows."""
    r, nxt = Var(var), imp.add(Var(var), ONE)
    return seq(Decl(var, "index", ZERO), While(lt(r, rows), seq(
        Store(pos, nxt, imp.add(Load(pos, nxt), Load(pos, r))), incr(var))))


def copy_row(pos: str, crd: str, block: imp.Expr = ONE) -> imp.Stmt:
    """Row out_c's entries from its range of bd_crd/bd_vals (from bd_pos[out_c])
    to its place in crd/out_vals (from pos[out_c]); each entry holds `block`
    values (a dense tail)."""
    r, k, src, dst = Var("out_c"), Var("out_k"), Var("out_s"), Var("out_d")
    n = Var("out_n")
    head = seq(Decl("out_s", "index", Load("bd_pos", r)), Decl("out_d", "index", Load(pos, r)),
               Decl("out_n", "index", Bin("-", Load(pos, imp.add(r, ONE)), dst)),
               Decl("out_k", "index", ZERO))
    crds = Store(crd, imp.add(dst, k), Load("bd_crd", imp.add(src, k)))
    if block == ONE:
        return seq(head, While(lt(k, n), seq(
            crds, Store("out_vals", imp.add(dst, k), Load("bd_vals", imp.add(src, k))),
            incr("out_k"))))
    m, src_v, dst_v = Var("out_m"), imp.mul(src, block), imp.mul(dst, block)
    return seq(head, While(lt(k, n), seq(crds, incr("out_k"))),
               Decl("out_m", "index", ZERO), While(lt(m, imp.mul(n, block)), seq(
                   Store("out_vals", imp.add(dst_v, m), Load("bd_vals", imp.add(src_v, m))),
                   incr("out_m"))))


class BucketTarget(FlatTarget):
    """A (dense, compressed) output, csr or csc, whose loops run over the compressed
    level's index (col) first: entries arrive in order of col but scattered over
    the dense level's index (row), as when transposing. A counting sort by row,
    done by running the loops twice:

    * the count pass adds each entry to out_pos1[row + 1], and prefix sums turn
      the counts into row starts (bk_next[row], the row's cursor, starts there);
    * the fill pass writes each entry at its row's cursor. A row receives its
      entries in the loops' order, so sorted by col.

    When a summed index is looped over before row (`repeats`), one coordinate is
    written once per value of that index, always before the loops move to the next
    col. The count pass then counts a coordinate only when it differs from the
    last one counted in its row (bk_last[row]), and the fill pass adds it into the
    entry it wrote last in the row, so out_pos1 is exact and the rows canonical."""

    def __init__(self, axes, fmt: Format, repeats: bool):
        self.row, self.col = (axes[m] for m in fmt.mode_order)
        self.repeats = repeats
        self.counting = True            # which pass this target writes
        self.blocked = False            # threads: per-block counts and cursors in bk_blk
        self.arrays = {"pos1": "out_pos1", "crd1": "out_crd1", "vals": "out_vals"}

    def way(self, counting: bool, blocked: bool = False) -> "BucketTarget":
        """This target in the count pass (True) or the fill pass; blocked: in the
        threaded passes (blocked_passes)."""
        t = copy.copy(self)
        t.counting, t.blocked = counting, blocked
        return t

    def setup(self):
        rows = streams.dim_var(self.row)
        return seq(Decl("out_count1", "index", ZERO),
                   Alloc("out_pos1", "index", imp.add(rows, ONE), ZERO),
                   Alloc("out_crd1", "index", ONE, None),
                   Alloc("out_vals", "value", ONE, None),
                   Alloc("bk_last", "index", rows, EMPTY) if self.repeats else imp.SKIP)

    def write(self, ctx, v):
        r, c, p = ctx[self.row], ctx[self.col], Var("bk_p")
        if self.blocked:           # block bk_b's count of row r, then its cursor there
            at = imp.add(imp.mul(Var("bk_b"), streams.dim_var(self.row)), r)
            if self.counting:
                count = Store("bk_blk", at, imp.add(Load("bk_blk", at), ONE))
            else:
                count = seq(Decl("bk_p", "index", Load("bk_blk", at)),
                            Store("out_crd1", p, c), Store("out_vals", p, v),
                            Store("bk_blk", at, imp.add(p, ONE)))
            if not self.repeats:
                return count
            # the block's last col in row r: a repeat adds into the block's own
            # last entry there, which no other block writes
            fresh = seq(Store("bk_lastb", at, c), count)
            if self.counting:
                return If(not_(eq(Load("bk_lastb", at), c)), fresh)
            return If(eq(Load("bk_lastb", at), c),
                      Accum("out_vals", imp.add(Load("bk_blk", at), Const(-1)), v), fresh)
        if self.counting:
            nxt = imp.add(r, ONE)
            count = Store("out_pos1", nxt, imp.add(Load("out_pos1", nxt), ONE))
            if not self.repeats:
                return count
            return If(not_(eq(Load("bk_last", r), c)), seq(Store("bk_last", r, c), count))
        place = seq(Store("out_crd1", p, c), Store("out_vals", p, v),
                    Store("bk_next", r, imp.add(p, ONE)))
        if not self.repeats:
            return seq(Assign("bk_p", Load("bk_next", r)), place)
        last = imp.add(p, Const(-1))
        repeat = imp.and_(lt(Load("out_pos1", r), p), eq(Load("out_crd1", last), c))
        return seq(Assign("bk_p", Load("bk_next", r)),
                   If(repeat, Accum("out_vals", last, v), place))

    def scatter_blocks(self, var) -> tuple:
        """In the fill pass, the entry at row coordinate t goes to out_crd1 and
        out_vals at its row's cursor, bk_next[t] (block bk_b's, on threads): a
        loop over row knows them ahead (a transpose's scattered writes, 20-25%
        of a C counting sort's time when prefetched 32 entries ahead). The
        cursor then read is at most the one that entry will use, so inside the
        arrays."""
        if var != self.row or self.counting or self.repeats:
            return ()
        rows = streams.dim_var(self.row)
        if self.blocked:
            def cursor(t):
                return Load("bk_blk", imp.add(imp.mul(Var("bk_b"), rows), t))
        else:
            def cursor(t):
                return Load("bk_next", t)
        return tuple(streams.Block(a, cursor, lambda t: ONE, Load("out_pos1", rows),
                                   written=True) for a in ("out_crd1", "out_vals"))

    def between(self):
        """After the count pass: row starts, cursors, and the exact room."""
        rows, r = streams.dim_var(self.row), Var("bk_r")
        total = Load("out_pos1", rows)
        return seq(prefix_sums("out_pos1", rows, "bk_r"), Decl("bk_p", "index", ZERO),
                   Alloc("bk_next", "index", rows, None),
                   Assign("bk_r", ZERO), While(lt(r, rows), seq(
                       Store("bk_next", r, Load("out_pos1", r)), incr("bk_r"))),
                   Reserve("out_crd1", "index", total), Reserve("out_vals", "value", total))

    def blocked_passes(self, s, names, sr, threads, markers) -> imp.Stmt | None:
        """Both passes on threads, when the outermost loop is a plain counted loop
        over col: its range is cut into `threads` blocks of consecutive cols.
        Block b counts its entries of each row r in bk_blk[b·rows + r]; a serial
        pass over the rows, blocks in order within each row, turns those counts
        into cursors and pos; then block b writes each entry at its cursor. A
        row gets block 0's entries, then block 1's, …, each block's in loop
        order: sorted by col, as serially. With repeats, every repeat of a
        coordinate comes in one col's iteration, so in one block: each block
        keeps its own last col per row (bk_lastb[b·rows + r], reset to empty
        between the passes) and counts, or merges into its last entry, as the
        serial passes do. None when the loops do not qualify."""
        if (threads < 2 or markers or not is_stream(s) or s.contracted
                or s.var != self.col or streams.Counter not in s.facts or s.ready != imp.TRUE
                or streams.Prelude in s.facts):
            return None
        c, start, end = _counter(s)
        rows, nb = streams.dim_var(self.row), Const(threads)
        b, r = Var("bk_b"), Var("bk_r")
        at = imp.add(imp.mul(b, rows), r)

        def cut(k):                     # first col of block k
            return imp.add(start, Bin("/", imp.mul(Bin("-", end, start), k), nb))

        def on_threads(counting):
            em = Emitter(names, sr, self.way(counting, blocked=True), threads, markers)
            return imp.ParallelFor("bk_b", ZERO, nb, seq(
                Decl(c, "index", cut(b)),
                While(lt(Var(c), cut(imp.add(b, ONE))), seq(em.row_body(s), incr(c)))),
                threads)

        reset = Store("bk_lastb", at, EMPTY) if self.repeats else imp.SKIP
        cursors = seq(Decl("bk_run", "index", ZERO), Assign("bk_r", ZERO), While(
            lt(r, rows), seq(
                Store("out_pos1", r, Var("bk_run")), Assign("bk_b", ZERO),
                While(lt(b, nb), seq(
                    Decl("bk_n", "index", Load("bk_blk", at)),
                    Store("bk_blk", at, Var("bk_run")), reset,
                    Assign("bk_run", imp.add(Var("bk_run"), Var("bk_n"))), incr("bk_b"))),
                incr("bk_r"))),
            Store("out_pos1", rows, Var("bk_run")))
        total = Load("out_pos1", rows)
        return seq(imp.Comment(f"count each block's entries of each row, on {threads} "
                               "threads"),
                   Alloc("bk_blk", "index", imp.mul(nb, rows), ZERO),
                   Alloc("bk_lastb", "index", imp.mul(nb, rows), EMPTY)
                   if self.repeats else imp.SKIP,
                   Decl("bk_b", "index", ZERO), Decl("bk_r", "index", ZERO),
                   on_threads(True), cursors,
                   Reserve("out_crd1", "index", total), Reserve("out_vals", "value", total),
                   imp.Comment("write each entry at its block's cursor in its row"),
                   on_threads(False))

    def finish(self):
        return Assign("out_count1", Load("out_pos1", streams.dim_var(self.row)))

    def counts(self):
        return {"count1": "out_count1"}


def entries_bound(body, axes, tensors: dict, names: imp.Names | None = None,
                  pre: list | None = None) -> imp.Expr | None:
    """An upper bound, computable at kernel entry, on the number of distinct
    coordinates over `axes` (some output axes) at which a Σ-free body is nonzero,
    or None.

    An access whose indices include every one of those axes has at most one such
    coordinate per stored entry of its tensor (the coordinates are a projection
    of its entries); a product has no more than its smallest factor, a sum no
    more than the sum of both sides. A product of two accesses that each miss
    one of the axes is bounded by its join size when that can be counted in one
    pass (`join_size`; its loop goes into `pre`). Literals, and other accesses
    missing one of the axes (broadcast along it), give no bound."""
    out_axes, want = axes, set(axes)
    match body:
        case Access(tensor, indices) if tensor.name in tensors:
            if want <= {ix.name for ix in indices}:
                return stored_entries(tensor.name, tensors[tensor.name].format)
            return None
        case Mul(a, b):
            ba = entries_bound(a, out_axes, tensors, names, pre)
            bb = entries_bound(b, out_axes, tensors, names, pre)
            if ba is None and bb is None and names is not None and pre is not None:
                return (join_size(a, b, want, tensors, names, pre)
                        or join_size(b, a, want, tensors, names, pre))
            return imp.min_bound(ba, bb)
        case Add(a, b):
            return imp.sum_bound(entries_bound(a, out_axes, tensors, names, pre),
                                 entries_bound(b, out_axes, tensors, names, pre))
    return None


def join_size(a, b, want: set, tensors: dict, names: imp.Names, pre: list):
    """|a ⋈ b|, the number of pairs of stored entries of a and b that agree on their
    one shared index j, as a variable that statements appended to `pre` compute;
    None when it cannot be counted that way.

    Every coordinate over `want` (⊆ the indices of a and b) where a·b is nonzero
    is the projection of such a pair, so the join size bounds them: Gustavson's
    product A[i,j]·B[j,k] writes at most Σ over A's entries of the length of B's
    row j. It is counted when j is a's last storage level and a compressed one
    (its crd gives j for every entry), and b's first storage level is dense over
    j with only dense and compressed levels below (the entries under j are one
    range of positions): one pass over a's entries, two loads each."""
    if not (isinstance(a, Access) and isinstance(b, Access)
            and a.tensor.name in tensors and b.tensor.name in tensors):
        return None
    ia, ib = [x.name for x in a.indices], [x.name for x in b.indices]
    shared = set(ia) & set(ib)
    if len(shared) != 1 or not want <= set(ia) | set(ib):
        return None
    (j,) = shared
    fa, fb = tensors[a.tensor.name].format, tensors[b.tensor.name].format
    sa = [ia[m] for m in fa.mode_order]
    sb = [ib[m] for m in fb.mode_order]
    if not (sa[-1] == j and isinstance(fa.levels[-1], Compressed) and sb[0] == j
            and isinstance(fb.levels[0], Dense) and len(fb.levels) > 1
            and all(isinstance(lv, (Dense, Compressed)) for lv in fb.levels)):
        return None
    ba = streams.array_names(a.tensor.name, fa)
    bb = streams.array_names(b.tensor.name, fb)
    total, q = names.fresh("join_size"), names.fresh("join_q")
    lo: imp.Expr = Load(ba.levels[-1]["crd"], Var(q))
    hi: imp.Expr = imp.add(lo, ONE)
    for lev in range(1, len(fb.levels)):
        if isinstance(fb.levels[lev], Dense):
            size = Var(f"{b.tensor.name}_dim{fb.mode_order[lev]}")
            lo, hi = imp.mul(lo, size), imp.mul(hi, size)
        else:
            pos = bb.levels[lev]["pos"]
            lo, hi = Load(pos, lo), Load(pos, hi)
    pre += [Decl(total, "index", ZERO), Decl(q, "index", ZERO),
            While(lt(Var(q), stored_entries(a.tensor.name, fa)),
                  seq(Assign(total, imp.add(Var(total), Bin("-", hi, lo))), incr(q)))]
    return Var(total)


def stored_entries(name: str, fmt: Format) -> imp.Expr:
    """The number of values an input tensor stores, read from its level arrays."""
    return streams.array_names(name, fmt).positions(len(fmt.levels) - 1)


def _make_output(mode, axes, fmt, sr, names, bound=None, step=None, hash_workspace=True):
    if mode == "dense":
        t = DenseTarget("out", axes, sr)
        params = [Param("out", "out_dense", "value",
                        "output, row-major over (" + ", ".join(axes) + "); filled by the kernel"),
                  Param(ZEROED, "out_zeroed", "index",
                        "nonzero if out already holds the semiring's zero in every cell "
                        "(the kernel then skips its fill), else 0")]
        return t, params, Output("dense", axes, fmt, {"vals": "out"}), t.finish()
    if mode == "bucket":
        row = axes[fmt.mode_order[0]]
        t = BucketTarget(axes, fmt, repeats=any(
            v in step.bound for v in step.order[:list(step.order).index(row)]))
    elif mode == "append":
        t = AppendTarget(axes, fmt, sr, names, bound)
    elif mode == "workspace":
        t = WorkspaceTarget(axes, fmt, sr, names, bound)
        t = t if hash_workspace else t.way(False)
    else:
        t = CoordsTarget(axes, sr)
    params = [Param(arr, "out_grown", "value" if role == "vals" else "index",
                    f"output {role}: set to a malloc'ed array; the caller frees it")
              for role, arr in t.arrays.items()]
    params += [Param(var, "out_count", "index", f"output {role}: number of entries written")
               for role, var in t.counts().items()]
    return t, params, Output(mode, axes, fmt, dict(t.arrays), t.counts()), t.finish()

# ------------------------------------------------------------------- emitter


class Emitter:
    def __init__(self, names: imp.Names, sr, target, threads: int = 1, markers=False):
        self.names, self.sr, self.target, self.threads = names, sr, target, threads
        self.markers = markers       # the step fills shared marker scratch in its loops

    def emit_step(self, s) -> imp.Stmt:
        """A step's loop nest; its outermost loop runs on threads when that is safe."""
        if self.parallel_ok(s):
            return self.parallel(s)
        if self.rows_ok(s):
            return self.parallel_rows(s)
        if self.reduction_ok(s):
            return self.parallel_reduction(s)
        return self.emit(s, self.top())

    def top(self) -> dict:
        """The ctx a step's outermost level starts from: FRESH when the target is
        a dense output that is zero on entry and written by this step alone (so a
        cell prefix bound by free levels only is visited once)."""
        return {FRESH: bool(getattr(self.target, "fresh", False))}

    def reduction_ok(self, s) -> bool:
        """A full reduction (every level contracted) whose outermost level is a plain
        counted loop: per-thread accumulators, added up after the loop."""
        return (self.threads > 1 and not self.markers and isinstance(self.target, DenseTarget)
                and is_stream(s) and streams.Counter in s.facts and s.ready == imp.TRUE
                and streams.Prelude not in s.facts
                and all(lv.contracted for lv in streams.levels_of(s)))

    def parallel_reduction(self, s) -> imp.Stmt:
        c, start, end = _counter(s)
        acc = self.names.fresh("acc")
        return seq(Decl(acc, "value", Const(self.sr.zero, "value")),
                   imp.Comment(f"Σ {s.var}: {s.search}, split across {self.threads} threads, "
                               f"one accumulator per block"),
                   imp.ParallelFor(c, start, end, self.accumulate(s.value, acc), self.threads,
                                   reduce=acc),
                   self.target.write({}, Var(acc)))

    def parallel_ok(self, s) -> bool:
        """Dense target, outermost level free and a plain counted loop: disjoint rows.

        Not with markers: their scratch arrays are shared and filled inside the loop
        (and the split loop skips the outer level's init, which may hold a fill).
        """
        return (self.threads > 1 and not self.markers and isinstance(self.target, DenseTarget)
                and is_stream(s) and not s.contracted and streams.Counter in s.facts
                and s.ready == imp.TRUE and streams.Prelude not in s.facts)

    def parallel(self, s) -> imp.Stmt:
        c, start, end = _counter(s)
        return seq(imp.Comment(f"{s.var}: {s.search}, split across {self.threads} threads"),
                   imp.ParallelFor(c, start, end, self.row_body(s, self.top()), self.threads))

    def row_body(self, s, ctx=None) -> imp.Stmt:
        """One iteration of the outermost level (its coordinate, entered and left)."""
        iv = self.names.fresh(f"{s.var}_")
        enter, ctx = self.target.enter(s.var, Var(iv), ctx or {})
        body = seq(enter, self.emit(s.value, ctx), self.target.after(s.var, ctx))
        if iv not in imp.names_used(body):    # a counting pass may not need the index
            return body
        return seq(Decl(iv, "index", s.index), body)

    def rows_ok(self, s) -> bool:
        """A csr-like sparse output whose rows are the outermost, plainly counted loop."""
        return (self.threads > 1 and not self.markers and rows_on_threads(self.target)
                and is_stream(s) and not s.contracted and streams.Counter in s.facts
                and s.var == self.target.storage[0]
                and s.ready == imp.TRUE and streams.Prelude not in s.facts)

    def parallel_rows(self, s) -> imp.Stmt:
        """Fill a csr-like output's rows on threads: within bounds when each row's
        entries are bounded by its column stream's `most` (no workspace), else
        after counting them."""
        col = s.value
        if (isinstance(self.target, WorkspaceTarget) or not is_stream(col)
                or col.var != self.target.storage[1] or col.contracted or _most(col) is None):
            return self.counted_rows(s)
        return self.bounded_rows(s, col)

    def row_frame(self, s):
        """How the rows of a sparse output filled on threads are numbered:
        (number of rows, the ctx that gives row_body the iteration, statements
        before the passes, statements after them). A dense first level's rows
        are its indices. A compressed first level appends one coordinate per
        iteration of the outermost loop (whose ready is true), so its rows are
        the iterations, c − start, and its arrays are known up front: pos0 =
        (0, rows), and each row stores its coordinate in crd0 in the fill pass."""
        c, start, end = _counter(s)
        t = self.target
        if isinstance(t.fmt.levels[0], Dense):
            return streams.dim_var(t.storage[0]), {}, imp.SKIP, imp.SKIP
        rows = Bin("-", end, start)
        before = seq(Reserve(t.arrays["crd0"], "index", rows),
                     Reserve(t.arrays["pos1"], "index", imp.add(rows, ONE), ZERO))
        after = seq(Store(t.arrays["pos0"], ONE, rows), Assign(t.count[0], rows))
        return rows, {"iteration": Bin("-", Var(c), start)}, before, after

    def counted_rows(self, s) -> imp.Stmt:
        """Count each row's entries on threads, turn the counts into pos, size the
        output exactly, then fill the rows on threads, each into its own range."""
        c, start, end = _counter(s)
        t = self.target
        pos, count = t.arrays["pos1"], t.count[1]
        rows, it, before, after = self.row_frame(s)
        passes = []
        for target in (RowCountTarget(t), RowFillTarget(t)):
            em = Emitter(self.names, self.sr, target, self.threads, self.markers)
            passes.append(imp.ParallelFor(c, start, end, em.row_body(s, it), self.threads,
                                          private=target.private()))
        total = Load(pos, rows)
        return seq(imp.Comment(f"{s.var}: {s.search}; rows counted, then filled, "
                               f"on {self.threads} threads"),
                   before, passes[0], prefix_sums(pos, rows, "out_r"),
                   Reserve(t.arrays["crd1"], "index", total),
                   Reserve("out_vals", "value", imp.mul(total, t.block),
                           t._zero() if t.tail else None),
                   passes[1], Assign(count, total), after)

    def bounded_rows(self, s, col) -> imp.Stmt:
        """Each row's column stream, right after its init, bounds the row's entries
        (`most`, O(1) per row: A+B's is the sum of its two segments' lengths). On
        threads: the bounds are summed into ranges of scratch arrays, each row
        fills its range and keeps its count in pos, and after the counts' prefix
        sums each row is copied into place. This replaces a counting pass that
        ran each row's loop (A+B's merge) twice. When every row met its bound
        (the total is the room: a TTM or an SDDMM, whose rows are an operand's
        segments), the scratch arrays already are the output and are moved."""
        c, start, end = _counter(s)
        t = self.target
        pos, crd, count = t.arrays["pos1"], t.arrays["crd1"], t.count[1]
        rows, it, before, after = self.row_frame(s)
        row = it.get("iteration") or Var(self.names.fresh(f"{s.var}_"))
        bound = seq(_slice(col.init, _most(col)), Store("bd_pos", imp.add(row, ONE), _most(col)))
        decls = _state_decls(col, bound)
        if isinstance(row, Var):
            decls = [Decl(row.name, "index", s.index), *decls]
        fill = Emitter(self.names, self.sr, RowBoundFillTarget(t), self.threads,
                       self.markers)
        room, total = Load("bd_pos", rows), Load(pos, rows)
        zero = t._zero() if t.tail else None
        return seq(imp.Comment(f"{s.var}: {s.search}; rows bounded, filled on "
                               f"{self.threads} threads, then moved into place"),
                   before, Alloc("bd_pos", "index", imp.add(rows, ONE), ZERO),
                   imp.ParallelFor(c, start, end, seq(*decls, bound), self.threads),
                   prefix_sums("bd_pos", rows, "out_r"),
                   Alloc("bd_crd", "index", room, None),
                   Alloc("bd_vals", "value", imp.mul(room, t.block), zero),
                   imp.ParallelFor(c, start, end, fill.row_body(s, it), self.threads),
                   prefix_sums(pos, rows, "out_r2"),
                   # every row met its bound: the ranges are the output's layout
                   If(eq(total, room), seq(Move(crd, "bd_crd"), Move("out_vals", "bd_vals")),
                      seq(Reserve(crd, "index", total),
                          Reserve("out_vals", "value", imp.mul(total, t.block)),
                          imp.ParallelFor("out_c", ZERO, rows, copy_row(pos, crd, t.block),
                                          self.threads))),
                   Assign(count, total), after)

    def emit(self, s, ctx, blocks=True) -> imp.Stmt:
        if not is_stream(s):
            return self.target.write(ctx, s)
        block = self.block_axis(s, ctx) if blocks else None
        if block is not None:
            return self.emit_block(s, ctx, block)
        if all(lv.contracted for lv in streams.levels_of(s)):
            acc = self.names.fresh("acc")
            return seq(Decl(acc, "value", Const(self.sr.zero, "value")),
                       self.accumulate(s, acc), self.target.write(ctx, Var(acc)))
        room, ctx_in = (imp.SKIP, ctx) if s.contracted else \
            self.target.reserve(s.var, _most(s), ctx)
        if not s.contracted:
            s = _with_prefetch(s, self.target.scatter_blocks(s.var))

        def record(v):          # what one ready record of v does
            if v.contracted:
                return self.emit(v.value, {**ctx, FRESH: False})
            iv = self.names.fresh(f"{v.var}_")
            enter, ctx2 = self.target.enter(v.var, Var(iv), ctx_in)
            rest = seq(enter, self.emit(v.value, ctx2), self.target.after(v.var, ctx2))
            if iv not in imp.names_used(rest):       # a counting pass needs no index
                return rest
            return seq(Decl(iv, "index", v.index), rest)

        leave = imp.SKIP if s.contracted else self.target.leave(s.var, ctx)
        return seq(self.loop(s, record, room), leave)

    def block_axis(self, s, ctx) -> str | None:
        """r, when s is a contracted level whose levels below are contracted too
        but for the innermost, a free dense range r that is the last axis of the
        output: every state of these levels adds into the same block
        out[..., 0:n]. Else None.

        * In a FRESH block (see FRESH: a dense output written by one step, or a
          sparse output's tail block appended with its position) one contracted
          level is enough: the flush stores and never reads the output, whose
          memory is fresh. Alternating in one process: SpMM (j over ~10 entries
          a row) 0.93x, TTM into fibers 0.89x (two threads 0.76x), dense TTM
          1.00x (two threads 0.78x), MTTKRP 0.62x. A flush that added into the
          fresh output cost more than it saved (SpMM 0.99x, dense TTM 1.17x;
          fibers 1.17x in a C driver, and zeroing each block when appended and
          adding into it 1.16x).
        * Otherwise (out written by several steps, or a contracted level above
          the block) at least two contracted levels, and the flush adds in."""
        if not (BLOCK_SIZES and s.contracted):
            return None
        levels = streams.levels_of(s)
        inner = levels[-1]
        if (inner.contracted or streams.Dense not in inner.facts
                or any(not lv.contracted for lv in levels[:-1])):
            return None
        if isinstance(self.target, DenseTarget):
            least = 2 if ctx.get(FRESH) else 3
            last = self.target.axes[-1]
            return inner.var if len(levels) >= least and last == inner.var else None
        tail = getattr(getattr(self.target, "base", self.target), "tail", None)
        return inner.var if ctx.get(FRESH) and tail == [inner.var] else None

    def emit_block(self, s, ctx, r) -> imp.Stmt:
        """The levels from s add into a local block blk[0:n], n the extent of r,
        which is then added into out once (stored, in a FRESH block). When n is
        one of BLOCK_SIZES the nest
        is emitted with n a constant, so that the C compiler unrolls the loops over
        r and keeps the block in registers instead of loading and storing the
        output row at every state (MTTKRP rank 16, alternating in one process:
        7.07 -> 4.75 ms on one thread; 4.1 -> 2.8 ms on two); for any other n as
        without blocks."""
        dim = streams.dim_var(r)
        out = self.emit(s, ctx, blocks=False)
        once = {"once": True} if ctx.get(FRESH) else {}
        for n in reversed(BLOCK_SIZES):
            blk, t = self.names.fresh(f"{r}_blk"), self.names.fresh(f"{r}_t")
            inner = Emitter(self.names, self.sr, BlockTarget(blk, r), self.threads,
                            self.markers)
            flush = seq(Decl(t, "index", ZERO), While(lt(Var(t), dim), seq(
                self.target.write({**ctx, r: Var(t)}, Load(blk, Var(t)), **once), incr(t))))
            body = seq(imp.Comment(f"the block over {r} ({n} values) in registers"),
                       imp.LocalArray(blk, n, Const(self.sr.zero, "value")),
                       inner.emit(s, ctx), flush)
            out = If(eq(dim, Const(n)), imp.substitute(body, dim.name, Const(n)), out)
        return out

    def accumulate(self, s, acc) -> imp.Stmt:
        if not is_stream(s):
            return Assign(acc, Ring("add", Var(acc), s))
        return self.loop(s, lambda v: self.accumulate(v.value, acc),
                         runs=not is_stream(s.value))

    def loop(self, s, record, room=imp.SKIP, runs=False) -> imp.Stmt:
        """init, then `while valid: (if ready: record) ; next`, where record(v) is the
        code for one ready record of v (s, or one of its phases, run in turn), and a
        level that gathers rows of large operands prefetches some first. `room`
        runs right after init (it reads s.most, the output space the loop needs).
        `runs`: the loop only adds up a leaf's values (SpMV's row), so little but
        memory holds it back, and its arrays are prefetched (prefetch_runs)."""
        fetch = self.prefetch_ahead(s)
        if not runs:
            s = s.derive(s.facts.keep(*[k for k in streams.RUN_FACTS if k is not streams.Runs]))
        init = seq(s.init, If(runs_wanted(s, RUN_SHORT), prefetch_runs(s))
                   if streams.Runs in s.facts else imp.SKIP, room)
        seg = s.facts.get(streams.Segment)
        hide = streams.hidden(seg.q, DEFAULT) if seg else imp.SKIP

        def step(v, nxt, on_ready):
            return While(v.valid, seq(hide, fetch, imp.if_(v.ready, on_ready), nxt))

        nxt = s.next
        on_ready = record(s)
        small = _size(on_ready) <= UNSWITCH_LIMIT
        if streams.Split in s.facts and not is_stream(s.value) and small:
            body = seq(init, *self.phases(s, record))
        elif (streams.Choice in s.facts and isinstance(nxt, If)
                and nxt.cond == Var(s.facts.get(streams.Choice).flag)
                and nxt.else_ is not None and small):
            # next picks its way by a flag that init sets: one loop per way, so the
            # flag is tested once per segment instead of once per step
            merge = step(s, nxt.else_, on_ready)
            if streams.Short in s.facts:
                merge = If(short_fits(s.facts.get(streams.Short)), short_intersect(s, on_ready),
                           merge)
            body = seq(init, If(nxt.cond, step(s, nxt.then, on_ready), merge))
        elif streams.Runs in s.facts and small:
            # a long segment also prefetches at every step (one prefetch per row
            # cannot keep ahead of rows of many lines)
            long = seq(prefetch_runs(s), fetch)
            body = seq(init, If(runs_wanted(s, RUN_LONG),
                                While(s.valid, seq(long, imp.if_(s.ready, on_ready), nxt)),
                                step(s, nxt, on_ready)))
        else:
            body = seq(init, step(s, nxt, on_ready))
        decls = _state_decls(s, body)        # state only some operation needs
        ahead = "" if fetch == imp.SKIP else "; rows of large operands prefetched ahead"
        if streams.Runs in s.facts:
            ahead += f"; its arrays prefetched {RUN_AHEAD} ahead"
        return seq(imp.Comment(f"{'Σ ' if s.contracted else ''}{s.var}: {s.search}{ahead}"),
                   *decls, body)

    def prefetch_ahead(self, s) -> imp.Stmt:
        """At each state of a segment level that gathers rows of other operands at
        its coordinates (SpMM's X[j,:], SDDMM's V[j,:], Gustavson's B[j,:]):
        prefetch the rows that PREFETCH_DISTANCE states later will read, up to
        PREFETCH_SPAN values each, when that operand holds at least
        PREFETCH_MIN_BYTES of values (checked per call: a smaller one stays in
        cache, and the prefetches would only cost instructions; MTTKRP's 128 KB
        factors ran 20% slower with them; with the test, which fails on every
        step there, the loop is still ~7% slower, the same as with one loop per
        outcome of the test). A compressed row starts at pos[t], which is itself
        prefetched twice as far ahead, so it is in cache when the row's address
        is computed. crd[q + d] is read only while q + d is inside crd; rows of
        one value (SpMV's x[j]) are left to the hardware. The blocks the target
        will write at that coordinate (scatter_blocks: a counting sort's
        destinations) are prefetched for writing, one value each."""
        ahead, fetch, counter = (s.facts.get(k) for k in (streams.Ahead, streams.Prefetch,
                                                          streams.Counter))
        if not (ahead and fetch and counter):
            return imp.SKIP
        crd, n = ahead.crd, ahead.n
        at = imp.add(Var(counter.name), Const(PREFETCH_DISTANCE))
        at2 = imp.add(Var(counter.name), Const(2 * PREFETCH_DISTANCE))
        t = self.names.fresh(f"{s.var}_ahead")
        line = Const(max(1, 64 // self.sr.dtype.itemsize))
        body, early, big, seen = [Decl(t, "index", Load(crd, at))], [], [], set()
        for blk in fetch.blocks:
            length = blk.length(Var(t))
            wide = imp.le(Const(PREFETCH_MIN_BYTES // self.sr.dtype.itemsize), blk.total)
            if blk.written and length == ONE:
                big += [] if wide in big else [wide]
                body.append(imp.Prefetch(blk.array, blk.offset(Var(t)), write=True))
                continue
            if isinstance(length, Const) and length.value < 2:
                continue
            big += [] if wide in big else [wide]
            k, m, o = (self.names.fresh(f"{s.var}_{x}") for x in ("pf", "pf_n", "pf_at"))
            body += [Decl(k, "index", ZERO), Decl(o, "index", blk.offset(Var(t))),
                     Decl(m, "index", imp.min_(length, Const(PREFETCH_SPAN))),
                     While(lt(Var(k), Var(m)), seq(
                         imp.Prefetch(blk.array, imp.add(Var(o), Var(k))),
                         Assign(k, imp.add(Var(k), line))))]
            if blk.via is not None and blk.via[0] not in seen:
                seen.add(blk.via[0])
                early.append(imp.Prefetch(blk.via[0], blk.via[1](Load(crd, at2))))
        if not big:
            return imp.SKIP
        wanted = big[0]
        for b in big[1:]:
            wanted = imp.or_(wanted, b)
        fetch = If(imp.and_(wanted, lt(at, n)), seq(*body))
        if not early:
            return fetch
        return seq(If(imp.and_(wanted, lt(at2, n)), seq(*early)), fetch)

    def phases(self, s, record) -> list:
        """The loop of a union of leaf levels as four loops, one per phase: both
        operands valid, only a, only b, neither (for an enclosing union).

        Each loop runs while its phase holds and s is valid, with the operands'
        validity tests folded in the records and in the statements of next that
        come before it moves any state. An exhausted operand stays exhausted, so
        the phases only ever move forward in this order, and the four loops visit
        the states of the one loop `while valid: …` in the same order."""
        split = s.facts.get(streams.Split)
        va, vb = split.a_valid, split.b_valid
        loops = []
        for facts in ({va: True, vb: True}, {va: True, vb: False},
                      {va: False, vb: True}, {va: False, vb: False}):
            holds = imp.and_(imp.and_(va if facts[va] else imp.not_(va),
                                      vb if facts[vb] else imp.not_(vb)),
                             imp.assume(s.valid, facts))
            if holds == imp.FALSE:
                continue
            v = dataclasses.replace(s, valid=holds, ready=imp.assume(s.ready, facts),
                                    index=imp.assume(s.index, facts),
                                    value=imp.assume(s.value, facts))
            loops.append(While(v.valid, seq(imp.if_(v.ready, record(v)),
                                            _assume_ahead(s.next, facts))))
        return loops


def _assume_ahead(nxt, facts) -> imp.Stmt:
    """next with the facts folded into its leading assignments, up to the first
    statement that could change a variable the facts read."""
    reads = set().union(*(imp.names_used(f) for f in facts))
    stmts = list(nxt.stmts) if isinstance(nxt, imp.Seq) else [nxt]
    for k, st in enumerate(stmts):
        if not (isinstance(st, Assign) and st.name not in reads):
            break
        stmts[k] = Assign(st.name, imp.assume(st.value, facts))
    return seq(*stmts)


def runs_wanted(s, least: int) -> imp.Expr:
    """The level's arrays are large (RUN_MIN_ENTRIES entries or more: an operand
    in cache gains nothing and pays the tests and prefetches, 293 against 276 us
    for a 2e5-entry SpMV) and this segment has at least `least` entries."""
    return imp.and_(imp.le(Const(RUN_MIN_ENTRIES), s.facts.get(streams.Runs).n),
                    imp.le(Const(least), s.facts.get(streams.Extent).n))


def prefetch_runs(s) -> imp.Stmt:
    """For a level whose segments follow one another (SpMV's rows): prefetch each
    array it reads at its position (crd, values) RUN_AHEAD entries past position q,
    clamped to one past the end. Run at the start of each segment of at least
    RUN_SHORT entries, and at every step of one of at least RUN_LONG, when the
    level's arrays are large (runs_wanted).

    The hardware's own prefetcher alone leaves a 5-point stencil SpMV (5 entries a
    row) at ~60% of a one-pass triad's bandwidth; one prefetch per array per row
    made it 27% faster in a C loop, and 10% on 10 random columns a row; at every
    step, 15% on 50 a row. Only loops that just add up a leaf's values get them:
    segments of ~1 entry (TTV's), bodies that scatter (a transpose) and non-leaf
    levels (MTTKRP's) ran 2-8% slower with them."""
    runs = s.facts.get(streams.Runs)
    if runs is None:
        return imp.SKIP
    q, arrays, n = s.facts.get(streams.Segment).q, runs.arrays, runs.n
    at = imp.min_(imp.add(Var(q), Const(RUN_AHEAD)), n)
    return seq(*(imp.Prefetch(a, at) for a in arrays))


# A segment with fewer entries than this prefetches nothing (TTV's k segments hold
# ~1 entry: a prefetch per entry cost 5%).
RUN_SHORT = 4

# A segment with at least this many entries prefetches its arrays at every step
# (50 entries a row: 15% faster in a C loop; 5 or 10 a row: slower).
RUN_LONG = 32

# Extents of a dense output's last axis for which a contracted loop nest over it is
# also emitted with the extent a constant and its block of the output in registers
# (Emitter.emit_block). Each one is one more copy of that nest in the C.
BLOCK_SIZES = (16, 32)

# A level with fewer entries than this (4 MB of doubles) prefetches nothing.
RUN_MIN_ENTRIES = 1 << 19

# Entries ahead of a segment's start that prefetch_runs fetches (2 KB of doubles,
# 1 KB of int32 coordinates): far enough for the memory's latency at one row per
# few nanoseconds, near enough to be in cache when the loop gets there.
RUN_AHEAD = 256

# A segment level that gathers rows of dense operands prefetches the rows this many
# states ahead, at most PREFETCH_SPAN values of each.
PREFETCH_DISTANCE = 16
PREFETCH_SPAN = 64
PREFETCH_MIN_BYTES = 1 << 20


# A loop whose body has at most this many statements is emitted once per way of a
# per-segment choice (merge or leapfrog); a larger one tests the flag at each step.
# With every level of inner3's three nested intersections unswitched there are 8
# copies of the innermost loop (896 lines of C, 1.35 s of gcc). At 100 the
# outermost level (1000 steps) tests its flag per step and the two inner levels
# are unswitched: 376 lines and about 0.2 s of gcc, at the same speed as all
# unswitched. No other benchmark kernel changes. (Sizes count Imp statements; a
# skip is one imp.Seek.)
UNSWITCH_LIMIT = 100


def short_fits(short) -> imp.Expr:
    """Both segments of an intersection are short, and both arrays hold
    SHORT_SEGMENT entries from the segments' starts (imp.ShortIntersect)."""
    n = Const(imp.SHORT_SEGMENT)
    fits = imp.TRUE
    for seg in (short.a, short.b):
        fits = imp.and_(fits, imp.and_(imp.le(Bin("-", Var(seg.end), Var(seg.q)), n),
                                       imp.le(imp.add(Var(seg.q), n), seg.crd_len)))
    return fits


def short_intersect(s, on_ready) -> imp.Stmt:
    """The ready states of a merging intersection of two short segments, found at
    once: the same states, in the same order, as the merge loop's."""
    a, b = s.facts.get(streams.Short).a, s.facts.get(streams.Short).b
    return imp.ShortIntersect(a.q, a.end, a.crd, b.q, b.end, b.crd, imp.if_(s.ready, on_ready))


def _state_decls(v, stmt) -> list:
    """Declarations of the state of stream v that stmt uses."""
    used = imp.names_used(stmt)
    return [Decl(n, t, Const(False, "bool") if t == "bool" else ZERO)
            for n, t in v.state if n in used]


def _slice(init, expr) -> imp.Stmt:
    """The statements of `init` that the value of expr depends on: a backward
    slice over its top-level assignments (other statements are kept whole). A
    bound read right after a stream's init needs its segment ends, not the
    rest of its state (A∘B's gallop flag), which would be set and never read."""
    def flat(s):
        return [u for t in s.stmts for u in flat(t)] if isinstance(s, imp.Seq) else [s]
    need, kept = imp.names_used(expr), []
    for st in reversed(flat(init)):
        if isinstance(st, Assign) and st.name not in need:
            continue
        kept.append(st)
        need |= imp.names_used(st)
    return seq(*reversed(kept))



def _counter(s) -> tuple:
    """(name, first, end) of the Counter fact of s."""
    c = s.facts.get(streams.Counter)
    return c.name, c.first, c.end


def _most(s) -> imp.Expr | None:
    """The bound of the Most fact of s, or None."""
    m = s.facts.get(streams.Most)
    return None if m is None else m.bound


def _with_prefetch(s, blocks: tuple):
    """s with `blocks` added to the blocks its loop prefetches."""
    old = s.facts.get(streams.Prefetch)
    both = (() if old is None else old.blocks) + blocks
    return s.derive(s.facts.add(streams.Prefetch(both) if both else None))


def _size(stmt) -> int:
    return sum(1 for _ in imp.statements(stmt))

# ------------------------------------------------------------------ running on Imp


def run_program(prog: Program, sr, env: dict):
    """Run a program on the Imp interpreter; returns the final environment."""
    machine = imp.Machine(sr, env)
    machine.env.setdefault(ZEROED, 0)
    for var, tensor, mode in prog.dims:
        machine.env.setdefault(f"dim_{var}", env[f"{tensor}_dim{mode}"])
    for var, most in prog.refuse_above:
        if machine.env[f"dim_{var}"] > most:
            raise imp.ImpRuntimeError(f"dimension {var} = {machine.env[f'dim_{var}']} is "
                                      f"refused (> {most})")
    machine.exec(prog.body)
    return machine.env
