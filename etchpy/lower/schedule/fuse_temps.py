"""Temporaries fused into their readers (plan.fusion), switched by
tuning.fused_temporaries: a chain of steps runs as the driver's loop nest,
each temporary a workspace over the indices its prefix leaves, and each reader
run, with the prefix's coordinates fixed, when the driver leaves the prefix's
last level; the workspace it read is then cleared.

On threads (a kernel's threads > 1 and tuning.threads), the driver's outermost
loop is split across threads, each with its own workspaces (ParallelFor's
private arrays: every workspace is clear again after each outermost
iteration), when the chain's last target has that loop's index as an axis
(threads write disjoint cells); a chain that cannot run so is not fused (its
steps run on threads one by one). Fused only into a dense target that keeps no
flags (a sparse output's temporaries say where their products are,
lower.produced); a step an earlier group pass claims (a Khatri-Rao pair) keeps
its claim. A whole reader (plan.fusion Link.whole) is fused only where the
driver visits every point of its prefix (`visits_each`). A one-cell workspace is
a local array (a register in C), and so is a scalar output's sum, added into
the output after the nest; the output is stored once, with no zero fill, where
the last reader alone writes each of its cells once (`_stores_once`)."""
from __future__ import annotations

from functools import partial

from ... import imp, streams
from ...formats import Format
from ...imp import Alloc, Const, LocalArray, ParallelFor, seq
from ...plan import fusion
from ..target import Context, cells
from ..targets.dense import DenseTarget
from . import Claim
from .fused_rows import visits_each, writes_each_cell_at_most_once
from .kept_rows import with_kept_rows
from .threads import plain_counted


class HookTarget(DenseTarget):
    """The driver's workspace; after the driver's level over an index, the
    readers hooked there run (`hooks`: index name -> [ctx -> statement]).
    Under a point of the prefix (`last`, its last index, entered) the
    workspace is zero and written by nothing else (Context.fresh): it was
    cleared after the point before. So where the driver writes each of its
    cells once at most under a point (`store`), its writes are stores (0 ⊕ v = v)."""

    def __init__(self, array, axes, sr, names, hooks, last):
        super().__init__(array, axes, sr, names)
        self.hooks, self.last = hooks, last

    def enter(self, var, index, ctx):
        return imp.SKIP, ctx.bind(var, index, fresh=ctx.fresh or var == self.last)

    def after(self, var, ctx):
        return seq(*[hook(ctx) for hook in self.hooks.get(var, ())])


def claim(lw, groups, claims) -> list:
    """The group pass (schedule.PASSES): each chain `chains_to_fuse` gives, as a
    Claim of its steps' groups run at its first step's place."""
    plan, at = lw.plan, {id(st): n for n, g in enumerate(groups) for st in g}
    taken = {n for c in claims for n in c.covers}
    out = []
    for chain in chains_to_fuse(plan, lw.target, lw.presence, lw.tuning):
        covers = frozenset(at[id(plan.steps[k])] for k in chain.steps)
        if covers & taken:
            continue
        out.append(Claim(at[id(plan.steps[chain.first])], covers,
                         plan.steps[chain.steps[-1]].target == "out",
                         partial(lower_chain, chain, plan, lw.emitter(), lw.bindings,
                                 lw.stream)))
    return out


def chains_to_fuse(plan, target, presence, tuning) -> list:
    """The chains (plan.fusion.chains) lowered fused: none when the switch is
    off or into a sparse output; a chain ending in the output needs it dense
    (`claim` leaves a chain with a step an earlier claim covers)."""
    if not tuning.fused_temporaries or presence is not None:
        return []
    out = []
    for chain in fusion.chains(plan):
        steps = [plan.steps[k] for k in chain.steps]
        if steps[-1].target == "out" and not (target.dense_axes is not None
                                              and not target.keeps_flags):
            continue
        out.append(chain)
    return out


