"""expr: the expression language (nodes), its front ends and its dense meaning.

Importing the package registers the meaning of comparisons (compare.py), of
&, | and ~ on them (logic.py), of windows (windows.py) and of diagonals (diagonal.py)."""
from . import compare, diagonal, logic, offsets, windows  # noqa: F401
