"""expr: the expression language (nodes), its front ends and its dense meaning.

Importing the package registers the meaning of comparisons (compare.py)."""
from . import compare  # noqa: F401
