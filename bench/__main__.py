from bench import _env  # noqa: F401  (environment first)
from bench.run import main

if __name__ == "__main__":
    import sys
    if sys.argv[1:2] == ["dask"]:              # the distributed section alone (bench/dask.py)
        from bench.dask import main as dask_main
        raise SystemExit(dask_main(sys.argv[2:]))
    if sys.argv[1:2] == ["tpch"]:              # the relational section alone (bench/tpch/run.py)
        from bench.tpch.run import main as tpch_main
        raise SystemExit(tpch_main(sys.argv[2:]))
    raise SystemExit(main(prog="python -m bench"))
