"""A sparse output assembled in order: the loop order visits the output's levels
in storage order, all contracted indices below them. Levels are located
(position p·n + i) or append (in the segment layout of formats.level, grown by
doubling), then a located tail; unvisited parents of an appending level get
their segments filled forward at the end. Each level builds its own steps."""
from __future__ import annotations

from ... import imp
from ...formats import Format
from ...imp import ONE, Accum, Alloc, Const, Decl, Load, Reserve, Store, Var, While, seq
from ... import streams
from ..target import FlatTarget, output, product


def appendable(fmt: Format) -> bool:
    """Located levels, appending levels, then located levels again (csr, csc,
    dcsr, csf, (compressed, compressed, dense), …)."""
    sparse = [k for k, lv in enumerate(fmt.levels) if not lv.located]
    return all(fmt.levels[k].appends
               for k in range(sparse[0], sparse[-1] + 1)) if sparse else True


def sparse_prefix(fmt: Format) -> int:
    """The number of levels up to and including the last one not located."""
    sparse = [k for k, lv in enumerate(fmt.levels) if not lv.located]
    return sparse[-1] + 1 if sparse else 0


def in_order(w, skip_last=False) -> bool:
    """One step writes the output (lower.target.Want), its format appendable, and
    its loop order starts with the output's levels down to the last appending one
    (all but the last level: `skip_last`, a workspace's); trailing located levels
    may come anywhere later, since their block is allocated when its parent is
    appended."""
    if w.step is None or not appendable(w.fmt):
        return False
    storage = w.storage[:sparse_prefix(w.fmt)]
    storage = storage[:-1] if skip_last else storage
    return list(w.step.order[:len(storage)]) == storage


@output("append", 10, in_order)
def _append(w):
    return AppendTarget(w.axes, w.fmt, w.sr, w.names, w.tuning, w.bound)


