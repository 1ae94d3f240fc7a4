from bench import _env  # noqa: F401  (environment first)
from bench.run import main

if __name__ == "__main__":
    raise SystemExit(main(prog="python -m bench"))
