"""`simhash_store.datatrove` in datatrove pipelines run by its local executor with several
tasks: the index filter against a store, checked against `Store.query` for every document;
the batch path, whose drop list equals that of `simhash-store dedup` on the same
documents; and the incremental loop (load the kept documents, check the next dump)."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Dict, List

import pytest

import simhash_store

pytest.importorskip("datatrove")

WORDS = (
    "storage engine compaction level file block cache index filter bloom write ahead log "
    "memtable flush sequence number snapshot iterator merge operator column family key value "
    "range delete tombstone checksum footer table reader builder options tuning latency"
).split()


def text(rng: random.Random, n: int = 60) -> str:
    return " ".join(rng.choice(WORDS) + str(rng.randrange(40)) for _ in range(n))


def edit(rng: random.Random, t: str, changes: int) -> str:
    words = t.split()
    for _ in range(changes):
        words[rng.randrange(len(words))] = rng.choice(WORDS) + str(rng.randrange(40))
    return " ".join(words)


def write_jsonl(folder: Path, shards: List[List[Dict[str, str]]]) -> None:
    folder.mkdir(parents=True)
    for i, docs in enumerate(shards):
        with open(folder / f"part-{i:02d}.jsonl", "w") as f:
            for d in docs:
                f.write(json.dumps(d) + "\n")


def read_jsonl(folder: Path) -> List[dict]:
    out = []
    for path in sorted(folder.glob("*.jsonl*")):
        import gzip

        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as f:
            out.extend(json.loads(l) for l in f)
    return out


def corpus(seed: int, n: int, stored: List[str]) -> List[Dict[str, str]]:
    """`n` documents: new ones, near and exact copies of each other and of `stored`."""
    rng = random.Random(seed)
    docs: List[Dict[str, str]] = []
    for i in range(n):
        roll = rng.random()
        if roll < 0.25 and stored:
            t = edit(rng, rng.choice(stored), rng.choice([0, 1, 2]))
        elif roll < 0.5 and docs:
            t = edit(rng, rng.choice(docs)["text"], rng.choice([0, 1, 3]))
        elif roll < 0.53:
            t = "the and of"  # no features
        else:
            t = text(rng)
        docs.append({"id": f"s{seed}-{i}", "text": t})
    return docs


def run(pipeline, tasks: int, logs: Path) -> None:
    from datatrove.executor import LocalPipelineExecutor

    LocalPipelineExecutor(pipeline=pipeline, tasks=tasks, workers=2, logging_dir=str(logs)).run()


def test_index_filter_equals_store_query(tmp_path):
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter

    from simhash_store.datatrove import SimhashFingerprinter, SimhashIndexFilter

    rng = random.Random(1)
    stored = [text(rng) for _ in range(300)]
    store_path = tmp_path / "index.db"
    with simhash_store.Store.open(store_path) as store:
        for i, t in enumerate(stored):
            store.insert_text(i, t, key=f"old-{i}")
    docs = corpus(2, 600, stored)
    write_jsonl(tmp_path / "in", [docs[i::3] for i in range(3)])
    run(
        [
            JsonlReader(str(tmp_path / "in")),
            SimhashFingerprinter(),
            SimhashIndexFilter(str(store_path), k=3, exclusion_writer=JsonlWriter(str(tmp_path / "dropped")), batch_size=64),
            JsonlWriter(str(tmp_path / "kept")),
        ],
        tasks=3,
        logs=tmp_path / "logs",
    )
    kept = {d["id"] for d in read_jsonl(tmp_path / "kept")}
    dropped = {d["id"]: d["metadata"] for d in read_jsonl(tmp_path / "dropped")}
    assert len(kept) + len(dropped) == len(docs) and not kept & dropped.keys()
    assert dropped and kept
    with simhash_store.Store.open(store_path, read_only=True) as store:
        for d in docs:
            try:
                found = store.query_text(d["text"], k=3)
            except simhash_store.NoFeaturesError:
                found = []
            if found:
                meta = dropped[d["id"]]
                assert meta["simhash_match_id"] == found[0].id
                assert meta["simhash_match_key"] == found[0].key
                assert meta["simhash_match_distance"] == found[0].distance
            else:
                assert d["id"] in kept


def test_batch_path_equals_the_dedup_command_and_the_incremental_loop(tmp_path, cli):
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter

    from simhash_store.datatrove import (
        SimhashDedupBuckets,
        SimhashDedupCluster,
        SimhashDedupFilter,
        SimhashDedupSignature,
        SimhashIndexFilter,
        SimhashStoreWriter,
        load_into_store,
    )

    docs = corpus(3, 900, [])
    shards = [docs[i * 300 : (i + 1) * 300] for i in range(3)]
    write_jsonl(tmp_path / "in", shards)
    work = tmp_path / "work"
    reader = lambda: JsonlReader(str(tmp_path / "in"))  # noqa: E731
    run([reader(), SimhashDedupSignature(str(work / "sigs"))], 3, tmp_path / "l1")
    run([SimhashDedupBuckets(str(work / "sigs"), str(work / "pairs"), k=3, chunk_size=50)], 2, tmp_path / "l2")
    run([SimhashDedupCluster(str(work / "pairs"), str(work / "remove"))], 1, tmp_path / "l3")
    run(
        [
            reader(),
            SimhashDedupFilter(str(work / "remove"), exclusion_writer=JsonlWriter(str(tmp_path / "dropped"))),
            SimhashStoreWriter(str(work / "kept-fps")),
            JsonlWriter(str(tmp_path / "kept")),
        ],
        3,
        tmp_path / "l4",
    )
    dropped = {d["id"] for d in read_jsonl(tmp_path / "dropped")}

    # `simhash-store dedup` on the same files: the command numbers the documents in reading
    # order (files by name, lines in order; they have no integer id field), the order of
    # datatrove's ids (task, position), so both keep the same member of each cluster.
    command = [str(cli), "load", str(tmp_path / "in"), "--store", str(tmp_path / "all.db"),
               "--id-field", "no-such-field", "--key-field", "id", "--quiet"]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    command = [str(cli), "dedup", "--store", str(tmp_path / "all.db"), "-k", "3",
               "--out", str(tmp_path / "cli-dedup"), "--quiet"]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "cli-dedup" / "drop.jsonl") as f:
        want = {json.loads(line)["key"] for line in f}
    assert want and dropped == want

    # The incremental loop: the kept documents go into the store, the next dump is checked
    # against it, and every document of the next dump near a kept one is dropped.
    index = tmp_path / "index.db"
    summary = load_into_store(str(work / "kept-fps"), str(index))
    assert summary is not None
    kept = read_jsonl(tmp_path / "kept")
    with simhash_store.Store.open(index, read_only=True) as store:
        assert len(store) == sum(1 for d in kept if d["text"] != "the and of")
    nxt = corpus(4, 200, [d["text"] for d in kept])
    write_jsonl(tmp_path / "next", [nxt[:100], nxt[100:]])
    run(
        [
            JsonlReader(str(tmp_path / "next")),
            SimhashIndexFilter(str(index), k=3, exclusion_writer=JsonlWriter(str(tmp_path / "next-dropped"))),
            JsonlWriter(str(tmp_path / "next-kept")),
        ],
        2,
        tmp_path / "l5",
    )
    next_dropped = {d["id"]: d["metadata"] for d in read_jsonl(tmp_path / "next-dropped")}
    assert next_dropped
    kept_ids = {d["id"] for d in kept}
    assert all(m["simhash_match_key"] in kept_ids for m in next_dropped.values())
