"""A sparse output whose last (compressed) level arrives out of order: its values
go into a workspace, dense (a bytemap row) or a hash table (the hash level's
table), flushed as one sorted segment."""
from __future__ import annotations

import copy
from types import SimpleNamespace

from ... import imp
from ...formats import Format
from ...imp import (ONE, ZERO, Accum, Alloc, Assign, Const, Decl, ForSorted, If,
                    Load, Reserve, Store, Var, eq, incr, lt, select, seq)
from ... import streams
from ..target import Either, fresh_names, output
from .append import AppendTarget, in_order


# The dense workspace is one bytemap row (formats/bytemap.py): its values at
# their coordinates, its touched coordinates marked and listed by the level's
# write path (touch), and drained in order by it (in_order).
ROW = Format(["bytemap"]).levels[0]
# The hash workspace is the hash level's growable table (formats/hashtable.py): its
# keys placed by the level's write path (place, probe, rehash), emptied by clear.
TABLE = Format(["hash"]).levels[0]


def row_scratch(v, counter: str) -> SimpleNamespace:
    """The bytemap row's scratch names: the workspace's marks, bits and list, and
    the touched count `counter` (v: the workspace's names)."""
    return SimpleNamespace(marks=v.ws_marks, bits=v.ws_bits, list=v.ws_list, n=counter)


def row_arrays(v, size) -> tuple:
    """(name, type, size, fill) of the row's marks and bits (v: the workspace's
    names): a byte per coordinate and imp.ForSorted's words, all zero."""
    return ((v.ws_marks, "byte", size, ZERO), (v.ws_bits, "bits", imp.sort_bits_words(size), ZERO))


def mark_first(v, counter: str, k: imp.Expr, first=None, again=None) -> imp.Stmt:
    """On the first touch of coordinate k: mark it in the workspace's marks and
    push it on its list at `counter` (v: the workspace's names), then `first`;
    on a later touch `again`."""
    return ROW.touch(row_scratch(v, counter), k, first, again)


def drain(v, counter: str, size, body, place=None) -> imp.Stmt:
    """`body` once per touched coordinate (bound to v.ws_k), ascending; the marks
    are clear again afterwards (`place`: the counter body appends at, imp.ForSorted)."""
    return ROW.in_order(v.ws_k, row_scratch(v, counter), size, body, place)


def hash_scratch(v) -> SimpleNamespace:
    """The hash table's scratch names (v: the workspace's names); its count is
    the dense kind's, ws_n (one kind runs per call)."""
    return SimpleNamespace(n=v.ws_n, list=v.hs_list, cap=v.hs_cap, h=v.hs_h, t=v.hs_t,
                           keys=v.hs_keys, vals=v.hs_vals, slot=v.hs_slot, tmp=v.hs_tmp)


def move_out(v, vals: str, crd: str, at: str, k: imp.Expr, zero: imp.Expr | None) -> imp.Stmt:
    """Entry `at` of the output is k with the workspace's value there, which is
    reset to `zero` (None: left as it is); `at` moves on."""
    reset = None if zero is None else Store(v.ws_vals, k, zero)
    return seq(Store(crd, Var(at), k), Store(vals, Var(at), Load(v.ws_vals, k)), reset,
               incr(at))


@output("workspace", 20, lambda w: (w.tuning.workspaces and in_order(w, skip_last=True)
                                     and w.fmt.levels[-1].appends))
def _workspace(w):
    t = WorkspaceTarget(w.axes, w.fmt, w.sr, w.names, w.tuning, w.bound)
    return t if w.hash_workspace else t.way(False)


