"""Knobs are values passed explicitly: a number that steers what the compiler
makes is a field of etchpy.tuning.Tuning (or its Saturation), a limit that
changes no C is a field of etchpy.settings.Limits, and an options value passed
by the caller holds the rest. A module-level number is a fact, listed here with
the reason it is one, or a knob out of place."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG = ROOT / "etchpy"

FACTS = {
    ("errors.py", "CHECK_FAILED"): "the kernel's return code for a failed fused check: "
                                   "part of its C ABI (docs/c-export.md)",
    ("c/statements.py", "SIMD_LANES"): "the width the C helper's SIMD intersection is "
                                       "written for; tuning.short_segment selects it",
    ("runtime/convert.py", "INT32_LIMIT"): "the largest int32",
    ("lower/schedule/thread_work.py", "CAP"): "each factor of the work estimate at most "
                                             "2**20, so three and a range stay in int64",
    ("lower/schedule/thread_work.py", "DEPTH"): "the nested loops the work estimate "
                                               "multiplies, so three CAPs bound it",
    ("runtime/convert.py", "INT64_LIMIT"): "the largest int64",
    ("optimizer/sketch/match.py", "FREE_COST"): "an epsilon: a class already paid "
                                                "for costs almost nothing, but not 0",
    ("runtime/binder.py", "MAX_ARGS"): "the width of the binder's C switch of call "
                                       "signatures (a kernel with more runs the Python plan)",
    ("cli.py", "REPEATS"): "the demo's timing repeats (the demo, not the compiler)",
    ("lazy/thin.py", "COLUMNS"): "the column counts the C switch of etchpy.lazy.thin's "
                                 "loops is written for; Tuning.lazy_thin_loop switches it",
}


def _number(node) -> bool:
    try:
        value = ast.literal_eval(node)
    except ValueError:
        if not isinstance(node, ast.BinOp):
            return False
        try:
            value = eval(compile(ast.Expression(node), "<knob>", "eval"))  # noqa: S307
        except Exception:      # noqa: BLE001 - not a constant expression
            return False
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def module_numbers(text: str) -> list[tuple[str, int]]:
    """(name, line) of every module-level assignment of a number."""
    out = []
    for node in ast.parse(text).body:
        target = (node.targets[0] if isinstance(node, ast.Assign) else
                  node.target if isinstance(node, ast.AnnAssign) else None)
        if isinstance(target, ast.Name) and node.value is not None and _number(node.value):
            out.append((target.id, node.lineno))
    return out


def test_no_module_level_knob():
    bad = []
    for p in sorted(PKG.rglob("*.py")):
        rel = str(p.relative_to(PKG))
        if rel.split("/")[0] in PENDING or rel in ("tuning.py", "settings.py"):
            continue
        bad += [f"etchpy/{rel}:{line} {name}" for name, line in module_numbers(p.read_text())
                if (rel, name) not in FACTS]
    assert not bad, "module-level numbers (knobs go into Tuning or Limits):\n" + "\n".join(bad)


def test_the_scan_sees_a_knob():
    assert [n for n, _ in module_numbers("A = 1 << 4\nB = 0.5\nC = 'x'\nD = True\n")] == ["A", "B"]


# folders whose knobs are being moved by work in progress (none now)
PENDING = ()
