"""A tape's replay written out as one Python function (`Tuning.lazy_fast_replay`).

A replay (etchpy.lazy.replay.Tape) runs its steps in a loop, each step a
closure that gathers its inputs into a dict and calls a kernel's general call
path: a fraction of a microsecond per step around each library or kernel call,
which on a small dense program is a third of numpy's whole program. The
runner made here does the same work with the loop unrolled into one generated
function (its text holds only slot numbers; objects are in its namespace):

- a kernel step whose inputs were numpy arrays of the kernel's dtype on the
  recording run calls the kernel's fixed call on its slots, positionally
  (runtime.fixed_calls: the C binder's plan taking them in order where it is
  built, else a written-out cffi call), with the checks that call makes; one
  with other inputs (a scipy csr/csc array) the binder's plan for their kind
  taking them in order, which checks each input's kind, sizes and structure as
  the kernel's own call plan does; a MISS (an input not of that kind: not
  C-contiguous, a NaN the semiring refuses, a nonzero return code) runs the
  step's own function, which takes the general path and words any error;
- a dense product step (numpy's `@`, etchpy.lazy.regions) is one matmul, or
  one BLAS call from the binder's extension where it covers the operands
  (Tuning.lazy_c_blas: codegen_templates/binder_blas.c.j2);
- any other step is its own function called on the slots;
- the guards and results are checked inline, as Tape.replay does.

A tape's leaves have the shapes and dtypes of the recording run (the program's
key holds them: etchpy.lazy.replay.signature, etchpy.lazy.traced), so the
intermediate values a fixed call reads have the shapes and dtypes it was made
for; the fixed call still checks what it relies on (proofs_notes/call_plans.md).

    made = runners(tape, first_env)     # {"run": fn, "single": fn, "entry": ...}
    run = made["run"]
    out = run(leaves)          # the results as Tape.replay returns them, or None
"""
from __future__ import annotations

import numpy as np

from ..runtime import binder, fixed_calls
from ..runtime.call_plans import MISS
from . import c_nodes
from .wrap import trusted


def finite(v) -> bool:
    """Whether a computed value holds no inf or nan."""
    return bool(np.isfinite(v.data if hasattr(v, "tocsr") else v).all())


def result(v, dtype, shape, is_leaf: bool):
    """A computed value as compute returns it: a csr array for a sparse value (its
    own arrays: a sparse step may share an input's pattern), a numpy scalar for
    0-d, else a numpy array (a copy of an input array)."""
    if type(v) is np.ndarray and not is_leaf and v.dtype == dtype and v.shape == shape and shape:
        return v
    if type(v) is not np.ndarray and hasattr(v, "tocsr"):
        import scipy.sparse as sps
        return sps.csr_array(trusted(v) if is_leaf else v, copy=True)   # scipy trusts them
    arr = np.asarray(v, dtype=dtype).reshape(shape)
    return arr[()] if arr.ndim == 0 else (arr.copy() if is_leaf else arr)


def _fixed(fn, env: list):
    """The fixed call of a kernel step `fn` on the values it read in `env` (the
    recording run's), or None when the step or its inputs are not of that kind."""
    kernel = getattr(fn, "kernel", None)
    if kernel is None:
        return None
    kern, srcs = kernel
    ops, names = [env[s] for _, s in srcs], [name for name, _ in srcs]
    try:
        if all(type(v) is np.ndarray for v in ops):
            return fixed_calls.make(kern, names, ops)
        return fixed_calls.in_c(kern, names, ops)     # sparse inputs: the binder's plan
    except Exception:       # noqa: BLE001 - not fixable: the step's own path runs
        return None


def _slot(s: int, nleaves: int) -> str:
    """The text of the value in slot s: a leaf's local name, else env's entry."""
    return f"a{s}" if s < nleaves else f"env[{s}]"


