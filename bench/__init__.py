"""Side-by-side benchmarks of etchpy against scipy, GraphBLAS, pydata sparse, DuckDB, SQLite.

Run `python -m bench --quick` (or `python bench/run.py`); see bench/README.md.
`results_table(results)` renders the markdown table the project README embeds.
"""
from . import _env  # noqa: F401  (must run before numpy / peers are imported)
from .report import results_table  # noqa: E402  (kernel | case | etchpy | peer | ... table)


__all__ = ["results_table"]
