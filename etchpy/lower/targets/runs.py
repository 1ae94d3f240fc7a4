"""A run-length output (dense..., runs) written as runs, in order.

Chosen (lower.outputs) for one step whose loops begin with the output's levels
in storage order (any mode order; `axes` are given in storage order), any loops
after them summed: each cell is written at most once, rows in order, cells in
order within a row. A row's runs go to grown arrays `rend`
(each run's end) and `vals`; `rseg` (one entry per row, plus one) bounds each
row's runs. A write of v at coordinate c (of the cells c .. e-1: a whole piece
when the run-sums pass hands one, Context.span, else e = c + 1) first covers
any cells of the row not yet written (c > covered) with a run of the zero,
then appends the run [c, e) of v; a run equal in value to the row's last one
extends it instead, so equal neighbours merge. A row closes with a run of the
zero to its end when its last cells were not written; rows the loops never
enter are one run of the zero. The runs of a row are then maximal, except
where two equal values compare unequal (NaN). A sparse run list (a level with
`run_starts`, SparseRunsTarget) stores each run's start in `rbeg` as well and
no run of the zero: a write of the zero is dropped, and a run extends the
row's last one only when it starts where that one ends with its value.
proofs_notes/runs.md, law 4.

Capacity (tuning.runs_reserve; an output with row levels): a row's runs are
disjoint, non-empty and inside the row, so a row holds at most its cells
(dim of the last axis) runs. Each row reserves that many entries past the
runs written when it opens (one check per row), and the pushes in the row
store without a check; the first allocation adds one row's cells to the
estimate, so a call whose estimate is a true bound never grows. A vector
output (no rows) and the knob off check the capacity at each push.
proofs_notes/runs.md, law 9. A push compares its value with the last run's
held in a variable that every push sets (tuning.runs_last), not loaded back
from vals: the same value, read without the store-to-load wait.
"""
from __future__ import annotations

from ... import imp
from ...imp import ONE, ZERO, Alloc, Assign, Bin, Const, Decl, If, Load, Reserve, Store, Var
from ...imp import While, and_, eq, incr, lt, not_, seq
from ...streams import dim_var
from ..target import FlatTarget, cells, output


def runs_writable(fmt, step, out_axes) -> bool:
    """Can a RunsTarget write this output: its last level writes runs, the rest are
    located, and the step's loops begin with its levels in storage order
    (`out_axes`, in any mode order), any loops after them summed? Each cell is
    then written once (a nest of summed loops is added into an accumulator and
    written after it: lower.driver contracted), rows in order and cells in order
    within a row."""
    n = len(out_axes)
    return (fmt.writes_runs
            and all(lv.located for lv in fmt.levels[:-1])
            and tuple(step.order[:n]) == tuple(out_axes)
            and set(step.order[n:]) <= set(step.bound))


@output("spans", 30, lambda w: w.step is not None and runs_writable(w.fmt, w.step, w.storage))
def _runs(w):           # its levels' axes, in storage order
    runs = SparseRunsTarget if w.fmt.drops_fill else RunsTarget
    return runs(w.storage, w.sr, w.names, w.tuning, w.bound)


