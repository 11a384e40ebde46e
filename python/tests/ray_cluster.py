"""The Ray cluster of the Ray tests: a real local one, a head node and a second node (two
raylets, one CPU and one worker process each), started with `ray.cluster_utils.Cluster`,
whose workers run this interpreter so that they import the installed `simhash_store`.

One per pytest process, shared by the test modules, shut down at exit. Skips when ray or
pyarrow is missing. `SIMHASH_STORE_RAY_TEST_FAIL_ONCE` is set for every worker to a path
that `test_ray_dedup.py` arms to make one pair task fail once."""

from __future__ import annotations

import atexit
import os
import tempfile
from typing import Any, Optional

import pytest

_CLUSTER: Optional[Any] = None
FAIL_ONCE = os.path.join(tempfile.mkdtemp(prefix="simhash-ray-"), "fail-once")


def cluster() -> Any:
    global _CLUSTER
    if _CLUSTER is not None:
        return _CLUSTER
    pytest.importorskip("pyarrow")
    pytest.importorskip("ray.data")
    import ray
    from ray.cluster_utils import Cluster

    os.environ["SIMHASH_STORE_RAY_TEST_FAIL_ONCE"] = FAIL_ONCE
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    memory = 256 * 1024 * 1024
    c = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "object_store_memory": memory, "include_dashboard": False},
    )
    c.add_node(num_cpus=1, object_store_memory=memory)
    ray.init(address=c.address, logging_level="ERROR", log_to_driver=False)
    c.wait_for_nodes()
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    _CLUSTER = c
    atexit.register(_stop)
    return c


def _stop() -> None:
    global _CLUSTER
    if _CLUSTER is None:
        return
    import ray

    ray.shutdown()
    _CLUSTER.shutdown()
    _CLUSTER = None
