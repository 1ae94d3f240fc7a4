"""expr: the expression language (nodes), its front ends and its dense meaning.

Importing the package registers the meaning of comparisons (compare.py) and of
&, | and ~ on them (logic.py)."""
from . import compare, logic, windows  # noqa: F401
