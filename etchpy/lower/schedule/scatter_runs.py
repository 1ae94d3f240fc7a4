"""Runs of a scatter summed in a register, switched by tuning.scatter_runs.

A walk of every stored entry of a coordinate input (a coo matrix's; the loop the
lowering marks with streams.Scatter) adds each entry's value into the dense output
at its coordinate: `out[k] ⊕= v` once per entry. Entries in order repeat their
row: consecutive adds into one cell then wait on each other through memory (a
store, then the next entry's load of the same cell), 2-3 times the loop's time
without the chain (a coo SpMV of a P1 tetrahedral mesh in row order, 4.2e5
entries: 847 against 324 µs, session 76). Here the cell being filled is kept in a
register: an entry whose cell `k` is the run's adds into it; another flushes the
run into out (`out[cur] ⊕= run`) and starts its own. The loop's last run is
flushed after it, also when a failed check stopped it (each run's cell is a
coordinate the loop read before its value). Entries out of order make runs of one
(a flush an entry, which costs what the add did).

Only a loop whose body writes the output by one `Accum` among its top statements
and reads it nowhere else is taken, not on threads. The sum into a cell is the
same sum taken in the same order with the partial sums grouped, equal by ⊕'s
associativity (proofs_notes/scatter_runs.md); 0 ⊕ v = v starts each run.
"""
from __future__ import annotations

from dataclasses import replace

from ... import imp
from ...imp import Accum, Assign, Bin, Const, Decl, If, ParallelFor, Seq, Var, While
from ...streams import Scatter
from ..program import program_names


def run(prog, semiring, tuning):
    """`prog` with each scatter walk into its dense output summing runs in a
    register (the module docstring); `prog` itself when the switch is off or no
    loop is taken."""
    out = prog.output.arrays.get("vals")
    if not tuning.scatter_runs or prog.output.mode != "dense" or out is None:
        return prog
    threaded = {id(s) for p in imp.statements(prog.body) if isinstance(p, ParallelFor)
                for s in imp.statements(p.body)}
    loops = [s for s in imp.statements(prog.body) if isinstance(s, While)
             and isinstance(s.walk, Scatter) and id(s) not in threaded]
    names, body = program_names(prog), prog.body
    for loop in dict.fromkeys(loops):
        runs = _runs(loop, out, Const(semiring.zero, "value"), names)
        if runs is not None:
            body = imp.replaced(body, loop, runs)
    return prog if body is prog.body else replace(prog, body=body)


def _runs(loop: While, out: str, zero: Const, names):
    """The loop summing its runs in a register, with the register's declarations
    before it and the last run's flush after; None unless its body writes `out`
    by one Accum among its top statements and uses `out` nowhere else."""
    top = loop.body.stmts if isinstance(loop.body, Seq) else (loop.body,)
    adds = [s for s in top if isinstance(s, Accum) and s.array == out]
    if len(adds) != 1 or out in imp.names_used(adds[0].index) | imp.names_used(adds[0].value) \
            or any(out in imp.names_used(s) for s in top if s is not adds[0]):
        return None
    add, (cur, acc, at) = adds[0], (names.fresh(b) for b in ("run_at", "run", "cell_at"))
    flush = If(Bin("<=", Const(0), Var(cur)), Accum(out, Var(cur), Var(acc)))
    step = imp.seq(
        Decl(at, "index", add.index),
        If(Bin("!=", Var(at), Var(cur)),
           imp.seq(flush, Assign(acc, zero), Assign(cur, Var(at)))),
        Assign(acc, imp.Ring("add", Var(acc), add.value)))
    inner = replace(loop, body=imp.seq(*[step if s is add else s for s in top]))
    return imp.seq(Decl(cur, "index", Const(-1)), Decl(acc, "value", zero), inner, flush)


def is_flush(node, derived: set) -> bool:
    """Whether `node` is the flush `_runs` writes into its loop for a coordinate `at`
    (a Var in `derived`): `if (at != cur) { if (0 <= cur) out[cur] ⊕= run; run :=
    zero; cur := at }`. With the register's `run := run ⊕ v` after it, the entries'
    values reach out at their own cells, each once, in any order: together an
    `out[at] ⊕= v` (lower.schedule.order_free reads it so)."""
    match node:
        case If(Bin("!=", Var(at), Var(cur)), then, None) if Var(at) in derived:
            match imp.seq_parts(then):
                case (If(Bin("<=", Const(0), Var(c1)), Accum(_, Var(c2), Var(r1)), None),
                      Assign(r2, Const()), Assign(c3, Var(a))) \
                        if c1 == c2 == c3 == cur and r1 == r2 != cur and a == at:
                    return True
    return False
