"""Lazy nodes are typed: etchpy/lazy never dispatches on a node's kind by a
string (`.op == "mul"`, `n.op in (...)`, `match n.op`, a local `op == ...`);
it matches the node classes of etchpy/lazy/nodes.py (or calls their methods).
Counted from the source before the nodes were typed: 97 sites by the issue's
count, 121 by this pattern (it also counts every other read of `.op`); kept at
zero."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
LAZY = sorted((ROOT / "etchpy" / "lazy").glob("*.py"))

# a node's kind read as a string: the attribute `.op`, a local `op` compared or
# matched, `match` on an op
STRING_DISPATCH = re.compile(r"\.op\b|\bop\s*(==|!=|in\b|not\s+in\b)|\bmatch\s+[\w.]*\bop\b")


def sites(pattern, files=LAZY):
    out = []
    for p in files:
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            out += [f"{p.name}:{n}: {line.strip()}"
                    for _ in pattern.finditer(code)]
    return out


def test_lazy_nodes_are_never_dispatched_on_a_string():
    found = sites(STRING_DISPATCH)
    assert len(found) == 0, "string dispatch on lazy nodes:\n" + "\n".join(found)

