"""Replace the text between <!-- bench:start --> and <!-- bench:end --> in README.md
with the results table built from bench/results.json, and the two-thread table
when the run measured it.

    python bench/update_readme.py [--results bench/results.json] [--readme README.md]

Does nothing (and says so) when the README or the markers are missing.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

if __package__ in (None, ""):
    _here = Path(__file__).resolve().parent
    if sys.path and Path(sys.path[0] or ".").resolve() == _here:
        sys.path.pop(0)
    sys.path.insert(0, str(_here.parent))

from bench.report import summary_table  # noqa: E402
from bench.threads import threads_table  # noqa: E402

START, END = "<!-- bench:start -->", "<!-- bench:end -->"
BENCH = Path(__file__).resolve().parent


def render(results) -> str:
    m, cfg = results["machine"], results["config"]
    head = (f"Measured by `{results['command']}` on {results['date']}: {m['cpu']}, "
            f"{m['cores']} cores, single-threaded, "
            f"{'quick' if cfg['quick'] else 'full'} sizes, median of {cfg['repeat']} runs. "
            f"ratio = etchpy median / peer median (< 1: etchpy faster). "
            f"Every peer's own figures: bench/RESULTS.md.")
    text = f"{head}\n\n{summary_table(results)}\n"
    th = results.get("threads")
    if th and th.get("rows"):
        text += (f"\netchpy on one and two threads in the same run (a process of its own, "
                 f"OpenMP wait policy: {th.get('omp_wait_policy', 'as set')}; median of at least "
                 f"{th.get('min_rounds', th.get('repeat', '?'))} alternating runs each):\n\n{threads_table(th)}\n")
    return text


def update(readme: Path, results_path: Path) -> bool:
    if not readme.exists():
        print(f"{readme} does not exist; nothing to update")
        return False
    text = readme.read_text(encoding="utf-8")
    a, b = text.find(START), text.find(END)
    if a < 0 or b < 0 or b < a:
        print(f"{readme} has no {START} ... {END} markers; nothing to update")
        return False
    results = json.loads(results_path.read_text(encoding="utf-8"))
    new = text[: a + len(START)] + "\n" + render(results) + text[b:]
    if new != text:
        readme.write_text(new, encoding="utf-8")
        print(f"updated the benchmark table in {readme}")
    else:
        print(f"{readme} already up to date")
    return True


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--results", default=str(BENCH / "results.json"))
    p.add_argument("--readme", default=str(BENCH.parent / "README.md"))
    args = p.parse_args(argv)
    update(Path(args.readme), Path(args.results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
