"""The targets of a sparse output filled row by row on threads (schedule.rows):
a pass that counts each row's entries, a pass that fills each row from its
start, and a pass that fills each row within a bound, to be copied into place.

A row is an iteration of the outermost loop, over the output's first level. A
located first level numbers the rows by their index; an appending one (dcsr,
fibers) by the iteration (Context.iteration). The appending levels are written
in their segment layout (formats.level: pos and crd). Which outputs threads
can fill this way each target says (Target.rows_on_threads)."""
from __future__ import annotations

from ... import imp
from ...imp import ONE, ZERO, Assign, Bin, Decl, Load, Store, Var, While, incr, lt, seq
from ... import streams
from ..target import FlatTarget
from .append import AppendTarget
from .workspace import drain, mark_first, move_out, row_arrays


class RowCountTarget(FlatTarget):
    """Pass 1: each row counts its entries into pos[row + 1]. For a workspace
    output it counts the distinct coordinates it touches (per-thread marks and
    touched list, cleared at the end of the row)."""

    def __init__(self, base: AppendTarget, names: imp.Names):
        self.base = base
        self.pos = base.segment(1)[0]
        self.row_var = base.storage[0]
        self.workspace = base.workspace
        self.tail = base.tail
        self.hyper = not base.fmt.levels[0].located     # rows are iterations
        self.n = names.fresh("row_n")

    sparse_writes = True

    def tentative(self, var) -> bool:
        return not (var == self.row_var or self.workspace or var in self.base.tail)

    def settle(self, var, ctx, made):
        return imp.if_(imp.not_(made), Assign(self.n, Bin("-", Var(self.n), ONE)))

    def row(self, index, ctx):
        return ctx.iteration if self.hyper else index

    def enter(self, var, index, ctx):
        if var == self.row_var:
            return Decl(self.n, "index", ZERO), ctx.bind(var, index, row=self.row(index, ctx))
        if self.workspace or var in self.base.tail:    # a tail is located at write time
            return imp.SKIP, ctx.bind(var, index)
        return incr(self.n), ctx.bind(var, index)

    def write(self, ctx, v, once=False):
        if not self.workspace:
            return imp.SKIP
        return mark_first(self.base.v, self.n, ctx.coord(self.base.ws_var))

    def after(self, var, ctx):
        if var != self.row_var:
            return imp.SKIP
        clear = imp.SKIP
        if self.workspace:
            w = self.base.v
            t = Var(w.ws_t)
            clear = seq(Decl(w.ws_t, "index", ZERO), While(lt(t, Var(self.n)), seq(
                Store(w.ws_marks, Load(w.ws_list, t), ZERO), incr(w.ws_t))))
        return seq(clear, Store(self.pos, imp.add(ctx.row, ONE), Var(self.n)))

    def private(self):
        if not self.workspace:
            return ()
        w, size = self.base.v, streams.dim_var(self.base.ws_var)
        return (row_arrays(w, size)[0], (w.ws_list, "index", size, ZERO))


