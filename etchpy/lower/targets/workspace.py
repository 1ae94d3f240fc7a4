"""A sparse output whose last (compressed) level arrives out of order: its values
go into a workspace, dense or a hash table, flushed as one sorted segment."""
from __future__ import annotations

import copy
from types import SimpleNamespace

from ... import imp
from ...formats import Format
from ...imp import (ONE, ZERO, Accum, Alloc, Assign, Bin, Const, Decl, ForSorted, If,
                    Load, Reserve, Store, Var, While, eq, incr, lt, not_, or_,
                    select, seq)
from ... import streams
from ..target import EMPTY, Either, fresh_names
from .append import AppendTarget


# The dense workspace is one bytemap row (formats/bytemap.py): its values at
# their coordinates, its touched coordinates marked and listed by the level's
# write path (touch), and drained in order by it (in_order).
ROW = Format(["bytemap"]).levels[0]


def row_scratch(v, counter: str) -> SimpleNamespace:
    """The bytemap row's scratch names: the workspace's bits and list, and the
    touched count `counter` (v: the workspace's names)."""
    return SimpleNamespace(bits=v.ws_bits, list=v.ws_list, n=counter)


def mark_first(v, counter: str, k: imp.Expr) -> imp.Stmt:
    """On the first touch of coordinate k: mark it in the workspace's bits and
    push it on its list at `counter` (v: the workspace's names)."""
    return ROW.touch(row_scratch(v, counter), k)


def drain(v, counter: str, size, body) -> imp.Stmt:
    """`body` once per touched coordinate (bound to v.ws_k), ascending; the marks
    are clear again afterwards."""
    return ROW.in_order(v.ws_k, row_scratch(v, counter), size, body)


