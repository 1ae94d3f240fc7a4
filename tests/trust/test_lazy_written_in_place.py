"""ep.lazy over scipy csr, csc and coo operands whose index arrays are written in
place after ep.lazy wrapped them (between ep.lazy and ep.compute, or between two
computes of the same program: a replay): every step that hands a sparse leaf
to code trusting its arrays (scipy's loops, conversions, indexing) checks them
first or runs a kernel whose loop checks them (etchpy.lazy.wrap.trusted,
lazy.spmm), so the result is numpy's on the matrix the arrays describe or an
InputError naming ep.lazy's operand, never a crash (issue 39, docs/lazy.md's
Limits). Each batch of programs runs in a child process: a crash fails the
test instead of ending pytest. A coo operand is held as a csr copy made by
ep.lazy: its answer is the one on the matrix it was wrapped as."""
import json
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

CHILD = r'''
import json, sys
import numpy as np, scipy.sparse as sp
import etchpy as ep
from etchpy.errors import InputError

n = 40
R = np.random.default_rng(3)
v, y, W10, W20 = R.random(n), R.random(n), R.random((n, 10)), R.random((n, 20))
U, V, D = R.random((n, 3)), R.random((n, 3)), R.random((n, n)) + 0.5
vi = np.arange(n)
KERNEL = ep.Tuning(lazy_spmm_work=0)       # a product of 20 columns by the kernel
PROGRAMS = {
    "matvec": lambda F, X: X @ v, "flip": lambda F, X: X.T @ v,
    "mat10": lambda F, X: X @ W10, "flip10": lambda F, X: X.T @ W10,
    "mat20": lambda F, X: X @ W20, "int": lambda F, X: X @ vi,
    "logistic": lambda F, X: X.T @ (1 / (1 + F.exp(-(X @ v))) - y),
    "sampled": lambda F, X: (X * (U @ V.T)).sum(),
    "pattern": lambda F, X: X * F.log(U @ V.T + 1),
    "sum": lambda F, X: X + X * 2, "spgemm": lambda F, X: X @ X,
    "rowsum": lambda F, X: X.sum(axis=1), "leaf": lambda F, X: X,
    "divided": lambda F, X: X * (1 / D),
}


def operand(fmt, seed):
    d = sp.random(n, n, density=0.2, random_state=seed).toarray()
    return sp.csr_matrix(d) if fmt == "csr_matrix" else getattr(sp, f"{fmt}_array")(d)


def mutate(m, how, rng):
    """Write m's index arrays in place (names follow scipy's)."""
    q = m.coords[1] if m.format == "coo" else m.indices
    at = int(rng.integers(len(q)))
    match how:
        case "past":
            q[at] = int(rng.choice([n, 10**8, 2**31 - 1]))
        case "negative":
            q[at] = -int(rng.integers(1, 10**6))
        case "in_range":        # still a matrix: unsorted or duplicate entries maybe
            q[at] = int(rng.integers(n))
        case "falls" if m.format != "coo":
            m.indptr[int(rng.integers(1, n))] = m.indptr[-1] + int(rng.integers(1, 1000))
        case "end" if m.format != "coo":
            m.indptr[-1] = len(m.indices) + int(rng.integers(1, 10**6))
        case _:
            q[at] = 10**8


def meaning(m):
    """The dense matrix m's arrays describe now (duplicates summed), or None."""
    try:
        c = m.copy()
        if c.format != "coo":
            c.check_format(full_check=True)
        return c.toarray()
    except (ValueError, IndexError):
        return None


def run(prog, fmt, how, when, opt, seed):
    rng = np.random.default_rng(seed)
    m = operand(fmt, seed)
    before = m.toarray()
    f = PROGRAMS[prog]
    tuning = KERNEL if prog == "mat20" and seed % 2 else None
    if when == "traced":
        g = ep.lazy.function(lambda X: f(ep, X), optimize=opt, tuning=tuning)
        compute = lambda: g(m)
    else:
        X = ep.lazy(m)
        compute = lambda: ep.compute(f(ep, X), optimize=opt, tuning=tuning)
    if when != "first":
        compute()
        compute()           # recorded, then replayed
    mutate(m, how, rng)
    now = meaning(m)
    try:
        got = compute()
    except InputError as e:
        ok = now is None and "ep.lazy's operand" in str(e)
        return "ok" if ok else f"InputError: {e}"
    got = got.toarray() if hasattr(got, "toarray") else np.asarray(got)
    wants = [before] if fmt == "coo" else [] if now is None else [now]
    for want in wants:
        with np.errstate(all="ignore"):
            w = f(np, want)
        if np.allclose(got, w, rtol=1e-10, atol=1e-12):
            return "ok"
    return f"wrong answer (the arrays describe a matrix: {now is not None})"


for case in json.loads(sys.argv[1]):
    print(json.dumps([case, "started"]), flush=True)
    print(json.dumps([case, run(*case)]), flush=True)
'''

GROUPS = [["matvec", "flip", "int", "leaf"], ["mat10", "flip10", "mat20", "rowsum"],
          ["logistic", "sampled", "spgemm"], ["pattern", "sum", "divided"]]
FORMATS = ["csr", "csc", "csr_matrix", "coo"]
WRITES = ["past", "negative", "in_range", "falls", "end"]


def _run_child(cases):
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cases)],
                         capture_output=True, text=True, timeout=600)
    lines = [json.loads(ln) for ln in out.stdout.splitlines() if ln.startswith("[")]
    if out.returncode != 0:
        last = lines[-1][0] if lines else None
        pytest.fail(f"the child died (return code {out.returncode}) in case {last}: "
                    f"{out.stderr[-2000:]}")
    return [(case, res) for case, res in lines if res != "started"]


@pytest.mark.parametrize("group", range(len(GROUPS)))
@settings(max_examples=2, deadline=None)
@given(data=st.data())
def test_index_arrays_written_in_place_give_the_answer_or_an_input_error(group, data):
    cases = []
    for prog in GROUPS[group]:
        for fmt in FORMATS:
            how = data.draw(st.sampled_from(WRITES))
            when = data.draw(st.sampled_from(["first", "replay", "traced"]))
            opt = data.draw(st.booleans())
            cases.append([prog, fmt, how, when, opt, data.draw(st.integers(0, 10**6))])
    results = _run_child(cases)
    assert len(results) == len(cases)
    bad = [(case, res) for case, res in results if res != "ok"]
    assert not bad, bad


def test_every_program_and_write_between_two_computes():
    """The whole table once: every program, layout and write, after a replay."""
    cases = [[prog, fmt, how, "replay", True, k] for k, (prog, fmt, how) in enumerate(
        (p, f, h) for g in GROUPS for p in g for f in FORMATS for h in WRITES)]
    bad = [(case, res) for case, res in _run_child(cases) if res != "ok"]
    assert not bad, bad
