"""The one in-process kernel store (runtime.kernel_cache): bounded, most
recently used kept, shared by ep.compile, the graph algorithms and the C
helpers, each under its own key."""
import ast
import pathlib
import threading

import pytest

import etchpy as ep
from etchpy.runtime.kernel_cache import KERNELS, KernelCache, kept

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_keeps_the_most_recently_used_entries():
    c = KernelCache(2)
    c.put("a", 1)
    c.put("b", 2)
    assert c.get("a") == 1          # a is now the most recent
    c.put("c", 3)                   # evicts b
    assert c.get("b") is None and c.get("a") == 1 and c.get("c") == 3 and len(c) == 2
    assert c.made("d", lambda: None) is None and c.made("d", lambda: 5) is None  # None kept
    with pytest.raises(ValueError):
        KernelCache(0)


def test_made_under_threads_keeps_one_entry():
    c, made = KernelCache(8), []

    def make():
        made.append(object())
        return made[-1]

    got = []
    threads = [threading.Thread(target=lambda: got.append(c.made("k", make)))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(g is got[0] for g in got) and c.get("k") is got[0]


def test_kept_keys_by_front_and_arguments():
    calls = []

    @kept("test.front")
    def make(a, b=0):
        calls.append((a, b))
        return (a, b)

    assert make(1, b=2) == (1, 2) and make(1, b=2) == (1, 2) and make(1) == (1, 0)
    assert calls == [(1, 2), (1, 0)]
    assert KERNELS.get(("test.front", (1,), (("b", 2),))) == (1, 2)


def test_kept_plain_looks_up_the_same_entry_and_makes_it_when_missing():
    calls = []

    @kept("test.plain")
    def make(a):
        calls.append(a)
        return [a]

    first = make.plain("x")                       # missing: made through the locked path
    assert first == ["x"] and make("x") is first and make.plain("x") is first
    assert calls == ["x"]


def test_compile_and_graph_share_the_store():
    i, j = ep.indices("i j")
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    k1 = ep.compile(ep.sum(j, A[i, j] * x[j]))
    assert any(v is k1 for v in KERNELS._d.values())
    assert ep.compile(ep.sum(j, A[i, j] * x[j])) is k1
    assert ep.compile("y[i] = A[i,j] * x[j]", formats={"A": "csr"}) is \
        ep.compile("y[i] = A[i,j] * x[j]", formats={"A": "csr"})


def test_no_second_store_beside_it():
    """No functools.cache / lru_cache, and no cache class of its own, keeps kernels
    or helpers in the layers that make them (api, lazy, graph, runtime's checks)."""
    files = [ROOT / "etchpy" / "api.py", ROOT / "etchpy" / "runtime" / "checks.py",
             ROOT / "etchpy" / "runtime" / "coo_inputs.py",
             ROOT / "etchpy" / "distributed" / "worker.py",
             *(ROOT / "etchpy" / "graph").glob("*.py"), *(ROOT / "etchpy" / "lazy").glob("*.py")]
    bad = []
    for p in files:
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in ("cache", "lru_cache") \
                    and isinstance(node.value, ast.Name) and node.value.id == "functools":
                bad.append(f"{p.relative_to(ROOT)}:{node.lineno}")
            if isinstance(node, ast.Name) and node.id == "lru_cache":
                bad.append(f"{p.relative_to(ROOT)}:{node.lineno}")
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Dict, ast.List)) \
                    and any(isinstance(t, ast.Name) and ("KERNEL" in t.id.upper()
                                                         or "CACHE" in t.id.upper())
                            for t in node.targets):
                bad.append(f"{p.relative_to(ROOT)}:{node.lineno} {ast.unparse(node)[:40]}")
            if isinstance(node, ast.ClassDef) and ("Cache" in node.name or node.name == "LRU"):
                bad.append(f"{p.relative_to(ROOT)}:{node.lineno} class {node.name}")
    assert not bad, "a second kernel store:\n" + "\n".join(bad)


def test_a_kernel_made_under_other_compiler_flags_is_another_entry(monkeypatch):
    """The store keys on the build environment, as the disk cache does: after CFLAGS
    changes, ep.compile makes (or finds) the kernel built with the flags now set."""
    i, j = ep.indices("i j")
    e = ep.sum(j, ep.tensor("A", 2, format="csr")[i, j] * ep.tensor("x", 1)[j])
    monkeypatch.setenv("CFLAGS", "-O1")
    k_o1 = ep.compile(e)
    monkeypatch.setenv("CFLAGS", "-O2")
    k_o2 = ep.compile(e)
    assert k_o2 is not k_o1 and ep.compile(e) is k_o2
    monkeypatch.setenv("CFLAGS", "-O1")
    assert ep.compile(e) is k_o1