def move_out(v, vals: str, crd: str, at: str, k: imp.Expr, zero: imp.Expr) -> imp.Stmt:
    """Entry `at` of the output is k with the workspace's value there, which is
    reset to zero; `at` moves on."""
    return seq(Store(crd, Var(at), k), Store(vals, Var(at), Load(v.ws_vals, k)),
               Store(v.ws_vals, k, zero), incr(at))


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
      touched bit per coordinate in `ws_bits`; the flush walks the touched
      coordinates in order (`ForSorted`: C walks the bits, or quicksorts the
      list when the touched coordinates are sparse in their range) and moves
      each value out, leaving `ws_vals` zero and `ws_bits` clear; so both are
      Alloc'ed kept (tuning.kept_workspaces): C keeps them between calls and a
      call costs O(touched), not a fill of n;
    * larger n: an open-addressing hash table (`hs_keys`, `hs_vals`, linear
      probing, capacity a power of two kept at least twice the touched count and
      doubled by rehashing), with `hs_slot[t]` the table slot of the t-th touched
      coordinate so that clearing costs O(touched); the list is quicksorted and
      each coordinate looked up again in order.
    """

    def __init__(self, axes, fmt: Format, sr, names: imp.Names, tuning, bound=None):
        super().__init__(axes, fmt, sr, names, tuning, bound)
        self.last = len(fmt.levels) - 1
        self.ws_var = self.storage[self.last]
        self.flush_after = self.storage[self.last - 1] if self.last > 0 else None
        self.hashed = None           # which workspace: True, False, or None (test ws_hash)
        self.v = fresh_names(names, "ws_n ws_hash ws_vals ws_list ws_bits ws_k ws_t "
                                    "hs_cap hs_h hs_t hs_keys hs_vals hs_slot hs_tmp")

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

    def setup(self):
        v, size, zero = self.v, streams.dim_var(self.ws_var), self.zero()
        kept = self.tuning.kept_workspaces      # the flush leaves vals and bits zero
        if self.hashed is False:        # the dense workspace alone (larger n: refused)
            return seq(super().setup(), Decl(v.ws_n, "index", ZERO),
                       Alloc(v.ws_vals, "value", size, zero, kept),
                       Alloc(v.ws_list, "index", size, None),
                       Alloc(v.ws_bits, "bits", imp.sort_bits_words(size), ZERO, kept))
        hashed, first = Var(v.ws_hash), Const(self.tuning.hash_initial)
        dense_size = select(hashed, ONE, size)
        table = select(hashed, first, ONE)
        return seq(super().setup(), Decl(v.ws_n, "index", ZERO),
                   Decl(v.ws_hash, "bool", lt(Const(self.tuning.hash_workspace_dim), size)),
                   Alloc(v.ws_vals, "value", dense_size, zero, kept),
                   Alloc(v.ws_list, "index", select(hashed, first, size), None),
                   Alloc(v.ws_bits, "bits", imp.sort_bits_words(dense_size), ZERO, kept),
                   Decl(v.hs_cap, "index", table), Decl(v.hs_h, "index", ZERO),
                   Decl(v.hs_t, "index", ZERO),
                   Alloc(v.hs_keys, "index", table, EMPTY),
                   Alloc(v.hs_vals, "value", table, zero),
                   Alloc(v.hs_slot, "index", table, ZERO),
                   Alloc(v.hs_tmp, "value", ONE, zero))

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
        k = ctx.coord(self.ws_var)
        dense = seq(mark_first(self.v, self.v.ws_n, k), Accum(self.v.ws_vals, k, v))
        return self._pick(self.hash_write(k, v), dense)

    def _probe(self, key, until) -> imp.Stmt:
        """hs_h := the slot of `key`: its hash, then linear steps while `until`
        (a condition on hs_keys[hs_h]) does not hold."""
        v = self.v
        mask = Bin("-", Var(v.hs_cap), ONE)
        return seq(Assign(v.hs_h, Bin("hash", key, mask)),
                   While(not_(until(Load(v.hs_keys, Var(v.hs_h)))),
                         Assign(v.hs_h, Bin("&", imp.add(Var(v.hs_h), ONE), mask))))

    def hash_write(self, k, x) -> imp.Stmt:
        v = self.v
        h, n = Var(v.hs_h), Var(v.ws_n)
        insert = seq(Store(v.hs_keys, h, k), Store(v.hs_vals, h, self.zero()),
                     Reserve(v.ws_list, "index", imp.add(n, ONE)),
                     Reserve(v.hs_slot, "index", imp.add(n, ONE)),
                     Store(v.ws_list, n, k), Store(v.hs_slot, n, h), incr(v.ws_n))
        return seq(self._probe(k, lambda at: or_(eq(at, EMPTY), eq(at, k))),
                   If(eq(Load(v.hs_keys, h), EMPTY), insert),
                   Accum(v.hs_vals, h, x),
                   If(lt(Var(v.hs_cap), imp.mul(Const(2), n)), self.rehash()))

    def rehash(self) -> imp.Stmt:
        """Double the table: save the values by touched order, clear, reinsert."""
        v = self.v
        t, n, h, cap = Var(v.hs_t), Var(v.ws_n), Var(v.hs_h), Var(v.hs_cap)
        key = Load(v.ws_list, t)

        def each(limit, body):
            return seq(Assign(v.hs_t, ZERO), While(lt(t, limit), seq(body, incr(v.hs_t))))
        return seq(
            Reserve(v.hs_tmp, "value", n),
            each(n, Store(v.hs_tmp, t, Load(v.hs_vals, Load(v.hs_slot, t)))),
            Assign(v.hs_cap, imp.mul(Const(2), cap)),
            Reserve(v.hs_keys, "index", cap),
            Reserve(v.hs_vals, "value", cap),
            each(cap, Store(v.hs_keys, t, EMPTY)),
            each(n, seq(self._probe(key, lambda at: eq(at, EMPTY)),
                        Store(v.hs_keys, h, key), Store(v.hs_vals, h, Load(v.hs_tmp, t)),
                        Store(v.hs_slot, t, h))))

    def flush(self, parent: imp.Expr) -> imp.Stmt:
        """The touched coordinates, sorted, appended as the segment of `parent`."""
        v, last = self.v, self.last
        (pos, crd), cnt = self.segment(last), self.count[last]
        need = imp.add(Var(cnt), Var(v.ws_n))
        k, t = Var(v.ws_k), Var(v.ws_t)
        move = move_out(v, self.vals, crd, cnt, k, self.zero())
        hs_move = seq(self._probe(k, lambda at: eq(at, k)), Store(crd, Var(cnt), k),
                      Store(self.vals, Var(cnt), Load(v.hs_vals, Var(v.hs_h))), incr(cnt))
        hs_clear = seq(Decl(v.ws_t, "index", ZERO), While(lt(t, Var(v.ws_n)), seq(
            Store(v.hs_keys, Load(v.hs_slot, t), EMPTY), incr(v.ws_t))))
        size = streams.dim_var(self.ws_var)
        return seq(Reserve(crd, "index", need), Reserve(self.vals, "value", need),
                   self._pick(seq(ForSorted(v.ws_k, v.ws_list, Var(v.ws_n), size, None,
                                            hs_move), hs_clear),
                              drain(v, v.ws_n, size, move)),
                   Assign(v.ws_n, ZERO),
                   Store(pos, imp.add(parent, ONE), Var(cnt)))

    def finish(self):
        head = self.flush(ZERO) if self.flush_after is None else imp.SKIP
        return seq(head, super().finish())
