"""Side-by-side benchmarks of etchpy against scipy, GraphBLAS, pydata sparse, DuckDB, SQLite.

Run `python -m bench --quick` (or `python bench/run.py`); see bench/README.md.
`results_table(results)` renders the markdown table the project README embeds.
"""
from . import _env  # noqa: F401  (must run before numpy / peers are imported)


def results_table(results) -> str:
    """Markdown table (kernel | case | etchpy | peer | peer median | ratio | check)."""
    from .report import results_table as _table
    return _table(results)


__all__ = ["results_table"]
