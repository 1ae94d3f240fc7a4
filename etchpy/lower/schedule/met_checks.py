"""Input checks ahead of an intersection (proofs_notes/validation.md, "Checks
ahead of an intersection"), switched by Tuning.met_checks.

An intersection reads its operands' segments only in part: it may stop when
either ends, gallop or seek (streams.Met, noted after its init by the lowering:
imp.Comment.walk). What the kernel has read then says nothing of the rest, so
its input is checked whole, not as read: where every segment of the input is
opened by the counter of a full loop over its parents (lower.schedule.
segment_checks, no window's rows), each block of `check_block` parents is
checked before any of its rows runs, its pos chain then one flat pass over all
of the block's coordinates (in bounds, strictly increasing within each
segment: `lanes_scan`), and the loop visits every block. So
every coordinate of every parent is checked before the kernel returns, each
before the rows that hold it are read; a bad block sets the error and runs
none of its rows, and the runtime then checks the input in full (an
InputError naming it, or its canonical copy).

An input is taken (`fusable`) only when every read of its coordinates and
values is at the q of one of its noted segments, in a seek of one (imp.Seek
over crd[q..end)) or in a short intersection of one (imp.ShortIntersect);
prefetches and hint reads may point anywhere. Elsewhere (no full loop, a
window's rows, another reader of the arrays) it keeps the pass before the call.
"""
from __future__ import annotations

from ...imp import (Assign, Bin, Const, Decl, If, Load, Prefetch, Select, Var, While, lt,
                    max_, min_, seq)
from ...streams import Met
from . import merge_checks


def candidates(prog) -> dict[str, tuple]:
    """{input: the Walk facts of its segments that intersections read}, from the
    notes (imp.Comment.walk) in prog.body."""
    return merge_checks.candidates(prog, Met)


def fusable(prog, tuning) -> dict[str, tuple]:
    """The candidates every read of whose coordinates and values is inside one of
    their noted segments (`merge_checks.reads_at` with their segments as spans); none when tuning.met_checks,
    fused_checks or check_block is off."""
    if not (tuning.fused_checks and tuning.met_checks and tuning.check_block > 0):
        return {}
    return {name: ws for name, ws in candidates(prog).items()
            if merge_checks.reads_at(prog.body, ws, {(w.q, w.end, w.crd) for w in ws})}


def next_block(lv, c, n, block: int):
    """A hint that the coordinates of parent c + block, in the next block, will be
    read soon (by its scan): the flat pass then finds them in cache while the
    rows of this block run. Its position pos[min(c + block, n)] is read before
    that block's pos chain is checked, so it is clamped into [0, nnz]."""
    at = Load(lv.pos, min_(Bin("+", c, Const(block)), n))
    return Prefetch(lv.crd, min_(max_(at, Const(0)), Load(lv.pos, Var(lv.parents))))


def lanes_scan(c, ev, lv, bad: str, names, base: str, row=lambda e: e):
    """segment_checks._crd_scan's test for an intersection's level (lv.met): the
    block's segments (lo = pos[c] .. hi = pos[ev], pos already passed) each
    inside [0, dim) and strictly increasing. Where lo < hi, one flat pass with
    no branch, in the arrays' own width (`coord` scalars: 32-bit lanes for int32
    indices), takes their least and greatest and counts the descents crd[k] <=
    crd[k-1] for k in [max(lo, 1), hi); a pass over the block's parents with no
    branch counts those at the start s > 0 of each nonempty segment (elsewhere
    it reads crd at positions clamped into [0, hi), stored entries as lo < hi,
    and adds nothing). Distinct nonempty segments have distinct starts, each
    inside [lo, hi), so the two counts are equal exactly when no segment has a
    descent (proofs_notes/validation.md, "Checks ahead of an intersection";
    either count is at most hi - lo, within the width).
    A window's parents r are rows `row(r)`."""
    k, r, least, most, down, cross, ok = (
        names.fresh(f"{base}_{part}") for part in ("k", "rr", "cmin", "cmax", "down", "cross",
                                                   "ok"))
    lo, hi, kv, rv = Load(lv.pos, row(c)), Load(lv.pos, row(ev)), Var(k), Var(r)
    crd = lambda i: Load(lv.crd, i)                     # noqa: E731
    at, start = crd(kv), Load(lv.pos, row(rv))
    okv, last = Var(ok), Bin("-", hi, Const(1))
    here = min_(start, last)                # s where the segment is nonempty: s < hi
    crossing = Bin("&", okv, Bin("<=", crd(here), crd(max_(Bin("-", here, Const(1)), Const(0)))))
    return If(lt(lo, hi), seq(
        Decl(least, "coord", crd(lo)), Decl(most, "coord", crd(lo)),
        Decl(down, "coord", Const(0)), Decl(cross, "coord", Const(0)),
        Decl(k, "index", Bin("+", lo, Bin("==", lo, Const(0)))),
        While(lt(kv, hi), seq(Assign(least, Select(lt(at, Var(least)), at, Var(least))),
                              Assign(most, Select(lt(Var(most), at), at, Var(most))),
                              Assign(down, Bin("+", Var(down), Bin("<=", at,
                                                                   crd(Bin("-", kv, Const(1)))))),
                              Assign(k, Bin("+", kv, Const(1))))),
        Decl(r, "index", c),
        While(lt(rv, ev), seq(
            Decl(ok, "bool", Bin("&", lt(Const(0), start),
                                 lt(start, Load(lv.pos, row(Bin("+", rv, Const(1))))))),
            Assign(cross, Bin("+", Var(cross), crossing)),
            Assign(r, Bin("+", rv, Const(1))))),
        Assign(bad, Bin("|", Var(bad), Bin("|", Bin("|", lt(Var(least), Const(0)),
                                                    Bin("<=", Var(lv.dim), Var(most))),
                                          Bin("!=", Var(down), Var(cross)))))))
