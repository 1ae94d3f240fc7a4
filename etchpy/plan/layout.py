"""Temporaries laid out for their reader (under `tuning.access_order`).

A step that makes a dense temporary writes it in the order of its own loops
(plan.plan), which that step chose before its reader existed. The reader may
walk the temporary's axes in another order, and then reads it against its
storage order: a strided inner loop, and no BLAS call where the step would
otherwise be a GEMM (lower.schedule.blas wants every index group in the same
order in each operand). `for_readers` lays each temporary out in the order its
first reader loops over its axes, when the maker has a legal loop order that
writes that layout (its free indices in that relative order) at no more than
`tuning.layout_slack` times the work of its own choice; every access to the temporary is
permuted alike. The values are the same in every semiring: a temporary's
layout is a permutation of its axes, and each reader names the same cell.
"""
from __future__ import annotations

import math
from dataclasses import replace
from itertools import islice, permutations, product

from . import dense, fusion
from .cost import nest_cost
from .orders import legal_orders
from ..expr.nodes import Access, Expr
from ..expr.walk import accesses, map_operands



def for_readers(plan, stats, keep_out=False):
    """The plan with each temporary laid out for its first reader where possible;
    where not, the reader's loop order is chosen again for the layout the temporary
    has (`keep_out`: the output's step keeps its order, a sparse output's)."""
    steps = list(plan.steps)
    for n, maker in enumerate(steps):
        if maker.target not in plan.temps:
            continue
        reads = [(m, a) for m, s in enumerate(steps[n + 1:], n + 1)
                 for a in accesses(s.body) if a.tensor.name == maker.target]
        if not reads:
            continue
        m, acc = reads[0]
        perm = _perm(acc, steps[m].order)
        if perm == tuple(range(len(perm))):
            continue
        made = _maker_for(maker, tuple(maker.out[a] for a in perm), stats)
        if made is not None:
            steps[n] = made
            _permute_reads(steps, n, perm)
        elif not (keep_out and steps[m].target == "out"):
            _reorder(steps, m, plan, stats)
    return replace(plan, steps=tuple(steps))


def _perm(acc, order) -> tuple:
    """The temporary's axes (positions in `acc`) in the order a loop nest walks them."""
    where = [order.index(ix.name) if ix.name in order else -1 for ix in acc.indices]
    return tuple(sorted(range(len(where)), key=lambda a: where[a]))


def _permute_reads(steps, n, perm) -> None:
    """Every access after step n to its temporary takes its indices in `perm` order."""
    for k in range(n + 1, len(steps)):
        steps[k] = replace(steps[k], body=_permuted(steps[k].body, steps[n].target, perm))


def _reorder(steps, m, plan, stats) -> None:
    """Step m in its cheapest legal loop order for the layouts its operands have; a
    temporary it makes follows its new loop order (its readers' accesses too)."""
    step = steps[m]
    variables = step.out + step.bound
    base = nest_cost(step.body, step.order, stats, out=step.out)
    cands = [(nest_cost(step.body, o, stats, out=step.out), o)
             for o in legal_orders(step.body, variables, 240)]
    cost, order = min(cands, default=(base, step.order))
    if cost >= 0.9 * base:
        return
    if step.target not in plan.temps:
        steps[m] = replace(step, order=order)
        return
    out = tuple(v for v in order if v in step.out)
    perm = tuple(step.out.index(v) for v in out)
    steps[m] = replace(step, out=out, order=order)
    _permute_reads(steps, m, perm)


def _maker_for(maker, out, stats, slack=None):
    """The maker step writing layout `out`, or None when that costs more than
    `slack` (default `tuning.layout_slack`; math.inf: any) times its own order's."""
    base = nest_cost(maker.body, maker.order, stats, out=maker.out)
    variables = maker.out + maker.bound
    fits = [o for o in legal_orders(maker.body, variables, 240)
            if tuple(v for v in o if v in out) == out]
    if not fits:
        return None
    cost, order = min((nest_cost(maker.body, o, stats, out=out), o) for o in fits)
    if cost > (stats.tuning.layout_slack if slack is None else slack) * base:
        return None
    return replace(maker, out=out, order=order)


