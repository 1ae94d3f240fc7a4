"""Which target writes a step's output, and the output's parameters (the C ABI).

Each target's module registers its rows (lower.target.output: its mode, its
rank, when it writes an output, how it is made); every module of lower/targets/
is imported here, and an output goes to the first row by rank whose `chooses`
holds (`table()`).
"""
from __future__ import annotations

import importlib
import pkgutil

from . import targets
from .program import Output
from .target import OUTPUTS, Row, Want

for _m in pkgutil.iter_modules(targets.__path__):
    importlib.import_module(f"{targets.__name__}.{_m.name}")


def table() -> tuple[Row, ...]:
    """The registered rows, by rank."""
    return tuple(OUTPUTS[r] for r in sorted(OUTPUTS))


def make_output(want: Want):
    """(target, its parameters, the Output record) of the first row by rank whose
    `chooses(want)` holds."""
    row = next(row for row in table() if row.chooses(want))
    t = row.make(want)
    return t, t.params(), Output(row.mode, want.axes, want.fmt, dict(t.arrays), t.counts())
