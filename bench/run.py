"""Side-by-side benchmark of etchpy and its peers.

    python -m bench [--quick] [--only NAME[,NAME]] [--repeat N] [--out DIR]
    python bench/run.py ...            (same thing, run as a script)

Kernels (names for --only): spmv stencil spmm spgemm ewise sddmm ttv ttm mttkrp
inner3 minplus orand triangle, plus `compile` (cold compile / warm load / per-call
overhead), `threads` (etchpy with threads=1 vs threads=2) and `states` (SpGEMM timed
interleaved in fresh processes and after a freed array: bench/states.py). See bench/README.md for what is measured and how ratios are defined.
"""
from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):          # executed as a script: make `bench` importable
    _here = Path(__file__).resolve().parent
    if sys.path and Path(sys.path[0] or ".").resolve() == _here:
        sys.path.pop(0)                # bench/ itself must not shadow module names
    sys.path.insert(0, str(_here.parent))

from bench import _env  # noqa: E402,F401  (OMP_WAIT_POLICY etc. before numpy / peers)

import argparse  # noqa: E402
import datetime  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy  # noqa: E402

import etchpy as ep  # noqa: E402

from bench import report  # noqa: E402
from bench.cases import (Context, portable_traceback, print_case, print_header,  # noqa: E402
                         run_case)
from bench.compile_cost import measure_compile, measure_overhead  # noqa: E402
from bench.kernels import KERNELS  # noqa: E402
from bench.peers import load_peers, setup_tensora_venv  # noqa: E402
from bench import states  # noqa: E402
from bench.threads import run_in_child  # noqa: E402

ALL_NAMES = ("compile", "threads", "states", *KERNELS)


def machine_info() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor() or "unknown"
    mem = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count()
    info = {"cpu": cpu, "cores": os.cpu_count(), "usable_cores": affinity, "memory": mem,
            "platform": platform.platform(), "python": platform.python_version(),
            "numpy": np.__version__, "scipy": scipy.__version__, "etchpy": ep.__version__}
    try:
        info["compiler"] = ep.runtime.build.find_compiler().version
    except Exception as exc:
        info["compiler"] = f"not found ({exc})"
    return info


def parse_args(argv, prog):
    p = argparse.ArgumentParser(prog=prog, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="~10x smaller problems (1-2 min)")
    p.add_argument("--only", default="", help="comma-separated names: " + ", ".join(ALL_NAMES))
    p.add_argument("--repeat", type=int, default=7, help="timed runs per implementation "
                                                         "(after one warm-up; default 7)")
    p.add_argument("--out", default=str(Path(__file__).resolve().parent),
                   help="directory for RESULTS.md, results.json, ratios.png (default bench/)")
    p.add_argument("--budget", type=float, default=20.0,
                   help="seconds: an implementation whose single run exceeds this is not "
                        "run again (default 20)")
    p.add_argument("--impl-budget", type=float, default=60.0,
                   help="seconds of timed runs per implementation and case; fewer runs "
                        "when the warm-up says repeat runs would exceed it (default 60)")
    p.add_argument("--no-plot", action="store_true", help="skip ratios.png")
    p.add_argument("--setup-tensora", action="store_true",
                   help="first create bench/.venv-tensora with tensora (it pins llvmlite, "
                        "which clashes with pydata sparse's numba), then run")
    args = p.parse_args(argv)
    names = [s.strip() for s in args.only.split(",") if s.strip()]
    bad = [n for n in names if n not in ALL_NAMES]
    if bad:
        p.error(f"unknown --only name(s) {', '.join(bad)}; choose from {', '.join(ALL_NAMES)}")
    args.names = names or list(ALL_NAMES)
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    return args


