"""`simhash_store.spark.fingerprints`, `read_warc` and `load-parquet` on a real Spark cluster:
fingerprints equal `Simhasher().fingerprint` (as signed longs), WARC/WET files read through
the crate's readers one task per file, and a Spark result loaded into a store with one
command."""

from __future__ import annotations

import gzip
import subprocess
import sys

import numpy as np
import pytest

import simhash_store
from simhash_store import Simhasher, to_signed, to_unsigned
from spark_cluster import cluster

TEXTS = [
    "SimHash gives similar texts fingerprints that differ in only a few bits.",
    "SimHash gives similar texts fingerprints that differ in only a few bits. Share this.",
    "结巴中文分词：做最好的 Python 中文分词组件，支持繁体分词和自定义词典。",
    None,
    "",
    " , . ; ",
    "the and of",
    "Ein deutscher Satz über Speicher-Engines und Fingerabdrücke " * 40,
]


@pytest.fixture(scope="module")
def spark():
    return cluster()


def expected(hasher: Simhasher, text):
    if text is None:
        return None
    try:
        return to_signed(hasher.fingerprint(text))
    except simhash_store.NoFeaturesError:
        return None


@pytest.mark.parametrize("settings", [{}, {"seed": 7, "word_shingles": 2}])
def test_fingerprints_equal_the_simhasher(spark, settings):
    from simhash_store.spark import fingerprints

    rows = [(i, t) for i, t in enumerate(TEXTS * 50)]
    df = spark.createDataFrame(rows, "id long, text string").repartition(3)
    got = {r.id: r.fingerprint for r in fingerprints(df, **settings).collect()}
    hasher = Simhasher(**settings)
    want = {i: expected(hasher, t) for i, t in rows}
    assert got == want
    assert sum(v is None for v in want.values()) >= 3 * 50
    # Fingerprints with the top bit set come out negative, and equal all the same.
    assert any(v is not None and v < 0 for v in want.values())


def test_fingerprints_of_a_sliced_column_and_other_names(spark):
    from simhash_store.spark import fingerprints

    df = spark.createDataFrame([(t,) for t in TEXTS], "body string").where("body is not null")
    out = fingerprints(df, text_col="body", out_col="fp").collect()
    hasher = Simhasher()
    assert [r.fp for r in out] == [expected(hasher, r.body) for r in out]
    assert [f.name for f in fingerprints(df, text_col="body", out_col="fp").schema.fields] == [
        "body",
        "fp",
    ]


def test_fingerprints_refuses_bad_input(spark):
    from simhash_store.spark import fingerprints

    df = spark.createDataFrame([(1, "x")], "id long, text string")
    with pytest.raises(ValueError, match="has no column 'body'"):
        fingerprints(df, text_col="body")
    with pytest.raises(TypeError, match="column 'id' of the DataFrame must be a string"):
        fingerprints(df, text_col="id")
    with pytest.raises(ValueError, match="already has a column 'id'"):
        fingerprints(df, out_col="id")
    with pytest.raises(TypeError, match='unknown fingerprint setting "no_such_setting"'):
        fingerprints(df, no_such_setting=1)


def warc_record(kind: str, uri: str, content_type: str, payload: bytes) -> bytes:
    head = (
        "WARC/1.0\r\n"
        f"WARC-Type: {kind}\r\n"
        f"WARC-Target-URI: {uri}\r\n"
        "WARC-Date: 2024-01-01T00:00:00Z\r\n"
        f"Content-Type: {content_type}\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    ).encode()
    return head + payload + b"\r\n\r\n"


def http(status: str, content_type: str, body: bytes) -> bytes:
    return f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n\r\n".encode() + body


PAGE_A = "<html><body><nav>Home | About</nav><p>Storage engines keep sorted keys on disk.</p></body></html>"
PAGE_B = "<html><body><p>第二个页面：中文分词与近似重复检测。</p></body></html>"


def test_read_warc_one_task_per_file(spark, tmp_path):
    from simhash_store.spark import fingerprints, read_warc

    response = "application/http; msgtype=response"
    plain = tmp_path / "a.warc"
    plain.write_bytes(
        warc_record("warcinfo", "", "application/warc-fields", b"software: test\r\n")
        + warc_record("response", "https://example.com/a", response, http("200 OK", "text/html", PAGE_A.encode()))
        + warc_record("response", "https://example.com/moved", response, http("301 Moved", "text/html", b""))
        + warc_record("response", "https://example.com/b", response,
                      http("200 OK", "text/html; charset=gbk", PAGE_B.encode("gbk")))
    )
    wet = tmp_path / "b.warc.wet.gz"
    with gzip.open(wet, "wb") as f:
        f.write(warc_record("conversion", "https://example.com/c", "text/plain",
                            "Plain text of a third page about near-duplicates.".encode()))
        f.write(warc_record("conversion", "https://example.com/d", "text/plain",
                            "A fourth page, in the same gzip member.".encode()))

    df = read_warc(spark, [str(plain), str(tmp_path / "*.gz")])
    assert df.rdd.getNumPartitions() == 2
    assert df.columns == ["url", "text", "text_len", "path", "position"]
    rows = sorted(df.collect(), key=lambda r: r.url)
    assert [r.url for r in rows] == [f"https://example.com/{x}" for x in "abcd"]
    by_url = {r.url: r for r in rows}
    assert "Storage engines keep sorted keys on disk." in by_url["https://example.com/a"].text
    assert "Home | About" not in by_url["https://example.com/a"].text
    assert "中文分词与近似重复检测" in by_url["https://example.com/b"].text
    assert by_url["https://example.com/c"].text == "Plain text of a third page about near-duplicates."
    for r in rows:
        assert r.text_len == len(r.text.encode())
    assert {r.path for r in rows} == {str(plain), str(wet)}
    assert by_url["https://example.com/a"].position > 0
    # What the store's reader gives for the same file, fingerprinted.
    fps = fingerprints(df).collect()
    hasher = Simhasher()
    assert all(r.fingerprint == expected(hasher, r.text) for r in fps)

    with pytest.raises(FileNotFoundError, match="no file matches"):
        read_warc(spark, str(tmp_path / "*.nothing"))


def test_load_parquet_command(spark, tmp_path):
    from pyspark.sql import functions as F

    rng = np.random.default_rng(3)
    fps = rng.integers(0, 2**64, size=5000, dtype=np.uint64)
    rows = [(i * 3, f"https://example.com/{i}", int(to_signed(int(f)))) for i, f in enumerate(fps)]
    rows.append((999_999, "https://example.com/none", None))
    df = spark.createDataFrame(rows, "id long, key string, fingerprint long")
    out = tmp_path / "out"
    df.repartition(4).withColumn("extra", F.lit(1)).write.parquet(str(out))
    store_dir = tmp_path / "store"
    done = subprocess.run(
        [sys.executable, "-m", "simhash_store.spark", "load-parquet", str(out), "--store", str(store_dir)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "loaded 5000 documents" in done.stdout
    with simhash_store.Store.open(store_dir) as store:
        assert len(store) == 5000
        for i in (0, 17, 4999):
            assert store.get(i * 3) == int(fps[i])
            assert store.id_for_key(f"https://example.com/{i}") == i * 3
        assert 999_999 not in store
        assert to_unsigned(rows[5][2]) == int(fps[5])

    missing = subprocess.run(
        [sys.executable, "-m", "simhash_store.spark", "load-parquet", str(out), "--store",
         str(tmp_path / "s2"), "--fingerprint-col", "fp"],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 1
    assert "has no column 'fp'" in missing.stderr
