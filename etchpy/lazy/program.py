"""Running lazy programs: `ep.compute(a, b, ...)` evaluates several results as one
program; `ep.explain(a, b, ...)` shows what it does.

The program (all the results' nodes, common subexpressions merged, squares of
sums expanded: etchpy.lazy.translate) is cut into steps at the nodes it
materialises; everything between two cuts is fused into one etchpy index
expression, compiled with the optimizer (given the real index sizes and nonzero
counts) as one kernel (maps inside it are ep.map). A node is materialised when
  - it is a result, or it is used twice or more and does work (a product, a sum,
    a map, an element-wise operation of arrays): computed once, read by each
    user; except a low-rank product (U @ V.T), recomputed by each user
    (factorised in a sum, sampled under a sparse factor);
  - it is a map of a contraction (exp(X @ w)): computed once, not once per entry
    of an enclosing product; with optimize=False every map is run by numpy;
  - it is element-wise work whose support is one sparse pattern and which holds
    a matrix product or two sparse operands (`X * log(W @ H)`, `M*(U@V.T) - X`):
    it runs on the pattern's stored values (each product an SDDMM kernel
    weighted by the mask, the rest numpy on the values; etchpy.lazy.sample),
    so W @ H is never formed; a dense operand of `*` with a transposed or csc
    sparse operand is sampled the same way inside its kernel;
  - it is dense element-wise work: one numpy expression (a kernel call costs
    more).
A program run again with arrays of the same kind replays the steps of its
first run (etchpy.lazy.replay): no translation, no kernel lookup, the same
input checks.
A step's result is a scipy csr array when its support is contained in that of a
sparse input (as scipy's `multiply` returns), else a numpy array. A product of a
sparse operand with a materialised one that is not finite everywhere (a divisor
with a zero) is computed on dense copies, as numpy's 0·inf = nan requires.
"""
from __future__ import annotations

import functools

import numpy as np

from .. import maps
from ..api import compile as compile_kernel
from ..errors import InputError
from ..expr.nodes import Expr
from ..tuning import of as tuning_of
from . import c_nodes, fusion
from .array import as_node
from .nodes import RUN, Const, LazyArray, Leaf, Map, Pow, Sum
from .show import show
from .replay import PROGRAMS, Tape, finite as finite_value, signature, sparse_kinds, \
    tuning_key
from .state import Options
from .steps import Evaluator, to_result
from .wrap import reworded
from .translate import expand_squares, share


def _program(arrays, rewrite: bool, guards=None):
    """(nodes, outputs after the rewrites, uses, rewrites fired); the leaves whose
    finiteness allowed a rewrite are appended to guards as (leaf, finite)."""
    if not arrays:
        raise InputError("ep.compute needs at least one lazy array")
    nodes = [as_node(a) for a in arrays]
    fired: list = []
    outs, uses = share(nodes)
    if rewrite and _sums_a_power(outs, set()):
        memo: dict = {}
        check = functools.partial(_finite, [] if guards is None else guards, {})
        expanded = [expand_squares(n, fired, memo, check) for n in outs]
        if fired:
            outs, uses = share(expanded)
    return nodes, outs, uses, fired


def _finite(guards: list, seen: dict, n) -> bool:
    """Whether n is finite by its leaves and constants (each leaf checked once and
    noted in guards), through operations that keep finiteness (a map only when
    etchpy.maps says it does: not log, log(0) = -inf)."""
    if n.key not in seen:
        match n:
            case Leaf(value):
                seen[n.key] = ok = finite_value(value)
                guards.append((n, ok))
            case Const(value):
                seen[n.key] = bool(np.isfinite(value))
            case Map(a, fn, arg):
                seen[n.key] = (maps.MAPS[fn].keeps_finite
                               and (arg is None or bool(np.isfinite(arg)))
                               and _finite(guards, seen, a))
            case _:
                seen[n.key] = all(_finite(guards, seen, a) for a in n.args)
    return seen[n.key]


def _sums_a_power(nodes, seen: set) -> bool:
    """Whether a node under nodes is a sum of a power (expand_squares may fire)."""
    for n in nodes:
        if n.key not in seen:
            seen.add(n.key)
            if isinstance(n, Sum) and isinstance(n.a, Pow) or _sums_a_power(n.args, seen):
                return True
    return False


