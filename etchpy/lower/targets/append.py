"""A sparse output assembled in order: the loop order visits the output's levels
in storage order, all contracted indices below them. Levels are dense (position
p·n + i) or unique compressed (crd and pos appended, grown by doubling), then
a dense tail; unvisited rows get their pos filled forward at the end."""
from __future__ import annotations

from ... import imp
from ...formats import Compressed, Dense, Format
from ...imp import (ONE, ZERO, Accum, Alloc, Const, Decl, If, Load, Reserve, Store, Var,
                    While, incr, lt, seq)
from ... import streams
from ..target import FlatTarget, product


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


class AppendTarget(FlatTarget):
    """Dense levels, compressed levels, and a dense tail. Appending a position at
    the last compressed level also appends its zero-filled dense block, into
    which the tail's values accumulate.

    bound(axes, pre): an upper bound, read from the inputs at entry, on the
    distinct coordinates over those axes (schedule.bounds.entries_bound), or
    None. It sets the first capacity of each compressed level, so that appends
    rarely grow the arrays; statements it needs go into `pre`."""

    def __init__(self, axes, fmt: Format, sr, names: imp.Names, tuning, bound=None):
        self.sr, self.fmt, self.tuning, self.bound = sr, fmt, tuning, bound
        self.bounds: dict = {}          # level -> first capacity (see _first_capacity)
        self.bound_pre: list = []
        self.storage = [axes[m] for m in fmt.mode_order]
        self.level_of = {v: k for k, v in enumerate(self.storage)}
        self.head = sparse_prefix(fmt)
        self.tail = self.storage[self.head:]         # trailing dense levels
        self.block = product([streams.dim_var(v) for v in self.tail])
        self.arrays: dict[str, str] = {}
        self.count: dict[int, str] = {}
        self.at: dict[int, str] = {}                 # level -> its appended position
        for k, lv in enumerate(fmt.levels):
            if isinstance(lv, Compressed):
                self.arrays[f"pos{k}"] = names.fresh(f"out_pos{k}")
                self.arrays[f"crd{k}"] = names.fresh(f"out_crd{k}")
                self.count[k] = names.fresh(f"out_count{k}")
        self.arrays["vals"] = self.vals = names.fresh("out_vals")
        for k in self.count:
            self.at[k] = names.fresh(f"out_p{k}")
        self.fill_r = {k: names.fresh(f"out_r{k}") for k in self.count}

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
        for k in self.count:
            out.append(Decl(self.count[k], "index", ZERO))
            npos = imp.add(self._parents(k), ONE) if self._static_parents(k) \
                else Const(self.tuning.initial_capacity)
            out.append(Alloc(self.arrays[f"pos{k}"], "index", npos, ZERO))
            out.append(Alloc(self.arrays[f"crd{k}"], "index", self._first_capacity(k), None))
        if self._static_parents(len(self.fmt.levels)):   # no compressed level: every cell
            size = product([streams.dim_var(v) for v in self.storage])
            out.append(Alloc(self.vals, "value", size, self.zero()))
        else:
            # without a tail each value is stored when appended; with one, values
            # accumulate into their block, so vals is zero everywhere past the
            # appended blocks: allocated zeroed (calloc: no pass) and grown zeroed
            cap = imp.mul(self._first_capacity(self.head - 1), self.block)
            out.append(Alloc(self.vals, "value", cap, self.zero() if self.tail else None))
        return seq(*self.bound_pre, *out)

    def _first_capacity(self, k):
        """Positions allocated up front at compressed level k (appends grow them):
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
        if isinstance(self.fmt.levels[k], Dense):
            return imp.SKIP, ctx.bind(var, index, pos=imp.add(
                imp.mul(ctx.pos, streams.dim_var(var)), index))
        cnt, crd, p = self.count[k], self.arrays[f"crd{k}"], self.at[k]
        grow = imp.SKIP if var in ctx.reserved else self._room(k, imp.add(Var(cnt), ONE))
        stmts = seq(Decl(p, "index", Var(cnt)), grow, Store(crd, Var(p), index), incr(cnt))
        return stmts, ctx.bind(var, index, pos=Var(p), fresh=self.owns_block(k))

    def owns_block(self, k) -> bool:
        """Does appending a position at level k append its own zero block of the
        tail (see Context.fresh)? Only the last compressed level of a plain append."""
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
                ctx.with_(reserved=ctx.reserved | {var}))

    def _room(self, k, n):
        """Room for positions 0..n-1 at compressed level k: its crd, and the pos of
        the level below or the value blocks under them (already zero when there
        is a tail: vals is kept zero past the appended blocks)."""
        grow = [Reserve(self.arrays[f"crd{k}"], "index", n)]
        if k + 1 < self.head:
            grow.append(Reserve(self.arrays[f"pos{k + 1}"], "index", imp.add(n, ONE)))
        else:
            grow.append(Reserve(self.vals, "value", imp.mul(n, self.block),
                                self.zero() if self.tail else None))
        return seq(*grow)

    def zero(self):
        return Const(self.sr.zero, "value")

    def leave(self, var, ctx):
        """After all children of one parent at var's level: close the segment."""
        k = self.level_of[var]
        if not isinstance(self.fmt.levels[k], Compressed):
            return imp.SKIP
        return Store(self.arrays[f"pos{k}"], imp.add(ctx.pos, ONE), Var(self.count[k]))

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
                r, pos = self.fill_r[k], self.arrays[f"pos{k}"]
                nxt = Load(pos, imp.add(Var(r), ONE))
                out.append(seq(Decl(r, "index", ZERO), While(
                    lt(Var(r), self._parents(k)),
                    seq(If(lt(nxt, Load(pos, Var(r))),
                           Store(pos, imp.add(Var(r), ONE), Load(pos, Var(r)))), incr(r)))))
        return seq(*out)

    def counts(self):
        return {f"count{k}": var for k, var in self.count.items()}
