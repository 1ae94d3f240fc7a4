"""The C of imp.Fixpoint (c.statements prints the rest).

Each turn of the loop runs the body twice: as written (state arrays read,
next arrays written), then with each pair's names exchanged, so that the
buffer swap is a renaming and no pointer is reassigned (the arrays may be
`restrict` parameters). Each copy is its own C block (what the body declares
is local to one step). After an odd number of steps the last state is in the
next arrays and is copied back into the state arrays (not for a scratch
pair, of size None).
"""
from __future__ import annotations

from .. import imp


def fixpoint(printer, s: imp.Fixpoint, depth: int, indent: str) -> str:
    """C lines of Fixpoint s, indented by `depth` levels of `indent`."""
    pad, p2 = indent * depth, indent * (depth + 1)
    e = printer.expr
    k = printer.local("k_", s)
    swapped = {a: b for a, b, _ in s.pairs} | {b: a for a, b, _ in s.pairs}

    def step(body, until) -> list[str]:
        return [f"{p2}{{", printer.stmt(body, depth + 2), f"{p2}}}", f"{p2}{k}++;",
                f"{p2}if ({e(until)}) {{ {s.steps} = {k}; break; }}"]
    lines = [f"{pad}{s.steps} = -1;", f"{pad}{{",
             f"{p2}int64_t {k} = 0;", f"{p2}while ({k} < {e(s.limit)}) {{"]
    inner = [*step(s.body, imp.rename(s.until, swapped)),
             f"{p2}if ({k} == {e(s.limit)}) break;",
             *step(imp.rename(s.body, swapped), s.until)]
    lines += [indent + ln for ln in "\n".join(inner).split("\n")]
    lines.append(f"{p2}}}")
    for a, b, size in (pair for pair in s.pairs if pair[2] is not None):
        elem = printer.arrays.get(a, "ep_val_t")
        lines.append(f"{p2}if ({k} & 1) memcpy({a}, {b}, (size_t)({e(size)}) * sizeof({elem}));")
    lines.append(f"{pad}}}")
    return "\n".join(lines)
