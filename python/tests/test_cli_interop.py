"""The Python package and the `simhash-store` command read each other's stores and give
the same fingerprints for the same text."""

from __future__ import annotations

import json
import subprocess

import simhash_store

TEXTS = {
    "https://example.com/zh": "北京时间今天上午，国家统计局发布了最新的经济数据，显示工业生产继续回升，消费市场保持稳定。",
    "https://example.com/en": "The city council approved the new budget on Tuesday after a long debate about road repairs and school funding.",
    "https://example.com/mixed": "Rust 语言的所有权系统 prevents data races at compile time，这是它最受欢迎的特性之一。",
    "https://example.com/boiler": "A short report on river levels after the storm.\nShare on Facebook\nAll rights reserved ©2024",
}


def run(cli, *args: str) -> str:
    out = subprocess.run([str(cli), *args], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_fingerprints_equal_the_command(cli, tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"key": k, "text": t}, ensure_ascii=False) + "\n" for k, t in TEXTS.items()))
    lines = [json.loads(l) for l in run(cli, "fingerprint", str(docs)).splitlines()]
    assert len(lines) == len(TEXTS)
    hasher = simhash_store.Simhasher()
    for line in lines:
        assert int(line["fingerprint"], 16) == hasher.fingerprint(TEXTS[line["key"]]), line["key"]
    batch = hasher.fingerprint_many(list(TEXTS.values()))
    assert [int(x) for x in batch] == [hasher.fingerprint(t) for t in TEXTS.values()]


def test_store_written_by_the_command_is_read_from_python(cli, tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"key": k, "text": t}, ensure_ascii=False) + "\n" for k, t in TEXTS.items()))
    path = tmp_path / "cli.db"
    run(cli, "load", str(docs), "--store", str(path), "--quiet")
    with simhash_store.Store.open(path, read_only=True) as store:
        assert len(store) == len(TEXTS)
        assert store.verify().is_clean
        for key, text in TEXTS.items():
            doc_id = store.id_for_key(key)
            assert doc_id is not None
            assert store.get(doc_id) == store.simhasher.fingerprint(text)
            found = store.query_text(text, k=0)
            assert [m.key for m in found] == [key]


def test_store_written_by_python_is_read_by_the_command(cli, tmp_path):
    path = tmp_path / "py.db"
    with simhash_store.Store.open(path) as store:
        fps = {}
        for i, (key, text) in enumerate(TEXTS.items()):
            fps[key] = store.insert_text(i + 1, text, key=key)
        store.insert(99, 0x0123_4567_89AB_CDEF, key="raw")
    assert "clean" in run(cli, "verify", "--store", str(path))
    exported = [json.loads(l) for l in run(cli, "export", "--store", str(path)).splitlines()][1:]  # after the header
    assert {e["key"]: int(e["fingerprint"], 16) for e in exported} == {**fps, "raw": 0x0123_4567_89AB_CDEF}
    out = json.loads(run(cli, "query", "--store", str(path), "--fingerprint", "0123456789abcdef", "-k", "0", "--json"))
    assert [m["id"] for m in out["matches"]] == [99]
