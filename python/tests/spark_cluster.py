"""The Spark cluster of the Spark tests: a real one, `local-cluster[2,1,1024]` (a master
and two worker JVMs with one core and 1 GiB each, started by the driver), whose Python
workers run this interpreter so that they import the installed `simhash_store`.

One per pytest process, shared by the test modules (`spark` fixture of
`test_spark_*.py`), stopped at exit. Skips when pyspark, pyarrow or Java is missing."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
from typing import Any, Optional

import pytest

_SPARK: Optional[Any] = None


def cluster() -> Any:
    global _SPARK
    if _SPARK is not None:
        return _SPARK
    pytest.importorskip("pyarrow")
    pytest.importorskip("pyspark")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Java is not installed (apt-get install -y openjdk-17-jre-headless)")
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master("local-cluster[2,1,1024]")
        .appName("simhash-store-tests")
        .config("spark.pyspark.python", sys.executable)
        .config("spark.driver.memory", "1g")
        .config("spark.executor.memory", "900m")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.default.parallelism", "4")
        .config("spark.task.maxFailures", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    _SPARK = spark
    atexit.register(_stop)
    return spark


def _stop() -> None:
    """Stops Spark and removes the executors' work folder (local-cluster writes it
    under $SPARK_HOME/work/<application id>)."""
    global _SPARK
    if _SPARK is None:
        return
    app = _SPARK.sparkContext.applicationId
    _SPARK.stop()
    _SPARK = None
    import pyspark

    home = os.environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__)
    shutil.rmtree(os.path.join(home, "work", app), ignore_errors=True)
