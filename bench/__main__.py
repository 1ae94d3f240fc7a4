from bench import _env  # noqa: F401  (environment first)
from bench.run import main

# sections run alone as `python -m bench NAME ...`: NAME -> the module whose main(argv) runs it
SECTIONS = {
    "dask": "bench.dask",            # the distributed section
    "calls": "bench.calls",          # the cost of a call, start-up included (issue 39)
    "sketches": "bench.sketches",    # sketch-guided optimization
    "chain_survey": "bench.chain_survey",  # where unguided saturation plans chains well
    "approx": "bench.approx",        # approximations under an error budget
    "tpch": "bench.tpch.run",        # the relational section (TPC-H Q5, Q9, Q3)
    "plans": "bench.nesting",        # chains, trees, Tucker: written nested and flat
    "targets": "bench.targets",      # A·Bᵀ, SpGEMM and min-plus against their peers
    "complex": "bench.structure_complex",  # complex128 SpMV and SpGEMM against scipy
    "structure": "bench.structure",  # banded and block-list levels (issue 40)
    "structure_rle": "bench.structure_rle",  # run-length images against numpy (issue 40)
    "structure_rle_out": "bench.structure_rle_out",  # rle outputs, sparse run lists (issue 40)
    "structure_bytemap": "bench.structure_bytemap",  # bytemap against csf and dense (issue 40)
    "structure_hash": "bench.structure_hash",  # hash outputs against csf, csr, bytemap (issue 40)
    "windows": "bench.windows",      # windows: sliced SpMV and 3×3 erosion (issue 40)
    "erosion_model": "bench.erosion_model",  # hand C models of the rle erosion (issue 40)
}

if __name__ == "__main__":
    import importlib
    import sys
    if sys.argv[1:2] and sys.argv[1] in SECTIONS:
        section = importlib.import_module(SECTIONS[sys.argv[1]])
        raise SystemExit(section.main(sys.argv[2:]))
    raise SystemExit(main(prog="python -m bench"))
