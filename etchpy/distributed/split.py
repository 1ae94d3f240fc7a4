"""Which index a distributed call splits, and how its block results combine.

A call with a partitioned input A (split along mode m) runs the kernel once per
block. Let i be A's index at mode m. Splitting is exact when

- i is free in the output: block b computes the output rows of its i range, and
  the results are concatenated along i's output axis; or
- i is contracted by the sum at the top of the expression (Σ_i over the whole
  body): the sum over i is the ⊕ of the sums over each block's range
  (associativity and commutativity of the semiring's add), so the block results
  are combined with ⊕.

Every other input that carries i is cut to the block's range along the modes
where it does (on the worker, from one broadcast copy). Anything else (i bound
by an inner sum, even one that shadows a free i, A accessed twice, a diagonal, inputs partitioned along
different indices or bounds) is refused with a message saying which split would
work; `describe` gives the same text for explain().
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from ..expr.nodes import Access, Sum
from ..expr.walk import subexprs, sum_chain


@dataclass(frozen=True)
class Split:
    """A distributed call's split: index name, whether it is free in the output
    (then `axis` is its output axis) or contracted at the top, the block bounds,
    the partitioned inputs, and for each input the modes cut per block."""

    index: str
    free: bool
    axis: int | None
    bounds: tuple
    partitioned: tuple
    cuts: dict


def _top_sums(e) -> set:
    return {ix.name for ix in sum_chain(e)[0]}


def _modes_of(expr, name, index) -> set:
    """The sets of modes at which each access of tensor `name` carries `index`."""
    return {tuple(m for m, ix in enumerate(node.indices) if ix.name == index)
            for node in subexprs(expr) if isinstance(node, Access) and node.tensor.name == name}


def _refuse(msg, kern, parts):
    alts = []
    for pname, p in parts.items():
        tv = kern.tensors[pname]
        ok = [m for m in range(tv.order) if _why_not(kern, pname, m) is None]
        alts.append(f"{pname}: modes {ok} split exactly" if ok
                    else f"{pname}: no mode of it splits exactly")
    raise InputError(f"cannot run kernel {kern.name!r} over the partitioned input(s): {msg}; "
                     f"repartition ({'; '.join(alts)}) or call it on whole inputs")


def _why_not(kern, pname, mode) -> str | None:
    """Why splitting input `pname` along `mode` is not exact, or None when it is."""
    expr = kern.source_expr
    accesses = [n for n in subexprs(expr) if isinstance(n, Access) and n.tensor.name == pname]
    if len(accesses) != 1:
        return f"{pname} is accessed {len(accesses)} times"
    index = accesses[0].indices[mode].name
    if sum(ix.name == index for ix in accesses[0].indices) > 1:
        return f"{pname} repeats index {index} (a diagonal)"
    inner = [n for n in subexprs(expr) if isinstance(n, Sum) and n.index.name == index]
    free = index in [ix.name for ix in kern.out_indices]
    if free and inner:
        return (f"index {index} (mode {mode} of {pname}) is free in the output but also "
                f"summed inside the expression, where a block would sum only its own range")
    if not free and (index not in _top_sums(expr) or len(inner) != 1):
        return (f"index {index} (mode {mode} of {pname}) is contracted inside the "
                f"expression, not by the sum at its top, so block results would not combine "
                f"with one add")
    for name in kern.tensors:
        if len(_modes_of(expr, name, index)) > 1:
            return f"input {name} carries index {index} at different modes in different accesses"
    return None


def plan(kern, parts: dict) -> Split:
    """The Split of a call of `kern` whose partitioned inputs are `parts`
    ({name: Partitioned}); raises InputError naming what does not split and which
    modes would."""
    if len(kern.tensors) != len(kern._users):
        _refuse("the expression takes a diagonal or a comparison (an input made at call "
                "time from the whole inputs' coordinates)", kern, parts)
    first_name, first = next(iter(parts.items()))
    why = _why_not(kern, first_name, first.mode)
    if why is not None:
        _refuse(why, kern, parts)
    access = next(n for n in subexprs(kern.source_expr)
                  if isinstance(n, Access) and n.tensor.name == first_name)
    index = access.indices[first.mode].name
    for pname, p in parts.items():
        modes = _modes_of(kern.source_expr, pname, index)
        if modes != {(p.mode,)}:
            _refuse(f"{first_name} is split along index {index} but {pname} along mode "
                    f"{p.mode}", kern, parts)
        if p.bounds != first.bounds:
            _refuse(f"{pname} and {first_name} are split at different bounds "
                    f"({p.bounds} and {first.bounds})", kern, parts)
    outs = [ix.name for ix in kern.out_indices]
    cuts = {name: (next(iter(_modes_of(kern.source_expr, name, index)), ()))
            for name in kern.tensors if name not in parts}
    return Split(index, index in outs, outs.index(index) if index in outs else None,
                 first.bounds, tuple(parts), cuts)


def describe(kern, parts: dict) -> str:
    """The distributed section of explain(): the split and how results combine, or
    why the call is refused."""
    try:
        s = plan(kern, parts)
    except InputError as e:
        return f"distributed: refused: {e}"
    names = ", ".join(f"{n} (mode {parts[n].mode})" for n in s.partitioned)
    how = (f"free in the output: block results concatenated along output axis {s.axis}"
           if s.free else "contracted at the top: block results combined with the "
           "semiring's add, a tree reduction on the workers")
    cut = [f"{n} cut along modes {m}" for n, m in s.cuts.items() if m]
    rest = [n for n, m in s.cuts.items() if not m]
    return "\n".join([
        f"distributed: split {names} along index {s.index}, {len(s.bounds)} blocks at "
        f"{[lo for lo, _ in s.bounds] + [s.bounds[-1][1]]}",
        f"  {how}",
        f"  broadcast once per call: {', '.join(cut + rest) or 'nothing'}",
        "  one C kernel for every block, shipped to each worker once per signature"])
