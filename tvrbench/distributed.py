"""Running the heavy jobs on a Dask cluster (``dask.distributed``): nothing scheduled by hand.

A job is split into pure tasks (a chunk of captions in, its records out) whose results depend only
on their input, so the cluster may run them anywhere, retry one whose worker died, and a rerun
after any interruption computes only what is missing. ``--workers N`` starts a ``LocalCluster`` of
N processes on 127.0.0.1; ``--scheduler ADDRESS`` joins a running cluster (SLURM through
dask-jobqueue, Kubernetes through the Dask operator: docs/scaling.md); neither runs in-process.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections.abc import Iterator

from tvrbench.errors import InputError, MissingResource

CONNECT_TIMEOUT = "10s"
# The two options of every command that runs on Dask.
WORKERS_HELP = "Run the tasks on a local Dask cluster of N worker processes (docs/scaling.md)."
SCHEDULER_HELP = "Run the tasks on the Dask cluster at ADDRESS (tcp://host:8786)."


@contextlib.contextmanager
def dask_client(workers: int | None = None, scheduler: str | None = None) -> Iterator[object | None]:
    """A ``dask.distributed.Client`` for the run, or None to run in this process.

    Workers are single-threaded processes (Dask also sets ``OMP_NUM_THREADS=1`` in them), so PyTorch
    and BLAS in one worker do not compete with the next. The dashboard address goes to stderr.
    """
    if workers is None and scheduler is None:
        yield None
        return
    if workers is not None and scheduler is not None:
        raise InputError("--workers/--scheduler", "give one: --workers starts a local cluster, --scheduler joins one")
    if workers is not None and workers < 1:
        raise InputError("--workers", f"needs at least 1 worker, got {workers}")
    if importlib.util.find_spec("distributed") is None:
        raise MissingResource("dask.distributed", "pip install 'tvrbench[scale]'")
    from dask.distributed import Client, LocalCluster

    with contextlib.ExitStack() as stack:
        if scheduler is not None:
            try:
                client = stack.enter_context(Client(scheduler, timeout=CONNECT_TIMEOUT))
            except (OSError, TimeoutError, ValueError) as error:
                raise InputError(scheduler, f"no Dask scheduler answers there ({type(error).__name__})") from None
        else:
            cluster = stack.enter_context(
                LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None)
            )
            client = stack.enter_context(Client(cluster))
        info = client.scheduler_info()
        dashboard = f", dashboard {client.dashboard_link}" if "dashboard" in info.get("services", {}) else ""
        print(f"dask: {len(info['workers'])} workers, scheduler {client.scheduler.address}{dashboard}", file=sys.stderr)
        yield client


def on_one_thread(function, *args):
    """``function(*args)`` as a Dask task, numba on one thread: the cluster's workers are the
    parallelism (a numba kernel would otherwise start a thread per core in every worker process)."""
    import numba

    numba.set_num_threads(1)
    return function(*args)
