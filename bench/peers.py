"""Optional peers: imported if available, skipped with a printed note otherwise.

scipy and numpy are always present (etchpy depends on them). etchpy itself never
depends on any of these.
"""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import numpy as np

from . import tensora_worker
from ._env import THREADS

HERE = Path(__file__).resolve().parent
# tensora's own venv: $ETCHPY_BENCH_TENSORA_PYTHON, or bench/.venv-tensora (made by
# `python -m bench --setup-tensora`)
TENSORA_VENV = HERE / ".venv-tensora"

# module name -> label shown in the report
OPTIONAL = {
    "graphblas": "python-graphblas (SuiteSparse:GraphBLAS)",
    "sparse": "pydata sparse",
    "duckdb": "DuckDB",
    "sqlite3": "SQLite (stdlib sqlite3)",
    "tensora": "tensora",
}


def load_peers(say=print) -> tuple[dict, dict]:
    """(modules, info): modules by name for the peers that import; info for every peer."""
    mods, info = {}, {}
    for name, label in OPTIONAL.items():
        try:
            mod = importlib.import_module(name)
        except Exception as exc:  # ImportError, or a broken install
            if name == "tensora" and _tensora_elsewhere(mods, info, label, say):
                continue
            info[name] = {"label": label, "available": False,
                          "note": f"{type(exc).__name__}: {exc}".splitlines()[0]}
            say(f"note: peer {label} not available ({info[name]['note']}); skipped")
            continue
        version = getattr(mod, "__version__", None)
        if name == "sqlite3":
            version = mod.sqlite_version
        extra = ""
        if name == "graphblas":
            try:
                mod.ss.config["nthreads"] = THREADS
                extra = f"nthreads={mod.ss.config['nthreads']}"
            except Exception as exc:  # pragma: no cover - depends on the build
                extra = f"could not set nthreads: {exc}"
        if name == "tensora":
            mod, version = TensoraPeer(None), metadata.version("tensora")
            extra = "in this process, cffi backend"
        mods[name] = mod
        info[name] = {"label": label, "available": True, "version": str(version),
                      "note": extra}
    return mods, info


# ------------------------------------------------------------------ tensora

def tensora_python() -> str | None:
    """The interpreter of tensora's own venv, if there is one."""
    env = os.environ.get("ETCHPY_BENCH_TENSORA_PYTHON")
    if env:
        return env
    exe = TENSORA_VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    return str(exe) if exe.exists() else None


def setup_tensora_venv(say=print) -> None:
    """Create bench/.venv-tensora with tensora and numpy (tensora pins llvmlite, which
    conflicts with the numba that pydata sparse needs, so it gets its own venv)."""
    if not TENSORA_VENV.exists():
        say(f"creating {TENSORA_VENV.relative_to(HERE.parent)} for tensora ...")
        subprocess.run([sys.executable, "-m", "venv", str(TENSORA_VENV)], check=True)
    subprocess.run([tensora_python(), "-m", "pip", "install", "-q", "tensora", "numpy"],
                   check=True)


def _tensora_elsewhere(mods, info, label, say) -> bool:
    python = tensora_python()
    if python is None:
        return False
    try:
        version = subprocess.run(
            [python, "-c", "import tensora, importlib.metadata as m; "
                           "print(m.version('tensora'))"],
            capture_output=True, text=True, check=True, timeout=120).stdout.strip()
    except Exception as exc:
        say(f"note: tensora's venv ({python}) does not import tensora ({exc}); skipped")
        return False
    mods["tensora"] = TensoraPeer(python)
    info["tensora"] = {"label": label, "available": True, "version": version,
                       "note": "own venv (bench/tensora_worker.py), cffi backend"}
    return True


class TensoraPeer:
    """Runs bench/tensora_worker.py in this process, or in tensora's own venv."""

    def __init__(self, python: str | None):
        self.python = python

    def run(self, spec: dict, arrays: dict) -> tuple[dict, np.ndarray]:
        if self.python is None:
            return tensora_worker.run(spec, arrays)
        with tempfile.TemporaryDirectory(prefix="etchpy-tensora-") as work:
            work = Path(work)
            (work / "spec.json").write_text(json.dumps(spec))
            np.savez(work / "inputs.npz", **arrays)
            done = subprocess.run([self.python, str(HERE / "tensora_worker.py"), str(work)],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
                raise RuntimeError(f"tensora worker failed: {tail}")
            rec = json.loads(done.stdout.strip().splitlines()[-1])
            return rec, np.load(work / "out.npy")
