"""Imp: the small imperative language that streams lower to (see imp.core's grammar).

This package's face: every layer imports Imp through `etchpy.imp`, so the
modules inside may be split or renamed without touching the importers.
"""
from .core import *  # noqa: F401,F403
from .core import _BINOPS  # noqa: F401
