"""The checked forms of one walk loop (lower.schedule.fused_checks builds the
plan; proofs_notes/validation.md argues each form):

- `checked_loop`: the segment's guard, then the loop testing each entry it
  reads (its coordinate inside the dimension, in order unless the body is
  order free, its value not NaN where asked), leaving at the first that fails;
- `rows_in_order`: a flat walk's test of its parents' pointers, first;
- `clamped_loop`: an order-free walk whose segment was checked ahead, its
  coordinates clamped and counted, tested after the loops.
"""
from __future__ import annotations

from ... import imp
from ...imp import Assign, Bin, Const, Decl, If, Load, Not, Select, Var, While, and_, lt, or_, seq
from ...errors import CHECK_FAILED as ERROR_CODE
from .order_free import order_free


def checked_loop(q: str, e: str, body, lv, err: str, names: imp.Names,
                 dense_output: bool, appends: tuple = (), inside: bool = False):
    """(the segment's guard, the checked loop after it); `appends`, `inside`:
    the loop's Walk.appends (order_free) and Walk.inside (`clamped_loop`)."""
    qv, ev, crd_q = Var(q), Var(e), Load(lv.crd, Var(q))
    nnz = Load(lv.pos, Var(lv.parents))
    outside = or_(Bin("<u", ev, qv), Bin("<u", nnz, ev))     # not 0 <= q <= e <= nnz
    fail = Assign(err, Const(ERROR_CODE))
    guard = seq() if lv.ahead else seq(If(outside, seq(fail, Assign(e, qv))))
    test = Bin("<u", crd_q, Var(lv.dim))                         # 0 <= crd[q] < n
    if lv.nan:                          # and vals[q] is not NaN
        test = and_(test, Bin("==", Load(lv.vals, qv), Load(lv.vals, qv)))
    if (dense_output or lv.drained) and order_free(body, crd_q, appends, lv.drained):
        if lv.ahead and not lv.nan:
            return guard, clamped_loop(q, e, body, lv, fail, names, inside)
        cond = and_(lt(qv, ev), test)
        return guard, seq(While(cond, body), If(lt(qv, ev), fail))
    prev = names.fresh(f"{q}_prev")
    cond = and_(lt(qv, ev), and_(lt(Var(prev), crd_q), test))
    return (seq(Decl(prev, "index", Const(-1)), guard),
            seq(While(cond, seq(Assign(prev, crd_q), body)), If(lt(qv, ev), fail)))


def rows_in_order(walk, lv, err: str, names: imp.Names):
    """A flat walk's (Walk.rows: lower.schedule.flat_walks) test that pos is
    nondecreasing over its parents first..end, before its segment's guard: one
    branch-free pass over those pointers; where it fails the kernel reports
    and the walk is left empty (end := q)."""
    first, end = walk.rows
    r, bad = names.fresh(f"{walk.q}_row"), names.fresh(f"{walk.q}_disorder")
    down = Bin("<", Load(lv.pos, imp.add(Var(r), imp.ONE)), Load(lv.pos, Var(r)))
    return seq(Decl(r, "index", first), Decl(bad, "index", Const(0)),
               While(lt(Var(r), end), seq(Assign(bad, Bin("|", Var(bad), down)), imp.incr(r))),
               If(Bin("!=", Var(bad), Const(0)),
                  seq(Assign(err, Const(ERROR_CODE)), Assign(walk.end, Var(walk.q)))))


def clamped_loop(q: str, e: str, body, lv, fail, names: imp.Names,
                 inside: bool = False):
    """The walk loop of an order-free body whose segment was checked ahead, its
    coordinate test with no branch (the loop keeps its one exit):

        bad := 0
        while (q < e) { ok := crd[q] <u dim; at := ok ? crd[q] : 0; bad += !ok;
                        body with at for crd[q] }
        if (bad) fail

    A coordinate outside [0, dim) is read as 0 (dim > 0: segment_checks fails a
    block of a level with dim 0), and the kernel returns the error. Outside a
    parallel loop the count is the kernel's one `lv.bad` (declared 0 first and
    tested once after all its loops, `fuse`): no test after each walk. A level
    checked after each block (`lv.after`) counts nothing: its block's pass
    finds the bad coordinate (segment_checks.block_loop); a loop reading
    memory at its coordinate only inside its window's test (`inside`,
    Walk.inside) then reads crd[q] unclamped, as does one whose coordinates its
    block's pass tested before the block (`lv.first`)."""
    ok, at = (names.fresh(f"{q}_{part}") for part in ("ok", "at"))
    bad = lv.bad or names.fresh(f"{q}_bad")
    crd_q = Load(lv.crd, Var(q))
    if lv.first or (lv.after and inside):
        return While(lt(Var(q), Var(e)), body)
    if lv.after:
        return While(lt(Var(q), Var(e)), seq(
            Decl(at, "index", Select(Bin("<u", crd_q, Var(lv.dim)), crd_q, Const(0))),
            imp.replaced(body, crd_q, Var(at))))
    step = seq(Decl(ok, "index", Bin("<u", crd_q, Var(lv.dim))),
               Decl(at, "index", Select(Var(ok), crd_q, Const(0))),
               Assign(bad, Bin("+", Var(bad), Not(Var(ok)))),
               imp.replaced(body, crd_q, Var(at)))
    loop = While(lt(Var(q), Var(e)), step)
    if lv.bad is not None:
        return loop
    return seq(Decl(bad, "index", Const(0)), loop, If(Bin("!=", Var(bad), Const(0)), fail))
