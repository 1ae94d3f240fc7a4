"""Compare benchmark ratios between two sets of full runs (before and after a change).

    python -m bench.compare_runs --before DIR [DIR ...] --after DIR [DIR ...]

Each DIR holds the results.json of one `python -m bench --out DIR` run. For every
kernel, case and peer the ratio is etchpy's median over the peer's (as in
RESULTS.md); the median of that ratio over the runs of each set is compared, and
a change beyond --tolerance (default 10%) is flagged. Run the two sets alternately
on one machine in one session, so that both see the same conditions.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys


def ratios(folder: pathlib.Path) -> dict:
    """(kernel, case, peer) -> etchpy median / peer median, for one run."""
    data = json.loads((folder / "results.json").read_text())
    out = {}
    for case in data["cases"]:
        impls = case["impls"]
        mine = impls.get("etchpy", {}).get("summary", {}).get("median")
        if not mine:
            continue
        for name, impl in impls.items():
            peer = impl.get("summary", {}).get("median")
            if impl.get("role") == "peer" and peer:
                out[(case["kernel"], case["case"], name)] = mine / peer
    return out


def median_ratios(folders) -> dict:
    runs = [ratios(pathlib.Path(f)) for f in folders]
    keys = set().union(*runs)
    return {k: statistics.median(r[k] for r in runs if k in r) for k in keys}


def table(before: dict, after: dict, tolerance: float) -> tuple[list[str], int]:
    lines = ["| kernel | case | peer | ratio before | ratio after | change |",
             "|---|---|---|---:|---:|---:|"]
    flagged = 0
    for key in sorted(set(before) & set(after)):
        change = after[key] / before[key] - 1
        mark = " **" if abs(change) > tolerance else ""
        flagged += bool(mark)
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {before[key]:.3f} | "
                     f"{after[key]:.3f} | {change:+.1%}{mark} |")
    return lines, flagged


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.compare_runs")
    p.add_argument("--before", nargs="+", required=True)
    p.add_argument("--after", nargs="+", required=True)
    p.add_argument("--tolerance", type=float, default=0.10)
    args = p.parse_args(argv)
    lines, flagged = table(median_ratios(args.before), median_ratios(args.after),
                           args.tolerance)
    print("\n".join(lines))
    print(f"\n{flagged} ratio(s) moved by more than {args.tolerance:.0%} "
          f"({len(lines) - 2} compared; before: {len(args.before)} runs, after: "
          f"{len(args.after)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
