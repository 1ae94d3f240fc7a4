"""The kernel's C prototype, described once.

The exported function's definition, the standalone header and the cffi cdef
all render their prototype from one `Prototype`, so they cannot drift apart.
Parameter types are written with `idx_t` and `val_t` as placeholders, which
each rendering replaces with its own type names.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# C type of a parameter, per kind of lowered parameter ({elem}: idx_t or val_t),
# and the suffix of its C name.
_PARAM_TYPES = {
    "dim": ("int64_t", ""),
    "in_array": ("const {elem} *restrict", ""),
    "out_dense": ("{elem} *restrict", ""),
    "out_zeroed": ("int", ""),
    "out_grown": ("{elem} **", "_ret"),
    "out_count": ("int64_t *", "_ret"),
}


@dataclass(frozen=True)
class CParam:
    ctype: str      # with idx_t / val_t as placeholders
    name: str
    doc: str


@dataclass(frozen=True)
class Prototype:
    name: str
    params: tuple[CParam, ...]

    def render(self, idx="idx_t", val="val_t", restrict="restrict") -> str:
        """`int name(params)`, with idx_t, val_t and restrict spelled idx, val and
        restrict (cffi's cdef parses `restrict` too; the header spells it with a
        macro that C++ reads as `__restrict`)."""
        args = ",\n    ".join(f"{p.ctype} {p.name}"
                              for p in self.renamed(idx, val, restrict))
        return f"int {self.name}(\n    {args})"

    def renamed(self, idx: str, val: str, restrict="restrict") -> tuple[CParam, ...]:
        """The parameters with idx_t, val_t and restrict spelled idx, val and
        restrict (for the header)."""
        return tuple(CParam(_spelled(p.ctype, idx, val, restrict), p.name, p.doc)
                     for p in self.params)


def _spelled(ctype: str, idx: str, val: str, restrict: str) -> str:
    words = {"idx_t": idx, "val_t": val, "restrict": restrict}
    return re.sub(r"\b(idx_t|val_t|restrict)\b", lambda m: words[m.group()], ctype)


@dataclass(frozen=True)
class CSource:
    """One kernel's C: the source file, the standalone header, the cffi cdef, and
    the prototype all three were rendered from."""
    name: str
    c: str
    header: str
    cdef: str
    prototype: Prototype


def prototype(prog, name: str) -> Prototype:
    """The C prototype of function `name` running program `prog` (a lowered
    Program): one C parameter per lowered parameter, in order."""
    out = []
    for p in prog.params:
        ctype, suffix = _PARAM_TYPES[p.kind]
        elem = "idx_t" if p.type == "index" else "val_t"
        out.append(CParam(ctype.format(elem=elem), p.name + suffix, p.doc))
    return Prototype(name, tuple(out))
