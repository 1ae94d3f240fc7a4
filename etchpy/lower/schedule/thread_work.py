"""Threads only where they pay, under tuning.threads, with tuning.thread_min_work
0 splitting every loop as before: each
loop split across threads (imp.ParallelFor) runs on its threads only when an
estimate of its work, made in C when the loop starts, reaches
tuning.thread_min_work; otherwise the same blocks run in order on the calling
thread (`parallel_if`, C's OpenMP `if` clause). Waking a sleeping worker costs
about what a thread does on ten thousand stored entries, so a threaded kernel
called on a small input took several times its one-thread call
(docs/performance.md, "Threads only for work that pays").

The estimate is loop iterations: the split loop's range times, for the loops
nested in its body, their iterations per enclosing iteration, summed over
sibling loops and multiplied down nested ones (at most `DEPTH` deep):
- a whole walk of an input's segment level (streams.Walk, imp.While.walk) over
  `parents` parent positions: pos[parents] / parents, its mean segment (the
  runtime checks pos's length and its ends before every call, so the read is
  in bounds with or without the fused checks); a union's steps
  (streams.merged.Stepped): the sum of its walked segments' means;
- a counted loop `v < bound` whose bound reads no name the body declares or
  assigns: `bound`;
- any other loop (a merge, a search): one;
and at least the values the inputs store, summed (read from their level
arrays: a compressed level under another is such an uncounted loop).
Each factor is capped at `CAP`, so the product stays within int64. The
estimate decides only where the blocks run, never what they compute: a split
loop's blocks and their partials depend on its range and thread count alone
(imp.ParallelFor), so the result is the same either way.
"""
from __future__ import annotations

from dataclasses import replace

from ... import imp
from ...imp import Bin, Const, Load, ParallelFor, Var, While
from ...imp.analysis import children, declared_in, names_used, scalars_assigned
from ...imp.construct import add, max_, min_, mul
from .bounds import stored_entries
from ...expr.windows import WindowVar
from ...expr.walk import accesses
from ...streams import Walk
from ...streams.merged import Stepped

DEPTH = 3          # nested loops looked into below the split one
CAP = 1 << 20      # each factor at most this (three of them and a range stay in int64)


def run(prog, tuning):
    """`prog` with every ParallelFor's `parallel_if` set (module docstring);
    `prog` itself when the pass is off or it has none."""
    if not tuning.thread_min_work:
        return prog
    splits = [n for n in imp.statements(prog.body) if isinstance(n, ParallelFor)]
    if not splits:
        return prog
    params = {p.name for p in prog.params}
    body, stored = prog.body, _stored(prog, params)
    for loop in splits:
        span = loop.end if loop.start == Const(0) else Bin("-", loop.end, loop.start)
        work = mul(_capped(span), add(Const(1), _work(loop.body, params, inner(loop), DEPTH)))
        work = work if stored == Const(0) else max_(work, stored)
        when = Bin(">=", work, Const(tuning.thread_min_work))
        body = imp.replaced(body, loop, replace(loop, parallel_if=when))
    return replace(prog, body=body)


def _stored(prog, params: set):
    """The values the kernel's inputs store, summed (each capped): a floor of the
    estimate, for loops it cannot count (a compressed level under another)."""
    out, seen = Const(0), set()
    for step in prog.plan.steps:
        for acc in accesses(step.body):
            tv = acc.tensor
            if tv.name in seen or tv.name in prog.plan.temps or isinstance(tv, WindowVar):
                continue
            seen.add(tv.name)
            n = stored_entries(tv.name, tv.format)      # (params only: a tensor's own)
            if names_used(n) <= params:
                out = add(out, _capped(n))
    return out


def inner(loop) -> set:
    """The names a loop's body declares or assigns, and its own variable: a
    bound reading one of them is not known before the loop starts."""
    return declared_in(loop.body) | scalars_assigned(loop.body) | {loop.var}


def _work(s, params: set, local: set, depth: int):
    """The iterations of the loops inside statement `s` (module docstring)."""
    if depth == 0:
        return Const(0)
    if isinstance(s, While):
        per = _per_parent(s, params, local)
        return mul(per, add(Const(1), _work(s.body, params, local, depth - 1)))
    out = Const(0)
    for c in children(s):
        out = add(out, _work(c, params, local, depth))
    return out


def _per_parent(loop: While, params: set, local: set):
    """A loop's iterations per iteration of the loop around it: a walk's mean
    segment, a counted loop's bound, else one (each capped at CAP)."""
    w = loop.walk
    if isinstance(w, Walk) and {w.pos, w.parents} <= params:
        return _mean_segment(w)
    if isinstance(w, Stepped):          # a union's steps: its walked segments' together
        out = Const(0)
        for walk in w.merged.walks:
            if {walk.pos, walk.parents} <= params:
                out = add(out, _mean_segment(walk))
        return out if out != Const(0) else Const(1)
    c = loop.cond
    if (isinstance(c, Bin) and c.op == "<" and isinstance(c.a, Var)
            and not names_used(c.b) & local):
        return _capped(c.b)
    return Const(1)


def _mean_segment(w: Walk):
    """pos[parents] / parents of a walked level, capped."""
    n = Var(w.parents)
    return _capped(Bin("/", Load(w.pos, n), max_(n, Const(1))))


def _capped(e):
    """e clamped to [0, CAP] (folded when it is a constant)."""
    if isinstance(e, Const):
        return Const(min(max(int(e.value), 0), CAP))
    return min_(max_(e, Const(0)), Const(CAP))
