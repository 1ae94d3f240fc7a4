"""A libm map of dense inputs that a step reaches more often than it has cells,
made once as a temporary; switched by tuning.map_temps.

In `Σ_j A[i,j]·exp(d[j])` the map reads d along j alone, but the step reaches it
at every stored (i, j): 2.5e5 calls of `exp` (5 ns each) for 5,000 values of d
(`A @ np.exp(d)` calls it 5,000 times). A step's map term m = f(…) is split off
when

* f is a libm map (maps.MapFn.c_libm: exp, log), the work that pays for a
  temporary, and m holds no other map, no Σ, and reads dense inputs only, each as
  stored through plain indices (plan.dense.storage_axes), at least one;
* the step's loops reach m's indices F more often than m has cells: the support
  of the step's loop order up to the last index of F (plan.cost.support) is at
  least `tuning.map_temp_ratio` times the product of F's sizes (plan.cost.Stats).

The step becomes two: a temporary t[F] = m (F in the step's loop order; every
cell written once, no Σ), then the step with m read as t[F]. Each value of t is
the map of the same operands as before, so the result is the same; the second
step's loops are the first's (t is dense, as m was: a map of dense inputs is
defined at every point). A step in a chain of fused temporaries (plan.fusion)
is left alone, as by plan.dense.operand_temps. proofs_notes/map_temps.md.
"""
from __future__ import annotations

from dataclasses import replace

from .. import maps
from ..expr.compare import values_as_stored
from ..expr.nodes import Access, Index, Map, Sum
from ..expr.walk import accesses, map_operands, subexprs
from . import fusion
from .cost import support
from .dense import storage_axes
from .reserved import plan_names, reserved_tensor

MAP_PREFIX = "tmp_map"     # the name of a map's temporary starts so


def map_temps(plan, stats) -> object:
    """`plan` with each step's paying libm map terms made first as temporaries
    (the module docstring); `plan` itself when none pays or the switch is off."""
    tuning = stats.tuning
    if not tuning.map_temps:
        return plan
    chained = fusion.chained_steps(plan, tuning)
    stats = stats.with_origin(plan.origin)
    steps, temps, names = [], dict(plan.temps), None
    for n, step in enumerate(plan.steps):
        found = [] if n in chained else _paying(step, stats, plan.temps)
        for m, axes in found:
            names = plan_names(plan) if names is None else names
            tvar = reserved_tensor(names.fresh(MAP_PREFIX), len(axes))
            temps[tvar.name] = tvar
            steps.append(replace(step, target=tvar.name, out=axes, bound=(), body=m,
                                 order=axes))
            step = replace(step, body=_replaced(step.body, m, Access(
                tvar, tuple(Index(v) for v in axes))))
        steps.append(step)
    if names is None:
        return plan
    return replace(plan, steps=tuple(steps), temps=temps)


def _paying(step, stats, temps) -> list:
    """[(m, its axes in the step's loop order)] for the map terms of step that pay."""
    out, seen = [], set()
    for m in subexprs(step.body):
        if m in seen or not _candidate(m, temps):
            continue
        seen.add(m)
        held = {ix.name for acc in accesses(m) for ix in acc.indices}
        if not held or not held <= set(step.order):
            continue
        last = max(step.order.index(v) for v in held)
        reached = support(step.body, frozenset(step.order[:last + 1]), stats)
        cells = stats.full(frozenset(held))
        if reached >= stats.tuning.map_temp_ratio * cells:
            out.append((m, tuple(v for v in step.order if v in held)))
    return out


def _candidate(m, temps) -> bool:
    """A libm map holding no other map nor Σ, of dense inputs (not the plan's
    temporaries) read as stored."""
    if not (isinstance(m, Map) and maps.MAPS[m.fn].c_libm):
        return False
    inner = list(subexprs(m.a))
    if any(isinstance(x, (Map, Sum)) for x in inner):
        return False
    reads = [x for x in inner if isinstance(x, Access)]
    return bool(reads) and all(storage_axes(a) is not None and values_as_stored(a.tensor)
                               and a.tensor.name not in temps for a in reads)


def _replaced(e, old, new):
    """e with every subexpression equal to `old` replaced by `new`."""
    return new if e == old else map_operands(e, lambda x: _replaced(x, old, new))