class RowFillTarget(RowCountTarget):
    """Pass 2: each row writes its entries from pos[row] on (the counts are exact,
    so nothing grows). A workspace output sorts each row's touched list in its
    own per-thread workspace and moves it out."""

    def __init__(self, base: AppendTarget, names: imp.Names):
        super().__init__(base, names)
        self.q = names.fresh("row_q")
        self.starts, self.crd = self.pos, base.segment(1)[1]     # where rows are written

    def enter(self, var, index, ctx):
        if var == self.row_var:
            # ws_n: this row's touched count, private to the iteration
            row = self.row(index, ctx)
            first = seq(Decl(self.q, "index", Load(self.starts, row)),
                        Decl(self.base.v.ws_n, "index", ZERO) if self.workspace else imp.SKIP,
                        self.base.fmt.levels[0].place(self.base.level_arrays(0), row, index)
                        if self.hyper else imp.SKIP)
            return first, ctx.bind(var, index, row=row)
        if self.workspace or var in self.base.tail:
            return imp.SKIP, ctx.bind(var, index)
        p = self.base.at[1]
        store = Store(self.crd, Var(p), index) if ctx.made is None else imp.SKIP   # settle
        return (seq(Decl(p, "index", Var(self.q)), incr(self.q), store, self.zero_block(p, ctx)),
                ctx.bind(var, index, pos=Var(p), fresh=self.base.owns_block(1)))

    def zero_block(self, p: str, ctx) -> imp.Stmt:
        """Where the output zeroes its tail blocks as appended (zeroes_on_append):
        position p's block, when p lies in this row's range (a position taken
        back at the row's end is the next row's first, another thread's)."""
        if not self.base.zeroes_on_append():
            return imp.SKIP
        end = Load(self.starts, imp.add(ctx.row, ONE))
        return imp.If(lt(Var(p), end), self.base.zero_block(self.vals_out(), Var(p)))

    def vals_out(self) -> str:
        """The values array this pass writes."""
        return self.base.vals

    def write(self, ctx, v, once=False):
        return self.base.write(ctx, v, once=once)

    def settle(self, var, ctx, made):
        """The entry's coordinate is stored only when kept: a position taken back
        at the end of a row is the next row's first, which another thread fills."""
        return imp.If(made, Store(self.crd, ctx.pos, ctx.coord(var)),
                      Assign(self.q, Bin("-", Var(self.q), ONE)))

    def after(self, var, ctx):
        if var != self.row_var or not self.workspace:
            return imp.SKIP
        b, w = self.base, self.base.v
        move = move_out(w, b.vals, b.segment(1)[1], self.q, Var(w.ws_k), b.reset())
        return seq(drain(w, w.ws_n, streams.dim_var(b.ws_var), move, self.q),
                   Assign(w.ws_n, ZERO))

    def private(self):
        if not self.workspace:
            return ()
        w, size = self.base.v, streams.dim_var(self.base.ws_var)
        return ((w.ws_vals, "value", size, self.base.zero()),
                (w.ws_list, "index", size, ZERO), *row_arrays(w, size))


class RowBoundFillTarget(RowFillTarget):
    """Pass 2 of rows filled within bounds: as RowFillTarget, each row into its
    bounded range of the scratch arrays `bounded` (pos, crd, vals names; from
    pos[row]), and its entry count kept in the output's pos[row + 1]."""

    def __init__(self, base: AppendTarget, names: imp.Names, bounded: tuple[str, str, str]):
        super().__init__(base, names)
        self.starts, self.crd, self.vals = bounded

    def write(self, ctx, v, once=False):
        return self.base.write(ctx, v, once=once, vals=self.vals)

    def vals_out(self) -> str:
        return self.vals

    def after(self, var, ctx):
        if var != self.row_var:
            return imp.SKIP
        return Store(self.pos, imp.add(ctx.row, ONE),
                     Bin("-", Var(self.q), Load(self.starts, ctx.row)))


def prefix_sums(pos: str, rows: imp.Expr, var: str) -> imp.Stmt:
    """pos[r+1] holds row r's count -> pos[r] is where row r starts, for r ≤ rows."""
    r, nxt = Var(var), imp.add(Var(var), ONE)
    return seq(Decl(var, "index", ZERO), While(lt(r, rows), seq(
        Store(pos, nxt, imp.add(Load(pos, nxt), Load(pos, r))), incr(var))))


def copy_row(names: imp.Names, row: str, bounded: tuple[str, str, str], out: tuple[str, str, str],
             block: imp.Expr = ONE) -> imp.Stmt:
    """Row `row`'s entries from its range of the bounded arrays (from their pos[row])
    to its place in the output's crd and vals (from pos[row]); each entry holds
    `block` values (a dense tail)."""
    bd_pos, bd_crd, bd_vals = bounded
    pos, crd, vals = out
    k_, s_, d_, n_ = (names.fresh(f"out_{x}") for x in "ksdn")
    r, k, src, dst, n = Var(row), Var(k_), Var(s_), Var(d_), Var(n_)
    head = seq(Decl(s_, "index", Load(bd_pos, r)), Decl(d_, "index", Load(pos, r)),
               Decl(n_, "index", Bin("-", Load(pos, imp.add(r, ONE)), dst)),
               Decl(k_, "index", ZERO))
    crds = Store(crd, imp.add(dst, k), Load(bd_crd, imp.add(src, k)))
    if block == ONE:
        return seq(head, While(lt(k, n), seq(
            crds, Store(vals, imp.add(dst, k), Load(bd_vals, imp.add(src, k))), incr(k_))))
    m_ = names.fresh("out_m")
    m, src_v, dst_v = Var(m_), imp.mul(src, block), imp.mul(dst, block)
    return seq(head, While(lt(k, n), seq(crds, incr(k_))),
               Decl(m_, "index", ZERO), While(lt(m, imp.mul(n, block)), seq(
                   Store(vals, imp.add(dst_v, m), Load(bd_vals, imp.add(src_v, m))),
                   incr(m_))))
