"""The compiler's version is remembered in the cache by the executable's identity
(runtime.compiler): a new process that loads a known kernel runs no `--version`,
and a replaced compiler is asked again."""
import os

import pytest

from etchpy.runtime import compiler


def fake_compiler(folder, version):
    """A compiler that answers --version with `version` and counts its runs."""
    path = folder / "mycc"
    path.write_text(f"#!/bin/sh\necho run >> '{folder / 'runs'}'\necho '{version}'\n")
    path.chmod(0o755)
    return path


def runs(folder) -> int:
    return len((folder / "runs").read_text().splitlines())


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("ETCHPY_CACHE_DIR", str(tmp_path / "cache"))
    compiler.forget_versions()
    yield tmp_path
    compiler.forget_versions()


def test_a_version_is_asked_once_and_read_back_from_the_cache(fresh, monkeypatch):
    monkeypatch.setenv("CC", str(fake_compiler(fresh, "mycc 1.0")))
    assert compiler.find_compiler().version == "mycc 1.0"
    assert len(list((fresh / "cache").glob("compiler-*"))) == 1
    compiler.forget_versions()                       # as a new process starts
    assert compiler.find_compiler().version == "mycc 1.0"
    assert runs(fresh) == 1


def test_a_replaced_compiler_is_asked_again(fresh, monkeypatch):
    cc = fake_compiler(fresh, "mycc 1.0")
    monkeypatch.setenv("CC", str(cc))
    assert compiler.find_compiler().version == "mycc 1.0"
    fake_compiler(fresh, "mycc 2.0 (upgraded)")
    os.utime(cc, ns=(1, 1))                          # another mtime, whatever the clock
    compiler.forget_versions()
    assert compiler.find_compiler().version == "mycc 2.0 (upgraded)"
    assert runs(fresh) == 2


def test_commands_of_several_words_are_not_remembered(fresh, monkeypatch):
    monkeypatch.setenv("CC", f"{fake_compiler(fresh, 'mycc 1.0')} -m64")
    assert compiler.find_compiler().version == "mycc 1.0"
    assert not list((fresh / "cache").glob("compiler-*"))


def test_a_damaged_record_is_ignored(fresh, monkeypatch):
    monkeypatch.setenv("CC", str(fake_compiler(fresh, "mycc 1.0")))
    compiler.find_compiler()
    (record,) = (fresh / "cache").glob("compiler-*")
    record.write_text("two\nlines")
    compiler.forget_versions()
    assert compiler.find_compiler().version == "mycc 1.0"
    assert runs(fresh) == 2
