"""A lost worker loses nothing: partitioned inputs of every kind (numpy, scipy,
ep.Tensor, dask array) survive a worker killed in the middle of a call and a worker
killed between calls, for a free-index split (row blocks of an SpMV) and a
contracted one (column blocks); a source written in place since partitioning is
never mixed with the blocks cut from it before."""
import os
import signal
import time

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.distributed import call, tasks
from etchpy.settings import Limits

distributed = pytest.importorskip("dask.distributed")
da = pytest.importorskip("dask.array")

i, j = ep.indices("i j")
KINDS = ["numpy", "scipy", "tensor"]
# a cluster each: the default run kills workers holding one kind per test (scipy blocks
# mid-call, numpy blocks between calls); --runslow runs every kind in both
SLOW = pytest.mark.slow


def kinds(kept: str) -> list:
    return [k if k == kept else pytest.param(k, marks=SLOW) for k in KINDS]


@pytest.fixture
def fresh():
    """A cluster of its own for a test that kills workers, `fresh(n)`: n single-threaded
    workers with nannies, enough that one survives every kill the test makes (a
    nanny's new worker may take from one to thirty seconds to register, which no test
    waits for)."""
    made = []

    def make(n):
        cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1,
                                           processes=True, host="127.0.0.1",
                                           dashboard_address=":0")
        made.append(cluster)
        client = distributed.Client(cluster)
        made.append(client)
        return client
    yield make
    for thing in reversed(made):
        thing.close()


class KillFirstRun(distributed.WorkerPlugin):
    """Kills its worker process when a block task starts while the flag file exists
    (claimed by renaming, so exactly one task's first attempt dies)."""

    def __init__(self, flag):
        self.flag = flag

    def transition(self, key, start, finish, **kwargs):
        if finish == "executing" and str(key).startswith("etchpy-run"):
            try:
                os.rename(self.flag, self.flag + ".taken")
            except FileNotFoundError:
                return
            os.kill(os.getpid(), signal.SIGKILL)


def _killing_first_run(client, tmp_path, call):
    """call() while the first block task to start kills its worker; its result."""
    tmp_path.mkdir(exist_ok=True)
    flag = tmp_path / "kill-flag"
    flag.write_text("kill the first block task's worker")
    client.register_plugin(KillFirstRun(str(flag)), name="kill-first-run")
    try:
        return call()
    finally:
        assert (tmp_path / "kill-flag.taken").exists() and not flag.exists()


def _kill_holder(client, future):
    """SIGKILL the worker process holding `future` (its nanny starts a new one)."""
    where = next(iter(client.who_has(future).values()))[0]
    pid = client.run(os.getpid, workers=[where])[where]
    os.kill(pid, signal.SIGKILL)
    return where


def _matrix(kind, shape=(40, 30), seed=0):
    """(the value of kind `kind`, the same as a scipy csr array)."""
    M = sp.random(*shape, density=0.2, format="csr", random_state=seed)
    M = sp.csr_array(M)
    if kind == "numpy":
        return M.toarray(), M
    if kind == "tensor":
        return ep.Tensor.from_scipy(M, "csr"), M
    return M, M


def _spmv():
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    return ep.compile(ep.sum(j, A[i, j] * x[j]))


@pytest.mark.parametrize("kind", kinds("scipy"))
def test_a_worker_killed_mid_call_loses_nothing(fresh, tmp_path, kind):
    """Row blocks (a free split), then column blocks (a contracted one): the first
    block task of each call kills its worker."""
    client = fresh(3)
    value, M = _matrix(kind)
    v = np.arange(M.shape[1], dtype=float)
    kern = _spmv()
    for mode in (0, 1):
        parts = ep.partition(value, mode=mode, blocks=4, client=client, name="A")
        got = _killing_first_run(client, tmp_path / str(mode), lambda: kern(A=parts, x=v))
        np.testing.assert_allclose(got, M @ v, err_msg=f"mode {mode}")
        assert not parts.lost()
        np.testing.assert_allclose(kern(A=parts, x=v), M @ v)  # whole for the next call


def _generated_block(b, rows, cols, slow=None):
    """Block b; made once the file `slow` exists, it takes a second (as a block Dask
    makes again behind the block tasks that hold a loaded worker's threads does)."""
    if slow is not None and os.path.exists(slow):
        time.sleep(1.0)
    return sp.random(rows, cols, 0.05, format="csr", random_state=b)


