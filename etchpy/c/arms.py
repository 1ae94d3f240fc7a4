"""A kernel compiled once per value of its split condition (imp.If.split).

An If marked `split` tests a condition that holds the same value all through a
call (it reads only the function's parameters and input arrays). gcc lays out
and allocates registers for a function as a whole: an arm that a call never runs
still changes the code of the arms it does run (measured: a 5% swing on rows that
never took the arm; docs/performance.md, session 71). So the kernel is written
as two functions of its own, the program with the condition true and with it
false (`folded`), and the exported function picks one as the call begins:

    static EP_ARM int NAME_arm0(params) { the program, cond := 0 }
    static EP_ARM int NAME_arm1(params) { the program, cond := 1 }
    int NAME(params) { return (cond) ? NAME_arm1(args) : NAME_arm0(args); }

Each function runs exactly the statements the program runs when the condition
has that value (every If on it takes the arm the value picks, every other read
of it reads the value), so the kernel does what the program does.
"""
from __future__ import annotations

from dataclasses import replace

from .. import imp
from ..imp import Block, Const, If, ParallelFor


def split_cond(prog):
    """The condition of the first If marked `split` in prog's body whose names
    are all the function's parameters, or None (also where a loop runs across
    threads: its bodies are helper functions of their own)."""
    params = {p.name for p in prog.params}
    found = None
    for u in imp.statements(prog.body):
        if isinstance(u, ParallelFor):
            return None
        if found is None and isinstance(u, If) and u.split and imp.names_used(u.cond) <= params:
            found = u.cond
    return found


def folded(node, cond, value: bool):
    """node with each If marked split on `cond` replaced by the arm `value` picks
    (a scope of its own) and every other read of cond by the constant."""
    if node == cond:
        return Const(value, "bool")
    if isinstance(node, If) and node.split and node.cond == cond:
        arm = node.then if value else node.else_
        return imp.SKIP if arm is None else Block(folded(arm, cond, value))
    if isinstance(node, tuple) or hasattr(node, "__dataclass_fields__"):
        return imp.map_parts(node, lambda x: folded(x, cond, value))
    return node


def programs(prog, cond) -> tuple:
    """(prog with cond true, prog with cond false)."""
    return tuple(replace(prog, body=folded(prog.body, cond, v)) for v in (True, False))


def functions(prototype: str, name: str, params, cond_c: str, bodies) -> tuple[list[str], str]:
    """(the two arms' C functions, the false arm's first, the exported function's
    body) for a kernel whose `prototype` text is `int NAME(...)`; bodies: (true
    arm, false arm)."""
    args = ", ".join(p.name for p in params)
    arms = []
    for k, body in zip((0, 1), bodies[::-1]):
        head = prototype.replace(f"int {name}(", f"static EP_ARM int {name}_arm{k}(", 1)
        arms.append(f"{head}\n{{\n{body}\n}}")
    call = f"    return ({cond_c}) ? {name}_arm1({args}) : {name}_arm0({args});"
    return arms, call
