"""The demo's five kernels (etchpy/cli.py) as a longer benchmark against scipy / numpy.

    python -m bench.demo [--size small|medium] [--seed N] [--repeat N]
    python bench/demo.py ...            (same thing, run as a script)

For each case of `etchpy.cli.CASES`: how the kernel was obtained (cold C build, disk
cache, or already loaded in this process, from `build.stats`), the etchpy and reference medians and
their ratio, the call with the original scipy inputs (validated and converted on
every call) where the case has them, the stored entries of a sparse result and the
chosen loop order; then a summary table. Exits with status 1 if a check fails.
"""
from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):          # executed as a script: make `bench` importable
    _here = Path(__file__).resolve().parent
    if sys.path and Path(sys.path[0] or ".").resolve() == _here:
        sys.path.pop(0)                # bench/ itself must not shadow module names
    sys.path.insert(0, str(_here.parent))

from bench import _env  # noqa: E402,F401  (thread settings before numpy is imported)

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from etchpy import cli  # noqa: E402
from etchpy.cli import fmt_time, median_time  # noqa: E402
from etchpy.runtime import build  # noqa: E402


def ratio(a: float, b: float) -> str:
    if not (np.isfinite(a) and np.isfinite(b)) or b <= 0:
        return "-"
    return f"{a / b:.2f}x"


def how_built(before: dict, after: dict) -> str:
    """Where a kernel's shared object came from, from build.stats before and after."""
    if after["compiles"] > before["compiles"]:
        return "cold C build"
    if after["cache_hits"] > before["cache_hits"]:
        return "disk-cached .so"
    return "library already loaded in this process"


def notes(setup: cli.Setup, kern, repeats: int) -> list[str]:
    """Extra measurements and facts for one case."""
    out = []
    if setup.raw and setup.run is None:
        inputs = {**setup.inputs, **setup.raw}
        seconds, _ = median_time(lambda: kern(**inputs), repeats)
        out.append(f"call with scipy input (validated and converted each call): "
                   f"{fmt_time(seconds)}")
    if setup.options.get("output"):
        result, ref = setup.call(kern), setup.reference()
        out.append(f"stored entries: etchpy {result.nnz:,}, reference {ref.nnz:,}")
    steps = getattr(kern.plan, "steps", ())
    if steps:
        out.append("loop order: " + ", ".join(f"{s.target} over ({', '.join(s.order)})"
                                              for s in steps))
    return out


def run_one(make, size: str, seed: int, n: int, repeats: int) -> cli.Result:
    setup = make(np.random.default_rng([seed, n]), size)
    before = dict(build.stats)
    result, kern = cli.run_case(setup, repeats)
    seconds = result.seconds
    how = how_built(before, build.stats)
    result.lines = [(key, f"{value[:-1]}, {how})" if key == "compile" else value)
                    for key, value in result.lines]
    result.lines.append(("ratio", f"etchpy/ref {ratio(seconds['kernel'], seconds['reference'])}"))
    result.lines += [("note", note) for note in notes(setup, kern, repeats)]
    return result


def summary(results: list[cli.Result], repeats: int) -> list[str]:
    head = (f"{'kernel':<48} {'check':<5} {'compile':>10} {'etchpy':>10} {'reference':>10} "
            f"{'etchpy/ref':>10}")
    lines = [f"summary (etchpy/ref < 1 means etchpy is faster; medians of {repeats} calls)",
             head, "-" * len(head)]
    for r in results:
        s = r.seconds
        nan = float("nan")
        lines.append(f"{r.title:<48} {'PASS' if r.passed else 'FAIL':<5} "
                     f"{fmt_time(s.get('compile', nan)):>10} {fmt_time(s.get('kernel', nan)):>10} "
                     f"{fmt_time(s.get('reference', nan)):>10} "
                     f"{ratio(s.get('kernel', nan), s.get('reference', nan)):>10}")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.demo", description=__doc__.split("\n")[0])
    p.add_argument("--size", choices=cli.SIZE_NAMES, default="medium")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=15, help="timed calls per kernel")
    args = p.parse_args(argv)
    start = time.perf_counter()
    print("\n".join(cli.header(args.size, args.seed)), flush=True)
    results = []
    for n, make in enumerate(cli.CASES, 1):
        try:
            r = run_one(make, args.size, args.seed, n, args.repeat)
        except Exception as exc:
            r = cli.failure(make, exc)
        results.append(r)
        print(f"[{n}/{len(cli.CASES)}] {r.title}")
        print("\n".join(f"    {key:<9} {value}" for key, value in r.lines) + "\n", flush=True)
    print("\n".join(summary(results, args.repeat)))
    failed = [r.title for r in results if not r.passed]
    print(f"\nbench.demo: {len(results)} kernels, {len(failed)} failed  "
          f"({time.perf_counter() - start:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
