"""Gathered values prefetched, switched by tuning.prefetch_values (the distance;
0: off) and tuning.prefetch: a walk over a compressed segment whose only work is
`acc := acc ⊕ vals[q] ⊗ dense[crd[q]]` (an SpMV row: lower.schedule.gather_sums.
gathered) also prefetches dense[crd[q + d]], the value d states on, when the
call's far pick (imp.GatherPick with crd: ep_far_pick) finds the level's
segments far (random rows, whose gathers miss the cache) and the dense operand
holds at least tuning.prefetch_values_from bytes of values (0: prefetch_min_bytes;
-1: the host's, etchpy.host_facts). The pick is made once per
call (docs/performance.md, "Prefetching gathered values"): random rows gain,
and the rows of stencils and meshes run as they did.

The switch is made at each statement outside loops that holds such a walk, in
the way that runs scalar walks at large sizes only (size_switch's test true,
gather_sums' lanes pick false), so the C holds one more copy of that loop nest,
not of the whole body; where size_switch's test is false (fewer than
tuning.run_min_entries entries) no values are prefetched.

crd[q + d] is a hint read (imp.Load.hint) made only while q + d < pos[parents],
whose reads the runtime keeps inside crd, and a coordinate outside [0, dim) is
taken as 0: the prefetch's address is inside the dense operand whatever crd
holds, so the pass is as safe as the loop (a scipy input's checked build
included), and a prefetch changes no result.
"""
from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np

from ... import host_facts, imp
from ...imp import (Bin, Const, Decl, GatherPick, GatherSum, If, Load, Opaque, Prefetch, Seq, Var,
                    While)
from .fused_checks import candidates, program_names
from .gather_sums import rewrite_gathered
from .size_switch import is_size_test


def run(prog, semiring, tuning):
    """`prog` with its gathered walks prefetching the values they will gather,
    each loop that holds one switched once on far picks declared first; `prog`
    itself when the pass is off or no walk matches (`_switched`)."""
    if not (tuning.prefetch and tuning.prefetch_values > 0 and prog.output.mode == "dense"):
        return prog
    stmts = imp.seq_parts(prog.body)
    lanes = {s.var for s in stmts if isinstance(s, GatherPick) and s.crd is None}
    levels = candidates(prog)
    least = (host_facts.resolved(tuning).prefetch_values_from or tuning.prefetch_min_bytes) \
        // np.dtype(semiring.dtype).itemsize
    names, picks = program_names(prog), {}

    def far(name):
        lv = levels[name]
        return picks.setdefault(name, GatherPick(
            names.fresh(f"{name}_far"), lv.pos, lv.parents, lv.crd, lv.dim,
            max(1, tuning.prefetch_near_share), least))
    counts = {Load(lv.pos, Var(lv.parents)) for lv in levels.values()}
    body = _switched(prog.body, lambda loop: _prefetching(loop, levels, far, tuning, names),
                     lanes, counts)
    if not picks:
        return prog
    return replace(prog, body=imp.seq(*picks.values(), *_lanes_when_far(body, picks, levels,
                                                                        tuning)))


def _lanes_when_far(body, picks: dict, levels: dict, tuning) -> tuple:
    """body's statements, each lanes pick (gather_sums) of a level with a far
    pick taking rows of one length into the lanes from tuning.gather_from_far
    entries where that pick is set (imp.GatherPick.far; 0: not): far rows over a
    dense operand of prefetch_min_bytes or more, whose scalar gathers wait on
    memory (docs/performance.md, session 54)."""
    far = {levels[name].pos: pick.var for name, pick in picks.items()}
    least = host_facts.resolved(tuning).gather_from_far
    return tuple(replace(s, far=far[s.pos], far_least=least)
                 if isinstance(s, GatherPick) and s.crd is None and s.pos in far
                 and s.least > 0 and least > 0 else s
                 for s in imp.seq_parts(body))


