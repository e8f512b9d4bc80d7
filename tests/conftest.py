"""Test-wide settings, and the Dask cluster of the distributed tests."""

from __future__ import annotations

import os

import pytest

# As the tvrbench command does (tvrbench.cli.main): numba's sleeping thread pool, not OpenMP's spinning one.
os.environ.setdefault("NUMBA_THREADING_LAYER", "workqueue")


@pytest.fixture(scope="session")
def client():
    """A client of a real LocalCluster of 2 single-threaded worker processes on 127.0.0.1, for the session."""
    pytest.importorskip("distributed", reason="dask.distributed is not installed (pip install 'tvrbench[scale]')")
    from tvrbench.distributed import dask_client

    with dask_client(workers=2) as client:
        yield client
