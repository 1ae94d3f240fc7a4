"""The package's imports go downward only, in the order of the data flow.

Each module belongs to a layer (its first folder under etchpy/, or its own name
for a top-level module); a module may import only from its own layer or from a
lower one. Imports inside functions are allowed only for the optional or lazily
loaded dependencies listed in LAZY.
"""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Lowest first. Modules of one layer may import each other (no cycles: checked below).
LAYERS = ["version", "errors", "saturation", "tuning", "host_facts", "settings", "collector", "semiring", "semiring_laws", "maps", "imp", "formats", "expr", "plan",
          "optimizer", "streams", "lower", "c", "unit_arms", "pipeline", "explain_text", "runtime", "distributed",
          "relational", "api", "lazy", "graph", "__init__", "testing",
          "cli", "__main__", "codegen_templates"]
RANK = {name: k for k, name in enumerate(LAYERS)}

# Dependencies a function may import lazily: optional ones, or heavy ones kept out of
# `import etchpy`.
LAZY = {"scipy", "scipy.sparse", "scipy.optimize", "jinja2", "cffi", "sparse", "dask",
        "dask.distributed", "pandas", "pyarrow", "hypothesis", "importlib.metadata",
        # sketches load on first use (ep.sketch), as `import etchpy` does not need them
        "etchpy.optimizer.sketch.search", "etchpy.optimizer.sketch.rules",
        # the optimizer loads with the first compile that runs it, lazy arrays with
        # their first use (ep.lazy, ep.compute, ...: etchpy.__getattr__)
        "etchpy.optimizer.optimize",
        # the compiler's back half (streams, lowering, C text) loads with the first
        # compile, C text or interpreted run a process needs: a kernel restored from
        # its manifest runs without it (runtime.restored)
        "etchpy.streams", "etchpy.lower", "etchpy.lower.schedule", "etchpy.c",
        "etchpy.c.render"}


def package_files():
    for path in sorted((ROOT / "etchpy").rglob("*.py")):
        yield path, ("etchpy",) + path.relative_to(ROOT / "etchpy").with_suffix("").parts
    for path in sorted((ROOT / "formats").rglob("*.py")):
        yield path, ("etchpy", "formats") + path.relative_to(ROOT / "formats").with_suffix("").parts


def resolve(module: tuple, node: ast.ImportFrom) -> list[tuple]:
    """The absolute etchpy modules an ImportFrom names (empty for other packages)."""
    if node.level == 0:
        base = tuple((node.module or "").split("."))
        if base[0] != "etchpy":
            return []
    else:
        pkg = module[:-1] if module[-1] != "__init__" else module[:-1]
        base = pkg[:len(pkg) - (node.level - 1)] + (tuple(node.module.split("."))
                                                    if node.module else ())
    if node.module is None or base == ("etchpy",):
        return [base + (alias.name,) for alias in node.names]
    return [base]


def layer(module: tuple) -> str:
    return module[1] if len(module) > 1 else "__init__"


def imports(path, module):
    """(node, imported module, at module level?) for every import of the file; an
    import inside a function is not at module level (one under a module-level
    `try` or `if` is)."""
    tree = ast.parse(path.read_text())
    inner = {id(n) for f in ast.walk(tree)
             if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
             for n in ast.walk(f)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for target in resolve(module, node):
                yield node, target, id(node) not in inner
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node, tuple(alias.name.split(".")), id(node) not in inner


def test_every_module_has_a_layer():
    for path, module in package_files():
        assert layer(module) in RANK, f"{path}: add its layer to LAYERS"


def test_imports_go_downward():
    bad = []
    for path, module in package_files():
        for node, target, _ in imports(path, module):
            if target[0] != "etchpy" or len(target) < 2 or target[1] == "__version__":
                continue
            here, there = layer(module), layer(target)
            if there in RANK and RANK[there] > RANK[here]:
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno} {here} imports {there}")
    assert not bad, "imports that run upward:\n" + "\n".join(bad)


def test_imports_inside_functions_are_listed_lazy_dependencies():
    bad = []
    for path, module in package_files():
        for node, target, at_top in imports(path, module):
            if at_top or ".".join(target) in LAZY or target == ("etchpy", "__version__"):
                continue
            bad.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {'.'.join(target)}")
    assert not bad, "imports inside functions:\n" + "\n".join(bad)


def test_no_module_import_cycles():
    graph: dict[tuple, set] = {}
    for path, module in package_files():
        deps = graph.setdefault(module, set())
        for _, target, at_top in imports(path, module):
            if at_top and target[0] == "etchpy":
                deps.add(target)
    known = set(graph)

    def norm(m):
        return m if m in known else (m + ("__init__",) if m + ("__init__",) in known
                                     else m[:-1] if m[:-1] in known else None)
    edges = {m: {norm(d) for d in ds} - {None, m} for m, ds in graph.items()}
    state: dict = {}

    def visit(m, stack):
        state[m] = 1
        for d in edges.get(m, ()):
            if state.get(d) == 1:
                raise AssertionError("import cycle: " + " -> ".join(
                    ".".join(x) for x in stack[stack.index(d):] + [d]))
            if d not in state:
                visit(d, stack + [d])
        state[m] = 2
    for m in edges:
        if m not in state:
            visit(m, [m])