def compute(*arrays, optimize: bool = True, threads: int | None = 1, tuning=None,
            **approximation):
    """Evaluate lazy arrays as one program (shared subexpressions once).

    Parameters: arrays, lazy arrays (scalars and arrays are wrapped); optimize,
    False runs each step as written (no array-level rewrite, no sampling, the
    etchpy optimizer off); threads, the kernels' threads (default 1); tuning, an
    etchpy Tuning for the kernels.
    Returns: one result for one array, else a tuple: numpy arrays, numpy scalars
    for 0-d results, scipy csr arrays for results whose support is a sparse
    input's.
    approximation: max_rel_error, samples, heldout, extractor, seed, time_limit
    (off by default; with max_rel_error the constant operands may be
    approximated within that error on the samples: ep.approximate,
    docs/approximations.md).
    Raises: InputError for a non-lazy, non-array argument or a bad approximation
    option.

        >>> a = ep.lazy(np.ones((2, 2)))
        >>> s, t = ep.compute(a.sum(), (a @ a).sum(axis=1))
    """
    if tuning is None and not approximation and c_nodes.INSTALLED[0] is True:
        look = c_nodes.LOOKUP[0]    # one result over numpy arrays: the lookup in C
        if look is not None and len(arrays) == 1:
            out = look(arrays[0], PROGRAMS._d, optimize, threads)
            if out is not None:
                return out
        for a in arrays:            # a program met before: its tape, in one frame
            if not isinstance(a, LazyArray):
                break
        else:
            if arrays:
                sig, values, _ = signature(arrays)
                tape = PROGRAMS.plain_get((sig, optimize, threads, None))
                if tape is not None:
                    out = _replayed(tape, values, len(arrays) == 1)
                    if out is not None:
                        return out
    if approximation:
        return RUN["approximate"]("compute", arrays, approximation,
                                  dict(optimize=optimize, threads=threads, tuning=tuning))
    if not arrays:
        raise InputError("ep.compute needs at least one lazy array")
    nodes = list(arrays)
    for k, a in enumerate(nodes):
        if not isinstance(a, LazyArray):
            nodes[k] = as_node(a)
    results = run(nodes, optimize, threads, tuning)[0]
    return results[0] if len(results) == 1 else results


def _single_replayed(single, values: list):
    """single(values), a tape's one result on the leaves `values`, its InputError
    named as _replayed names it (the C lookup's replay of a program with
    sparse leaves)."""
    try:
        return single(values)
    except InputError as err:
        raise reworded(err, values)


def _replayed(tape, values: list, single: bool):
    """The tape's replay on the leaves `values` (its one result when single), an
    InputError from a kernel's check of a sparse leaf named for ep.lazy's
    operand (lazy.wrap.reworded)."""
    try:
        return tape.single(values) if single else tape.run(values)
    except InputError as err:
        raise reworded(err, values)


def run(nodes: list, optimize: bool, threads, tuning):
    """(the results of the lazy arrays `nodes`, as a tuple; the tape their run
    replayed or recorded, or None when it is not replayable): compute's work
    after its arguments are nodes. A tape found under the program's signature
    is replayed; a failed guard or none found runs the program afresh. The
    operators of arrays built after it are the tuning's (lazy.c_nodes)."""
    chosen = c_nodes.DEFAULT if tuning is None else _c_nodes(tuning)
    if chosen != c_nodes.CHOSEN[0]:
        c_nodes.use(*chosen)
    sig, values, leaves = signature(nodes)
    tkey = tuning if tuning is None else tuning_key(tuning)
    key = (sig, optimize, threads, tkey)
    tape = PROGRAMS.get(key) if tkey is not False else None
    results = None if tape is None else _replayed(tape, values, False)
    if results is not None:
        return results, tape
    checked: list = []
    _, outs, uses, _ = _program(nodes, optimize, checked)
    finite = all(ok for _, ok in checked)    # else no kernel may distribute either
    ev = Evaluator(uses, Options(optimize, threads, tuning, finite=finite), leaves)
    ev.values.guards += [(ev.slot(leaf), ok) for leaf, ok in checked]
    try:
        if optimize:
            fusion.choose(ev, outs)
        results = tuple(to_result(o, ev.value(o)) for o in outs)
    except InputError as err:       # named for ep.lazy's operand where it is one's
        raise reworded(err, values)
    tape = None
    if ev.values.replayable and tkey is not False:
        tape = Tape(ev, outs)
        tape.key = key                  # the object the tapes hold it under (c_nodes' lookup)
        PROGRAMS.put(key, tape)
    return results, tape


