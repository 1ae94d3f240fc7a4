"""Reports: the markdown table, bench/RESULTS.md, bench/results.json, bench/ratios.png."""
from __future__ import annotations

import json
import math
from pathlib import Path

from .threads import threads_table
from .timing import fmt_ratio, fmt_spread, fmt_time

PROCESS_STATES = ("fresh", "freed 32 MiB", "freed 24 MiB", "abs().max()")   # bench/states.py
SLOW_RATIO = 2.0


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def results_table(results) -> str:
    """kernel | case | etchpy median (spread) | peer | peer median | ratio | check.

    `results` is the dict written to bench/results.json (or its "cases" list).
    Spread is min–max over the timed runs; ratio = etchpy median / peer median.
    """
    cases = results["cases"] if isinstance(results, dict) else results
    lines = ["| kernel | case | etchpy median (min–max) | peer | peer median (min–max) "
             "| ratio etchpy/peer | check |",
             "|---|---|---|---|---|---|---|"]
    for rec in cases:
        e = rec["impls"].get("etchpy", {})
        etxt = fmt_spread(e["summary"]) if "summary" in e else \
            "**FAILED**: " + e.get("error", "no result")
        peers = [(n, r) for n, r in rec["impls"].items() if r.get("role") == "peer"]
        if not peers:
            lines.append(f"| {rec['kernel']} | {_cell(rec['case'])} | {_cell(etxt)} | — | — "
                         f"| — | — |")
        for name, r in peers:
            if "summary" in r:
                ptxt = fmt_spread(r["summary"])
            else:
                ptxt = "failed: " + r.get("error", "no result")
            ratio = rec.get("ratios", {}).get(name)
            if ratio is None:
                rtxt = "—"
            else:
                rtxt = fmt_ratio(ratio)
                if ratio > SLOW_RATIO:
                    rtxt = f"**{rtxt}**"
            chk = r.get("check", "—")
            if "MISMATCH" in chk:
                chk = f"**{chk}**"
            lines.append(f"| {rec['kernel']} | {_cell(rec['case'])} | {_cell(etxt)} | "
                         f"{_cell(name)} | {_cell(ptxt)} | {rtxt} | {_cell(chk)} |")
    return "\n".join(lines)


def summary_table(results) -> str:
    """kernel | case | etchpy median | ratio to each peer | checks: one row per case
    (the README's table; RESULTS.md has every peer's own figures).

    `results` as for results_table. A ratio above SLOW_RATIO is bold; a peer that
    failed shows "failed"; a peer's check note follows its ratio ("(rows
    sorted)"); check says "ok" when every peer's answer agreed.
    """
    cases = results["cases"] if isinstance(results, dict) else results
    lines = ["| kernel | case | etchpy median | etchpy / peer (< 1: etchpy faster) | check |",
             "|---|---|---|---|---|"]
    for rec in cases:
        e = rec["impls"].get("etchpy", {})
        etxt = fmt_time(e["summary"]["median"]) if "summary" in e else "**FAILED**"
        peers, checks = [], []
        for name, r in rec["impls"].items():
            if r.get("role") != "peer":
                continue
            ratio = rec.get("ratios", {}).get(name)
            rtxt = "failed" if ratio is None else fmt_ratio(ratio)
            note = r.get("check", "—")
            note = f" {note[3:]}" if note.startswith("ok (") else ""   # e.g. "(rows sorted)"
            peers.append(f"{name} {'**' + rtxt + '**' if ratio and ratio > SLOW_RATIO else rtxt}"
                         f"{note}")
            checks.append(r.get("check", "—"))
        bad = [c for c in checks if "MISMATCH" in c]
        chk = f"**{bad[0]}**" if bad else ("ok" if checks else "—")
        lines.append(f"| {rec['kernel']} | {_cell(rec['case'])} | {etxt} | "
                     f"{_cell(' · '.join(peers) or '—')} | {_cell(chk)} |")
    return "\n".join(lines)


