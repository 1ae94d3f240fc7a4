"""Cases, implementations, result checks, and the loop that times them side by side.

A `Case` is one kernel on one input (fixed seed). It has a list of `Impl`s: etchpy
(inputs prebuilt as ep.Tensor), optionally etchpy fed scipy/numpy inputs (converted
and validated on every call), and the peers. For each case:

1. every implementation is set up (conversions to its own data structures are not
   timed) and warmed up once (the warm-up is timed and recorded separately; for
   etchpy it includes building or loading the C library);
2. each implementation is timed `repeat` times with time.perf_counter (order:
   etchpy, etchpy with scipy inputs, peers); a call that takes less than
   0.25 s / repeat is timed more often, up to 5 x repeat runs or 0.25 s, so that
   a millisecond kernel's median rests on more than a handful of noisy samples.
   The runs are spread over ROUNDS rounds: in each round every implementation
   runs its share back to back, after one untimed call, and each round starts
   with the next implementation. Back to back, not
   interleaved call by call, because interleaving made every call that follows
   another library's call pay for the allocator and cache state that library
   left behind (measured: +50% on a 4 ms SpMM); the untimed call absorbs that
   once per block. In rounds, because this machine is shared: a burst of load
   lasting a second or two then lands on every implementation's samples, not
   on whichever one was running (seen: SpMV 1.5 ms one block, 2.6 ms the next);
   and the block right after a case's setup often runs slow (3.3 ms against
   1.9 ms for the same SpMV later), so no implementation is always first.
   A run longer than `budget` seconds ends that implementation's runs; when the
   warm-up says `repeat` runs would exceed `impl_budget` seconds it gets fewer
   runs (the count is recorded);
3. every result (from the warm-up) is checked against etchpy's (or, if etchpy
   failed, against the first implementation that succeeded): ok / MISMATCH;
4. ratio = etchpy median / peer median (> 1: etchpy is slower).

Failures (exceptions in setup, warm-up or a timed run) are recorded, never raised.
"""
from __future__ import annotations

import gc
import re
import traceback
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

from .timing import fmt_ratio, fmt_spread, fmt_time, summarize, timed

_ROOT = str(Path(__file__).resolve().parent.parent)


def portable_traceback(limit: int) -> str:
    """The current traceback with this checkout's path written as <repo> and any
    installed package's directory as <site-packages>, the standard library's as
    <python3.X> (results are committed)."""
    text = traceback.format_exc(limit=limit).replace(_ROOT, "<repo>")
    text = re.sub(r'"[^"]*?/site-packages/', '"<site-packages>/', text)
    return re.sub(r'"[^"]*?/lib/python(\d+\.\d+)/', r'"<python\1>/', text)


@dataclass
class Impl:
    name: str
    build: Callable[[], Any]      # () -> fn, or (fn, normalize)
    role: str = "peer"            # "etchpy" | "etchpy-raw" | "etchpy-out" | "peer"
    note: str = ""                # how it computes the kernel
    # timed elsewhere (another interpreter): (ctx) -> (record with warmup, samples and
    # maybe budget_note, result); `build` is then unused
    external: Callable | None = None


@dataclass
class Case:
    kernel: str
    case: str
    impls: list
    check: Callable = None        # (ref, out) -> (ok, detail); default check_close
    sizes: dict = field(default_factory=dict)
    bytes: float | None = None    # bytes touched, for an effective GB/s figure
    bytes_formula: str = ""
    notes: list = field(default_factory=list)
    info: dict = field(default_factory=dict)


@dataclass
class Context:
    quick: bool
    repeat: int
    budget: float
    impl_budget: float
    peers: dict
    say: Callable = print
    extras: dict = field(default_factory=dict)
    cache: dict = field(default_factory=dict)


# ------------------------------------------------------------------------ checks

def _short(exc: BaseException, limit=200) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def rows_sorted(m) -> bool:
    """Are the column indices strictly increasing inside every row of a csr matrix?"""
    m = sp.csr_matrix(m) if m.format != "csr" else m
    ind, ptr = np.asarray(m.indices), np.asarray(m.indptr)
    if len(ind) < 2:
        return True
    inc = np.diff(ind) > 0
    bounds = ptr[1:-1]
    bounds = bounds[(bounds > 0) & (bounds < len(ind))]
    inc[bounds - 1] = True           # a new row may start anywhere
    return bool(inc.all())


