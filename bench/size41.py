"""Issue 41's size item made judgeable: the package's growth since the issue's
count (26,043 lines of `find etchpy formats -name '*.py' | xargs cat | wc -l`,
commit b830918e, 2026-11-28) split by commit into issue 41's own work and the rest:

    python -m bench.size41 [--list] [--code] [--base COMMIT] [--head COMMIT]

Each commit without merges in base..head is charged its own net .py lines under
etchpy/ and formats/ (git log --numstat: added - deleted). A commit is issue 41's
when its message names "issue 41" or it is listed in ISSUE_41 below (the issue's
deliverables, whose messages name the work, not the issue: read off `git log`);
RULE_41 lists commits that brought other issues' features under 41's counters
(shown apart, charged to neither). What merges changed themselves (conflict
resolutions) is the difference between the whole diff and the commits' sum.
--code splits issue 41's lines into code and prose: docstrings, comments and
blank lines (`code_lines`, each changed file before and after the commit).
"""
from __future__ import annotations

import argparse
import ast
import re
import subprocess

BASE = "b830918e"          # the commit whose count is the issue's 26,043
PATHS = ("etchpy", "formats")

ISSUE_41 = {
    "e9d7989c": "lazy nodes typed, matched by class; Evaluator state split",
    "e1065aa6": "a lazy node kind not matched translates itself",
    "6a3092a7": "lazy nodes: one _fill_* per node shape",
    "6c75a8c3": "lazy build path of the typed nodes",
    "66654c58": "lazy nodes immutable by contract",
    "780fc580": "maps say what lazy asks of them (meaning in maps.py)",
    "04a649f5": "targets declare capabilities; levels asked, not named",
    "0fadf43f": "schedule passes are values (PASSES)",
    "0d39c8f1": "group passes are values",
    "6890b2ce": "program passes are values",
    "e5f27185": "one frozen Lowering context",
    "f269c06f": "fused checks a lowering pass; checked build a declared variant",
    "2af4e53d": "fused inputs read off the declared variant",
    "7e2a74cb": "one in-process kernel store",
    "dc52ff49": "lazy kernels in the one store",
    "2e1e35a1": "coo helper loaded through the one store",
    "d60d5129": "distributed kernels in the one store; settings.Limits",
    "dcbaef07": "planning and optimizer limits are Tuning fields",
    "921e6996": "one cost model: e-graph prices through plan.cost",
    "aa8e63e5": "cost model's guesses read only in plan/",
    "c10301cc": "cost model: EGraph.full goes",
    "2e013710": "approx_table prices with the one cost model",
    "62c8e5cc": "optimizer/sketch/ sub-package",
    "da3ae0ef": "imp.Fixpoint",
    "1c0634b2": "PageRank compiled from its step (rank.c.j2 goes)",
    "ff99cd7e": "PageRank: a Graph keeps its compiled call",
    "01825011": "walk_fact's docstring (issue 41's Walk fact)",
    "6d4f55ef": "testing.random_formats reads the registered kinds",
}
RULE_41 = {
    "794f3efb": "runs of levels asked of formats (issue 40's feature under the level rule)",
    "bc2651d2": "coo_checks without role literals",
    "79559a17": "size_switch without getattr",
    "625bcb10": "a pass's switch per the pass table",
    "e08f9660": "guard_blocks' switch per the pass table",
    "389924a9": "window blocks' switch per the pass table",
    "5be3cd05": "prefetch.py without a type() test",
}


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True,
                          text=True).stdout


def lines_at(commit: str) -> int:
    """The lines of commit's .py files under PATHS (as `wc -l` counts them where
    each file ends in a newline): its diff from the empty tree."""
    empty = _git("hash-object", "-t", "tree", "/dev/null").strip()
    stat = _git("diff", "--numstat", empty, commit, "--", *PATHS)
    return sum(int(row.split("\t")[0]) for row in stat.splitlines()
               if row.endswith(".py") and not row.startswith("-"))


def commits(base: str, head: str) -> list[tuple[str, str, int]]:
    """(hash, subject, net .py lines) of each commit without merges in base..head."""
    out, cur = [], None
    log = _git("log", "--no-merges", "--reverse", "--numstat", "--format=@@%h %s",
               f"{base}..{head}", "--", *PATHS)
    for line in log.splitlines():
        if line.startswith("@@"):
            h, _, subject = line[2:].partition(" ")
            cur = [h, subject, 0]
            out.append(cur)
        elif line.endswith(".py") and cur is not None:
            added, deleted, _ = line.split("\t", 2)
            if added != "-":
                cur[2] += int(added) - int(deleted)
    return [tuple(c) for c in out]


def code_lines(text: str) -> int:
    """The lines of a python source that are not blank, a comment or in a docstring."""
    lines = text.splitlines()
    if not lines:
        return 0
    prose = {i for i, line in enumerate(lines, 1) if line.strip()[:1] in ("", "#")}
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            prose.update(range(body[0].lineno, body[0].end_lineno + 1))
    return len(lines) - len(prose)


def code_net(h: str) -> int:
    """Commit h's net code lines (code_lines) in its .py files under PATHS."""
    files = _git("diff", "--no-renames", "--name-only", f"{h}^", h, "--", *PATHS).split()
    at = lambda rev, f: subprocess.run(["git", "show", f"{rev}:{f}"], capture_output=True,  # noqa: E731
                                       text=True).stdout
    return sum(code_lines(at(h, f)) - code_lines(at(f"{h}^", f)) for f in files
               if f.endswith(".py"))


def kind(h: str, message: str) -> str:
    if any(h.startswith(k) for k in ISSUE_41) or re.search(r"issue 41\b", message, re.I):
        return "41"
    return "rule" if any(h.startswith(k) for k in RULE_41) else "other"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default=BASE)
    ap.add_argument("--head", default="HEAD")
    ap.add_argument("--list", action="store_true", help="print each of issue 41's commits")
    ap.add_argument("--code", action="store_true", help="split issue 41's lines: code, prose")
    args = ap.parse_args(argv)
    base, head = lines_at(args.base), lines_at(args.head)
    sums = {"41": 0, "rule": 0, "other": 0}
    n = {"41": 0, "rule": 0, "other": 0}
    code = 0
    for h, subject, net in commits(args.base, args.head):
        k = kind(h, _git("show", "-s", "--format=%B", h))
        sums[k] += net
        n[k] += 1
        mine = code_net(h) if args.code and k == "41" else None
        code += mine or 0
        if args.list and k != "other":
            print(f"{k:5} {net:+6d} {'' if mine is None else f'code {mine:+5d} '}{h} {subject[:90]}")
    merges = head - base - sum(sums.values())
    print(f"base {args.base}: {base} lines; head {args.head}: {head} ({head - base:+d})")
    print(f"issue 41's commits ({n['41']}): {sums['41']:+d}")
    print(f"other issues' work brought under 41's rules ({n['rule']}): {sums['rule']:+d}")
    print(f"every other commit ({n['other']}): {sums['other']:+d}")
    print(f"merges' own changes: {merges:+d}")
    print(f"with issue 41 alone: {base + sums['41']} (base {base}, "
          f"{'below' if sums['41'] < 0 else 'above'} it by {abs(sums['41'])})")
    if args.code:
        print(f"issue 41's {sums['41']:+d}: code {code:+d}, docstrings, comments and blank "
              f"lines {sums['41'] - code:+d}")


if __name__ == "__main__":
    main()