def _permuted(e: Expr, name: str, perm: tuple) -> Expr:
    """e with every access to `name` taking its indices in the order `perm`."""
    match e:
        case Access(t, idx) if t.name == name:
            return Access(t, tuple(idx[a] for a in perm))
    return map_operands(e, lambda x: _permuted(x, name, perm))


def for_blas(plan, sr, stats, limit: int = 512):
    """The plan with temporaries laid out so that dense two-factor steps run as
    BLAS calls (plan.dense.gemm_layouts), where a layout of the temporaries they
    make or read does it: a step's own temporary follows the step's loop order
    (any order will do, BLAS runs it), and a temporary an earlier step makes is
    laid out so only when its maker writes that layout at no more than
    `tuning.layout_slack` times its work (`_maker_for`). A step that is a GEMM
    already lays its own temporary out so that BLAS reads fewer operand cells
    transposed, its readers reordered (`_untransposed`). Steps fused into a
    sparse driver (plan.fusion, under `tuning.fused_temporaries`) are left alone;
    at most `limit` layout combinations are tried per step. Unchanged when BLAS
    is off (`tuning.blas`, `tuning.access_order`) or `sr` has none."""
    tuning = stats.tuning
    if not (tuning.blas and tuning.access_order and dense.has_blas(sr)):
        return plan
    chained = fusion.chained_steps(plan, tuning)
    steps = list(plan.steps)
    makers = {s.target: n for n, s in enumerate(steps) if s.target in plan.temps}
    for n, step in enumerate(steps):
        pair = dense.pair_axes(step.body) if n not in chained else None
        if pair is None:
            continue
        fs, axes = pair
        roles = dense.gemm_roles(*axes, step.out, step.bound)
        if roles is None or (roles[3] and sum(1 for g in roles[:3] if g) < 2):
            continue
        _lay_out(steps, n, fs, axes, plan, (makers, chained, limit), stats)
    return replace(plan, steps=tuple(steps))


def _lay_out(steps, n, fs, axes, plan, context, stats) -> None:
    """Step n laid out for BLAS: as it is where it is a GEMM already (its own
    temporary then as `_untransposed` lays it out), else by the first layout of
    the temporaries that makes it one (`_blas_choices`); failing both, and under
    `Tuning.blas_broadcast`, the same again with M or N indices taken as batches
    (plan.dense.blas_roles: a GEMM per point of them, more calls, hence last).
    `context`: (makers, chained, limit) as for_blas has them."""
    makers, chained, limit = context
    step = steps[n]
    for broadcast in (False, True)[:1 + stats.tuning.blas_broadcast]:
        if dense.blas_roles(*axes, step.out, step.bound, broadcast):
            if step.target in plan.temps:
                _untransposed(steps, n, axes, plan, chained, stats)
            return
        for choice in _blas_choices(steps, n, fs, axes, plan, makers, chained, limit,
                                    broadcast):
            if _relay(steps, n, choice, stats):
                return


def _untransposed(steps, n, axes, plan, chained, stats) -> None:
    """Step n, a GEMM, with its own temporary laid out so that BLAS reads fewer
    operand cells transposed, where a layout does (`ir,ijk->jkr` laid out (r, j, k)
    reads the tensor as stored, Aᵀ·T, where (j, k, r) reads it transposed, Tᵀ·A);
    the steps reading the temporary then take their cheapest orders for it. Left
    as it is when a reader is fused into a chain."""
    step = steps[n]
    readers = [k for k in range(n + 1, len(steps))
               if step.target in {a.tensor.name for a in accesses(steps[k].body)}]
    if any(k in chained for k in readers):
        return
    priced = {o: c for o in permutations(step.out)        # (step.out among them)
              if (c := _transposed(*axes, o, step.bound, stats)) is not None}
    now = priced.get(tuple(step.out))
    best = min(((c, o) for o, c in priced.items()), default=None)
    if best is None or now is None or best[0] >= now:
        return
    new = _maker_for(step, best[1], stats, slack=math.inf)
    if new is None:
        return
    steps[n] = replace(step, out=new.out, order=new.order)
    _permute_reads(steps, n, tuple(step.out.index(v) for v in best[1]))
    for k in readers:
        _reorder(steps, k, plan, stats)


