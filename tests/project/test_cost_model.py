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


# approx_table's one weight of its own (lazy.approx_search.Settings.sparse_weight):
# plan.cost prices a multiply-add through a csr operand at about 3 dense loop ones,
# as measured (bench.sparse_weight: 2.6-3.3x the dense loops); the rest of the
# weight is what a BLAS call gains over those loops (6-7x, measured), which the
# model does not price: the planner never chooses between a BLAS call and loops.
# So the weight stays, one Settings field read in approx_table alone, above the
# model's ratio (docs/approximations.md, "The cost").
OWN_WEIGHTS = {"sparse_weight": "etchpy/lazy/approx_table.py"}


def test_approx_tables_weight_is_read_in_approx_table_alone():
    bad = []
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(ROOT).as_posix()
        tree = ast.parse(p.read_text())
        bad += [f"{rel}:{n.lineno} {n.attr}" for n in ast.walk(tree)
                if isinstance(n, ast.Attribute) and n.attr in OWN_WEIGHTS
                and OWN_WEIGHTS[n.attr] != rel]
    assert not bad, "a weight of approx_table read elsewhere:\n" + "\n".join(bad)


def test_approx_tables_weight_is_the_models_csr_ratio_times_a_blas_gain():
    """The model's price per multiply-add of X·W (the MLP bench's 360×784 by
    784×512) with W csr, against W dense: between 2 and 4 (measured 2.6-3.3
    against the dense loops), and the default weight is above it."""
    from etchpy import pipeline
    from etchpy.lazy.approx_search import Settings
    from etchpy.plan.cost import Stats, plan_cost
    from etchpy.runtime.kernel import make_request
    import etchpy as ep

    i, j, k = ep.indices("i j k")
    X, dense, csr = ep.tensor("X", 2), ep.tensor("W", 2), ep.tensor("W", 2, "csr")
    dims, nnz = {"i": 360, "j": 784, "k": 512}, 40_000

    def per_madd(w, madds, counts):
        req = make_request(ep.sum(j, X[i, j] * w[j, k]), out_indices=(i, k))
        return plan_cost(pipeline.compile_request(req).plan, Stats(dims, counts)) / madds

    ratio = (per_madd(csr, 360 * nnz, {"W": nnz})
             / per_madd(dense, 360 * 784 * 512, {}))
    assert 2 <= ratio <= 4
    assert Settings().sparse_weight > ratio
