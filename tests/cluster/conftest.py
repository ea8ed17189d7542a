"""One real LocalCluster (2 worker processes, oxi's resources) shared by the cluster tests, and their data."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("distributed")


@pytest.fixture(scope="session")
def dask_cluster() -> Iterator[object]:
    from oxi_cli.batch.cluster import local_cluster

    # The workers inherit PYTHONPATH (oxi from this checkout); each batch names its backend (the CLI's
    # OXI_BACKEND=cpu in these tests), so nothing here changes the environment of the other tests.
    cluster = local_cluster(2, 256 << 20)
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def cluster(dask_cluster: object) -> Iterator[str]:
    """The scheduler's address, with both workers up (a test may have killed one: its nanny restarts it)."""
    from distributed import Client

    with Client(dask_cluster, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=60)
    yield dask_cluster.scheduler_address  # type: ignore[attr-defined]