class RunsTarget(FlatTarget):
    """Runs appended row by row (see the module docstring)."""

    writes_spans = True

    def __init__(self, axes, sr, names: imp.Names, tuning, bound=None):
        self.axes, self.sr, self.tuning, self.bound = tuple(axes), sr, tuning, bound
        self.rows, self.col = self.axes[:-1], self.axes[-1]
        k = len(self.axes) - 1
        self.k = k
        self.arrays = {f"rseg{k}": names.fresh(f"out_rseg{k}"),
                       f"rend{k}": names.fresh(f"out_rend{k}"), "vals": names.fresh("out_vals")}
        self.rseg, self.rend, self.vals = self.arrays.values()
        self.n, self.first, self.cov, self.next_row = (
            names.fresh(x) for x in ("out_runs", "out_first", "out_cov", "out_row"))
        self.names = names
        self.ahead = bool(tuning.runs_reserve and self.rows)
        self.last = names.fresh("out_last") if tuning.runs_last else None

    def counts(self):
        return {f"count{self.k}": self.n}

    def zero(self):
        return Const(self.sr.zero, "value")

    def setup(self):
        pre: list = []
        cap = self._first_capacity(pre)
        last = () if self.last is None else (Decl(self.last, "value", self.zero()),)
        return seq(*pre, *(Decl(x, "index", ZERO) for x in (self.n, self.first, self.cov,
                                                            self.next_row)), *last,
                   Alloc(self.rseg, "index", imp.add(cells(self.rows), ONE), ZERO),
                   *self._run_arrays(cap))

    def _run_arrays(self, cap: imp.Expr) -> tuple:
        """The allocations of the arrays with one entry per run."""
        return Alloc(self.rend, "index", cap, None), Alloc(self.vals, "value", cap, None)

    def _typed_run_arrays(self) -> tuple:
        """(array, element type) of each array with one entry per run."""
        return (self.rend, "index"), (self.vals, "value")

    def _grow(self, need: imp.Expr) -> tuple:
        """Each run array reserved to hold `need` runs."""
        return tuple(Reserve(a, t, need) for a, t in self._typed_run_arrays())

    def _push_room(self) -> tuple:
        """Room for one more run before a push: nothing when the row reserved
        its cells ahead (law 9), else a check of each array."""
        return () if self.ahead else self._grow(imp.add(Var(self.n), ONE))

    def _first_capacity(self, pre: list) -> imp.Expr:
        """The runs allocated up front (pushes grow them): `bound(axes, pre)`, the
        operands' stored positions (schedule.bounds.entries_bound: a run operand's
        runs; the runs of an element-wise blend are at most its operands' runs
        together), kept between tuning.initial_capacity and
        tuning.first_capacity_limit; statements it needs go to `pre`. An estimate
        only: a run output may hold more runs than it (a product's), and grows."""
        first = Const(self.tuning.initial_capacity)
        b = None if self.bound is None else self.bound(self.axes, pre)
        cap = first if b is None else imp.min_(imp.max_(b, first),
                                                 Const(self.tuning.first_capacity_limit))
        return imp.add(cap, dim_var(self.col)) if self.ahead else cap

    def _last_value(self) -> imp.Expr:
        """The value of the last run written: a variable each push sets
        (tuning.runs_last), else loaded from vals."""
        if self.last is not None:
            return Var(self.last)
        return Load(self.vals, Bin("-", Var(self.n), ONE))

    def _keep_last(self, v: imp.Expr) -> tuple:
        return () if self.last is None else (Assign(self.last, v),)

    def push(self, end: imp.Expr, v: imp.Expr) -> imp.Stmt:
        """The run [covered, end) of v (v a variable or constant): the row's last
        run extended when it holds v, else a new run."""
        n, last = Var(self.n), Bin("-", Var(self.n), ONE)
        same = and_(lt(Var(self.first), n), eq(self._last_value(), v))
        new = seq(*self._push_room(),
                  Store(self.rend, n, end), Store(self.vals, n, v), incr(self.n))
        return seq(If(same, Store(self.rend, last, end), new), *self._keep_last(v),
                   Assign(self.cov, end))

    def write(self, ctx, v, once=False):
        c = ctx.coord(self.col)
        end = ctx.span if ctx.span is not None else imp.add(c, ONE)
        wv = self.names.fresh("out_v")
        return seq(Decl(wv, "value", v), If(lt(Var(self.cov), c), self.push(c, self.zero())),
                   self.push(end, Var(wv)))

    def close(self, row: imp.Expr) -> imp.Stmt:
        """The row's end: a run of the zero over its cells not written, its bound."""
        size = dim_var(self.col)
        return seq(If(lt(Var(self.cov), size), self.push(size, self.zero())),
                   Store(self.rseg, imp.add(row, ONE), Var(self.n)),
                   Assign(self.next_row, imp.add(row, ONE)))

    def open(self) -> imp.Stmt:
        """A row's start; with `ahead`, room for as many runs as it has cells."""
        room = self._grow(imp.add(Var(self.n), dim_var(self.col))) if self.ahead else ()
        return seq(*room, Assign(self.first, Var(self.n)), Assign(self.cov, ZERO))

    def row_of(self, ctx) -> imp.Expr:
        flat: imp.Expr = ZERO
        for v in self.rows:
            flat = imp.add(imp.mul(flat, dim_var(v)), ctx.coord(v))
        return flat

    def skip_to(self, row: imp.Expr) -> imp.Stmt:
        """Rows before `row` that no loop entered: each one run of the zero."""
        return While(lt(Var(self.next_row), row),
                     seq(self.open(), self.close(Var(self.next_row))))

    def enter(self, var, index, ctx):
        ctx = ctx.bind(var, index)
        if not self.rows or var != self.rows[-1]:
            return imp.SKIP, ctx
        return seq(self.skip_to(self.row_of(ctx)), self.open()), ctx

    def after(self, var, ctx):
        if not self.rows or var != self.rows[-1]:
            return imp.SKIP
        return self.close(self.row_of(ctx))

    def finish(self):
        if not self.rows:
            return seq(If(lt(Var(self.next_row), ONE), self.close(ZERO)))
        return self.skip_to(cells(self.rows))


class SparseRunsTarget(RunsTarget):
    """Runs with their starts and no run of the zero (a level with `run_starts`;
    see the module docstring)."""

    def __init__(self, axes, sr, names: imp.Names, tuning, bound=None):
        super().__init__(axes, sr, names, tuning, bound)
        self.rbeg = names.fresh(f"out_rbeg{self.k}")
        self.arrays = {f"rseg{self.k}": self.rseg, f"rbeg{self.k}": self.rbeg,
                       f"rend{self.k}": self.rend, "vals": self.vals}

    def _run_arrays(self, cap: imp.Expr) -> tuple:
        return (*super()._run_arrays(cap), Alloc(self.rbeg, "index", cap, None))

    def _typed_run_arrays(self) -> tuple:
        return (self.rbeg, "index"), *super()._typed_run_arrays()

    def write(self, ctx, v, once=False):
        c = ctx.coord(self.col)
        end = ctx.span if ctx.span is not None else imp.add(c, ONE)
        wv = self.names.fresh("out_v")
        n, last = Var(self.n), Bin("-", Var(self.n), ONE)
        same = and_(and_(lt(Var(self.first), n), eq(Load(self.rend, last), c)),
                    eq(self._last_value(), Var(wv)))
        new = seq(*self._push_room(), Store(self.rbeg, n, c), Store(self.rend, n, end), Store(self.vals, n, Var(wv)),
                  incr(self.n))
        return seq(Decl(wv, "value", v),
                   If(not_(eq(Var(wv), self.zero())),
                      seq(If(same, Store(self.rend, last, end), new), *self._keep_last(Var(wv)))))

    def close(self, row: imp.Expr) -> imp.Stmt:
        """The row's end: its bound (cells not written are the fill, not stored)."""
        return seq(Store(self.rseg, imp.add(row, ONE), Var(self.n)),
                   Assign(self.next_row, imp.add(row, ONE)))
