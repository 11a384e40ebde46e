"""`simhash_store.ray` mirrors `simhash_store.spark` name for name: the same public
functions and classes, the same parameters (Spark's session argument aside), and results
with the same public attributes."""

from __future__ import annotations

import inspect

import simhash_store.ray as ssr
import simhash_store.spark as sss


def public(obj) -> set:
    return {n for n in dir(obj) if not n.startswith("_")}


def test_the_same_public_names():
    assert sorted(ssr.__all__) == sorted(sss.__all__)
    for name in sss.__all__:
        assert hasattr(ssr, name), name


def test_the_same_parameters():
    for name in ("dedup", "dedup_against", "fingerprints", "load_parquet", "read_warc"):
        # A DataFrame is `df`, a Dataset `ds`.
        spark = [p.replace("df", "ds") for p in inspect.signature(getattr(sss, name)).parameters]
        ray = list(inspect.signature(getattr(ssr, name)).parameters)
        if name == "read_warc":
            spark = spark[1:]  # the SparkSession
        assert ray == spark, name


def test_results_have_the_same_attributes():
    assert public(ssr.DedupResult) == public(sss.DedupResult)
    assert ssr.PairStats is sss.PairStats


def test_the_same_load_parquet_command():
    from simhash_store.ray.__main__ import main as ray_main
    from simhash_store.spark.__main__ import main as spark_main

    assert inspect.signature(ray_main) == inspect.signature(spark_main)
