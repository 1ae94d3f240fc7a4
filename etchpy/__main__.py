"""`python -m etchpy ...`: the same as the `etchpy` console script."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