def lower_chain(chain, plan, em, bindings, step_stream):
    """(statements, description, filled: whether it stores each output cell once,
    `_stores_once`) of a chain, or None when the emitter asks for threads and the
    chain cannot run on them, or a whole reader's driver skips points. `em` is an
    Emitter into the output's target (with the kernel's threads);
    `step_stream(step)` gives (lowerer, stream) of a plan step as lowered alone."""
    sr = em.sr
    steps = [plan.steps[k] for k in chain.steps]
    low, s = step_stream(steps[0])
    last = steps[-1]
    parallel = em.threads > 1 and em.tuning.threads
    if parallel and not (plain_counted(s) and not s.contracted and not low.scratch
                         and s.var in (plan.out if last.target == "out" else last.out)):
        return None
    if any(ln.whole and not visits_each(s, len(ln.prefix)) for ln in chain.links):
        return None                  # a whole reader must run at every point
    spaces = tuple((bindings[ln.temp].vals, "value", cells(ln.rest), Const(sr.zero, "value"))
                   for ln in chain.links)
    stmts = [] if parallel else [
        LocalArray(arr, 1, fill) if not ln.rest else Alloc(arr, typ, size, fill)
        for ln, (arr, typ, size, fill) in zip(chain.links, spaces)]
    filled = _stores_once(chain, plan, s, em.target)
    made, final, fold = _final(last, plan.out, em, bindings, parallel)
    driver = em.with_target(_workspace(chain, steps, em, bindings, final, s))
    stmts += made
    if parallel:
        c, start, end = streams.counter_range(s)
        loops = seq(imp.Comment(f"{s.var}: {s.search}, split across {em.threads} threads, "
                                f"each with its own workspaces"),
                    ParallelFor(c, start, end, driver.row_body(s, Context()), em.threads,
                                private=spaces))
    else:
        loops = driver.emit(s, Context())
    used = imp.names_used(loops)
    stmts += [Alloc(arr, typ, size, fill) for arr, typ, size, fill in low.scratch
              if arr in used]
    stmts += [imp.Comment(f"{st.target}[{','.join(st.out)}] ⊕= "
                          + (f"Σ_{{{','.join(st.bound)}}} " if st.bound else "")
                          + f"{st.body}   order ({', '.join(st.order)})") for st in steps]
    stmts += with_kept_rows([low], loops)
    if fold is not None:
        stmts.append(em.target.write(Context(), imp.Load(fold, imp.ZERO)))
    text = (f"{' → '.join(st.target for st in steps)}: one nest, "
            + "; ".join(f"{ln.temp} a workspace over ({', '.join(ln.rest)}) per "
                        f"({', '.join(ln.prefix)})" for ln in chain.links)
            + "; driver " + "; ".join(streams.describe(s)))
    return stmts, text, filled


def _final(last, out, em, bindings, parallel) -> tuple:
    """(statements, target, fold) of the chain's last step: a temporary it makes
    (allocated zero); the output; or, for a scalar output off threads, a one-cell
    local array `fold` (a register in C) added into the output after the nest."""
    sr, names = em.sr, em.names
    if last.target != "out":
        vals = bindings[last.target].vals
        return ([Alloc(vals, "value", cells(last.out), Const(sr.zero, "value"))],
                DenseTarget(vals, last.out, sr, names), None)
    if out or parallel:
        return [], em.target, None
    fold = names.fresh("out_fold")
    return [LocalArray(fold, 1, Const(sr.zero, "value"))], DenseTarget(fold, (), sr, names), fold


def _workspace(chain, steps, em, bindings, final, s) -> HookTarget:
    """The driver's target: the first temporary's workspace, each reader hooked
    after the driver's level over its prefix's last index, adding into the next
    temporary's workspace (the last reader into `final`); its writes are stores
    where the driver writes each of its cells once at most under a point."""
    sr, names, hooks = em.sr, em.names, {}
    for t, link in enumerate(chain.links):
        after = chain.links[t + 1] if t + 1 < len(chain.links) else None
        target = final if after is None else DenseTarget(
            bindings[after.temp].vals, after.rest, sr, names)
        hooks.setdefault(link.prefix[-1], []).append(
            partial(_run_reader, em.with_target(target), bindings, steps[t + 1], link))
    first = chain.links[0]
    space = HookTarget(bindings[first.temp].vals, first.rest, sr, names, hooks,
                       first.prefix[-1])
    space.store = writes_each_cell_at_most_once(s, len(first.prefix) + len(first.rest))
    return space


def _stores_once(chain, plan, s, target) -> bool:
    """Whether the chain's last reader stores each cell of the output once, and
    the output is told so (DenseTarget.own: no zero fill, stores): the output's
    only step, reading over exactly its last prefix, which the driver's loops
    visit point by point (visits_each)."""
    link, last = chain.links[-1], plan.steps[chain.steps[-1]]
    if not (last.target == "out" and sum(st.target == "out" for st in plan.steps) == 1
            and set(last.out) == set(link.prefix) and len(last.out) == len(link.prefix)
            and not last.bound and visits_each(s, len(link.prefix))):
        return False
    return target.own(True)


def _run_reader(em, bindings, step, link, ctx) -> imp.Stmt:
    """Step `step` at the driver's point ctx of link.prefix, reading the
    workspace of link.temp, which it then clears."""
    space = {**bindings, link.temp: streams.array_names(
        link.temp, Format.named("dense", len(link.rest)))}
    fixed = {v: ctx.coord(v) for v in link.prefix}
    low = streams.Lowerer(em.sr, space, em.names, markers=False, tuning=em.tuning,
                          fixed=fixed)
    bound = tuple(v for v in step.bound if v not in link.prefix)
    s = streams.lower_step(em.sr, space, fusion.read_workspace(step.body, link),
                           fusion.inner_order(step, link), bound, lowerer=low)
    run = em.emit(s, Context(coords=tuple(fixed.items())))
    ws = DenseTarget(bindings[link.temp].vals, link.rest, em.sr, em.names)
    clear = ws.clear(em.names.fresh("ws_c"))
    return seq(imp.Comment(f"{step.target} ⊕= {step.body} at this ({', '.join(link.prefix)}),"
                           f" then {link.temp} cleared"), run, clear)
