"""Environment for the benchmark, applied before numpy or any peer is imported.

* OMP_WAIT_POLICY=PASSIVE: GraphBLAS (and BLAS) bundle OpenMP runtimes whose idle
  threads would otherwise spin and steal the second core from the kernel being timed.
  The two-thread section (bench/threads.py) runs in its own process without it.
* Every implementation is measured single-threaded (etchpy kernels are serial):
  BLAS / OpenMP thread counts default to 1 unless the caller already set them, and
  GraphBLAS and DuckDB are configured to one thread in bench/peers.py.
"""
import os

THREADS = 1

if os.environ.get("ETCHPY_BENCH_OMP_DEFAULT") != "1":   # set for bench/threads.py's process
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, str(THREADS))