def _switched(node, change, lanes: set, counts: set):
    """node with each statement outside loops that holds a loop (a leaf) made
    `if (far) change(leaf) else leaf` where change finds walks. Only the ways
    that run scalar walks at large sizes are searched: the then-branch of a
    size test (size_switch) and the else-branch of a lanes pick (gather_sums),
    so that the C holds one more copy of each such loop, not of the whole body
    (whose copy cost the first compile dearly); near rows take the loop as it
    was (a test at each state, or at each segment, cost them: the compiler lays
    the loops out for both ways; docs/performance.md, "Prefetching gathered
    values")."""
    match node:
        case Seq(stmts):
            return Seq(tuple(_switched(s, change, lanes, counts) for s in stmts))
        case If(cond, then, else_) if is_size_test(cond, counts):
            return replace(node, then=_switched(then, change, lanes, counts))
        case If(cond, then, else_) if else_ is not None and _is_lanes(cond, lanes):
            return replace(node, else_=_switched(else_, change, lanes, counts))
        case If(_, then, else_):
            other = None if else_ is None else _switched(else_, change, lanes, counts)
            return replace(node, then=_switched(then, change, lanes, counts), else_=other)
    return change(node) if _holds_loop(node) else node


def _prefetching(loop, levels, far, tuning, names):
    """`if (far picks) loop, its walks prefetching, else loop`; loop itself when
    it holds no walk or more than tuning.unswitch_limit statements."""
    if sum(1 for _ in imp.statements(loop)) > tuning.unswitch_limit:
        return loop
    new, used = _one_way(loop), []
    for name, lv in sorted(levels.items()):
        ahead = _rewrite(new, lv, tuning.prefetch_values, names)
        if ahead != new:
            new = ahead
            used.append(Var(far(name).var))
    return If(functools.reduce(imp.or_, used), new, loop) if used else loop


def _one_way(node):
    """node with each If whose two ways are one walk up to prefetches and opaque
    marks (prefetch.py's long rows and short rows) made its else way: the copy
    holds one loop there, not two."""
    match node:
        case If(_, While() as a, While() as b) if _bare(a) == _bare(b):
            return b
        case Seq(stmts):
            return Seq(tuple(_one_way(s) for s in stmts))
        case If(_, then, else_):
            return replace(node, then=_one_way(then),
                           else_=None if else_ is None else _one_way(else_))
        case GatherSum():
            return node
    if hasattr(node, "__dataclass_fields__") and hasattr(node, "body"):
        return replace(node, body=_one_way(node.body))
    return node


def _bare(loop):
    """A loop's test and statements, its prefetches and opaque marks left out."""
    stmts = imp.seq_parts(loop.body)
    return loop.cond, tuple(s for s in stmts if not isinstance(s, (Opaque, Prefetch)))


def _is_lanes(cond, lanes: set) -> bool:
    """Whether cond is a lanes pick, or an || of them."""
    match cond:
        case Var(name):
            return name in lanes
        case Bin("||", a, b):
            return _is_lanes(a, lanes) and _is_lanes(b, lanes)
    return False


def _holds_loop(node) -> bool:
    """Whether a statement is or holds a loop."""
    return any(isinstance(s, While) for s in imp.statements(node))


def _rewrite(node, lv, d: int, names):
    return rewrite_gathered(node, lv, lambda loop, found: replace(
        loop, body=imp.seq(_ahead(found, lv, d, names), loop.body)))


def _ahead(found, lv, d: int, names) -> imp.Stmt:
    """`if (q + d < pos[parents]) { t = crd[q + d] inside [0, dim), else 0;
    prefetch dense[t] }`."""
    _, q, _, dense = found
    at = imp.add(Var(q), Const(d))
    coord = Load(lv.crd, at, hint=True)
    t = names.fresh(f"{lv.tensor}_ahead")
    inside = imp.select(Bin("<u", coord, Var(lv.dim)), coord, imp.ZERO)
    return If(imp.lt(at, Load(lv.pos, Var(lv.parents))),
              imp.seq(Decl(t, "index", inside), Prefetch(dense, Var(t))))
