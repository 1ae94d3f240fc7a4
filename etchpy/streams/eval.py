"""The evaluation ⟦s⟧ of a stream on the Imp interpreter, and its description.

`run_stream` sums the ready values into a dictionary from coordinates to
values (contracted levels drop out of the key). With `check=True` it also
checks the simple-stream invariants at every step: bounded (finite),
(index, ready) strictly increasing (monotonic), and ready indices strictly
increasing (reduced). It reads the record's fields only, never its facts.
"""
from __future__ import annotations

from .. import imp
from .stream import Stream, Value, is_stream, levels_of


class StreamInvariantError(AssertionError):
    """A stream broke the simple-stream invariants (a compiler bug)."""


def declare(machine: imp.Machine, s: Stream):
    for name, typ in s.state:
        machine.env[name] = False if typ == "bool" else 0


def run_stream(s: Value, machine: imp.Machine, out: dict, prefix=(), check=False,
               max_steps=10**8):
    """⟦s⟧: add every ready value into out[coordinates] (contracted levels drop out)."""
    if not is_stream(s):
        v = machine.eval(s)
        out[prefix] = machine.semiring.add(out[prefix], v) if prefix in out else v
        return
    declare(machine, s)
    machine.exec(s.init)
    last = None
    last_ready = None
    steps = 0
    while machine.eval(s.valid):
        idx, ready = machine.eval(s.index), bool(machine.eval(s.ready))
        if check:
            steps += 1
            if steps > max_steps:
                raise StreamInvariantError(f"stream over {s.var} did not finish")
            if last is not None and (idx, ready) <= last:
                raise StreamInvariantError(f"stream over {s.var} not monotonic: "
                                           f"{(idx, ready)} after {last}")
            if ready and last_ready is not None and idx <= last_ready:
                raise StreamInvariantError(f"stream over {s.var} not reduced: index {idx} "
                                           f"ready twice")
            last = (idx, ready)
        if ready:
            if check:
                last_ready = idx
            key = prefix if s.contracted else prefix + (idx,)
            run_stream(s.value, machine, out, key, check, max_steps)
        machine.exec(s.next)


def describe(s: Value) -> list[str]:
    """One line per level: variable, how it moves, contracted or not."""
    return [f"{'Σ ' if lv.contracted else ''}{lv.var}: {lv.search}" for lv in levels_of(s)]