def test_a_worker_killed_mid_call_dask_array_blocks_are_recomputed(fresh, tmp_path):
    """The blocks Dask makes again are waited for however long that takes, not counted
    as failed sends (two here, about 0.3 s of them, against a second's remaking)."""
    dask = pytest.importorskip("dask")
    client = fresh(2)
    rows, cols, slow = 40, 30, tmp_path / "slow"
    chunks = [da.from_delayed(dask.delayed(_generated_block)(b, rows, cols, str(slow)),
                              (rows, cols), dtype=np.float64, meta=sp.csr_matrix((0, 0)))
              for b in range(4)]
    parts = ep.partition(da.concatenate(chunks, axis=0), mode=0, client=client)
    assert parts.source is None
    slow.write_text("blocks made again take a second")
    M = sp.vstack([_generated_block(b, rows, cols) for b in range(4)]).tocsr()
    v = np.arange(cols, dtype=float)
    kern, ps, split = call._prepare(_spmv(), {"A": parts, "x": v})
    run = tasks.BlockRun(kern, ps, split, ["A", "x"], {"x": v}, limits=Limits(dask_losses=2))
    got = _killing_first_run(client, tmp_path, lambda: run.run((4 * rows,)))
    np.testing.assert_allclose(got, M @ v)


@pytest.mark.parametrize("kind", kinds("numpy"))
def test_a_worker_killed_between_calls_of_an_iteration(fresh, kind):
    """Row and column blocks reused across calls, as PageRank or Bellman-Ford reuse
    the graph: a worker killed between two calls, the next call made at once (the
    client may not know yet), twice, at two steps of the iteration."""
    client = fresh(3)
    value, M = _matrix(kind, shape=(30, 30), seed=1)
    kern = _spmv()
    rows = ep.partition(value, mode=0, client=client, name="A")
    cols = ep.partition(value, mode=1, blocks=3, client=client, name="A")
    x = np.ones(30)
    for step in range(4):
        want = M @ x
        for parts in (rows, cols):
            np.testing.assert_allclose(kern(A=parts, x=x), want, err_msg=f"step {step}")
        if step == 1:
            _kill_holder(client, rows.futures[0])
        if step == 2:
            _kill_holder(client, cols.futures[-1])
        x = 1.0 + want / max(want.max(), 1.0)


def test_a_source_written_in_place_is_never_mixed_with_its_blocks(fresh):
    client = fresh(4)
    M = np.arange(24.0).reshape(6, 4)
    kern, v = _spmv(), np.ones(4)
    parts = ep.partition(M, mode=0, blocks=2, client=client, name="A")
    before = M @ v
    M[:3] += 100.0               # block 0's rows only: the blocks on the workers are kept
    np.testing.assert_allclose(kern(A=parts, x=v), before)
    _kill_holder(client, parts.futures[1])  # block 1 lost: unchanged in M, sent again
    np.testing.assert_allclose(kern(A=parts, x=v), before)
    _kill_holder(client, parts.futures[0])  # block 0 lost: M's rows changed since
    with pytest.raises(ep.InputError, match=r"block 0 of partitioned input A .* written "
                                            r"in place"):
        kern(A=parts, x=v)
    S = sp.csr_array(sp.random(6, 4, 0.5, format="csr", random_state=2))
    sparse = ep.partition(S, mode=1, blocks=2, client=client, name="S")
    S.data *= 2.0                # a scipy source's values written in place
    _kill_holder(client, sparse.futures[0])
    with pytest.raises(ep.InputError, match="block 0 of partitioned input S"):
        _spmv()(A=sparse, x=v)


@pytest.mark.parametrize("mode", [0, 1], ids=["free", "contracted"])
@pytest.mark.parametrize("kind", KINDS + ["dask"])
def test_more_blocks_than_entries_along_the_mode(client, kind, mode):
    value, M = _matrix("scipy" if kind == "dask" else kind, shape=(5, 3), seed=3)
    if kind == "dask":
        value = da.from_array(M.toarray(), chunks=(5, 3))
    v = np.arange(3.0)
    parts = ep.partition(value, mode=mode, blocks=8, client=client, name="A")
    assert len(parts.bounds) == M.shape[mode] and parts.bounds[-1][1] == M.shape[mode]
    np.testing.assert_allclose(_spmv()(A=parts, x=v), M @ v)
    row, R = _matrix("scipy" if kind == "dask" else kind, shape=(1, 3), seed=4)
    if kind == "dask":
        row = da.from_array(R.toarray(), chunks=(1, 3))
    one_row = ep.partition(row, mode=0, client=client)   # one block per worker: 2 > 1 row
    assert len(one_row.bounds) == 1
    np.testing.assert_allclose(_spmv()(A=one_row, x=v), R @ v)
