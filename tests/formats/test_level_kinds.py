"""Nothing outside formats/ branches on a level's kind (issue 19): readers and
writers ask a level through the protocol of formats.level instead.

The check reads every package module outside formats/ and flags
* importing a level class (Dense, Compressed, Singleton) from formats;
* reading one as an attribute of the formats module (`formats.Dense`);
* asking an object for its class (`lv.__class__`), or comparing a string
  with a level class's name (`type(lv).__name__ == "Dense"`);
* comparing with, or matching, a level kind's name ("compressed",
  "singleton", with or without "-nonunique"). The word "dense" is not flagged:
  it also names the dense output mode and the named format.

Allowed: etchpy/__init__.py re-exports the level classes as public API, and the
level spec strings may be *passed* to Format (testing.random_formats does).
PENDING lists modules that still branch on a kind, left for a later step; the
test fails when one of them no longer does, so the list only shrinks.
"""
import ast
import pathlib

import pytest

from etchpy.formats import _LAST_LEVEL_FORMATS, _LEVEL_NAMES

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "etchpy"
# every registered kind (formats.level.kind), its names and its named format's
KINDS = {kind.__name__ for kind in _LEVEL_NAMES.values()}
KIND_WORDS = {w + s for w in set(_LEVEL_NAMES) - {"dense", "hash"}
              for s in ("", "-nonunique", "-nu")} \
    | (set(_LAST_LEVEL_FORMATS) - {"hash", "bsr"}) | KINDS  # a class name compared as a string
# ("hash" is left out: it is also the name of an Imp operator, imp.Bin("hash", k, mask),
# which c/render.py and c/statements.py compare with; the class name Hash is in KINDS.
# "bsr", the tile level's named format, is also scipy's `.format` string, which the
# code binding scipy inputs matches (interop); the kind's own name, "tiles", is kept)
ALLOWED = {"__init__.py"}                 # the public API's re-export
PENDING: set[str] = set()


def formats_aliases(tree) -> set[str]:
    """Names this module binds to the formats package."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "formats":
                    out.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.endswith(".formats") and alias.asname:
                    out.add(alias.asname)
    return out


def is_formats_module(node: ast.ImportFrom) -> bool:
    module = node.module or ""
    return module == "formats" or module.endswith(".formats") or ".formats." in module \
        or module.startswith("formats.")


def kind_word(node) -> bool:
    return isinstance(node, ast.Constant) and node.value in KIND_WORDS


def violations(path: pathlib.Path) -> list[str]:
    tree = ast.parse(path.read_text())
    aliases = formats_aliases(tree)
    found = []
    for node in ast.walk(tree):
        match node:
            case ast.ImportFrom() if is_formats_module(node):
                found += [f"imports {a.name}" for a in node.names if a.name in KINDS]
            case ast.Attribute(value=ast.Name(id=name), attr=attr) if (
                    name in aliases and attr in KINDS):
                found.append(f"{name}.{attr}")
            case ast.Attribute(attr="__class__"):
                found.append("asks for __class__")
            case ast.Compare(left=left, comparators=rest) if any(
                    kind_word(x) for x in [left, *rest]):
                found.append("compares with a level kind's name")
            case ast.MatchValue(value=value) if kind_word(value):
                found.append("matches a level kind's name")
    return found


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), path


@pytest.mark.parametrize("name,path", list(modules()), ids=lambda x: str(x))
def test_no_kind_branches_outside_formats(name, path):
    if name in ALLOWED:
        return
    found = violations(path)
    if name in PENDING:
        assert found, f"{name} no longer branches on a level kind: drop it from PENDING"
        return
    assert not found, f"{name} branches on a level's kind: {found}; ask the level instead " \
                      f"(formats.level)"


def test_the_check_sees_kind_branches(tmp_path):
    """The check itself flags each form it describes."""
    src = tmp_path / "m.py"
    src.write_text("from ..formats import Dense\nfrom .. import formats\n"
                   "x = formats.Singleton\ny = lv.__class__.__name__\n"
                   "z = s == 'compressed'\nmatch s:\n    case 'singleton-nonunique':\n"
                   "        pass\nw = type(lv).__name__ != 'Dense'\n")
    assert len(violations(src)) == 6
