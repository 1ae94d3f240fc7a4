"""Temporaries fused into the step that reads them, along a shared loop prefix.

A plan computes each nested Σ into a dense temporary over all its free indices
(plan.plan), and a later step reads it. When the temporary's producer walks a
sparse input, most of those cells stay zero, and the reader still loops over
all of them. A *chain* instead runs the reader inside the producer's loops
(at the producer's place: steps between them that add into the output
commute with it, and any other step between them must not touch what it
reads or writes):

    T1[p1, q1] = Σ ... (the driver: its loop order starts with p1)
    T2[p2, q2] = Σ_{b ⊆ p1} T1[p1, q1] · (dense factors)   run at each point of p1
    ...
    target     = Σ_{b ⊆ pk} Tk[pk, qk] · (dense factors)

A *wide* reader (its temporary in Plan.wide, `widen`) may also sum indices
outside the prefix (Σ_{b ⊆ pt ∪ c}): each point of pt runs the whole of that
inner sum over the finished workspace and dense factors.

Each temporary Tt becomes a workspace over qt alone: the driver (or step t)
adds into it while the prefix pt is fixed; when the driver leaves the last
index of pt, step t + 1 runs with pt's coordinates fixed, adds into its own
workspace (or the chain's last target), and Tt's workspace is cleared.

Why it is the same sum (proofs_notes/fusion.md): Tt is a factor of step t + 1's
product, so step t + 1 adds nothing at a point of pt where Tt is zero, and the
driver reaches every point of pt where Tt may be non-zero, exactly once (a
stream's ready coordinates strictly increase). A *whole* reader (Link.whole)
reads Tt otherwise: in one term of a sum (`b[i] + -1·T[i]`), under a map, more
than once (`(b[i] - T[i])·(b[i] - T[i])`), so it may add terms where Tt is zero;
it is fused only where the driver's loops over pt visit every point of pt's box
(lowering checks the driver's stream), so it runs wherever the reader alone
would. Step t + 1 sums only indices of pt, each point of which the driver
visits in turn, and it is the only reader
of Tt (a wide reader's other sums run whole at each point). Workspace t + 1 is
cleared when the driver leaves pt+1, a prefix of pt, so between two clears every
cell it adds into has the same coordinates on pt+1; its own axes are qt+1, the
rest of Tt+1's.

`chains(plan)` finds them (`widen` first decides which readers may be wide);
lowering (lower.schedule.fuse_temps) runs them and the cost model
(plan.cost.plan_cost) prices them, both under the Tuning switch
`fused_temporaries`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..expr.compare import CompareVar
from ..expr.windows import WindowVar
from ..expr.nodes import Access, Add, Expr, Index, Lit, IdentityVar, Map, Mul, TensorVar
from ..expr.walk import accesses, map_operands, spine
from .reserved import reserved_tensor


@dataclass(frozen=True)
class Link:
    """Temporary `temp`, made by one step of a chain and read by the next: the
    next step runs with the indices `prefix` fixed (a prefix of the driver's
    loop order), and the temporary is a workspace over `rest`. `whole`: the
    reader reads it otherwise than as one factor of its product (in a term of a
    sum, under a map, twice), so it may add something where the temporary is
    zero: it must run at every point of the prefix's box, and the chain is
    fused only where the driver's loops over the prefix visit each of them."""

    temp: str
    prefix: tuple[str, ...]
    rest: tuple[str, ...]
    whole: bool = False


@dataclass(frozen=True)
class Chain:
    """Steps `steps` of a plan (indices, the driver first), run as one nest at
    the driver's place; links[t] joins steps[t] and steps[t + 1]."""

    steps: tuple[int, ...]
    links: tuple[Link, ...]

    @property
    def first(self) -> int:
        return self.steps[0]


def chained_steps(plan, tuning) -> set:
    """The numbers of the steps in `plan`'s chains where `tuning.fused_temporaries`
    fuses them (else none): the steps a plan pass that splits steps leaves alone."""
    if not tuning.fused_temporaries:
        return set()
    return {k for chain in chains(plan) for k in chain.steps}


def chains(plan) -> list[Chain]:
    """The chains of `plan`, longest first from each driver, not overlapping; a
    chain ends at a temporary in plan.cut (plan.unfuse)."""
    out, taken = [], set()
    for n in range(len(plan.steps)):
        if n in taken:
            continue
        chain = _chain_from(plan, n, taken)
        if chain is not None:
            out.append(chain)
            taken.update(chain.steps)
    return out


def _chain_from(plan, n, taken) -> Chain | None:
    steps = plan.steps
    driver = steps[n]
    if driver.target not in plan.temps or not any(
            not a.tensor.format.is_dense for a in accesses(driver.body)):
        return None                  # a dense driver keeps its step (BLAS, threads)
    links, at, outer, step = [], [n], driver.order, driver
    while step.target in plan.temps and step.target not in plan.cut:
        prefix = _longest_prefix(outer, step.out)
        if not prefix:
            break
        k = _reader(plan, step.target, at[-1], taken)
        read = None if k is None else _reads_alone(plan, step.target, steps[k], k, prefix)
        if read is None:
            break
        links.append(Link(step.target, prefix, tuple(v for v in step.out if v not in prefix),
                          read))
        at.append(k)
        outer, step = prefix, steps[k]
    return Chain(tuple(at), tuple(links)) if links else None


