"""The package keeps its shape: no file over 400 lines (nor any of the tests' or
the benches' files), no function over 50 lines except a flat `match` dispatcher (a docstring, at most a line or two of
set-up, then one `match` and perhaps a fall-through `raise` or `return`), no module global that a test could monkeypatch to
steer code generation (every knob is a field of etchpy.tuning.Tuning)."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
FILES = sorted([*(ROOT / "etchpy").rglob("*.py"), *(ROOT / "formats").rglob("*.py")])
EVERY_FILE = sorted([*FILES, *(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").rglob("*.py")])
MAX_FILE, MAX_FUNCTION = 400, 50


def functions(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def is_flat_dispatcher(fn) -> bool:
    body = [s for s in fn.body
            if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if body and isinstance(body[-1], (ast.Raise, ast.Return)):
        body = body[:-1]                 # the fall-through after the match
    return bool(body) and isinstance(body[-1], ast.Match) and len(body) <= 3


def test_no_file_is_over_400_lines():
    long = [f"{p.relative_to(ROOT)}: {n}" for p in EVERY_FILE
            if (n := len(p.read_text().splitlines())) > MAX_FILE]
    assert not long, "files over 400 lines:\n" + "\n".join(long)


def test_no_function_is_over_50_lines_but_flat_dispatchers():
    long = []
    for p in FILES:
        for fn in functions(ast.parse(p.read_text())):
            n = fn.end_lineno - fn.lineno + 1
            if n > MAX_FUNCTION and not is_flat_dispatcher(fn):
                long.append(f"{p.relative_to(ROOT)}:{fn.lineno} {fn.name}: {n} lines")
    assert not long, "functions over 50 lines:\n" + "\n".join(long)


def test_tests_never_monkeypatch_module_attributes():
    """monkeypatch.setattr on a module steers code by a global; pass a Tuning."""
    bad = []
    for p in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "setattr"
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "monkeypatch"):
                bad.append(f"{p.relative_to(ROOT)}:{node.lineno}")
    assert not bad, "monkeypatch.setattr in tests:\n" + "\n".join(bad)
