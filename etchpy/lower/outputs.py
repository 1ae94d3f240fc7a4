"""Which target writes a step's output, and the output's parameters (the C ABI).

    dense      out[flat(L)] ⊕= v, the output filled with zero first; also an output
               that stores every cell (rle) not written as spans, packed after the
               call (stores_every_cell)
    append     a sparse output assembled in order (targets.append)
    workspace  the last level out of order, through a workspace (tuning.workspaces)
    insert     a last level that inserts in any order (a bytemap, a hash) under located
               levels, each value at its cell (targets.insert)
    spans      a run-length last level under located levels, its levels the step's
               outer loops (any mode order, summed loops inside), written as runs in
               order, equal neighbours merged (targets.runs)
    bucket     a transposed (dense, compressed) output, by a counting sort
               (tuning.counting_sort)
    coords     any other case: (coordinates, value) records that the runtime
               canonicalises (sorts, combines duplicates with ⊕)
"""
from __future__ import annotations

from .. import imp
from ..formats import Format
from ..plan import plan as planning
from .program import Output, Param
from .targets.append import AppendTarget, appendable, sparse_prefix
from .targets.bucket import BucketTarget, bucketable
from .targets.coords import CoordsTarget
from .targets.dense import DenseTarget
from .targets.insert import InsertTarget, insertable
from .targets.runs import RunsTarget, SparseRunsTarget, runs_writable
from .targets.workspace import WorkspaceTarget


def output_mode(plan: planning.Plan, fmt: Format | None, tuning) -> str:
    if fmt is None or fmt.is_dense:
        return "dense"
    steps = [s for s in plan.steps if s.target == "out"]
    one = len(steps) == 1
    if one and appendable(fmt) and _order_matches(steps[0], fmt, plan.out):
        return "append"
    if (one and tuning.workspaces and appendable(fmt) and fmt.levels[-1].appends
            and _order_matches(steps[0], fmt, plan.out, skip_last=True)):
        return "workspace"
    if one and runs_writable(fmt, steps[0], [plan.out[m] for m in fmt.mode_order]):
        return "spans"
    if stores_every_cell(fmt):
        return "dense"
    if one and insertable(fmt):
        return "insert"
    if (one and tuning.counting_sort and bucketable(fmt)
            and tuple(steps[0].order[:1]) == (plan.out[fmt.mode_order[1]],)):
        return "bucket"
    return "coords"


def stores_every_cell(fmt: Format) -> bool:
    """Does the output store a value for every cell (located levels over one that
    stores every coordinate of its fibre, formats.level `every_coordinate`: a
    dense run list)? Written out of order, it is then computed dense, in place,
    and packed after the call (runtime make_output, `Tensor.from_dense`): its
    stored size is the dense size, where coordinate records would be one per
    product, sorted."""
    return (bool(fmt.levels) and getattr(fmt.levels[-1], "every_coordinate", False)
            and all(lv.located for lv in fmt.levels[:-1]))


def _order_matches(step: planning.Step, fmt: Format, out, skip_last=False) -> bool:
    """The loop order starts with the output's levels down to the last appending
    one (all but the last level for a workspace); trailing located levels may come
    anywhere later, since their block is allocated when its parent is appended."""
    storage = [out[m] for m in fmt.mode_order][:sparse_prefix(fmt)]
    if skip_last:
        storage = storage[:-1]
    return list(step.order[:len(storage)]) == storage


def first_table(tuning) -> int:
    """An inserted output's first table size (a hash's slots): tuning.hash_output_initial,
    or tuning.hash_initial where that is 0, rounded up to a power of two."""
    first = max(1, tuning.hash_output_initial or tuning.hash_initial)
    return 1 << (first - 1).bit_length()


def make_output(mode, axes, fmt, sr, names: imp.Names, tuning, bound=None, step=None,
                hash_workspace=True):
    """(target, its parameters, the Output record) of an output of this mode.
    The target claims its ABI names from `names` first."""
    if mode == "dense":
        array, zeroed = names.fresh("out"), names.fresh("out_zeroed")
        t = DenseTarget(array, axes, sr, names, zeroed=zeroed)
        params = [Param(array, "out_dense", "value",
                        "output, row-major over (" + ", ".join(axes) + "); filled by the kernel"),
                  Param(zeroed, "out_zeroed", "index",
                        "nonzero if out already holds the semiring's zero in every cell "
                        "(the kernel then skips its fill), else 0")]
        return t, params, Output("dense", axes, fmt, {"vals": array})
    match mode:
        case "bucket":
            row = axes[fmt.mode_order[0]]
            t = BucketTarget(axes, fmt, any(
                v in step.bound for v in step.order[:list(step.order).index(row)]), names)
        case "append":
            t = AppendTarget(axes, fmt, sr, names, tuning, bound)
        case "spans":            # its levels' axes, in storage order
            runs = SparseRunsTarget if getattr(fmt.levels[-1], "run_starts", False) \
                else RunsTarget
            t = runs([axes[m] for m in fmt.mode_order], sr, names, tuning, bound)
        case "insert":
            t = InsertTarget(axes, fmt, sr, names, first_table(tuning))
        case "workspace":
            t = WorkspaceTarget(axes, fmt, sr, names, tuning, bound)
            t = t if hash_workspace else t.way(False)
        case _:
            t = CoordsTarget(axes, sr, names, tuning)
    params = [Param(arr, "out_grown", "value" if role == "vals" else "index",
                    f"output {role}: set to a malloc'ed array; the caller frees it")
              for role, arr in t.arrays.items()]
    params += [Param(var, "out_count", "index", f"output {role}: number of entries written")
               for role, var in t.counts().items()]
    return t, params, Output(mode, axes, fmt, dict(t.arrays), t.counts())
