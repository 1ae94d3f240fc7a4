"""Levels are asked for capabilities, never named: outside formats/, the
compiler's layers neither spell a level's array roles ("pos", "crd", "pos1",
`f"{name}_crd1"`) nor branch on a format's name ("csr", ...). They ask the
level protocol (formats/level.py: roles, segment_roles, located, appends, ...),
so that a new level kind is priced, read, written and checked without editing
them. Foreign layouts (scipy's `.format` strings where foreign inputs are
bound, runtime/calling.py and friends) are interop and not scanned."""
import ast
import pathlib
import re

import etchpy as ep

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG = ROOT / "etchpy"
LAYERS = ("expr", "streams", "lower", "c", "plan", "optimizer")   # imp has no levels
FILES = sorted([*(p for layer in LAYERS for p in (PKG / layer).rglob("*.py")),
                PKG / "runtime" / "signature.py", PKG / "runtime" / "predicates.py",
                PKG / "pipeline.py", PKG / "explain_text.py"])
# (file, name): not a level's. A record output's own arrays (crd0, crd1, ...: one
# coordinate per value, lower/targets/coords.py) and how its header describes
# them; einsum's operand kinds, scipy's layout names (interop).
ALLOWED = {("etchpy/lower/targets/coords.py", "crd"), ("etchpy/lower/targets/coords.py", "out_crd"),
           ("etchpy/lower/program.py", "crd"), ("etchpy/expr/einsum.py", "csc"),
           ("etchpy/expr/einsum.py", "csr")}
ROLE = re.compile(r"^(pos|crd)\d*$")
ROLE_IN_NAME = re.compile(r"(^|_)(pos|crd)\d*$")


def _format_names() -> set[str]:
    return {n for n in ("csr", "csc", "coo", "dcsr", "dcsc", "csf", "fibers")
            if _named(n)}


def _named(name: str) -> bool:
    try:
        ep.Format.named(name, 3 if name == "csf" else 2)
    except Exception:          # noqa: BLE001 - not a registered name at that order
        return False
    return True


def _strings(node):
    """The string constants of node, and the literal parts of an f-string."""
    if isinstance(node, ast.JoinedStr):
        return [v.value for v in node.values if isinstance(v, ast.Constant)]
    return [node.value] if isinstance(node, ast.Constant) and isinstance(node.value, str) else []


def names_of_levels(text: str, label: str, formats: set[str]) -> list[str]:
    bad = []
    tree = ast.parse(text)
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef))
                  and n.body and isinstance(n.body[0], ast.Expr)}
    for node in ast.walk(tree):
        if id(node) in docstrings:
            continue
        where = f"{label}:{getattr(node, 'lineno', '?')}"
        for s in _strings(node):
            if (label, s) in ALLOWED:
                continue
            if ROLE.match(s) or (isinstance(node, ast.JoinedStr) and ROLE_IN_NAME.search(s)):
                bad.append(f"{where} level role {s!r}")
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                consts = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
                for c in consts:
                    if (isinstance(c, ast.Constant) and c.value in formats
                            and (label, c.value) not in ALLOWED):
                        bad.append(f"{where} format name {c.value!r} compared")
    return bad


def test_no_layer_names_a_level_role_or_branches_on_a_format_name():
    formats = _format_names()
    assert {"csr", "csc", "coo"} <= formats
    bad = [b for p in FILES
           for b in names_of_levels(p.read_text(), str(p.relative_to(ROOT)), formats)]
    assert not bad, "level or format names outside formats/:\n" + "\n".join(bad)


def test_the_scan_sees_names():
    text = ('def f(lv, name, fmt):\n'
            '    """pos and crd in a docstring are fine"""\n'
            '    a = lv.arrays["pos1"]\n'
            '    b = f"{name}_crd1"\n'
            '    return "pos" in lv.roles or fmt.name in ("csr", "csc")\n')
    assert len(names_of_levels(text, "probe", {"csr", "csc"})) == 5
