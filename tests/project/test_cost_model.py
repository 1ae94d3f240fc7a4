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
                          "contiguous_weight", "scatter_weight", "blas_gain", "blas_call", "cache_cells"})


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


# A dense product runs as one BLAS call, which the loops' model does not see: the
# one weight for it, Tuning.blas_gain, is a model field like the others (read in
# plan/ alone, by plan.product_cost), and approx_table prices its candidates
# through product_cost, with no weight of its own.
def test_approx_table_has_no_weight_of_its_own():
    from etchpy.lazy.approx_search import Settings
    assert not hasattr(Settings(), "sparse_weight")
    text = (PKG / "lazy" / "approx_table.py").read_text()
    assert "product_cost" in text and "weight" not in text.replace("weights", "")


def test_the_models_csr_price_is_the_planners_and_blas_is_what_was_measured():
    """The MLP bench's X·W (360×784 by 784×512), W csr against W dense: per
    multiply-add, plan.product_cost's csr/loops ratio is plan_cost's on the
    compiled plans (2-4, measured 2.6-3.3 against the loops), and its csr/BLAS
    ratio lies in what bench.sparse_weight measured (16-22)."""
    from etchpy import pipeline
    from etchpy.plan.cost import Stats, plan_cost
    from etchpy.plan.product_cost import product_cost
    from etchpy.runtime.kernel import make_request
    from etchpy.tuning import DEFAULT
    import etchpy as ep

    i, j, k = ep.indices("i j k")
    X, dense, csr = ep.tensor("X", 2), ep.tensor("W", 2), ep.tensor("W", 2, "csr")
    dims, nnz = {"i": 360, "j": 784, "k": 512}, 40_000
    madds = 360 * 784 * 512

    def per_madd(w, madds, counts):
        req = make_request(ep.sum(j, X[i, j] * w[j, k]), out_indices=(i, k))
        return plan_cost(pipeline.compile_request(req).plan, Stats(dims, counts)) / madds

    planned = per_madd(csr, 360 * nnz, {"W": nnz}) / per_madd(dense, madds, {})
    sparse = product_cost(360, 784, 512, {"B": nnz}, DEFAULT) / (360 * nnz)
    loops = product_cost(360, 784, 512, {}, DEFAULT.with_(blas=False)) / madds
    blas = product_cost(360, 784, 512, {}, DEFAULT) / madds
    assert 2 <= planned <= 4 and abs(sparse / loops - planned) < 0.1 * planned
    assert 16 <= sparse / blas <= 22
