"""One in-process store of kernels and one way to load a C helper: what
`ep.compile`, lazy arrays, the Dask workers and the graph algorithms make is
kept in runtime.kernel_cache.KERNELS (a front end may keep a cheaper key into
it, not a second store), and a compiled library is loaded by build.load only
inside a maker kept there (`@kept(...)`) or by a Kernel for its own index
types. Counted here, kept at zero: a KernelCache built elsewhere than listed,
a functools cache in the layers that make kernels, a build.load outside a
kept maker."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG = ROOT / "etchpy"
# (file, what): a store that is not a second kernel store, with the reason
STORES = {
    ("runtime/kernel_cache.py", "KERNELS"): "the one store",
    ("lazy/replay.py", "PROGRAMS"): "lazy programs' tapes; their kernels are in KERNELS",
}
KERNEL_MAKERS = ("api.py", "lazy/", "distributed/", "graph/")
LOADERS = {"runtime/kernel.py": "a Kernel's library per index type (the Kernel is kept)"}


def _decorators(fn) -> list[str]:
    return [ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in fn.decorator_list]


def scan(text: str, rel: str) -> list[str]:
    bad = []
    if not any(w in text for w in ("KernelCache", "build.load", "cache")):
        return bad
    tree = ast.parse(text)
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                ast.unparse(node.value.func).endswith("KernelCache"):
            name = ast.unparse(node.targets[0])
            if (rel, name) not in STORES:
                bad.append(f"{rel}:{node.lineno} a second store {name}")
    for fn in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        decos = _decorators(fn)
        if rel.startswith(KERNEL_MAKERS) and any(
                d.split(".")[-1] in ("cache", "lru_cache") for d in decos):
            bad.append(f"{rel}:{fn.lineno} a functools cache around {fn.name}")
        loads = [c for c in ast.walk(fn) if isinstance(c, ast.Call)
                 and isinstance(c.func, ast.Attribute) and c.func.attr.startswith("load")
                 and ast.unparse(c.func).startswith("build.load")]
        if loads and "kept" not in decos and rel not in LOADERS:
            bad.append(f"{rel}:{fn.lineno} {fn.name} loads a library outside a kept maker")
    return bad


def test_one_kernel_store_and_one_helper_loader():
    bad = []
    for p in sorted(PKG.rglob("*.py")):
        rel = str(p.relative_to(PKG))
        bad += scan(p.read_text(encoding="utf-8"), rel)
    assert not bad, "kernel stores or helper loaders beyond the one:\n" + "\n".join(bad)


def test_the_scan_sees_a_second_store():
    text = ("import functools\nKEPT = KernelCache(8)\n"
            "@functools.lru_cache\ndef made(e):\n    return compile(e)\n"
            "def helper():\n    return build.load(src, cdef, name='x')\n"
            "@kept('helper.x')\ndef fine():\n    return build.load(src, cdef, name='x')\n")
    assert len(scan(text, "graph/probe.py")) == 3
