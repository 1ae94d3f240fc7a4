import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# CI: bounded and derandomised. dev: more examples, random seeds.
settings.register_profile("ci", max_examples=40, derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=300, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The suite's kernels are built at -Og unless CFLAGS is set (-march=native keeps the
# vector paths compiled): the same C in about half the compiler's time of -O3, and as
# fast to run as at -O1 (-O0 made the tests that run large inputs up to 40x slower;
# docs/status.md, Testing). The central property (tests/end_to_end/test_backends.py)
# builds with etchpy's own flags. The caller's CFLAGS are recorded in the environment
# before the default is set, so that pytest-xdist's workers, which inherit the
# controller's environment with the default in it, read the caller's and not the default.
if "ETCHPY_SUITE_CFLAGS" in os.environ:          # a worker: the controller recorded them
    USER_CFLAGS = os.environ["ETCHPY_SUITE_CFLAGS"] or None
else:
    USER_CFLAGS = os.environ.get("CFLAGS") or None
    os.environ["ETCHPY_SUITE_CFLAGS"] = USER_CFLAGS or ""
    os.environ.setdefault("CFLAGS", "-Og -march=native")


@pytest.fixture
def full_flags(monkeypatch):
    """Kernels built with etchpy's own flags (or the caller's CFLAGS)."""
    if USER_CFLAGS is None:
        monkeypatch.delenv("CFLAGS", raising=False)
    else:
        monkeypatch.setenv("CFLAGS", USER_CFLAGS)


@pytest.fixture
def shared_cache(request, tmp_path_factory, monkeypatch):
    """ETCHPY_CACHE_DIR set to one kernel cache that the session's tests share,
    under pytest's base temporary directory (a test module asks for it with
    pytestmark = pytest.mark.usefixtures("shared_cache")); under pytest-xdist the
    workers share it (their base's parent): a kernel one built the other loads.
    A worker is told by its config's workerinput, not by PYTEST_XDIST_WORKER: a
    pytest that a worker's test starts (tests/trust/test_sanitizer.py) inherits
    that variable, and its base's parent is pytest's root of every run."""
    base = tmp_path_factory.getbasetemp()
    if hasattr(request.config, "workerinput"):
        base = base.parent
    monkeypatch.setenv("ETCHPY_CACHE_DIR", str(base / "cache"))


@pytest.fixture
def fresh_keys():
    """The lazy nodes' intern table started over (etchpy.lazy.keys.start_over): a test
    that counts the nodes a call builds, or looks a replay up by its signature, is not
    at the mercy of the table filling up mid-test after the tests run before it in the
    same process (a full table starts over, and nodes or tapes met before are no
    longer found)."""
    from etchpy.lazy import keys
    keys.start_over()
    yield


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", help="run tests marked slow")


def pytest_collection_modifyitems(config, items):
    # the longest tests first (stable otherwise): under -n 2 none of them starts late
    # and leaves one worker running it alone while the other has nothing left
    items.sort(key=lambda item: "heavy" not in item.keywords)
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: pass --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session):
    _rewrite_a_share(session.config)


def _rewrite_a_share(config):
    """Under pytest-xdist every worker imports every test module, and pytest rewrites
    each one's asserts (most of its collection's CPU time) unless its __pycache__
    holds the rewritten code already. Worker n of N first rewrites and
    writes every N-th of the test files it was given, so that the others find the
    code written: the suite's files are rewritten about once instead of once per
    worker. The code is pytest's own (its import checks each file against its
    source as usual); without the private functions, or where no bytecode is
    written, each worker rewrites what it imports, as before."""
    workerinput = getattr(config, "workerinput", {})    # not a nested run's inherited env
    worker = str(workerinput.get("workerid", ""))
    count = int(workerinput.get("workercount", 1))
    if (not worker.startswith("gw") or count < 2 or sys.dont_write_bytecode
            or config.getoption("assertmode") != "rewrite"):
        return
    try:
        from _pytest.assertion import rewrite
        state = config.stash[rewrite.assertstate_key]
        tail, read, make, write = (rewrite.PYC_TAIL, rewrite._read_pyc,
                                   rewrite._rewrite_test, rewrite._write_pyc)
    except (ImportError, AttributeError, KeyError):
        return
    files = set()
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::")[0])
        if path.is_dir():      # not under hidden directories (a venv, say)
            files.update(f for f in path.rglob("test_*.py")
                         if not any(p.startswith(".") for p in f.relative_to(path).parts))
        elif path.name.startswith("test_"):
            files.add(path)
    for fn in sorted(files)[int(worker[2:]) % count::count]:
        pyc = rewrite.get_cache_dir(fn) / (fn.name[:-3] + tail)
        try:
            if read(fn, pyc, state.trace) is None and rewrite.try_makedirs(pyc.parent):
                source_hash, code = make(fn, config)
                write(state, code, source_hash, pyc)
        except (OSError, SyntaxError):
            continue          # the import reports it as it would have
