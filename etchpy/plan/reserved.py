"""TensorVars under the names etchpy reserves for its own arrays (a plan's
temporaries `tmp...`, converted inputs), which `ep.tensor` refuses to users."""
from __future__ import annotations

from ..expr.nodes import TensorVar
from ..formats import Format


def reserved_tensor(name: str, order: int, fmt: Format | None = None) -> TensorVar:
    """A TensorVar named `name` (not checked against the reserved names), of
    format `fmt` (dense when None), not iso."""
    tvar = TensorVar.__new__(TensorVar)
    fmt = Format.named("dense", order) if fmt is None else fmt
    for attr, value in (("name", name), ("order", order), ("format", fmt), ("iso", False)):
        object.__setattr__(tvar, attr, value)
    return tvar
