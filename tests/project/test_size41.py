"""bench.size41 (issue 41's size item) charges each commit its own net lines and
sorts it by its message or the lists; checked here on the commit that made the
one kernel store (a listed one) and on its parent range, without the clock."""
import pathlib
import shutil
import subprocess

import pytest

from bench import size41

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _has(commit: str) -> bool:
    return shutil.which("git") is not None and subprocess.run(
        ["git", "-C", str(ROOT), "cat-file", "-e", commit], capture_output=True).returncode == 0


def test_a_commit_is_issue_41s_by_message_or_list():
    assert size41.kind("7e2a74cbffff", "One in-process kernel store") == "41"
    assert size41.kind("00000000", "Fused checks keyed on a fact (issue 41): ...") == "41"
    assert size41.kind("5be3cd05aaaa", "prefetch.py without a type() test") == "rule"
    assert size41.kind("00000000", "Gathered sums (issue 39)") == "other"
    assert size41.kind("00000000", "see issue 410") == "other"


@pytest.mark.skipif(not _has("7e2a74cb"), reason="a clone without the issue's history")
def test_a_commit_is_charged_its_net_python_lines(monkeypatch):
    monkeypatch.chdir(ROOT)
    (h, subject, net), = size41.commits("7e2a74cb~1", "7e2a74cb")
    assert h.startswith("7e2a74cb") and "kernel store" in subject
    assert net == size41.lines_at("7e2a74cb") - size41.lines_at("7e2a74cb~1")


def test_code_lines_leave_out_docstrings_comments_and_blank_lines():
    text = ('"""A module.\n\nIts doc."""\nimport os\n\n\n# a comment\n'
            'def f(x):\n    """Its doc."""\n    return x  # kept: code\n\n\n'
            'class C:\n    """One\n    two."""\n    y = "not a docstring"\n')
    assert size41.code_lines(text) == 5       # import, def, return, class, y
    assert size41.code_lines("") == 0