def marshalling_table(results) -> str:
    lines = ["| kernel | case | etchpy, ep.Tensor inputs | etchpy, scipy/numpy inputs "
             "| difference |", "|---|---|---|---|---|"]
    any_row = False
    for rec in results["cases"]:
        e = rec["impls"].get("etchpy", {})
        for name, r in rec["impls"].items():
            if r.get("role") == "etchpy-raw" and "summary" in r and "summary" in e:
                d = r["summary"]["median"] - e["summary"]["median"]
                lines.append(f"| {rec['kernel']} | {_cell(rec['case'])} | "
                             f"{fmt_spread(e['summary'])} | {fmt_spread(r['summary'])} | "
                             f"{'+' if d >= 0 else '−'}{fmt_time(abs(d))} |")
                any_row = True
    return "\n".join(lines) if any_row else ""


def compile_table(comp) -> str:
    if not comp or not comp.get("kernels"):
        return ""
    lines = ["| kernel | cold total | plan+lower | C text | cc + dlopen | warm load from disk "
             "(new process) | compiler runs (warm) | in-process repeat | `import etchpy` |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, r in comp["kernels"].items():
        if "cold_s" not in r:
            lines.append(f"| {name} | failed: {_cell(r.get('error', '?'))} | | | | | | | |")
            continue
        lines.append(
            f"| {name} | {fmt_time(r['cold_s'])} | {fmt_time(r['plan_lower_s'])} | "
            f"{fmt_time(r['c_text_s'])} | {fmt_time(r['cc_load_s'])} | "
            f"{fmt_time(r.get('warm_disk_s'))} | {r.get('warm_compiler_runs', '—')} | "
            f"{fmt_time(r.get('memo_s'))} | {fmt_time(r.get('import_s'))} |")
    return "\n".join(lines)


def overhead_table(ov) -> str:
    if not ov:
        return ""
    lines = ["| call (tiny inputs) | median per call | IQR |", "|---|---|---|"]
    for label, s in ov.items():
        if not isinstance(s, dict):
            continue
        if "median" in s:
            lines.append(f"| {label} | {fmt_time(s['median'])} | "
                         f"{fmt_time(s['q1'])}–{fmt_time(s['q3'])} |")
        else:
            lines.append(f"| {label} | failed: {_cell(s.get('error'))} | |")
    return "\n".join(lines)


def bandwidth_section(results) -> str:
    bw = results.get("extras", {}).get("bandwidth")
    out = []
    if bw:
        out.append(f"Arrays of N = {bw['N']:,} doubles ({bw['array_MB']:.0f} MB each), "
                   f"measured in this run right after the stencil.\n")
        out.append("| measurement | bytes counted | median | GB/s (median) | GB/s (best) |")
        out.append("|---|---|---|---|---|")
        for k, v in bw.items():
            if isinstance(v, dict):
                out.append(f"| {k} | {v['formula']} | {fmt_time(v['summary']['median'])} | "
                           f"{v['GB/s median']:.2f} | {v['GB/s best']:.2f} |")
    stencil = [r for r in results["cases"] if r["kernel"] == "stencil"]
    # the stencil's GB/s against each triad measured (bytes counted as each states)
    triads = []
    for prefix, label in (("numpy triad", "% of numpy triad"),
                          ("numba fused triad", "% of 1-pass triad (STREAM count)")):
        key = next((k for k in (bw or {}) if k.startswith(prefix)), None)
        if key and isinstance(bw[key], dict):
            triads.append((label, bw[key]["GB/s median"]))
    for rec in stencil:
        out.append(f"\nStencil SpMV ({rec['case']}), effective bandwidth with bytes = "
                   f"{rec['bytes_formula']} = {rec['bytes'] / 1e6:.1f} MB per call:\n")
        heads = [label for label, _ in triads] or ["% of a triad"]
        out.append("| implementation | median | GB/s | " + " | ".join(heads) + " |")
        out.append("|---" * (3 + len(heads)) + "|")
        for name, r in rec["impls"].items():
            if "GB/s" in r:
                pcts = [f"{100 * r['GB/s'] / gbs:.0f}%" for _, gbs in triads] or ["—"]
                out.append(f"| {name} | {fmt_time(r['summary']['median'])} | "
                           f"{r['GB/s']:.2f} | " + " | ".join(pcts) + " |")
        for note in rec.get("notes", []):
            out.append(f"\nNote: {note}.")
    return "\n".join(out)


def slow_list(results) -> list[str]:
    out = []
    for rec in results["cases"]:
        for name, ratio in rec.get("ratios", {}).items():
            if ratio > SLOW_RATIO:
                out.append(f"{rec['kernel']} ({rec['case']}): etchpy is {ratio:.1f}× slower "
                           f"than {name}")
    return out


def failures(results) -> list[str]:
    out = []
    for rec in results["cases"]:
        for name, r in rec["impls"].items():
            if "error" in r:
                out.append(f"{rec['kernel']} ({rec['case']}), {name}: {r['error']}")
            if "budget_note" in r:
                out.append(f"{rec['kernel']} ({rec['case']}), {name}: {r['budget_note']}")
            if "MISMATCH" in r.get("check", ""):
                out.append(f"{rec['kernel']} ({rec['case']}), {name}: {r['check']}")
    return out


def states_table(results: dict) -> str:
    """Markdown: per kernel and implementation, the median in each state and the
    ratio to the fresh process's median."""
    lines = []
    for kernel, rec in results.items():
        if "error" in rec:
            lines.append(f"{kernel}: {rec['error']}")
            continue
        lines += [f"{kernel} ({rec['case']}): median in each process state, "
                  "and / fresh", "",
                  "| implementation | " + " | ".join(PROCESS_STATES) + " |",
                  "|---|" + "---|" * len(PROCESS_STATES)]
        for name, fresh in rec["medians"]["fresh"].items():
            cells = [f"{fresh * 1e3:.3g} ms"] + [
                f"{rec['medians'][s][name] * 1e3:.3g} ms ({rec['vs_fresh'][s][name]:.2f})"
                for s in PROCESS_STATES[1:]]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def write_markdown(results, path: Path):
    m = results["machine"]
    cfg = results["config"]
    L = ["# etchpy benchmark results", "",
         f"Generated by `{results['command']}` on {results['date']} "
         f"(total runtime {results['runtime_s']:.0f} s).", "",
         "## Machine and software", "",
         f"- CPU: {m['cpu']} — {m['cores']} logical cores; memory {m['memory']}",
         f"- OS: {m['platform']}",
         f"- C compiler (etchpy): {m.get('compiler', '?')}",
         f"- Python {m['python']}, numpy {m['numpy']}, scipy {m['scipy']}, "
         f"etchpy {m['etchpy']}",
         "- Peers: " + "; ".join(
             f"{v['label']} {v['version']}" + (f" ({v['note']})" if v.get("note") else "")
             for v in results["peers"].values() if v["available"]),
         "- Peers not available (skipped): " + (", ".join(
             f"{v['label']} ({v['note']})" for v in results["peers"].values()
             if not v["available"]) or "none"),
         f"- Settings: {'quick sizes' if cfg['quick'] else 'full sizes'}, repeat "
         f"{cfg['repeat']}, per-run budget {cfg['budget']:g} s, per-implementation budget "
         f"{cfg['impl_budget']:g} s, every implementation single-threaded "
         f"(OMP_WAIT_POLICY=PASSIVE, OMP/BLAS threads {cfg['threads']}, GraphBLAS nthreads "
         f"{cfg['threads']}, DuckDB threads {cfg['threads']})",
         "",
         "## Kernels side by side", "",
         "Median over the timed runs after one warm-up, spread = min–max. "
         "ratio = etchpy median / peer median: below 1 etchpy is faster, above 1 slower "
         f"(bold above {SLOW_RATIO:g}). etchpy's inputs are prebuilt `ep.Tensor`s, as the "
         "peers' inputs are prebuilt in their own structures; check compares every peer's "
         "result with etchpy's (allclose, exact for integers and booleans).", "",
         results_table(results), ""]
    slow = slow_list(results)
    L += ["### Where etchpy is more than 2× slower than a peer", ""]
    L += [f"- {s}" for s in slow] or ["- none"]
    L.append("")
    fails = failures(results)
    if fails:
        L += ["### Failures, budgets and mismatches", ""] + [f"- {f}" for f in fails] + [""]
    mt = marshalling_table(results)
    if mt:
        L += ["## etchpy with scipy/numpy inputs", "",
              "The same compiled kernel called with scipy/numpy inputs, which it converts "
              "and validates on every call (index ranges, pointer monotonicity, sortedness).",
              "", mt, ""]
    ct = compile_table(results.get("compile"))
    if ct:
        L += ["## Compile, load and call overhead", "",
              "cold: empty `ETCHPY_CACHE_DIR`, `etchpy.runtime.build.clear_memo()`, new `ep.Kernel` "
              "then `.library(\"int32_t\")`. warm: a new Python process (same cache "
              "directory) timing `ep.compile(...)` + `.library(\"int32_t\")` inside itself "
              "(interpreter start-up excluded; `import etchpy` shown separately). "
              "in-process repeat: `ep.compile` + `.library` again in the same process.", "",
              ct, ""]
    ot = overhead_table(results.get("overhead"))
    if ot:
        L += ["Per-call overhead (median of "
              f"{results['overhead'].get('calls', '?')} calls on 4×4 inputs, spread over "
              "10 rounds in which each call below takes its turn):", "", ot, ""]
    tt = threads_table(results.get("threads"))
    if tt:
        L += ["## Two threads", "",
              "etchpy compiled with threads=1 and threads=2 over the same prebuilt inputs, "
              "timed alternately in a process of its own with OpenMP's "
              f"{results['threads'].get('omp_wait_policy', 'default')} wait policy (median of at least "
              f"{results['threads'].get('min_rounds', results['threads'].get('repeat', '?'))} each); speedup = 1 thread / 2 threads. "
              "Target ≥ 1.7× for SpMV, SpMM and MTTKRP. Generated by `bench/threads.py`.", "",
              tt, ""]
    if results.get("states"):
        L += ["## Process states", "",
              "Every implementation timed interleaved call by call in new processes: "
              "fresh, and after a numpy array was allocated and freed, or after "
              "`abs(C - C_scipy).max()` (bench/states.py). In parentheses: the median "
              "over the fresh process's median.", "", states_table(results["states"]), ""]
    bw = bandwidth_section(results)
    if bw:
        L += ["## Memory bandwidth", "", bw, ""]
    L += ["## How each implementation computes each kernel", ""]
    for rec in results["cases"]:
        parts = [f"**{rec['kernel']} — {rec['case']}**"]
        info = rec.get("info", {})
        if info.get("expression"):
            parts.append(f"etchpy `{info['expression']}` over {info.get('semiring')}, "
                         f"loop order {info.get('loop order')}")
        for name, r in rec["impls"].items():
            if r.get("note") and r.get("role") == "peer":
                parts.append(f"{name}: {r['note']}")
        parts += rec.get("notes", [])
        L.append("- " + "; ".join(parts))
    L.append("")
    path.write_text("\n".join(L), encoding="utf-8")


def write_json(results, path: Path):
    def clean(o):
        if isinstance(o, dict):
            return {str(k): clean(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [clean(v) for v in o]
        if isinstance(o, float) and not math.isfinite(o):
            return str(o)
        if hasattr(o, "item") and not isinstance(o, (str, bytes)):
            try:
                return clean(o.item())
            except Exception:
                return str(o)
        return o
    path.write_text(json.dumps(clean(results), indent=1, ensure_ascii=False),
                    encoding="utf-8")


def plot_ratios(results, path: Path, say=print) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as exc:
        say(f"note: matplotlib not importable ({type(exc).__name__}); no ratios.png")
        return False
    labels, values = [], []
    for rec in results["cases"]:
        for name, ratio in rec.get("ratios", {}).items():
            labels.append(f"{rec['kernel']}: {rec['case'][:50]} — vs {name}")
            values.append(ratio)
    if not values:
        say("note: no ratios to plot")
        return False
    fig, ax = plt.subplots(figsize=(11, 0.32 * len(values) + 1.6))
    ypos = list(range(len(values)))[::-1]
    colors = ["#2a9d8f" if v <= 1 else ("#e9c46a" if v <= SLOW_RATIO else "#e76f51")
              for v in values]
    ax.barh(ypos, [v - 1.0 for v in values], left=1.0, color=colors)  # bars grow from 1
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", lw=1)
    ax.set_yticks(ypos)
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_xlabel("etchpy median / peer median  (log scale; < 1: etchpy faster)")
    ax.set_title(f"etchpy vs peers — {results['date']} "
                 f"({'quick' if results['config']['quick'] else 'full'} sizes)")
    lo, hi = min(values), max(values)
    for y, v in zip(ypos, values):
        ax.text(v, y, f" {fmt_ratio(v)} ", va="center",
                ha="left" if v >= 1 else "right", fontsize=6)
    ax.set_xlim(min(0.5, lo / 3), max(2.0, hi * 3))
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return True