def _c_nodes(tuning) -> tuple:
    """The tuning's (lazy_c_nodes, lazy_c_memo, lazy_node_bytes, lazy_node_large)
    (the defaults for a tuning that is not one: its error is the kernels')."""
    try:
        t = tuning_of(tuning)
    except (TypeError, ValueError):
        return c_nodes.DEFAULT
    return (bool(t.lazy_c_nodes), bool(t.lazy_c_memo), int(t.lazy_node_bytes),
            int(t.lazy_node_large))


def explain(*arrays, optimize: bool = True, threads: int | None = 1, tuning=None,
            **approximation) -> str:
    """What `compute` does with these arrays, without computing them: the program
    as written and after the array-level rewrites (which fired), then each step:
    the node it materialises, in which format, and the etchpy kernel (its
    expression before and after the optimizer) or the numpy operation that runs.
    Kernels are compiled (not run) to show their plans. arrays, optimize, threads
    tuning and approximation: as for compute (an approximated program's explain
    starts with APPROXIMATED, its choices and measured errors).

    Given one index expression (or statement string) instead of lazy arrays, it is
    `ep.compile(expr, ...).explain()`, the other keywords being compile's.

        >>> print(ep.explain(r @ v, r.T @ u))
        >>> print(ep.explain(ep.sum(j, A[i, j] * x[j])))
    """
    if len(arrays) == 1 and isinstance(arrays[0], (Expr, str)):
        return compile_kernel(arrays[0], optimize=None if optimize is True else optimize,
                              threads=threads, tuning=tuning, **approximation).explain()
    if approximation:
        return RUN["approximate"]("explain", arrays, approximation,
                                  dict(optimize=optimize, threads=threads, tuning=tuning))
    nodes, outs, uses, fired = _program(arrays, optimize)
    ev = Evaluator(uses, Options(optimize, threads, tuning, dry=True))
    _name_leaves(ev, [as_node(a) for a in arrays], set())
    if optimize:
        fusion.choose(ev, outs)
    for o in outs:
        ev.value(o)
    names = ev.report.names
    lines = ["lazy program", "  as written:"]
    lines += [f"    out{k} = {show(as_node(a), names)}" for k, a in enumerate(arrays)]
    lines += ["  rewrites:"] + [f"    {f}" for f in fired or ["none"]]
    lines += ["  after:"] + [f"    out{k} = {show(o, names)}" for k, o in enumerate(outs)]
    shared = sorted({show(n, names) for n in ev.report.materialised if uses[n.key] > 1})
    lines += ["  common subexpressions computed once:"] + \
        [f"    {s}" for s in shared or ["none"]]
    lines += _fusion_lines(ev.report.fusion, names)
    lines += ["steps:"] + [f"  {s}" for s in ev.report.lines]
    return "\n".join(lines)


def _fusion_lines(found, names) -> list[str]:
    """explain's fusion-plan section: each candidate, the rules' plan and the
    chosen one with their prices."""
    if found is None:
        return ["  fusion plan: no candidates (every materialisation is forced)"]
    cands, rules, p_rules, best, p_best, count, how = found

    def text(plan):
        mat = [f"C{k}" for k, c in enumerate(cands) if c.key in plan]
        return "materialise " + (", ".join(mat) if mat else "none")
    lines = [f"  fusion plan ({how} search, {count} plans priced): candidates"]
    lines += [f"    C{k}: {show(c, names)}" for k, c in enumerate(cands)]
    lines += [f"    rules' plan:  {text(rules)}  cost {p_rules:.4g}",
              f"    chosen plan:  {text(best)}  cost {p_best:.4g}"]
    return lines


def _name_leaves(ev: Evaluator, nodes, seen: set) -> None:
    for n in nodes:
        if n.key not in seen:
            seen.add(n.key)
            if isinstance(n, Leaf):
                ev.report.name_leaf(n.key)
            _name_leaves(ev, n.args, seen)


RUN.update(compute=compute, explain=explain)
c_nodes.TAPES[0] = PROGRAMS._d      # where ep.compute's C entry looks (lazy.c_nodes)
c_nodes.SPARSE[0] = (sparse_kinds, _single_replayed)     # its sparse leaves
