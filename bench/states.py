"""Interleaved timing in several process states: does a library's time depend on
what ran before it in the process?

    python -m bench --only states               (part of the full run)
    python -m bench.states [--quick] [--kernels spgemm] [--rounds 15] [--processes 2]

For each kernel (default: spgemm, the first case of bench/kernels.py's, i.e.
n=20,000 with 10 random columns a row; --quick: n=2,000) and each process
state, a fresh Python process sets up every implementation of the case (etchpy
and each available peer; not tensora, which runs in its own process), calls
each once, puts the process in that state, and then times the implementations
interleaved call by call: each round calls every implementation once, each
round starting with the next one. The states:

    fresh          nothing more
    freed 32 MiB   a 32 MiB numpy array allocated and freed
    freed 24 MiB   a 24 MiB numpy array allocated and freed (glibc raises its
                   threshold for mapping to the size of a mapped block freed, but
                   only up to 32 MiB; a 32 MiB array's block is just above that)
    abs().max()    abs(C - C_scipy).max() on etchpy's and scipy's results

Each state runs in `processes` processes (in turn with the other states, so a
burst of load on this shared machine lands on several states). Reported per
implementation: the median in each state, and the ratio of each state's median
to the fresh process's (1.00: no dependence on the state), and etchpy's median
over each peer's in each state.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

import numpy as np

from .report import PROCESS_STATES as STATES, states_table as table


def enter_state(state: str, outputs: dict) -> None:
    """Puts this process in `state`; `outputs` holds one result per implementation."""
    if state.startswith("freed"):
        a = np.ones(int(state.split()[1]) << 20, dtype=np.uint8)
        del a
    elif state == "abs().max()":
        mine, theirs = outputs.get("etchpy"), outputs.get("scipy")
        if mine is not None and theirs is not None:
            abs(mine - theirs).max()
    elif state != "fresh":
        raise ValueError(f"unknown state {state!r}; states are {', '.join(STATES)}")


def child(kernel: str, state: str, quick: bool, rounds: int) -> dict:
    """Samples (seconds) by implementation of the first case of `kernel`, timed
    interleaved in this process after it is put in `state`."""
    from bench import _env  # noqa: F401  (environment before numpy's peers load)
    from bench.cases import Context
    from bench.kernels import KERNELS
    from bench.peers import load_peers
    from bench.timing import timed

    peers, _ = load_peers(say=lambda *a: None)
    ctx = Context(quick=quick, repeat=rounds, budget=20.0, impl_budget=60.0, peers=peers,
                  say=lambda *a: None)
    case = next(iter(KERNELS[kernel](ctx)))
    fns, outputs = {}, {}
    for impl in case.impls:
        if impl.external is not None:
            continue
        built = impl.build()
        fns[impl.name] = built[0] if isinstance(built, tuple) else built
        outputs[impl.name] = fns[impl.name]()
    enter_state(state, outputs)
    del outputs
    names = list(fns)
    samples = {n: [] for n in names}
    for r in range(rounds):
        for k in range(len(names)):
            name = names[(r + k) % len(names)]
            t, out = timed(fns[name])
            del out
            samples[name].append(t)
    return {"case": case.case, "samples": samples}


def measure(kernels=("spgemm",), quick=False, rounds=15, processes=2, say=print) -> dict:
    """{kernel: {"case", "states": {state: {impl: samples}}, "medians", "vs_fresh",
    "etchpy_vs"}}, each state timed in `processes` fresh processes."""
    out = {}
    for kernel in kernels:
        runs = {s: {} for s in STATES}
        case = ""
        for p in range(processes):
            for state in STATES:
                rec = _run_child(kernel, state, quick, rounds)
                case = rec["case"]
                for name, ts in rec["samples"].items():
                    runs[state].setdefault(name, []).extend(ts)
                say(f"    {kernel} process {p + 1}/{processes}, {state}: " + ", ".join(
                    f"{n} {np.median(ts) * 1e3:.3g} ms" for n, ts in rec["samples"].items()))
        out[kernel] = summarize_states(case, runs)
    return out


def _run_child(kernel, state, quick, rounds) -> dict:
    cmd = [sys.executable, "-m", "bench.states", "--child", state, "--kernels", kernel,
           "--rounds", str(rounds)] + (["--quick"] if quick else [])
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"{kernel} in state {state!r} failed: {tail}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def summarize_states(case: str, runs: dict) -> dict:
    """Medians by state and implementation, each state's median over the fresh
    process's, and etchpy's median over each peer's, by state."""
    med = {s: {n: float(np.median(ts)) for n, ts in by.items()} for s, by in runs.items()}
    fresh = med["fresh"]
    vs_fresh = {s: {n: m / fresh[n] for n, m in by.items() if n in fresh}
                for s, by in med.items() if s != "fresh"}
    etchpy_vs = {s: {n: by["etchpy"] / m for n, m in by.items() if n != "etchpy"}
                 for s, by in med.items() if "etchpy" in by}
    return {"case": case, "states": runs, "medians": med, "vs_fresh": vs_fresh,
            "etchpy_vs": etchpy_vs}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.states", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernels", default="spgemm", help="comma-separated bench kernels")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--processes", type=int, default=2)
    p.add_argument("--child", choices=STATES, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    kernels = [k.strip() for k in args.kernels.split(",") if k.strip()]
    if args.child:
        print(json.dumps(child(kernels[0], args.child, args.quick, args.rounds)))
        return 0
    print(table(measure(kernels, args.quick, args.rounds, args.processes)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
