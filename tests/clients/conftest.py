"""Real clients of strided (issue 27, item 4): each module is skipped only where its client
is not installed.  The Dask cluster starts once per test run (``dask_client``)."""

import pytest


@pytest.fixture(scope="session")
def dask_client():
    """A LocalCluster of two worker processes on 127.0.0.1, no dashboard, for the whole run."""
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("dask.array")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        yield client
