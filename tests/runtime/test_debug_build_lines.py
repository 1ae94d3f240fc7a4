"""ETCHPY_DEBUG prints one line per shared object: a cache miss with the build's
time, the .so path and the compiler command, or a cache hit with the path."""
import re

from etchpy.runtime import build

SRC = "int etchpy_debug_probe(int x) { return x + 1; }\n"
CDEF = "int etchpy_debug_probe(int x);"


def test_debug_lines_name_miss_and_hit(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("ETCHPY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ETCHPY_DEBUG", "1")
    build.clear_memo()
    lib = build.load(SRC, CDEF, name="debugprobe")
    assert lib.lib.etchpy_debug_probe(1) == 2
    err = capsys.readouterr().err
    miss = re.search(r"etchpy: cache miss: built (\S+\.so) in [\d.]+ s with: (.+)", err)
    assert miss, err
    assert miss.group(1) == str(lib.path) and "debugprobe" in miss.group(1)
    assert " -o " in miss.group(2) and ".c" in miss.group(2)
    build.clear_memo()
    again = build.load(SRC, CDEF, name="debugprobe")
    err = capsys.readouterr().err
    assert re.search(rf"etchpy: cache hit: loaded {re.escape(str(again.path))} in "
                     r"[\d.]+ ms", err), err
    monkeypatch.delenv("ETCHPY_DEBUG")
    build.clear_memo()
    build.load(SRC, CDEF, name="debugprobe")
    assert capsys.readouterr().err == ""
    build.clear_memo()