def check_close(ref, out, rtol=1e-6):
    """allclose for dense arrays / scalars / sparse matrices; exact for ints and bools."""
    if sp.issparse(ref) or sp.issparse(out):
        return check_sparse(ref, out, rtol)
    a, b = np.asarray(ref), np.asarray(out)
    if a.shape != b.shape:
        return False, f"shape {b.shape} != {a.shape}"
    if a.dtype.kind in "biu" and b.dtype.kind in "biu":
        bad = int(np.count_nonzero(a != b))
        return bad == 0, ("" if bad == 0 else f"{bad} entries differ")
    a, b = a.astype(float), b.astype(float)
    finite = np.isfinite(a)
    scale = float(np.abs(a[finite]).max()) if finite.any() else 1.0
    close = np.isclose(b, a, rtol=rtol, atol=1e-12 * max(1.0, scale))
    if close.all():
        return True, ""
    diff = np.abs(np.where(close, 0.0, b - a))
    return False, f"{int((~close).sum())} entries differ, max |diff| {np.nanmax(diff):.3g}"


def check_sparse(ref, out, rtol=1e-6):
    a, b = sp.csr_matrix(ref), sp.csr_matrix(out)
    if a.shape != b.shape:
        return False, f"shape {b.shape} != {a.shape}"
    d = (a - b).tocsr()
    err = float(abs(d).max()) if d.nnz else 0.0
    scale = float(abs(a).max()) if a.nnz else 0.0
    if err <= rtol * scale + 1e-12:
        return True, ""
    return False, f"max |diff| {err:.3g} (scale {scale:.3g})"


def check_csr_sorted(ref, out):
    ok, detail = check_sparse(ref, out)
    order = "rows sorted" if rows_sorted(sp.csr_matrix(out)) else "rows UNSORTED"
    return ok, (detail + "; " if detail else "") + order


# ------------------------------------------------------------------------ running

def run_case(case: Case, ctx: Context) -> dict:
    gc.collect()
    check = case.check or check_close
    rec = {"kernel": case.kernel, "case": case.case, "sizes": case.sizes,
           "notes": list(case.notes), "info": dict(case.info), "impls": {},
           "ratios": {}, "reference": None, "bytes": case.bytes,
           "bytes_formula": case.bytes_formula}
    outputs, live = {}, []           # live: (fn, record) of each warmed-up impl
    for impl in case.impls:
        r = {"role": impl.role, "note": impl.note}
        rec["impls"][impl.name] = r
        if impl.external is not None:
            _run_external(impl, r, outputs, ctx)
            continue
        try:
            built = impl.build()
        except Exception as exc:
            r["error"] = "setup failed: " + _short(exc)
            r["traceback"] = portable_traceback(6)
            continue
        fn, norm = built if isinstance(built, tuple) else (built, None)
        gc.collect()
        # warm-up, keeping the (normalized) result for the check
        try:
            t, out = timed(fn)
        except Exception as exc:
            r["error"] = "warm-up failed: " + _short(exc)
            r["traceback"] = portable_traceback(6)
            continue
        r["warmup"] = t
        try:
            outputs[impl.name] = norm(out) if norm is not None else out
        except Exception as exc:
            r["check"] = "n/a (" + _short(exc, 120) + ")"
        del out, norm, built
        live.append((fn, r))
    _time_rounds(live, ctx)
    for _, r in live:
        if r["samples"]:
            r["summary"] = summarize(r["samples"])
            if case.bytes:
                r["GB/s"] = case.bytes / r["summary"]["median"] / 1e9
    del live
    rec["info"].update(case.info)     # builders fill case.info

    ref_name = "etchpy" if "etchpy" in outputs else next(iter(outputs), None)
    rec["reference"] = ref_name
    if ref_name is not None:
        ref = outputs[ref_name]
        for name, out in outputs.items():
            r = rec["impls"][name]
            if name == ref_name:
                r["check"] = "reference"
                if check is check_csr_sorted:
                    r["check"] += "; rows " + ("sorted" if rows_sorted(out) else "UNSORTED")
                continue
            try:
                ok, detail = check(ref, out)
                r["check"] = ("ok" if ok else "MISMATCH") + (f" ({detail})" if detail else "")
                r["check_ok"] = bool(ok)
            except Exception as exc:
                r["check"] = "check failed: " + _short(exc, 120)
                r["check_ok"] = False
            if ref_name != "etchpy":
                r["check"] += f" [vs {ref_name}]"
    outputs.clear()
    gc.collect()

    e = rec["impls"].get("etchpy", {})
    if "summary" in e:
        for name, r in rec["impls"].items():
            if r["role"] == "peer" and "summary" in r:
                rec["ratios"][name] = e["summary"]["median"] / r["summary"]["median"]
    return rec


def print_header(say):
    say(f"{'kernel':<9} {'case':<44} {'etchpy median (min–max)':<27} {'peer':<16} "
        f"{'peer median (min–max)':<27} {'ratio':>7}  check")
    say("-" * 148)


