"""The cluster the distributed tests share: a LocalCluster of two single-threaded
worker processes on loopback, with nannies (a killed worker is restarted), one per
test module."""
import pytest

distributed = pytest.importorskip("dask.distributed")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        yield c
