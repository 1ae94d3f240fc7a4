"""Graph calls made in C: `bfs_levels` on a scipy csr matrix or a Graph with
no Python between the call and the BFS's C function (codegen_templates/graph_binder.c.j2,
a CPython extension built once per Python, numpy and etchpy version into the
kernel cache, as runtime.binder's module is, and loaded under the same checks).

    plan = plan_for(tuning)                 # None: Tuning.graph_binder off, or no binder here
    levels = bfs(plan, A, source)           # MISS: not covered, the caller's path runs
    levels = bfs_graph(plan, arrays, source)

A plan holds a Tuning's BFS values and the addresses of graph.direct's BFS for
int32 and int64 index arrays (the second loaded on the first int64 miss); it is
made again once the kernel store changed (KERNELS.generation), as graph.direct's
own memo of its library is. The C makes every check graph.direct's Python makes
before its C call and misses on anything else (another class, a source that is
not a Python or numpy integer of [0, n), workspaces of 32 MiB or more: those come from
runtime.scratch on the general path, smaller ones from malloc); the BFS checks
A's arrays as before, and any error code it returns is a miss, so the general
path words it.
"""
from __future__ import annotations

import importlib.resources

import numpy as np

from .. import host_facts
from ..errors import CompileError
from ..runtime import extension, fingerprint
from ..runtime.binder import available
from ..runtime.kernel_cache import KERNELS
from ..tuning import Tuning
from ..version import __version__
from . import direct

MODULE = "etchpy_graph_binder"
MISS = object()
_plans: dict = {}           # id(tuning) -> (tuning, KERNELS.generation, plan or None,
#                             the C functions whose addresses the plan holds: kept alive)


def module():
    """The extension module, built or found in the cache once per process; None where
    it cannot be (runtime.binder.available, no compiler or no Python headers)."""
    return _module()


def plan_for(t: Tuning):
    """(the plan of Tuning t, the module), kept by identity while the kernel store
    is unchanged, or None: t.graph_binder is off or there is no binder here."""
    got = _plans.get(id(t))
    if got is not None and got[0] is t and got[1] == KERNELS.generation:
        return got[2]
    generation, keep = KERNELS.generation, []
    plan = _make(t, keep) if t.graph_binder else None
    made = None if plan is None else (plan, module())
    if len(_plans) >= 16:
        _plans.clear()
    _plans[id(t)] = (t, generation, made, keep)
    return made


def _make(t: Tuning, keep: list):
    mod = module()
    if mod is None:
        return None
    import scipy.sparse as sp
    try:
        fns, ffi, _ = direct._lib(np.dtype(np.int32))
    except CompileError:
        return None
    plan = mod.make_plan((sp.csr_array, sp.csr_matrix), MISS, float(t.pull_alpha),
                         float(t.pull_beta), int(t.bfs_check_first), int(t.bfs_warm_bytes),
                         int(t.pull_measured), int(host_facts.narrow_levels(t)), int(t.pull_rounds))
    mod.set_function(plan, False, int(ffi.cast("uintptr_t", fns["bfs"])))
    keep.append(fns)
    return plan


def wide_miss(made, A) -> None:
    """After a miss of `bfs` on A (made: plan_for's answer): when A's index arrays
    are int64, the plan gets the BFS for them (its library loaded now), so the
    next such call is made in C."""
    ptr = getattr(A, "indptr", None)
    if isinstance(ptr, np.ndarray) and ptr.dtype == np.int64:
        try:
            fns, ffi, _ = direct._lib(ptr.dtype)
        except CompileError:
            return
        for record in _plans.values():
            if record[2] is made:
                record[3].append(fns)         # kept alive while the plan holds its address
                made[1].set_function(made[0], True, int(ffi.cast("uintptr_t", fns["bfs"])))


def _source() -> str:
    import jinja2      # only needed when C is rendered, not for every import etchpy
    text = importlib.resources.files("etchpy.codegen_templates").joinpath("graph_binder.c.j2").read_text()
    return jinja2.Template(text, keep_trailing_newline=True,
                           undefined=jinja2.StrictUndefined).render(version=__version__,
                                                                    module=MODULE)


def _build_or_load():
    """The module from the cache, or built into it (runtime.extension)."""
    stats = fingerprint.stats_of([fingerprint.template_folder() / "graph_binder.c.j2"])
    return extension.built(MODULE, [repr(stats)], _source)


_module = extension.Once(lambda: _build_or_load() if available() else None)