def _step_lines(k: int, slot: int, fn, env: list, space: dict, n: int) -> list:
    """The lines computing env[slot] by step k (n: the number of leaves)."""
    space[f"f{k}"] = fn
    space["step"] = None        # the step as the binder's tape describes it, or None
    call = _fixed(fn, env)
    if call is not None:
        space[f"c{k}"] = call
        plan, v = binder.plan_capsule(call), env[slot]
        if plan is not None and type(v) is np.ndarray and v.ndim:
            space["step"] = (2, slot, v.dtype.num, v.shape, plan,
                             tuple(s for _, s in fn.kernel[1]))
        args = ", ".join(_slot(s, n) for _, s in fn.kernel[1])
        return [f"    v = c{k}({args})",
                f"    env[{slot}] = f{k}(env) if v is MISS else v"]
    mm = getattr(fn, "dense_matmul", None)
    if mm is not None:
        sa, sb, flip, dtype, shape = mm
        space[f"d{k}"], space[f"s{k}"], space[f"g{k}"] = dtype, shape, fn.finish
        a = f"{_slot(sa, n)}.T" if flip else _slot(sa, n)
        lines = [f"    v = matmul({a}, {_slot(sb, n)})"]
        if space.get("blas") is not None:     # one BLAS call, else numpy's matmul
            lines = [f"    v = blas({_slot(sa, n)}, {_slot(sb, n)}, {bool(flip)}, tall)",
                     "    if v is None:", "    " + lines[0]]
            if shape:
                space["step"] = (0, slot, np.dtype(dtype).num, tuple(shape), sa, sb,
                                 bool(flip), space["tall"], 0, None)
        return [*lines,
                f"    env[{slot}] = v if v.shape == s{k} and v.dtype == d{k} else g{k}(v)"]
    made = _c_region(fn, space)
    if made is not None:        # numpy's loops called by the binder, else the function
        space[f"cr{k}"] = made
        space["step"] = (1, slot, fn.c_ops[0][0], fn.c_ops[0][1], made, fn.c_ops[1])
        args = "".join(f", {_slot(s, n)}" for s in fn.c_ops[1])
        return [f"    v = region(cr{k}{args})",
                f"    env[{slot}] = f{k}(env) if v is None else v"]
    return [f"    env[{slot}] = f{k}(env)"]


def _c_region(fn, space: dict):
    """The binder's description of the region step fn (its capsule), or None
    when the runner calls no C region or fn is not one it covers."""
    ops = getattr(fn, "c_ops", None)
    if ops is None or space.get("region") is None:
        return None
    try:
        return binder.module().lazy_region_make(type(np.exp), *ops[0])
    except Exception:       # noqa: BLE001 - not covered: the step's own function runs
        return None


def _fused(steps: list, keep: set, space: dict) -> dict:
    """{k: the index of the product step fused into step k}: a region step whose
    epilogue (etchpy.lazy.regions) names the slot of the step before it, a dense
    product whose value nothing else reads (not a result nor a guard); the
    replay makes both by one call of the binder's product (its epilogue)."""
    if space.get("blas") is None:
        return {}
    found = {}
    for k in range(1, len(steps)):
        ep = getattr(steps[k][1], "epilogue", None)
        if (ep is not None and steps[k - 1][0] == ep[0] and ep[0] not in keep
                and getattr(steps[k - 1][1], "dense_matmul", None) is not None):
            found[k] = k - 1
    return found


def _fused_lines(k: int, slot: int, fn, j: int, pslot: int, space: dict, n: int) -> list:
    """The lines computing env[slot] by the region step k and the product step j
    it reads (slot pslot) in one call; the two steps as written when that call
    does not cover the operands (None)."""
    space[f"f{k}"] = fn
    _, op, e = fn.epilogue
    sa, sb, flip, dtype, shape = space[f"p{j}"].dense_matmul
    space["step"] = (0, slot, np.dtype(dtype).num, tuple(shape), sa, sb, bool(flip),
                     space["tall"], op, e) if shape else None
    if isinstance(e, float):
        space[f"e{k}"] = e
    arg = f"e{k}" if isinstance(e, float) else _slot(e, n)
    a = f"{_slot(sa, n)}.T" if flip else _slot(sa, n)
    return [f"    v = blas({_slot(sa, n)}, {_slot(sb, n)}, {bool(flip)}, tall, {op}, {arg})",
            "    if v is None:",
            f"        v = matmul({a}, {_slot(sb, n)})",
            f"        env[{pslot}] = v if v.shape == s{j} and v.dtype == d{j} else g{j}(v)",
            f"        v = f{k}(env)",
            f"    env[{slot}] = v"]


