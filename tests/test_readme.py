"""The README's Python examples run as written (so the docs stay true)."""
import contextlib
import io
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_readme_python_blocks_run(tmp_path, monkeypatch):
    monkeypatch.setenv("ETCHPY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 3
    env: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        for block in blocks:
            exec(compile(block, "README.md", "exec"), env)   # noqa: S102 - our own docs
    assert (tmp_path / "out" / "spmv.c").exists()
