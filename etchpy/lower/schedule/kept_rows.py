"""The per-call arrays of rows kept across a loop's iterations (streams.shift_rows:
a ring of rows of pieces, each slot tagged with the parent position it holds).

They are allocated once before the loops that use them; a loop split across
threads (imp.ParallelFor) that uses them gives each thread its own copy
(`private`), tags filled invalid, so a thread reuses only the rows it filled
itself. Correct for any order of iterations: a slot is read only when its tag
is the position it is read for, and filled (then tagged) otherwise."""
from __future__ import annotations

from dataclasses import replace

from ... import imp
from ...imp import Alloc, ParallelFor


def with_kept_rows(lows, loops: imp.Stmt) -> list:
    """[allocations, loops]: the arrays of the stream lowerers' `lows` rings
    ((name, type, size, fill), streams.shift_rows.Rings) that `loops` uses,
    private to each ParallelFor whose body uses them, the others allocated
    before the loops."""
    used = imp.names_used(loops)
    arrays = [a for low in lows if low.rings for a in low.rings.arrays if a[0] in used]
    inside = set()
    for node in [n for n in imp.statements(loops) if isinstance(n, ParallelFor)]:
        mine = tuple(a for a in arrays if a[0] in imp.names_used(node.body))
        if mine:
            inside |= {a[0] for a in mine}
            new = replace(node, private=node.private + mine)
            loops = imp.replaced(loops, node, new)
    return [Alloc(*a) for a in arrays if a[0] not in inside] + [loops]