def _transposed(a_ax, b_ax, c_ax, bound, stats) -> tuple | None:
    """(whether M or N indices are batches, cells of the operands BLAS reads
    transposed) for C[c_ax] ⊕= A[a_ax]·B[b_ax] (None: not one GEMM a batch point
    in these layouts; plan.dense.blas_roles); a C laid out n-major is computed as
    Cᵀ = Bᵀ·Aᵀ, which turns each operand's transposition. A layout needing no such
    batch (one call where the other makes many) comes first."""
    roles = dense.blas_roles(a_ax, b_ax, c_ax, bound, False)
    moved = roles is None
    if moved and stats.tuning.blas_broadcast:
        roles = dense.blas_roles(a_ax, b_ax, c_ax, bound, True)
    if roles is None:
        return None
    m, n, k, _ = roles
    if dense.as_matrix(c_ax, m, n) is not False:
        m, n, a_ax, b_ax = n, m, b_ax, a_ax
    return moved, sum(stats.full(ax) for ax, rows, cols in ((a_ax, m, k), (b_ax, k, n))
                      if dense.as_matrix(ax, rows, cols))


def _blas_choices(steps, n, fs, axes, plan, makers, chained, limit, broadcast):
    """Ways to let step n run as one GEMM, each {temporary: the permutation of its
    axes}, those that move fewer earlier temporaries first. Only temporaries move:
    the step's own, or ones made by unchained earlier steps (a step reading one
    temporary twice stays as it is); at most `limit` combinations are tried;
    `broadcast`: plan.dense.blas_roles'."""
    step = steps[n]
    if fs[0].tensor.name == fs[1].tensor.name:
        return []
    free = [step.target in plan.temps] + [
        f.tensor.name in makers and makers[f.tensor.name] < n
        and makers[f.tensor.name] not in chained for f in fs]
    options = [permutations(ax) if move else [tuple(ax)]
               for ax, move in zip([step.out] + axes, free)]
    found = []
    for c_ax, a_ax, b_ax in islice(product(*options), limit):
        if dense.blas_roles(a_ax, b_ax, c_ax, step.bound, broadcast) is None:  # groups in order
            continue
        moved = {f.tensor.name: tuple(old.index(v) for v in new)
                 for f, old, new in zip(fs, axes, (a_ax, b_ax)) if new != old}
        earlier = len(moved)
        if c_ax != step.out:
            moved[step.target] = tuple(step.out.index(v) for v in c_ax)
        found.append((earlier, len(moved), len(found), moved))
    return [m for *_, m in sorted(found, key=lambda f: f[:3])]


def _relay(steps, n, moved, stats) -> bool:
    """Lay out each temporary in `moved` by its permutation (its maker's loop
    order follows; every later access is permuted alike), all or none: none when
    some earlier maker would cost more than `tuning.layout_slack` times its work.
    Step n's own temporary takes its cheapest order writing the layout (BLAS runs
    the step; the order is the fallback's)."""
    made = {}
    for name, perm in moved.items():
        m = next(k for k, s in enumerate(steps) if s.target == name)
        maker = steps[m]
        new = _maker_for(maker, tuple(maker.out[p] for p in perm), stats,
                         slack=math.inf if m == n else None)
        if new is None:
            return False
        made[m] = (new, perm)
    for m, (new, perm) in made.items():
        steps[m] = replace(steps[m], out=new.out, order=new.order)
        _permute_reads(steps, m, perm)
    return True
