"""(coordinates, value) records, to be canonicalised by the runtime: the write
path of any sparse output no other target can fill."""
from __future__ import annotations

from ... import imp
from ...imp import ONE, ZERO, Alloc, Const, Decl, Reserve, Store, Var, incr, seq
from ..target import FlatTarget, output


@output("coords", 100, lambda w: True, records=True)
def _coords(w):
    """Any output no other row writes."""
    return CoordsTarget(w.axes, w.sr, w.names, w.tuning)


class CoordsTarget(FlatTarget):
    """Records appended in loop order into grown arrays (crd0.., vals)."""

    sparse_writes = True

    def __init__(self, axes, sr, names: imp.Names, tuning):
        self.axes, self.sr, self.tuning = tuple(axes), sr, tuning
        self.arrays = {f"crd{m}": names.fresh(f"out_crd{m}") for m in range(len(self.axes))}
        self.arrays["vals"] = names.fresh("out_vals")
        self.count = names.fresh("out_count")

    def setup(self):
        cap = Const(self.tuning.initial_capacity)
        out = [Decl(self.count, "index", ZERO)]
        out += [Alloc(a, "index", cap, ZERO) for r, a in self.arrays.items() if r != "vals"]
        out.append(Alloc(self.arrays["vals"], "value", cap, Const(self.sr.zero, "value")))
        return seq(*out)

    def write(self, ctx, v, once=False):
        n = Var(self.count)
        need = imp.add(n, ONE)
        out = []
        for m, ax in enumerate(self.axes):
            crd = self.arrays[f"crd{m}"]
            out += [Reserve(crd, "index", need), Store(crd, n, ctx.coord(ax))]
        vals = self.arrays["vals"]
        out += [Reserve(vals, "value", need), Store(vals, n, v), incr(self.count)]
        return seq(*out)

    def counts(self):
        return {"count": self.count}