class WorkspaceTarget(AppendTarget):
    """Like append, but the last (compressed) level arrives out of order.

    Values for the last level go into a workspace along with a list of touched
    coordinates; once all loops under the last in-order level finish, the list
    is sorted and appended as one sorted segment, and the workspace is cleared.

    The workspace is chosen at run time from the dimension n of that level (by
    the program, testing ws_hash; or, in a program lowered with
    hash_workspace=False, which has the dense kind only, by the caller, when the
    program refuses a larger n):

    * n ≤ tuning.hash_workspace_dim: a dense accumulator `ws_vals[n]` with a
      touched byte per coordinate in `ws_marks`; the flush walks the touched
      coordinates in order (`ForSorted`: C sets and walks their bits in
      `ws_bits`, or sorts the list when the touched coordinates are sparse in
      their range) and moves each value out, leaving `ws_vals` zero and
      `ws_marks` and `ws_bits` clear; so all three are Alloc'ed kept
      (tuning.kept_workspaces): C keeps them between calls and a call costs
      O(touched), not a fill of n;
    * larger n: the hash level's growable table (formats/hashtable.py: `table`,
      `place`, `probe`, `clear`; open addressing, linear probing, capacity a
      power of two kept at least twice the touched count and doubled by
      rehashing), with `hs_slot[t]` the slot of the t-th touched coordinate so
      that clearing costs O(touched); the touched list is quicksorted and each
      coordinate probed again in order.
    """

    def __init__(self, axes, fmt: Format, sr, names: imp.Names, tuning, bound=None):
        super().__init__(axes, fmt, sr, names, tuning, bound)
        self.last = len(fmt.levels) - 1
        self.ws_var = self.storage[self.last]
        self.flush_after = self.storage[self.last - 1] if self.last > 0 else None
        self.hashed = None           # which workspace: True, False, or None (test ws_hash)
        self.v = fresh_names(names, "ws_n ws_hash ws_vals ws_list ws_marks ws_bits ws_k ws_t "
                                    "hs_list hs_cap hs_h hs_t hs_keys hs_vals hs_slot "
                                    "hs_tmp")
        self.table = hash_scratch(self.v)

    def way(self, hashed: bool) -> "WorkspaceTarget":
        """This target writing only to the hash table (True) or the dense one."""
        t = copy.copy(self)
        t.hashed = hashed
        return t

    workspace = True

    def passes(self) -> Either | None:
        """Both kinds, one per call (ws_hash), unless this target is one of them."""
        if self.hashed is None:
            return Either(self.v.ws_hash, self.way(True), self.way(False))
        return None

    def rows_on_threads(self) -> bool:
        """The dense workspace alone, under a located first level, one level below."""
        levels = self.fmt.levels
        return (self.hashed is False and len(levels) == 2 and levels[0].located
                and levels[1].appends)

    def _pick(self, hashed: imp.Stmt, dense: imp.Stmt) -> imp.Stmt:
        if self.hashed is None:
            return If(Var(self.v.ws_hash), hashed, dense)
        return hashed if self.hashed else dense

    def reset(self):
        """What the flush leaves in a cell it moves out: the zero, or None (the
        cell as it is) where a first touch stores (tuning.first_store)."""
        return None if self.tuning.first_store else self.zero()

    def setup(self):
        v, size, zero = self.v, streams.dim_var(self.ws_var), self.reset()
        kept = self.tuning.kept_workspaces      # the flush leaves vals, marks and bits zero
        if self.hashed is False:        # the dense workspace alone (larger n: refused)
            return seq(super().setup(), Decl(v.ws_n, "index", ZERO),
                       Alloc(v.ws_vals, "value", size, zero, kept and zero is not None),
                       Alloc(v.ws_list, "index", size, None),
                       *(Alloc(*a, kept) for a in row_arrays(v, size)))
        hashed, first = Var(v.ws_hash), Const(self.tuning.hash_initial)
        dense_size = select(hashed, ONE, size)
        return seq(super().setup(),          # the table declares ws_n, its count too
                   Decl(v.ws_hash, "bool", lt(Const(self.tuning.hash_workspace_dim), size)),
                   Alloc(v.ws_vals, "value", dense_size, zero, kept and zero is not None),
                   Alloc(v.ws_list, "index", dense_size, None),
                   *(Alloc(*a, kept) for a in row_arrays(v, dense_size)),
                   TABLE.table(self.table, select(hashed, first, ONE), zero))

    def refusals(self) -> tuple:
        """(index, largest size) pairs this target cannot take: a dense-only
        workspace refuses a dimension past tuning.hash_workspace_dim."""
        if self.hashed is False:
            return ((self.ws_var, self.tuning.hash_workspace_dim),)
        return ()

    def enter(self, var, index, ctx):
        if var == self.ws_var:
            return imp.SKIP, ctx.bind(var, index)
        return super().enter(var, index, ctx)

    def reserve(self, var, most, ctx):
        if var == self.ws_var:           # the flush reserves the sorted row
            return imp.SKIP, ctx
        return super().reserve(var, most, ctx)

    def leave(self, var, ctx):
        return imp.SKIP if var == self.ws_var else super().leave(var, ctx)

    def after(self, var, ctx):
        return self.flush(ctx.pos) if var == self.flush_after else imp.SKIP

    def write(self, ctx, v, once=False, vals=None):    # never fresh (see owns_block)
        k, vals = ctx.coord(self.ws_var), self.v.ws_vals
        if self.tuning.first_store:    # the cell holds zero at its first touch: 0 ⊕ v = v
            dense = mark_first(self.v, self.v.ws_n, k, Store(vals, k, v), Accum(vals, k, v))
        else:
            dense = seq(mark_first(self.v, self.v.ws_n, k), Accum(vals, k, v))
        hashed = seq(TABLE.place(self.table, k, self.zero()),
                     Accum(self.table.vals, Var(self.table.h), v))
        return self._pick(hashed, dense)

    def flush(self, parent: imp.Expr) -> imp.Stmt:
        """The touched coordinates, sorted, appended as the segment of `parent`."""
        v, tb, last = self.v, self.table, self.last
        (pos, crd), cnt = self.segment(last), self.count[last]
        k, size = Var(v.ws_k), streams.dim_var(self.ws_var)
        move = move_out(v, self.vals, crd, cnt, k, self.reset())
        hs_move = seq(TABLE.probe(tb, k, lambda at: eq(at, k)), Store(crd, Var(cnt), k),
                      Store(self.vals, Var(cnt), Load(tb.vals, Var(tb.h))), incr(cnt))

        def room(n):
            need = imp.add(Var(cnt), Var(n))
            return seq(Reserve(crd, "index", need), Reserve(self.vals, "value", need))
        close = Store(pos, imp.add(parent, ONE), Var(cnt))
        hashed = seq(room(tb.n), ForSorted(v.ws_k, tb.list, Var(tb.n), size, None, hs_move),
                     TABLE.clear(tb), close)
        dense = seq(room(v.ws_n), drain(v, v.ws_n, size, move, cnt), Assign(v.ws_n, ZERO), close)
        back = self._taken_back()
        if back is not None:        # nothing touched: the parent's position is free again
            hashed = If(eq(Var(tb.n), ZERO), back, hashed)
            dense = If(eq(Var(v.ws_n), ZERO), back, dense)
        return self._pick(hashed, dense)

    def _taken_back(self):
        """The statement that frees the position appended last at the level above
        the workspace's (its count less one), when that level appends and
        `tuning.empty_rows_back`: a parent whose flush moves nothing out (every
        product under it was filtered away) is then no stored key with an empty
        row, as the last appending level's position over no product is not
        (AppendTarget.settle). None otherwise (a located parent level, or none)."""
        above = self.last - 1
        if not self.tuning.empty_rows_back or self.flush_after is None or \
                above not in self.count:
            return None
        cnt = self.count[above]
        return Assign(cnt, imp.Bin("-", Var(cnt), ONE))

    def finish(self):
        head = self.flush(ZERO) if self.flush_after is None else imp.SKIP
        return seq(head, super().finish())
