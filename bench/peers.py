"""Optional peers: imported if available, skipped with a printed note otherwise.

scipy and numpy are always present (etchpy depends on them). etchpy itself never
depends on any of these.
"""
from __future__ import annotations

import importlib

from ._env import THREADS

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
        mods[name] = mod
        info[name] = {"label": label, "available": True, "version": str(version),
                      "note": extra}
    return mods, info