def _steps_lines(tape, env: list, space: dict, epilogue: bool) -> list:
    """The lines of the tape's steps (a product step and the region step after it
    as one call where `_fused` finds them and epilogue is on)."""
    n, head = tape.nleaves, []
    keep = {s for s, _ in tape.guards} | {s for s, _, _ in tape.outs}
    fused = _fused(tape.steps, keep, space) if epilogue else {}
    into = set(fused.values())
    described: list | None = []     # the steps as the binder's tape describes them
    for k, (slot, fn) in enumerate(tape.steps):
        lines = _step_lines(k, slot, fn, env, space, n)
        if k in into:           # made with the region step after it
            space[f"p{k}"] = fn
            continue
        if k in fused:
            head += _fused_lines(k, slot, fn, fused[k], tape.steps[fused[k]][0], space, n)
        else:
            head += lines
        if described is not None and space["step"] is not None:
            described.append(space["step"])
        else:
            described = None
    space["described"] = described
    return head


def _result_lines(outs: list, nleaves: int, single: bool, space: dict, exact: set) -> list:
    """The lines returning the results (replay.result's, inline where a value is
    already a numpy array of the result's dtype and shape; as it is from a slot
    in `exact`, whose step returns such an array)."""
    names = []
    for k, (s, dtype, shape) in enumerate(outs):
        if s < nleaves or not shape:
            names.append(f"result(env[{s}], rd{k}, rs{k}, {s < nleaves})")
        else:
            names.append(f"env[{s}]" if s in exact else f"r{k}")
        space[f"rd{k}"], space[f"rs{k}"] = dtype, shape
    lines = []
    for k, (s, dtype, shape) in enumerate(outs):
        if names[k] == f"r{k}":
            lines += [f"    r{k} = env[{s}]",
                      f"    if type(r{k}) is not nd or r{k}.dtype != rd{k} or r{k}.shape != rs{k}:",
                      f"        r{k} = result(r{k}, rd{k}, rs{k}, False)"]
    if single:
        lines.append(f"    return {names[0]}")
    else:
        lines.append(f"    return ({', '.join(names)},)")
    return lines