def main(argv=None, prog="python bench/run.py") -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv, prog)
    say = lambda *a: print(*a, flush=True)   # noqa: E731
    t_start = time.perf_counter()
    command = " ".join([prog, *argv])
    say(f"etchpy benchmark: {command}")
    machine = machine_info()
    say(f"machine: {machine['cpu']}, {machine['cores']} cores, {machine['memory']}; "
        f"python {machine['python']}, numpy {machine['numpy']}, scipy {machine['scipy']}, "
        f"etchpy {machine['etchpy']}")
    if args.setup_tensora:
        setup_tensora_venv(say)
    mods, peer_info = load_peers(say)
    say("peers: " + ", ".join(f"{v['label']} {v['version']}" for v in peer_info.values()
                              if v["available"]))
    ctx = Context(quick=args.quick, repeat=args.repeat, budget=args.budget,
                  impl_budget=args.impl_budget, peers=mods, say=say)
    results = {"command": command,
               "date": datetime.datetime.now(datetime.timezone.utc).strftime(
                   "%Y-%m-%d %H:%M UTC"),
               "machine": machine, "peers": peer_info,
               "config": {"quick": args.quick, "repeat": args.repeat, "budget": args.budget,
                          "impl_budget": args.impl_budget, "threads": _env.THREADS,
                          "only": args.names,
                          "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY")},
               "cases": [], "extras": ctx.extras}

    if "compile" in args.names:
        say("\n== etchpy compile / load ==")
        try:
            results["compile"] = measure_compile(say)
        except Exception as exc:       # never let this section end the run
            results["compile"] = {"error": f"{type(exc).__name__}: {exc}"}
            say(f"    FAILED: {exc}")
        say("\n== per-call overhead ==")
        try:
            results["overhead"] = measure_overhead(say)
        except Exception as exc:
            results["overhead"] = {"error": f"{type(exc).__name__}: {exc}"}
            say(f"    FAILED: {exc}")

    if "threads" in args.names:
        say("\n== etchpy on 1 and 2 threads (own process, default OpenMP wait policy) ==")
        try:
            results["threads"] = run_in_child(args.quick, args.repeat, say)
        except Exception as exc:
            results["threads"] = {"error": f"{type(exc).__name__}: {exc}"}
            say(f"    FAILED: {exc}")

    if "states" in args.names:
        say("\n== interleaved, in fresh processes and after a freed array (bench/states.py) ==")
        try:
            results["states"] = states.measure(quick=args.quick, say=say)
            say(states.table(results["states"]))
        except Exception as exc:
            results["states"] = {"spgemm": {"error": f"{type(exc).__name__}: {exc}"}}
            say(f"    FAILED: {exc}")

    kernels = [n for n in args.names if n in KERNELS]
    if kernels:
        say(f"\n== kernels ({'quick' if args.quick else 'full'} sizes, repeat {args.repeat}) ==")
        print_header(say)
    for name in kernels:
        t0 = time.perf_counter()
        try:
            for case in KERNELS[name](ctx):
                rec = run_case(case, ctx)
                results["cases"].append(rec)
                print_case(rec, say)
                del case
        except Exception as exc:        # data generation failed: record, go on
            results["cases"].append({
                "kernel": name, "case": "(input generation)", "sizes": {}, "notes": [],
                "info": {}, "ratios": {}, "reference": None,
                "impls": {"etchpy": {"role": "etchpy",
                                     "error": f"harness: {type(exc).__name__}: {exc}",
                                     "traceback": portable_traceback(8)}}})
            say(f"{name}: harness error {type(exc).__name__}: {exc}")
        if name in ("inner3",) or name == kernels[-1]:
            ctx.cache.pop("tensor3", None)
        if name in ("orand",):
            ctx.cache.pop("graph", None)
        say(f"    ({name}: {time.perf_counter() - t0:.1f} s)")

    results["runtime_s"] = time.perf_counter() - t_start
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report.write_json(results, out / "results.json")
    report.write_markdown(results, out / "RESULTS.md")
    written = ["results.json", "RESULTS.md"]
    if not args.no_plot and results["cases"] and report.plot_ratios(results, out / "ratios.png", say):
        written.append("ratios.png")
    slow = report.slow_list(results)
    if slow:
        say("\netchpy more than 2x slower than a peer:")
        for s in slow:
            say(f"  - {s}")
    say(f"\nwrote {', '.join(written)} to {out}  (total {results['runtime_s']:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(prog="python bench/run.py"))