class AppendTarget(FlatTarget):
    """Located levels, appending levels, and a located tail. Appending a position
    at the last appending level also appends its zero-filled block of the tail,
    into which the tail's values accumulate: zeroed as the position is appended
    (`tuning.zero_on_append`: vals is allocated and grown unzeroed, so a kept
    block serves it), else by vals being zero past the appended blocks.

    bound(axes, pre): an upper bound, read from the inputs at entry, on the
    distinct coordinates over those axes (schedule.bounds.entries_bound), or
    None. It sets the first capacity of each appending level, so that appends
    rarely grow the arrays; statements it needs go into `pre`."""

    def __init__(self, axes, fmt: Format, sr, names: imp.Names, tuning, bound=None):
        self.sr, self.fmt, self.tuning, self.bound = sr, fmt, tuning, bound
        self.bounds: dict = {}          # level -> first capacity (see _first_capacity)
        self.bound_pre: list = []
        self.storage = [axes[m] for m in fmt.mode_order]
        self.level_of = {v: k for k, v in enumerate(self.storage)}
        self.head = sparse_prefix(fmt)
        self.tail = self.storage[self.head:]         # trailing located levels
        self.block = product([streams.dim_var(v) for v in self.tail])
        self.arrays: dict[str, str] = {}
        self.count: dict[int, str] = {}
        self.at: dict[int, str] = {}                 # level -> its appended position
        for k, lv in enumerate(fmt.levels):
            if not lv.located:
                for role in lv.roles:
                    self.arrays[f"{role}{k}"] = names.fresh(f"out_{role}{k}")
                self.count[k] = names.fresh(f"out_count{k}")
        self.arrays["vals"] = self.vals = names.fresh("out_vals")
        for k in self.count:
            self.at[k] = names.fresh(f"out_p{k}")
        self.fill_r = {k: names.fresh(f"out_r{k}") for k in self.count}
        self.zero_k = names.fresh("out_z")

    def level_arrays(self, k) -> dict:
        """Level k's output arrays by role (see formats.level)."""
        return {role: self.arrays[f"{role}{k}"] for role in self.fmt.levels[k].roles}

    def segment(self, k) -> tuple[str, str]:
        """(starts, coords): the output arrays of appending level k in the segment
        layout (formats.level segment_roles), for passes that fill it row by row."""
        arrays = self.level_arrays(k)
        return tuple(arrays[r] for r in self.fmt.levels[k].segment_roles)

    def _parents(self, k):
        """The number of parent positions of level k, as an Imp expression: the
        count of the last appending level above, times the located sizes since."""
        n = ONE
        for kk in range(k):
            if kk in self.count:
                n = Var(self.count[kk])
            else:
                n = imp.mul(n, streams.dim_var(self.storage[kk]))
        return n

    def _static_parents(self, k):
        return all(lv.located for lv in self.fmt.levels[:k])

    def setup(self):
        out = []
        for k in self.count:
            parents = self._parents(k) if self._static_parents(k) else None
            out.append(self.fmt.levels[k].start(
                self.level_arrays(k), self.count[k], parents, self._first_capacity(k),
                Const(self.tuning.initial_capacity)))
        if self._static_parents(len(self.fmt.levels)):   # nothing appends: every cell
            size = product([streams.dim_var(v) for v in self.storage])
            out.append(Alloc(self.vals, "value", size, self.zero()))
        else:
            # without a tail each value is stored when appended; with one, values
            # accumulate into their block: zeroed as appended (zero_on_append), or
            # vals zero everywhere past the appended blocks (calloc, grown zeroed)
            cap = imp.mul(self._first_capacity(self.head - 1), self.block)
            out.append(Alloc(self.vals, "value", cap, self.value_fill()))
        return seq(*self.bound_pre, *out)

    def _first_capacity(self, k):
        """Positions allocated up front at appending level k (appends grow them):
        the bound on the distinct coordinates of the levels down to k, kept
        between tuning.initial_capacity and tuning.first_capacity_limit. A bound
        that needs a pass over the inputs is computed once, by statements kept in
        self.bound_pre for setup to run first."""
        if k in self.bounds:
            return self.bounds[k]
        first = Const(self.tuning.initial_capacity)
        b = None if self.bound is None else self.bound(self.storage[:k + 1], self.bound_pre)
        cap = first if b is None else imp.min_(
            imp.max_(b, first), Const(self.tuning.first_capacity_limit))
        self.bounds[k] = cap
        return cap

    def enter(self, var, index, ctx):
        k = self.level_of[var]
        if var in self.tail:                    # located in the block at write time
            return imp.SKIP, ctx.bind(var, index)
        if k not in self.count:                 # located
            return imp.SKIP, ctx.bind(var, index, pos=imp.add(
                imp.mul(ctx.pos, streams.dim_var(var)), index))
        cnt, p = self.count[k], self.at[k]
        grow = imp.SKIP if var in ctx.reserved else self._room(k, imp.add(Var(cnt), ONE))
        stmts = self.fmt.levels[k].append(self.level_arrays(k), cnt, p, index, grow)
        if self.owns_block(k) and self.zeroes_on_append():
            stmts = seq(stmts, self.zero_block(self.vals, Var(p)))
        return stmts, ctx.bind(var, index, pos=Var(p), fresh=self.owns_block(k))

    def zeroes_on_append(self) -> bool:
        """Is each tail block zeroed when its position is appended (and vals
        allocated and grown unzeroed)? Only a plain append's, with a tail, under
        tuning.zero_on_append."""
        return self.owns_block(self.head - 1) and self.tuning.zero_on_append

    def value_fill(self):
        """The fill of vals's allocated and grown cells: the zero where a tail's
        blocks rely on vals being zero past the appended ones, else None."""
        return self.zero() if self.tail and not self.zeroes_on_append() else None

    def zero_block(self, vals: str, p) -> imp.Stmt:
        """The tail block of position p in `vals` set to the zero (its own scope)."""
        k, at = self.zero_k, imp.mul(p, self.block)
        return imp.Block(seq(Decl(k, "index", imp.ZERO), While(imp.lt(Var(k), self.block), seq(
            Store(vals, imp.add(at, Var(k)), self.zero()), imp.incr(k)))))

    sparse_writes = True

    def tentative(self, var) -> bool:
        """The last appending level's positions hold the values (or their tail
        blocks): one appended over no product is taken back. (An upper level's
        position over nothing is an empty segment, which holds no value.)"""
        k = self.level_of.get(var)
        return (type(self) is AppendTarget and k == self.head - 1 and k in self.count
                and var not in self.tail)

    def settle(self, var, ctx, made):
        """Unless made, the position appended last at var's level is free again
        (nothing was written in its tail block, which is still zero, or is zeroed
        again when the position is appended again: zeroes_on_append)."""
        cnt = self.count[self.level_of[var]]
        return imp.if_(imp.not_(made), imp.Assign(cnt, imp.Bin("-", Var(cnt), ONE)))

    def rows_on_threads(self) -> bool:
        """A located or appending first level over one appending level, appended
        in order, maybe with a located tail (csr, csc, dcsr, TTM's fibers)."""
        levels = self.fmt.levels
        return (type(self) is AppendTarget and self.head == 2 and len(levels) >= 2
                and levels[1].appends and (levels[0].located or levels[0].appends))

    def owns_block(self, k) -> bool:
        """Does appending a position at level k append its own zero block of the
        tail (see Context.fresh)? Only the last appending level of a plain append."""
        return type(self) is AppendTarget and bool(self.tail) and k == self.head - 1

    def reserve(self, var, most, ctx):
        """Before the loop over var: room for `most` more appends at var's level, so
        that enter appends without a capacity test (`most` bounds the loop's ready
        states, each of which appends one position). (SKIP, ctx) where var's level
        appends nothing or no bound is known."""
        k = self.level_of.get(var)
        if most is None or k is None or var in self.tail or k not in self.count:
            return imp.SKIP, ctx
        return (self._room(k, imp.add(Var(self.count[k]), most)),
                ctx.with_(reserved=ctx.reserved | {var}))

    def _room(self, k, n):
        """Room for positions 0..n-1 at appending level k: its own, and the level
        below's for n parents, or the value blocks under them (grown with
        value_fill: zero where vals is kept zero past the appended blocks)."""
        grow = [self.fmt.levels[k].room(self.level_arrays(k), n)]
        if k + 1 < self.head:
            grow.append(self.fmt.levels[k + 1].parent_room(self.level_arrays(k + 1), n))
        else:
            grow.append(Reserve(self.vals, "value", imp.mul(n, self.block), self.value_fill()))
        return seq(*grow)

    def zero(self):
        return Const(self.sr.zero, "value")

    def leave(self, var, ctx):
        """After all children of one parent at var's level: close the segment; or,
        when it is empty and the parent's level appends too
        (`tuning.empty_rows_back`), take the parent's position back (every
        product under it was filtered away: no stored key over an empty row)."""
        k = self.level_of[var]
        if k not in self.count:
            return imp.SKIP
        close = self.fmt.levels[k].close(self.level_arrays(k), ctx.pos, Var(self.count[k]))
        roles = self.fmt.levels[k].segment_roles
        if not self.tuning.empty_rows_back or k - 1 not in self.count or roles is None:
            return close
        start = Load(self.level_arrays(k)[roles[0]], ctx.pos)    # the parent's segment
        above = self.count[k - 1]                                 # is empty: its position
        return imp.If(imp.eq(Var(self.count[k]), start),          # is free again
                      imp.Assign(above, imp.Bin("-", Var(above), ONE)), close)

    def write(self, ctx, v, once=False, vals=None):
        """vals[cell] ⊕= v; with `once` (a cell of a fresh block written once) a
        store, which never reads the output (its memory is fresh)."""
        vals = vals or self.vals
        if not self.tail:
            return Store(vals, ctx.pos, v)
        flat = ctx.pos
        for t in self.tail:
            flat = imp.add(imp.mul(flat, streams.dim_var(t)), ctx.coord(t))
        return Store(vals, flat, v) if once else Accum(vals, flat, v)

    def finish(self):
        out = []
        for k in self.count:
            if self._static_parents(k):
                out.append(self.fmt.levels[k].fill_forward(self.level_arrays(k), self.fill_r[k],
                                                           self._parents(k)))
        return seq(*out)

    def counts(self):
        return {f"count{k}": var for k, var in self.count.items()}
