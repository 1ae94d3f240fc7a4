"""Approximations under an error budget: MLP inference on handwritten digits.

    python -m bench approx --json PATH [--repeat N] [--time-limit S]

Data: scikit-learn's bundled `load_digits` (1797 images 8×8, values 0..16), each
image upsampled to 28×28 by `scipy.ndimage.zoom(image, 3.5, order=1)` and scaled
to [0, 1], so the first layer is 784 wide; split by `train_test_split(test_size=0.2,
random_state=0, stratify=labels)` (1437 train, 360 test).

Networks (the fixed recipe): `MLPClassifier(hidden_layer_sizes=H, activation="relu",
solver="adam", alpha=1e-4, batch_size=64, learning_rate_init=1e-3, max_iter=40,
tol=0, n_iter_no_change=1000, random_state=0)` with H = (512,) ("mlp1") and
H = (512, 256) ("mlp2"). The weights are NOT committed: they are 2-4 MB of float
data that does not compress, and the recipe is deterministic (one thread, fixed
seed), so the bench trains once (about 10 s and 25 s) and caches the weights in
$ETCHPY_BENCH_CACHE or ~/.cache/etchpy-bench (outside the repository), keyed by
the scikit-learn version. scikit-learn is in the `bench` extra only.

For each network and budget (0.001, 0.01, 0.1): the weights and biases are
`ep.lazy(W, constant=True)`; the samples are 200 training images; the held-out
inputs are the 360 test images, which are also the batch that is timed. Both
extractors (genetic, the default, and greedy) run with a 10 s scoring limit; the
genetic extractor's program is timed against numpy's exact `relu(X@W1+b1)@W2+b2`
(BLAS on one thread: bench/_env.py sets the thread variables before numpy is
imported, and threadpoolctl limits them too when installed), calls alternated,
ratio of medians. `accuracy_drop_points` is the exact model's test accuracy minus
the approximated one's, in percentage points.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import time

import numpy as np

import etchpy as ep

from .timing import timed

BUDGETS = (0.001, 0.01, 0.1)
NETS = {"mlp1": (512,), "mlp2": (512, 256)}
N_SAMPLES = 200


def _one_thread():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=1)


def digits():
    """(X_train, X_test, y_train, y_test): digits upsampled to 28×28 in [0, 1]."""
    from scipy.ndimage import zoom
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    d = load_digits()
    X = np.stack([zoom(im, 3.5, order=1) for im in d.images]).reshape(len(d.images), -1)
    X = np.clip(X / 16.0, 0.0, 1.0)
    return train_test_split(X, d.target, test_size=0.2, random_state=0, stratify=d.target)


def _cache_dir() -> pathlib.Path:
    root = os.environ.get("ETCHPY_BENCH_CACHE") or pathlib.Path.home() / ".cache" / "etchpy-bench"
    path = pathlib.Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def weights(name: str, X_train, y_train) -> list[np.ndarray]:
    """[W1, b1, W2, b2, ...] of network `name`, trained once by the fixed recipe
    and cached outside the repository."""
    import sklearn
    from sklearn.neural_network import MLPClassifier
    path = _cache_dir() / f"approx-{name}-sklearn{sklearn.__version__}.npz"
    if path.exists():
        with np.load(path) as f:
            return [f[f"a{k}"] for k in range(len(f.files))]
    net = MLPClassifier(hidden_layer_sizes=NETS[name], activation="relu", solver="adam",
                        alpha=1e-4, batch_size=64, learning_rate_init=1e-3, max_iter=40,
                        tol=0, n_iter_no_change=1000, random_state=0)
    with _one_thread():
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            net.fit(X_train, y_train)
    arrays = [a for W, b in zip(net.coefs_, net.intercepts_) for a in (W, b)]
    np.savez_compressed(path, **{f"a{k}": a for k, a in enumerate(arrays)})
    return arrays


def numpy_forward(X, arrays):
    h = X
    for k in range(0, len(arrays), 2):
        h = h @ arrays[k] + arrays[k + 1]
        if k + 2 < len(arrays):
            h = np.maximum(h, 0)
    return h


def lazy_forward(x, arrays):
    h = x
    consts = [ep.lazy(a, constant=True) for a in arrays]
    for k in range(0, len(consts), 2):
        h = h @ consts[k] + consts[k + 1]
        if k + 2 < len(consts):
            h = ep.maximum(h, 0)
    return h


def _speed(fn_ep, fn_np, repeat: int) -> tuple[float, float]:
    fn_ep(), fn_np()
    te, tn = [], []
    with _one_thread():
        for _ in range(repeat):
            te.append(timed(fn_ep)[0])
            tn.append(timed(fn_np)[0])
    return float(np.median(te)), float(np.median(tn))


def _extractor_fields(prefix: str, a) -> dict:
    return {f"{prefix}_s": a.seconds, f"{prefix}_cost": a.cost,
            f"{prefix}_error": a.measured_error, f"{prefix}_evaluations": a.evaluations,
            f"{prefix}_choices": [f"{n}: {c.describe()}" for n, c in a.choices]}


def run_case(name, arrays, data, budget, repeat, time_limit) -> dict:
    X_train, X_test, _, y_test = data
    x = ep.lazy(X_test)
    y = lazy_forward(x, arrays)
    samples = {x: X_train[:N_SAMPLES]}
    got = {ex: ep.approximate(y, max_rel_error=budget, samples=samples,
                              heldout={x: X_test}, extractor=ex, time_limit=time_limit)
           for ex in ("genetic", "greedy")}
    a = got["genetic"]
    out = a.compute()
    exact = numpy_forward(X_test, arrays)
    acc_exact = float((exact.argmax(1) == y_test).mean())
    acc = float((np.asarray(out).argmax(1) == y_test).mean())
    t_ep, t_np = _speed(a.compute, lambda: numpy_forward(X_test, arrays), repeat)
    row = {"workload": name, "budget": budget, "measured_error": a.measured_error,
           "compiled_error": a.compiled_error, "heldout_error": a.heldout_error,
           "accuracy_exact": acc_exact, "accuracy": acc,
           "accuracy_drop_points": 100 * (acc_exact - acc),
           "etchpy_ms": 1e3 * t_ep, "numpy_ms": 1e3 * t_np, "speedup_vs_numpy": t_np / t_ep,
           "cost": a.cost, "exact_cost": a.exact_cost, "batch": int(X_test.shape[0])}
    for ex, ax in got.items():
        row.update(_extractor_fields(ex, ax))
    row["greedy_speedup_vs_numpy"] = None
    if got["greedy"].genome != a.genome:
        g_ep, g_np = _speed(got["greedy"].compute, lambda: numpy_forward(X_test, arrays), repeat)
        row["greedy_speedup_vs_numpy"] = g_np / g_ep
    else:
        row["greedy_speedup_vs_numpy"] = row["speedup_vs_numpy"]
    return row


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench approx", description=__doc__.split("\n")[0])
    p.add_argument("--json", required=True, help="where to write the JSON list")
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--time-limit", type=float, default=10.0)
    p.add_argument("--nets", default=",".join(NETS))
    args = p.parse_args(argv)
    data = digits()
    rows = []
    for name in args.nets.split(","):
        arrays = weights(name, data[0], data[2])
        for budget in BUDGETS:
            t0 = time.perf_counter()
            row = run_case(name, arrays, data, budget, args.repeat, args.time_limit)
            print(f"{name} budget {budget:g}: error {row['measured_error']:.3g} "
                  f"(held out {row['heldout_error']:.3g}), accuracy drop "
                  f"{row['accuracy_drop_points']:.2f} points, {row['speedup_vs_numpy']:.2f}x "
                  f"numpy ({time.perf_counter() - t0:.0f} s)", flush=True)
            rows.append(row)
    pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0