def print_case(rec, say):
    e = rec["impls"].get("etchpy", {})
    etxt = fmt_spread(e.get("summary")) if "summary" in e else "FAILED"
    peers = [(n, r) for n, r in rec["impls"].items() if r["role"] == "peer"]
    if not peers:
        say(f"{rec['kernel']:<9} {rec['case']:<44} {etxt:<27} {'—':<16}")
    for n, r in peers:
        ptxt = fmt_spread(r.get("summary")) if "summary" in r else "FAILED"
        ratio = rec["ratios"].get(n)
        rtxt = fmt_ratio(ratio)
        chk = r.get("check", "")
        say(f"{rec['kernel']:<9} {rec['case']:<44} {etxt:<27} {n:<16} {ptxt:<27} "
            f"{rtxt:>7}  {chk}")
    for n, r in rec["impls"].items():
        if "error" in r:
            say(f"    ! {n}: {r['error']}")
        if "budget_note" in r:
            say(f"    · {n}: {r['budget_note']}")
        if r["role"] == "etchpy-raw" and "summary" in r and "summary" in e:
            extra = r["summary"]["median"] - e["summary"]["median"]
            say(f"    · {n}: {fmt_spread(r['summary'])} "
                f"({'+' if extra >= 0 else '−'}{fmt_time(abs(extra))} vs prebuilt ep.Tensor)")
    if "warmup" in e:
        say(f"    · etchpy warm-up (first call, incl. library build/load): "
            f"{fmt_time(e['warmup'])}")
    for n, r in rec["impls"].items():
        if "GB/s" in r:
            say(f"    · {n}: {r['GB/s']:.2f} GB/s effective")


def _run_external(impl, r, outputs, ctx):
    """An implementation that times itself (tensora in its own venv)."""
    try:
        got, out = impl.external(ctx)
    except Exception as exc:
        r["error"] = "external run failed: " + _short(exc)
        r["traceback"] = portable_traceback(6)
        return
    r["warmup"], r["samples"] = got["warmup"], list(got["samples"])
    if got.get("budget_note"):
        r["budget_note"] = got["budget_note"]
    if got.get("compile") is not None:
        r["note"] += f"; compile {fmt_time(got['compile'])} (not timed)"
    outputs[impl.name] = out
    if r["samples"]:
        r["summary"] = summarize(r["samples"])


FAST_FACTOR, FAST_SECONDS = 5, 0.25


ROUNDS = 5


def _planned_runs(r, ctx) -> int:
    """How many timed runs an implementation gets, from its warm-up: `repeat`,
    fewer within the per-impl budget, more for a fast call (0 when the warm-up
    alone exceeds the per-run budget: it is then the only sample)."""
    warm = r["warmup"]
    if warm > ctx.budget:
        r["samples"].append(warm)
        r["budget_note"] = (f"one run took {fmt_time(warm)} > {ctx.budget:g} s budget: "
                            f"the warm-up is the only sample")
        return 0
    runs = min(ctx.repeat, max(1, int(ctx.impl_budget // max(warm, 1e-9))))
    # a fast call gets more runs (up to FAST_FACTOR x repeat within FAST_SECONDS):
    # its median is otherwise at the mercy of one or two noisy samples
    runs = max(runs, min(FAST_FACTOR * ctx.repeat, int(FAST_SECONDS // max(warm, 1e-9))))
    if runs < ctx.repeat:
        r["budget_note"] = f"{runs} runs (of {ctx.repeat}) to stay within {ctx.impl_budget:g} s"
    return runs


def _time_rounds(live, ctx):
    """The timed runs of every warmed-up implementation, spread over ROUNDS
    rounds (see the module docstring): in each round, one untimed call, then the
    implementation's share of its runs back to back."""
    for _, r in live:
        r["samples"] = []
    plans = [(fn, r, _planned_runs(r, ctx)) for fn, r in live]
    stopped = set()
    for rnd in range(ROUNDS):
        # each round starts at the next implementation: the first block after a
        # case's setup runs slow (fresh arrays settling), and not always etchpy's
        for k in [(rnd + m) % len(plans) for m in range(len(plans))]:
            fn, r, total = plans[k]
            share = total // ROUNDS + (rnd < total % ROUNDS)
            if k in stopped or share == 0:
                continue
            try:
                timed(fn)                       # untimed: settles caches and allocator
                for _ in range(share):
                    t, out = timed(fn)
                    del out
                    r["samples"].append(t)
                    if t > ctx.budget:
                        r["budget_note"] = (f"run {len(r['samples'])} took {fmt_time(t)} > "
                                            f"{ctx.budget:g} s budget: stopped after "
                                            f"{len(r['samples'])} runs")
                        stopped.add(k)
                        break
            except Exception as exc:
                r["error"] = f"run {len(r['samples']) + 1} failed: " + _short(exc)
                stopped.add(k)