def _reader(plan, temp, maker, taken) -> int | None:
    """The step after `maker` that reads `temp`, when it may run right after
    `maker` instead: no step between writes what it reads, reads or writes its
    target (but for adding into the output, which commutes), or is another
    chain's."""
    steps = plan.steps
    k = next((j for j in range(maker + 1, len(steps))
              if any(a.tensor.name == temp for a in accesses(steps[j].body))), None)
    if k is None or k in taken:
        return None
    reads = {a.tensor.name for a in accesses(steps[k].body)}
    for st in steps[maker + 1:k]:
        touched = {a.tensor.name for a in accesses(st.body)}
        if (st.target in reads or steps[k].target in touched
                or (st.target == steps[k].target and st.target != "out")):
            return None
    return k


def _longest_prefix(order, axes) -> tuple[str, ...]:
    out = []
    for v in order:
        if v not in axes:
            break
        out.append(v)
    return tuple(out)


def _reads_alone(plan, temp, reader, k, prefix) -> bool | None:
    """Does step k (`reader`) read `temp` once as a factor of its product (False),
    or otherwise, summing nothing outside `prefix` (True: a whole reader, Link.whole:
    in a term of a sum, under a map, more than once); each read with its index
    names in the temporary's layout; summing only indices of `prefix` (any, when
    `temp` is in plan.wide and it reads a product); reading any other index of
    `prefix` only in plain dense tensors; and does no other step read `temp`?
    None when not."""
    if any(a.tensor.name == temp for j, st in enumerate(plan.steps) if j != k
           for a in accesses(st.body)):
        return None
    mine = [a for a in accesses(reader.body) if a.tensor.name == temp]
    whole = not (len(mine) == 1 and mine[0] in list(spine(reader.body, Mul)))
    narrow = set(reader.bound) <= set(prefix)
    if not mine or not (narrow or (temp in plan.wide and not whole)):
        return None
    axes = next(st.out for st in plan.steps if st.target == temp)
    if any(tuple(ix.name for ix in a.indices) != tuple(axes) for a in mine):
        return None
    return whole if all(
        isinstance(a.tensor, TensorVar)
        and not isinstance(a.tensor, (CompareVar, WindowVar, IdentityVar))
        and a.tensor.format.is_dense
        for a in accesses(reader.body)
        if a.tensor.name != temp and {ix.name for ix in a.indices} & set(prefix)) else None


def widen(plan, stats):
    """`plan` with Plan.wide: the temporaries whose fused reader may sum indices
    outside its chain's prefix. A reader runs whole at every point of the prefix,
    so it is let do so only where what it reads again there stays in cache: its
    other operands that hold no prefix index are dense and together have at most
    `tuning.cache_cells` cells (by `stats`' sizes). Unchanged when
    `tuning.fused_temporaries` is off."""
    if not stats.tuning.fused_temporaries:
        return plan
    stats = stats.with_origin(plan.origin)
    trial, wide = replace(plan, wide=frozenset(plan.temps)), set()
    for chain in chains(trial):
        for t, link in enumerate(chain.links):
            reader = plan.steps[chain.steps[t + 1]]
            if set(reader.bound) <= set(link.prefix):
                continue            # a narrow reader: fused as it is
            again = [a for a in accesses(reader.body) if a.tensor.name != link.temp
                     and not {ix.name for ix in a.indices} & set(link.prefix)]
            if (all(a.tensor.format.is_dense for a in again)
                    and sum(stats.full([ix.name for ix in a.indices]) for a in again)
                    <= stats.tuning.cache_cells):
                wide.add(link.temp)
    return replace(plan, wide=frozenset(wide))


def workspace_var(name: str, rest) -> TensorVar:
    """The dense tensor a fused temporary is read as: its axes `rest` alone."""
    return reserved_tensor(name, len(rest))


def read_workspace(body: Expr, link: Link) -> Expr:
    """The reader's body with its access to the temporary replaced by the
    workspace over link.rest."""
    match body:
        case Access(t, _) if t.name == link.temp:
            return Access(workspace_var(link.temp, link.rest),
                          tuple(Index(v) for v in link.rest))
        case Access() | Lit():
            return body
        case Mul() | Add() | Map():
            return map_operands(body, lambda x: read_workspace(x, link))
    raise TypeError(f"not a Σ-free body: {body!r}")


def inner_order(step, link: Link) -> tuple[str, ...]:
    """The reader's loops once the prefix is fixed."""
    return tuple(v for v in step.order if v not in link.prefix)
