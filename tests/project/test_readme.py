"""The README and docs/*.md stay true: their Python examples run as written, and
the README keeps the shape the project promises (short, the two commands, the
benchmark markers, every built-in semiring)."""
import contextlib
import io
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md"))
# a python block, also one indented under a list item (its fences indented alike)
PYTHON_BLOCK = re.compile(r"^( *)```python\n(.*?)^\1```", re.S | re.M)


def python_blocks(path: pathlib.Path) -> list[str]:
    return blocks_of(path.read_text(encoding="utf-8"))


def blocks_of(text: str) -> list[str]:
    return [textwrap.dedent(body) for _, body in PYTHON_BLOCK.findall(text)]


def test_blocks_under_list_items_are_found():
    text = "```python\na = 1\n```\n- item:\n\n  ```python\n  b = a\n  ```\n"
    assert blocks_of(text) == ["a = 1\n", "b = a\n"]


def run_blocks(path: pathlib.Path, tmp_path, monkeypatch) -> dict:
    """Run a file's python blocks in order in one namespace, in a fresh working
    directory, with stdout swallowed. The kernel cache is the session's
    (shared_cache): no block reads the cache, and a fresh one per page built the
    call binder again for each (a cold cache's first compile is the rest of the
    suite's; tests/runtime/test_cache.py and tests/trust/test_cache_trust.py
    test a fresh directory)."""
    monkeypatch.chdir(tmp_path)
    env: dict = {"__name__": f"doc_{path.stem}"}
    rel = path.relative_to(ROOT)
    with contextlib.redirect_stdout(io.StringIO()):
        for n, block in enumerate(python_blocks(path), 1):
            try:
                exec(compile(block, f"{rel} (python block {n})", "exec"), env)  # noqa: S102
            except Exception as exc:   # say which block failed
                raise AssertionError(f"{rel}: python block {n} failed: {exc!r}\n{block}") from exc
    return env


@pytest.mark.usefixtures("shared_cache")
def test_readme_python_blocks_run(tmp_path, monkeypatch):
    assert len(python_blocks(ROOT / "README.md")) >= 3
    run_blocks(ROOT / "README.md", tmp_path, monkeypatch)
    assert (tmp_path / "out" / "spmv.c").exists()
    assert (tmp_path / "out" / "spmv.h").exists()


@pytest.mark.usefixtures("shared_cache")
@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_docs_python_blocks_run(path, tmp_path, monkeypatch):
    run_blocks(path, tmp_path, monkeypatch)


def test_every_docs_page_exists_and_has_examples():
    names = {p.name for p in DOCS}
    for page in ("language", "api", "formats", "semirings", "optimizer", "c-export",
                 "performance", "status"):
        assert f"{page}.md" in names
    for page in ("language", "api", "formats", "semirings", "optimizer", "c-export"):
        assert python_blocks(ROOT / "docs" / f"{page}.md"), page


def test_readme_is_a_short_user_document():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    # the test command is the one .ci/run calls, verbatim
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci.startswith("python3 -m venv") and f"```sh\n{ci}\n```" in text
    assert ("```sh\npython3 -m venv .venv && . .venv/bin/activate && pip install -e . "
            "&& python -m etchpy demo\n```") in text
    assert "ETCHPY_CACHE_DIR" in text


def test_readme_names_every_builtin_semiring():
    import etchpy as ep
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for sr in ep.semirings.all():
        assert f"`{sr.name}`" in text, sr.name


def test_doc_links_resolve():
    for path in [ROOT / "README.md", *DOCS, ROOT / "bench" / "HISTORY.md"]:
        text = path.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
            if "://" in target:
                continue
            assert (path.parent / target).exists(), f"{path.name} links to {target}"


def test_no_machine_paths_in_docs():
    for path in [ROOT / "README.md", *DOCS, ROOT / "bench" / "HISTORY.md"]:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"(/work/|/home/|/tmp/|/Users/)", text), path.name


def test_benchmark_table_is_the_one_update_readme_writes(tmp_path):
    """The markers are there, and bench/update_readme.py, run on a copy of the
    README, finds the table already up to date with bench/results.json."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.count("<!-- bench:start -->") == 1 and text.count("<!-- bench:end -->") == 1
    copy = tmp_path / "README.md"
    copy.write_text(text, encoding="utf-8")
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "update_readme.py"),
                          "--readme", str(copy)], capture_output=True, text=True, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "already up to date" in out.stdout, out.stdout
    assert copy.read_text(encoding="utf-8") == text


def test_tests_named_in_docs_exist():
    """docs name the tests that cover each rule as `tests/file.py::test_name`
    (later names on the same line of thought as `::test_name`)."""
    tests = {}
    for path in [ROOT / "README.md", *DOCS]:
        current = None
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"(tests/[\w/]+\.py)|::(test_\w+)", text):
            if m.group(1):
                current = m.group(1)
                continue
            assert current, f"{path.name}: ::{m.group(2)} names no file"
            if current not in tests:
                tests[current] = (ROOT / current).read_text(encoding="utf-8")
            assert re.search(rf"^(async )?def {m.group(2)}\(", tests[current], re.M), \
                f"{path.name}: {current}::{m.group(2)} does not exist"


SKIPS = re.compile(r"skipif\(|importorskip\(|pytest\.skip\(|mark\.slow\b")


def test_status_lists_every_test_file_that_can_skip():
    """docs/status.md's table names each test file that can skip itself (skipif,
    importorskip, pytest.skip, the slow marker), with why."""
    status = (ROOT / "docs" / "status.md").read_text(encoding="utf-8")
    table = status[status.index("### What `.ci/run` skips"):]
    skipping = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_*.py")
                      if SKIPS.search(p.read_text(encoding="utf-8")))
    assert skipping
    missing = [name for name in skipping if f"`{name}" not in table]
    assert not missing, f"docs/status.md does not list {missing}"