def runners(tape, env: list, blas: bool = False, tall: int = 0, epilogue: bool = False,
            region: bool = False, whole: bool = False) -> dict:
    """The tape's replay written out, by variant: "run", fn(leaves) -> its results
    on the arrays `leaves` (a list or tuple in the signature's order) as a
    tuple, or None when a guard fails; "single", the same returning the one
    result (not a tuple) when the tape has one; "entry" and "entry single", the
    same after testing that `leaves` are numpy arrays of the recording run's
    shapes and dtypes, none the same object (None: not all were; a traced
    function's kind test and replay in one call: etchpy.lazy.traced). `env`: the
    recording run's values by slot (read now, not kept); blas: a dense product
    step calls the binder's BLAS product first (Tuning.lazy_c_blas: lazy.c_nodes.
    product), numpy's matmul where that does not cover it; tall, the bytes of a
    product's dense operand from which a thin result is made with the long
    extent as BLAS's M (Tuning.lazy_blas_tall; 0: never); epilogue, a region
    step that is one operation on the product made just before it, read by it
    alone, is made in that product's call (Tuning.lazy_blas_epilogue); region: a
    region of ufuncs calls numpy's loops from the binder first (Tuning.lazy_region_c);
    whole: made["plan"] may be the binder's run of the whole tape (_c_tape)."""
    space = {"MISS": MISS, "matmul": np.matmul, "finite": finite, "result": result,
             "nd": np.ndarray, "blas": c_nodes.product() if blas else None, "tall": tall,
             "region": getattr(binder.module() if region else None, "lazy_region", None)}
    n = tape.nleaves
    leaves = [f"a{k}" for k in range(n)]
    head = [f"    {', '.join(leaves)}, = leaves" if n else ""]
    head.append(f"    env = [{', '.join(leaves + ['None'] * (tape.size - n))}]")
    head += _steps_lines(tape, env, space, epilogue)
    head += [f"    if finite(env[{s}]) is not {bool(want)}:\n        return None"
             for s, want in tape.guards]
    # slots whose step returns a numpy array of the node's dtype and shape (a dense
    # kernel step: etchpy.lazy.kernel; a dense product)
    exact = {slot for slot, fn in tape.steps
             if getattr(fn, "kernel", None) or getattr(fn, "dense_matmul", None)}
    test = _kind_test(env[:n], space)
    made: dict = {"plan": _direct_plan(tape, space, exact)}
    if made["plan"] is None and whole:
        made["plan"] = _c_tape(tape, space["described"])
    for name, single, tested in (("run", False, False), ("single", True, False),
                                 ("entry", False, True), ("entry single", True, True)):
        single = single and len(tape.outs) == 1
        if tested and test is None:
            made[name] = None
            continue
        lines = ["def run(leaves):", *(test[:2] if tested else []), head[0],
                 *(test[2:] if tested else []), *head[1:],
                 *_result_lines(tape.outs, n, single, space, exact)]
        text = "\n".join(lines) + "\n"
        exec(compile(text, "<lazy replay>", "exec"), space)   # noqa: S102
        made[name] = space["run"]
        made[name].text = text        # what runs (read by tests and when debugging)
    return made


def _direct_plan(tape, space: dict, exact: set):
    """The binder's plan (its capsule) of a tape that is one kernel step taking
    the leaves in order, with no guard and that step's dense array its one
    result, whose "single" runner is then that plan's call and a MISS test: the
    C lookup calls it without the runner's frame (lazy.c_nodes); else None."""
    if len(tape.steps) != 1 or tape.guards or len(tape.outs) != 1:
        return None
    slot, fn = tape.steps[0]
    call, (s, _, shape) = space.get("c0"), tape.outs[0]
    if (call is None or s != slot or s not in exact or not shape
            or [k for _, k in fn.kernel[1]] != list(range(tape.nleaves))):
        return None
    return binder.plan_capsule(call)


def _c_tape(tape, described):
    """The binder's description of the whole tape (its capsule: the C lookup runs
    it, this runner where a step declines; Tuning.lazy_c_tape, binder_tape.c.j2)
    when it has one result, made by a step, of at least one axis, no guard, and
    every step one the binder makes (a product, a region, a kernel's plan),
    described in `described`; else None."""
    if not described or tape.guards or len(tape.outs) != 1:
        return None
    s, _, shape = tape.outs[0]
    if s < tape.nleaves or not shape or binder.module() is None:
        return None
    try:
        return binder.module().lazy_tape_make(tape.size, s, tuple(described))
    except Exception:       # noqa: BLE001 - not covered: the runner runs
        return None


def _kind_test(values: list, space: dict):
    """The lines returning None unless the leaves are numpy arrays of the shapes
    and dtypes of `values`, none the same object (two before the leaves are
    unpacked as a0, a1, ..., the rest after); None when values are not all
    numpy arrays."""
    if not all(type(v) is np.ndarray for v in values):
        return None
    n = len(values)
    test = []
    for k, v in enumerate(values):
        space[f"ls{k}"], space[f"ld{k}"] = v.shape, v.dtype
        test.append(f"type(a{k}) is nd and a{k}.shape == ls{k} and a{k}.dtype == ld{k}")
    test += [f"a{i} is not a{j}" for i in range(n) for j in range(i + 1, n)]
    return [f"    if len(leaves) != {n}:", "        return None",
            f"    if not ({' and '.join(test) or 'True'}):", "        return None"]
