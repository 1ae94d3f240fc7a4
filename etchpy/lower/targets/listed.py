"""A record-list output (coo's levels: located levels, a segment level whose
coordinates may repeat, then levels of one child per parent) written in order
into its own arrays, where the coords target writes records that the runtime
sorts and combines. Chosen for one step whose loops begin with the output's
levels in storage order, any loops after them summed (as lower.targets.runs):
each cell is written once, after its sum, in the lexicographic order of its
storage coordinates, so the entries are sorted and unique as written. Entry n
is crd_k[n], crd_k+1[n], ..., vals[n]; the segment level's starts are the
count at each parent's last entry, carried forward over parents with none."""
from __future__ import annotations

from ... import imp
from ...imp import ONE, ZERO, Alloc, Const, Decl, Load, Reserve, Store, Var, While
from ...imp import add, incr, lt, max_, seq
from ... import streams
from ..target import FlatTarget, cells, output


def listable(fmt) -> int | None:
    """The segment level's number when the format is located levels, one
    segment-layout level that does not append (its coordinates repeat, one
    position per entry), then levels of one child per parent; else None."""
    k = next((k for k, lv in enumerate(fmt.levels) if not lv.located), len(fmt.levels))
    below = fmt.levels[k + 1:]
    if (below and fmt.levels[k].segment_roles is not None and not fmt.levels[k].appends
            and all(lv.one_per_parent for lv in below)):
        return k
    return None


def in_storage_order(w) -> bool:
    n = len(w.storage)
    return (w.step is not None and list(w.step.order[:n]) == w.storage
            and set(w.step.order[n:]) <= set(w.step.bound))


@output("listed", 90, lambda w: listable(w.fmt) is not None and in_storage_order(w))
def _listed(w):
    return ListedTarget(w.storage, w.fmt, w.sr, w.names, w.tuning)


class ListedTarget(FlatTarget):
    """Entries appended in loop order (see the module docstring); `storage`, the
    output's indices in storage order."""

    sparse_writes = True

    def __init__(self, storage, fmt, sr, names: imp.Names, tuning):
        self.k = k = listable(fmt)
        self.sr, self.tuning, self.parents = sr, tuning, storage[:k]
        starts, crd = fmt.levels[k].segment_roles
        self.pos = names.fresh(f"out_{starts}{k}")
        self.arrays = {f"{starts}{k}": self.pos}
        self.crds = []                   # (index, its array), levels k and below
        for j, (ax, lv) in enumerate(zip(storage, fmt.levels)):
            if j >= k:
                role = crd if j == k else lv.roles[0]
                self.arrays[f"{role}{j}"] = names.fresh(f"out_{role}{j}")
                self.crds.append((ax, self.arrays[f"{role}{j}"]))
        self.arrays["vals"] = self.vals = names.fresh("out_vals")
        self.count, self.q = names.fresh(f"out_count{k}"), names.fresh("out_q")

    def setup(self):
        cap = Const(self.tuning.initial_capacity)
        return seq(Decl(self.count, "index", ZERO),
                   Alloc(self.pos, "index", add(cells(self.parents), ONE), ZERO),
                   *[Alloc(a, "index", cap, None) for _, a in self.crds],
                   Alloc(self.vals, "value", cap, None))

    def write(self, ctx, v, once=False):
        n = Var(self.count)
        need, out = add(n, ONE), []
        for ax, arr in self.crds:
            out += [Reserve(arr, "index", need), Store(arr, n, ctx.coord(ax))]
        out += [Reserve(self.vals, "value", need), Store(self.vals, n, v), incr(self.count)]
        if self.parents:                 # this parent's entries end here, so far
            flat = ZERO
            for ax in self.parents:
                flat = add(imp.mul(flat, streams.dim_var(ax)), ctx.coord(ax))
            out.append(Store(self.pos, add(flat, ONE), Var(self.count)))
        return seq(*out)

    def finish(self):
        if not self.parents:
            return Store(self.pos, ONE, Var(self.count))
        q, nxt = Var(self.q), add(Var(self.q), ONE)
        return seq(Decl(self.q, "index", ZERO), While(lt(q, cells(self.parents)), seq(
            Store(self.pos, nxt, max_(Load(self.pos, nxt), Load(self.pos, q))), incr(self.q))))

    def counts(self):
        return {f"count{self.k}": self.count}
