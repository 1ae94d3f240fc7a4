"""The stream backend's driver: a plan's steps run in the indexed-stream interpreter
(ep.evaluate's backend "streams"; the interpreter loads with its first use).

    imp_env(bound, sizes)                          the Imp environment of bound inputs
    run_plan_streams(plan, bound, sizes, sr, check)  the output as {coordinates: value}
"""
from __future__ import annotations

import numpy as np

from .. import imp
from ..plan import plan as planning
from .tensor import Tensor


def imp_env(bound: dict[str, Tensor], sizes: dict[str, int]) -> dict:
    """The Imp environment: index sizes as dim_<index>, tensor arrays by their names."""
    from .. import streams        # the interpreter's backend: not loaded by `import etchpy`
    env = {f"dim_{v}": n for v, n in sizes.items()}
    for name, t in bound.items():
        env.update({f"{name}_dim{m}": n for m, n in enumerate(t.shape)})
        b = streams.array_names(name, t.format)
        env[b.vals] = t.vals
        for arrays, names in zip(t.levels, b.levels):
            for key, arr_name in names.items():
                env[arr_name] = arrays[key]
    return env


def run_plan_streams(plan: planning.Plan, bound, sizes, sr, check=False) -> dict:
    """Run every step of the plan with the stream interpreter; the output as a dict."""
    from .. import streams        # the interpreter's backend: not loaded by `import etchpy`
    tensors_now = dict(bound)
    machine = imp.Machine(sr, imp_env(bound, sizes))
    result: dict = {}
    for step in plan.steps:
        bindings = {name: streams.array_names(name, t.format)
                    for name, t in tensors_now.items()}
        low = streams.Lowerer(sr, bindings, imp.Names(), keep_rows=True)
        s = streams.lower_step(sr, bindings, step.body, step.order, step.bound, lowerer=low)
        for ring in low.rings.arrays if low.rings else ():
            machine.exec(imp.Alloc(*ring))      # rows kept (streams.shift_rows)
        target = result if step.target == "out" else {}
        perm = _level_to_axis(step)
        values: dict = {}
        streams.run_stream(s, machine, values, check=check)
        for key, v in values.items():
            coord = tuple(key[p] for p in perm)
            target[coord] = sr.add(target[coord], v) if coord in target else v
        if step.target != "out":
            shape = tuple(sizes[v] for v in step.out)
            dense = np.full(shape, sr.zero, dtype=sr.dtype)
            for coord, v in target.items():
                dense[coord] = v
            t = Tensor.from_dense(dense, None, semiring=sr, name=step.target)
            tensors_now[step.target] = t
            b = streams.array_names(step.target, t.format)
            machine.env[b.vals] = t.vals
    return result


def _level_to_axis(step: planning.Step) -> list[int]:
    """Positions, within a stream key (free indices in loop order), of each output axis."""
    free_in_order = [v for v in step.order if v not in step.bound]
    return [free_in_order.index(v) for v in step.out]

