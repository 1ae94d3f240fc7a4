"""A compiled step with work fused at its output's stores, for a fixpoint loop
(imp.Fixpoint) around it.

    step = at_each_cell(prog, names, lambda i, v: imp.Store("w", i, v))

When every cell of a dense output is stored once, a pass over the cells after
the step (a map into other arrays, a reduction into scalars) can run at each
store instead, on the value stored: one pass over the vertices, not two
(proofs_notes/fixpoint_loop.md).
"""
from __future__ import annotations

from dataclasses import replace

from .. import imp
from ..errors import CompileError
from .program import Program

_WRITES = (imp.Store, imp.Accum, imp.SetBit, imp.Alloc, imp.Reserve, imp.Move, imp.Gemm)


def at_each_cell(prog: Program, names: imp.Names, make) -> Program:
    """prog with the statement make(position, value) run right after the store
    of each cell of its dense output (`value`, a variable holding what is
    stored). The same as a loop over the cells after prog when make writes
    nothing prog reads and reads nothing prog writes but through `value`.
    Raises CompileError unless the output is dense and every cell is stored
    once: one Store on any path through the body (the branches of an If, such
    as the gathered sums' switch, may each hold one), no other write, no
    parallel loop, no zeroed flag."""
    out = prog.output.arrays.get("vals")
    body = prog.body

    def stores_out(s) -> bool:
        return isinstance(s, imp.Store) and s.array == out
    stores = [s for s in imp.statements(body) if stores_out(s)]
    writes = [s for s in imp.statements(body) if isinstance(s, _WRITES)
              and out in imp.arrays_written(s)]
    parallel = any(isinstance(s, imp.ParallelFor) for s in imp.statements(body))
    zeroed = any(p.kind == "out_zeroed" for p in prog.params)
    if prog.output.mode != "dense" or imp.most_on_a_path(body, stores_out) != 1 \
            or writes != stores or parallel or zeroed:
        raise CompileError(f"the output {out} of this step is not stored once per cell: "
                           "no work can be fused at its stores")
    for store in dict.fromkeys(stores):
        v = names.fresh("stored")
        fused = imp.seq(imp.Decl(v, "value", store.value),
                        imp.Store(out, store.index, imp.Var(v)), make(store.index, imp.Var(v)))
        body = imp.replaced(body, store, fused)
    return replace(prog, body=body)
