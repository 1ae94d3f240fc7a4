"""One cost model: the stream model's size guesses and weights (the Tuning fields
below) are read only by etchpy/plan/ (plan.stats, plan.cost and the planners
there); the optimizer's e-graph and the lazy planner price through plan.cost's
functions (product_bound, merge_steps, temp_work, nest_cost), never with a
weight or a guess of their own. A count kept at zero, as the layering test does."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG = ROOT / "etchpy"

MODEL_FIELDS = frozenset({"default_dim", "sparse_density", "temp_weight", "stride_weight",
                          "contiguous_weight", "cache_cells"})


def model_reads(text: str) -> list[tuple[str, int]]:
    """(field, line) of every attribute read of a cost-model field."""
    return [(node.attr, node.lineno) for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Attribute) and node.attr in MODEL_FIELDS]


def test_the_cost_models_fields_are_read_only_in_plan():
    bad = []
    for p in sorted([*PKG.rglob("*.py"), *(ROOT / "formats").rglob("*.py")]):
        rel = p.relative_to(ROOT).as_posix()
        if rel.startswith("etchpy/plan/") or rel == "etchpy/tuning.py":
            continue
        bad += [f"{rel}:{line} {name}" for name, line in model_reads(p.read_text())]
    assert not bad, ("cost-model guesses or weights read outside etchpy/plan/ "
                     "(price through plan.cost):\n" + "\n".join(bad))


def test_the_check_sees_a_read():
    assert model_reads("w = stats.tuning.temp_weight * n\n") == [("temp_weight", 1)]
