"""The sizes plan.cost reads, given, measured or guessed (`Stats`), for the
planner, the optimizer's e-graph and the lazy planner alike; `size_notes`."""
from __future__ import annotations

import math

from ..expr.nodes import Access, Expr
from ..expr.walk import accesses
from ..tuning import DEFAULT, Tuning


def base_name(name: str) -> str:
    """The user's index behind a bound index the optimizer renamed: i__r2 -> i."""
    head, sep, tail = name.rpartition("__r")
    return head if sep and head and tail.isdigit() else name


class Stats:
    """Known index sizes (`dims`, by index name or Index) and nonzero counts (`nnz`,
    by tensor name); what is not known is guessed from `tuning` (default_dim,
    sparse_density), which also weighs the model's terms. `origin` maps renamed
    indices to user names; `fibers`, measured fibre statistics; `runs`, the dense
    runs (bands, blocks) of levels read as runs: a loop over such a level steps
    once per position and once per run; `stored`, the (tensor, format) pairs
    whose structure the input keeps made (a table's stored orders: a read of
    it in that format checks its values, plan.convert)."""

    def __init__(self, dims=None, nnz=None, origin=None, tuning: Tuning = DEFAULT,
                 fibers=(), runs=(), stored=()):
        self.dims = {getattr(k, "name", k): float(v) for k, v in (dims or {}).items()}
        self.nnz = {getattr(k, "name", k): float(v) for k, v in (nnz or {}).items()}
        self.origin = dict(origin or {})
        self.tuning = tuning
        # (tensor, storage level) -> non-empty fibres, from (tensor, level, fibres,
        # non-empty, longest, mean) rows: the distinct keys of its first `level` modes
        self.keys = {(t, int(k)): float(ne) for t, k, _, ne, *_ in fibers}
        # (tensor, storage level) -> dense runs (bands, blocks) in all, measured
        self.runs = {(t, int(k)): float(n) for t, k, n in runs}
        self.stored = frozenset(stored)
        self.memo: dict = {}        # index -> size; an access's keys -> distinct()
        self.nests: dict = {}       # (origin, nest_cost's arguments) -> cost; shared by
                                    # with_origin copies (planning one expression many ways)
        self.origin_key = frozenset(self.origin.items())   # its hash is kept

    def with_origin(self, origin) -> "Stats":
        s = Stats(tuning=self.tuning)
        s.dims, s.nnz, s.keys, s.origin = self.dims, self.nnz, self.keys, dict(origin)
        s.runs, s.stored = self.runs, self.stored
        s.nests, s.origin_key = self.nests, frozenset(s.origin.items())
        return s

    def dim(self, name: str) -> float:
        hit = self.memo.get(name)
        if hit is None:
            user = self.origin.get(name, name)
            hit = self.memo[name] = self.dims.get(user, self.dims.get(
                base_name(user), self.tuning.default_dim))
        return hit

    def full(self, names) -> float:
        """The dense space over the index names `names` (remembered for a frozenset)."""
        if not isinstance(names, frozenset):
            return math.prod(self.dim(v) for v in names)
        hit = self.memo.get(names)
        if hit is None:
            hit = self.memo[names] = math.prod(self.dim(v) for v in names)
        return hit

    def tensor_nnz(self, acc: Access) -> float:
        names = [ix.name for ix in acc.indices]
        full = self.full(names)
        name = getattr(acc.tensor, "converted_from", acc.tensor.name)   # a converted copy
        if name in self.nnz:                                              # holds its source's
            return min(full, self.nnz[name])
        return full if acc.tensor.format.is_dense else max(1.0, self.tuning.sparse_density * full)

    def distinct(self, acc: Access, seen) -> float:
        """Estimated distinct keys of the sparse `acc` projected onto `seen` (a set
        of its index names): the measured non-empty fibres when `seen` is a prefix
        of its storage order, else min(|seen|, nnz). Remembered per Stats."""
        key = (acc, seen if isinstance(seen, frozenset) else frozenset(seen))
        hit = self.memo.get(key)        # an access determines its tensor's name, format
        # and indices (a converted copy's name, its source: plan.convert)
        if hit is None:
            hit = self.memo[key] = self._distinct(acc, set(seen))
        return hit

    def _distinct(self, acc: Access, seen: set) -> float:
        names = [acc.indices[m].name for m in acc.tensor.format.mode_order]
        bound = min(self.full(seen), self.tensor_nnz(acc))
        k = len(seen)
        if 0 < k < len(names) and set(names[:k]) == seen:
            return min(bound, self.keys.get((acc.tensor.name, k), bound))
        return bound


def size_notes(expr: Expr, dims=None, nnz=None, tuning: Tuning = DEFAULT,
               measured=None) -> list[str]:
    """Which sizes cost estimates of `expr` take as given (`dims`, `nnz`: the
    optimizer_options), which were measured on the inputs of the call that planned
    it (`measured`, a pipeline.Measured: its figures are also in dims and nnz), and
    which they guess (tuning.default_dim for an index, tuning.sparse_density for a
    sparse tensor's nonzeros; a dense one is full)."""
    dims = {getattr(k, "name", k): v for k, v in (dims or {}).items()}
    nnz = {getattr(k, "name", k): v for k, v in (nnz or {}).items()}
    m_dims = dict(measured.dims) if measured is not None else {}
    m_nnz = dict(measured.nnz) if measured is not None else {}
    names = sorted({ix.name for a in accesses(expr) for ix in a.indices})
    sparse = sorted({a.tensor.name for a in accesses(expr) if not a.tensor.format.is_dense})
    given = ([f"|{n}|={dims[n]:g}" for n in names if n in dims and n not in m_dims]
             + [f"nnz({t})={nnz[t]:g}" for t in sparse if t in nnz and t not in m_nnz])
    seen = ([f"|{n}|={m_dims[n]:g}" for n in names if n in m_dims]
            + [f"nnz({t})={m_nnz[t]:g}" for t in sparse if t in m_nnz])
    dims_guessed = [f"|{n}|" for n in names if n not in dims]
    nnz_guessed = [t for t in sparse if t not in nnz]
    guessed = ([f"{', '.join(dims_guessed)} = {tuning.default_dim} (Tuning.default_dim)"]
               if dims_guessed else [])
    if nnz_guessed:
        guessed.append(f"{', '.join(nnz_guessed)} {100 * tuning.sparse_density:.3g}% nonzero "
                       "(Tuning.sparse_density)")
    lines = [f"sizes given: {', '.join(given)}"] if given else []
    if seen:
        lines.append(f"sizes measured on the inputs: {', '.join(seen)}")
    lines += [f"  {t} level {k}: {f} fibers, {ne} non-empty, longest {top}, mean {mean:.3g}"
              for t, k, f, ne, top, mean in (measured.fibers if measured is not None else ())]
    lines += [f"  {t} level {k}: {n:g} runs read whole (bands, blocks or runs of one value; "
                "each entered as one step)"
              for t, k, n in (measured.runs if measured is not None else ())]
    if guessed:
        lines += [f"sizes guessed: {'; '.join(guessed)}",
                  "  (give them as dims=..., nnz=...: ep.compile's optimizer_options)"]
    return lines
