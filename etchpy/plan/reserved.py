"""TensorVars under the names etchpy reserves for its own arrays (a plan's
temporaries `tmp...`, converted inputs), which `ep.tensor` refuses to users."""
from __future__ import annotations

from ..expr.nodes import TensorVar
from ..formats import Format
from ..imp import Names


def reserved_tensor(name: str, order: int, fmt: Format | None = None) -> TensorVar:
    """A TensorVar named `name` (not checked against the reserved names), of
    format `fmt` (dense when None), not iso."""
    tvar = TensorVar.__new__(TensorVar)
    fmt = Format.named("dense", order) if fmt is None else fmt
    for attr, value in (("name", name), ("order", order), ("format", fmt), ("iso", False)):
        object.__setattr__(tvar, attr, value)
    return tvar


def plan_names(plan) -> Names:
    """A name supply that has claimed every index and temporary name of `plan`: a
    plan pass's new temporaries come from it."""
    names = Names()
    for v in list(plan.origin) + list(plan.temps) + [ix for s in plan.steps for ix in s.order]:
        names.fresh(v)
    return names
