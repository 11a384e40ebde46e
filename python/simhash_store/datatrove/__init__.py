"""datatrove pipeline steps: SimHash fingerprints, a filter against a persistent store, a
batch dedup of a whole dump, and loading the kept documents into the store.

- :class:`SimhashFingerprinter`: adds ``metadata["simhash"]`` (16 hex digits) to each
  :class:`~datatrove.data.Document`.
- :class:`SimhashIndexFilter`: drops documents within ``k`` of a document of an existing
  store (opened read-only, so any number of tasks share it), writing the matched stored
  ``simhash_match_id``, ``simhash_match_key`` and ``simhash_match_distance`` into the dropped
  document's metadata (what the ``exclusion_writer`` saves).
- The batch path, four stages as datatrove's MinHash dedup:
  :class:`SimhashDedupSignature` (fingerprints per task), :class:`SimhashDedupBuckets` (the
  pairs, one share of the crate's partition plan per task), :class:`SimhashDedupCluster`
  (connected components, one task) and :class:`SimhashDedupFilter` (keeps one document per
  cluster). Its drop list is ``simhash-store dedup``'s for the same documents loaded in
  (task, position) order: the kept document of a cluster is the first one read.
- :class:`SimhashStoreWriter` and :func:`load_into_store`: the kept documents' fingerprints,
  written per task, then bulk-loaded into the store, so that the next dump is checked
  against this one (the incremental loop of ``docs/scale-out.md``).

A document's batch-path id is ``rank << 40 | position``: its task's rank and its place in
that task's input. Needs the ``datatrove`` extra: ``pip install "simhash_store-*.whl[datatrove]"``
(the wheel of a release: simhash-store is not on PyPI), or ``pip install datatrove regex orjson``.
"""

from __future__ import annotations

import io
from typing import Any, Dict, Iterator, List, Optional, Tuple

try:
    from datatrove.data import Document, DocumentsPipeline
    from datatrove.io import DataFolderLike, get_datafolder
    from datatrove.pipeline.base import PipelineStep
    from datatrove.pipeline.filters.base_filter import BaseFilter
    from datatrove.pipeline.writers.disk_base import DiskWriter
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"simhash_store.datatrove needs datatrove ({e.name} is missing): "
        'pip install datatrove regex orjson (or the wheel with its datatrove extra: '
        'pip install "simhash_store-*.whl[datatrove]")'
    ) from e

import numpy as np

#: Bits of a batch-path id that hold the position within a task's input.
POSITION_BITS = 40

__all__ = [
    "SimhashDedupBuckets",
    "SimhashDedupCluster",
    "SimhashDedupFilter",
    "SimhashDedupSignature",
    "SimhashFingerprinter",
    "SimhashIndexFilter",
    "SimhashStoreWriter",
    "load_into_store",
]


def _fingerprint_of(doc: Document, hasher: Any) -> Optional[int]:
    """``metadata["simhash"]`` when a :class:`SimhashFingerprinter` set it, else the
    fingerprint of the text (None for a text without features)."""
    from .. import NoFeaturesError

    given = doc.metadata.get("simhash")
    if given is not None:
        return int(given, 16)
    try:
        return int(hasher.fingerprint(doc.text))
    except NoFeaturesError:
        return None


class SimhashFingerprinter(PipelineStep):
    """Adds ``metadata["simhash"]``, the 64-bit SimHash fingerprint of the text as 16 hex
    digits; a text without features (only stop words, punctuation) gets none. ``settings``
    are those of :class:`simhash_store.Simhasher` (defaults: the store's)."""

    name = "🔏 SimHash fingerprints"
    type = "🫂 - DEDUP"

    def __init__(self, **settings: Any) -> None:
        super().__init__()
        from .. import Simhasher

        self.hasher = Simhasher(**settings)

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        from .. import NoFeaturesError

        for doc in data or ():
            with self.track_time():
                try:
                    doc.metadata["simhash"] = f"{self.hasher.fingerprint(doc.text):016x}"
                except NoFeaturesError:
                    self.stat_update("no_features")
            self.stat_update("documents")
            yield doc


class SimhashIndexFilter(BaseFilter):
    """Drops the documents within ``k`` of a document of the store at ``store`` and keeps
    the rest. The store is opened read-only in each task (any number share it, beside a
    writer too) and fingerprints with its own settings; a document's
    ``metadata["simhash"]`` is used when present. A dropped document gets
    ``simhash_match_id``, ``simhash_match_key`` and ``simhash_match_distance`` (the nearest
    stored document, lowest id on ties) in its metadata, and reason ``simhash_near_duplicate``.

    ``verified=True`` asks the store's MinHash sketches too (a store made with
    ``sketch="MinHash"``): a document is dropped only if its estimated Jaccard similarity
    with a match within ``k`` is at least ``min_similarity``; ``simhash_match_similarity``
    is added.
    """

    name = "🔎 SimHash index filter"

    def __init__(
        self,
        store: str,
        k: int = 3,
        verified: bool = False,
        exclusion_writer: Optional[DiskWriter] = None,
        batch_size: int = 1000,
        min_similarity: float = 0.75,
    ) -> None:
        super().__init__(exclusion_writer, batch_size)
        from .._scaleout import check_k

        self.store_path = str(store)
        self.k = check_k(k)
        self.verified = bool(verified)
        self.min_similarity = float(min_similarity)
        self._store: Any = None

    def _open(self) -> Any:
        if self._store is None:
            from .. import Store

            self._store = Store.open(self.store_path, read_only=True)
        return self._store

    def __getstate__(self) -> Dict[str, Any]:
        state = self.__dict__.copy()
        state["_store"] = None
        return state

    def filter(self, doc: Document) -> bool | Tuple[bool, str]:
        return self.filter_batch([doc])[0]

    def filter_batch(self, batch: List[Document]) -> List[bool | Tuple[bool, str]]:
        store = self._open()
        if self.verified:
            return [self._verdict(doc, self._verified(store, doc)) for doc in batch]
        hasher = store.simhasher
        fps = [_fingerprint_of(doc, hasher) for doc in batch]
        have = [i for i, fp in enumerate(fps) if fp is not None]
        found = store.query_many(np.array([fps[i] for i in have], dtype=np.uint64), self.k) if have else []
        matches: List[Any] = [None] * len(batch)
        for i, m in zip(have, found):
            matches[i] = (m[0], None) if m else None
        return [self._verdict(doc, match) for doc, match in zip(batch, matches)]

    def _verified(self, store: Any, doc: Document) -> Any:
        from .. import NoFeaturesError

        try:
            found = store.query_text_verified(doc.text, self.k, self.min_similarity)
        except NoFeaturesError:
            return None
        return found[0] if found else None

    def _verdict(self, doc: Document, match: Any) -> bool | Tuple[bool, str]:
        if match is None:
            return True
        m, similarity = match
        doc.metadata["simhash_match_id"] = m.id
        doc.metadata["simhash_match_key"] = m.key
        doc.metadata["simhash_match_distance"] = m.distance
        if similarity is not None:
            doc.metadata["simhash_match_similarity"] = similarity
        return False, "simhash_near_duplicate"


def _write_array(folder: Any, name: str, arrays: Dict[str, np.ndarray]) -> None:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    with folder.open(name, "wb") as f:
        f.write(buf.getvalue())


def _read_array(folder: Any, name: str) -> Dict[str, np.ndarray]:
    with folder.open(name, "rb") as f:
        data = np.load(io.BytesIO(f.read()))
        return {k: data[k] for k in data.files}


class SimhashDedupSignature(PipelineStep):
    """Batch path, stage 1 (as many tasks as the input has shards): the fingerprint of each
    document (``metadata["simhash"]`` when set) and its position, to
    ``output_folder/RANK.sig.npz``."""

    name = "🔏 SimHash signatures"
    type = "🫂 - DEDUP"

    def __init__(self, output_folder: DataFolderLike, **settings: Any) -> None:
        super().__init__()
        from .. import Simhasher

        self.output_folder = get_datafolder(output_folder)
        self.hasher = Simhasher(**settings)

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        positions: List[int] = []
        fps: List[int] = []
        for position, doc in enumerate(data or ()):
            with self.track_time():
                fp = _fingerprint_of(doc, self.hasher)
            if fp is not None:
                positions.append(position)
                fps.append(fp)
            self.stat_update("documents")
        ids = (np.uint64(rank) << np.uint64(POSITION_BITS)) | np.array(positions, dtype=np.uint64)
        _write_array(
            self.output_folder, f"{rank:05d}.sig.npz",
            {"id": ids.astype(np.int64), "fingerprint": np.array(fps, dtype=np.uint64)},
        )
        return
        yield  # a generator that yields nothing: the documents stop here


class SimhashDedupBuckets(PipelineStep):
    """Batch path, stage 2 (any number of tasks): every pair within ``k`` of the signatures,
    task ``rank`` doing its share of the crate's partition plan (the pair stage of the Spark
    and Ray jobs), to ``output_folder/RANK.pairs.npz``. Each task reads all signatures."""

    name = "🪣 SimHash buckets"
    type = "🫂 - DEDUP"

    def __init__(
        self, input_folder: DataFolderLike, output_folder: DataFolderLike, k: int = 3, chunk_size: int = 20_000
    ) -> None:
        super().__init__()
        from .._scaleout import check_k

        self.input_folder = get_datafolder(input_folder)
        self.output_folder = get_datafolder(output_folder)
        self.k = check_k(k)
        self.chunk_size = int(chunk_size)

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        from .._native import PartitionPlan, group_counts, task_pairs
        from .._scaleout import partition_of

        ids, fps = _all_signatures(self.input_folder)
        plan = PartitionPlan(group_counts(fps), self.k, self.chunk_size)
        mine: Dict[str, List[np.ndarray]] = {c: [] for c in ("task", "side", "fingerprint", "id")}
        for lo in range(0, len(ids), 1 << 20):
            task, side, fp, id_ = plan.explode(ids[lo : lo + (1 << 20)], fps[lo : lo + (1 << 20)])
            keep = partition_of(task, world_size) == rank
            for c, v in zip(mine, (task, side, fp, id_)):
                mine[c].append(v[keep])
        cols = {c: np.concatenate(v) if v else np.zeros(0, np.int64) for c, v in mine.items()}
        order = np.argsort(cols["task"], kind="stable")
        with self.track_time():
            found = task_pairs(
                cols["task"][order],
                cols["side"][order].astype(np.uint8),
                cols["fingerprint"][order].astype(np.uint64),
                cols["id"][order].astype(np.int64),
                self.k,
                True,
            )
        self.stat_update("pairs", value=len(found["a"]))
        _write_array(self.output_folder, f"{rank:05d}.pairs.npz", {"a": found["a"], "b": found["b"]})
        return
        yield


def _all_signatures(folder: Any) -> Tuple[np.ndarray, np.ndarray]:
    ids, fps = [], []
    for name in sorted(folder.list_files(glob_pattern="*.sig.npz")):
        sig = _read_array(folder, name)
        ids.append(sig["id"])
        fps.append(sig["fingerprint"])
    if not ids:
        return np.zeros(0, np.int64), np.zeros(0, np.uint64)
    return np.concatenate(ids).astype(np.int64), np.concatenate(fps).astype(np.uint64)


class SimhashDedupCluster(PipelineStep):
    """Batch path, stage 3 (one task): the connected components of the pairs, by the crate's
    union-find; every member but the lowest id (the first document read) is to be removed,
    listed per input task in ``output_folder/RANK.remove.npz`` with its representative."""

    name = "🔗 SimHash clusters"
    type = "🫂 - DEDUP"

    def __init__(self, input_folder: DataFolderLike, output_folder: DataFolderLike) -> None:
        super().__init__()
        self.input_folder = get_datafolder(input_folder)
        self.output_folder = get_datafolder(output_folder)

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        from .._components import components, representatives

        if world_size != 1:
            raise ValueError("SimhashDedupCluster runs as one task (tasks=1)")
        a, b = [], []
        for name in sorted(self.input_folder.list_files(glob_pattern="*.pairs.npz")):
            p = _read_array(self.input_folder, name)
            a.append(p["a"])
            b.append(p["b"])
        a_all = np.concatenate(a).astype(np.int64) if a else np.zeros(0, np.int64)
        b_all = np.concatenate(b).astype(np.int64) if b else np.zeros(0, np.int64)
        ids, clusters = components(a_all, b_all)
        reps, keep = representatives(ids, clusters, "lowest-id")
        drop = ~keep
        ids, reps = ids[drop], reps[drop]
        source = ids >> POSITION_BITS
        self.stat_update("to_remove", value=int(drop.sum()))
        for r in np.unique(source):
            at = source == r
            _write_array(
                self.output_folder, f"{int(r):05d}.remove.npz",
                {"position": ids[at] & ((1 << POSITION_BITS) - 1), "representative": reps[at]},
            )
        return
        yield


class SimhashDedupFilter(BaseFilter):
    """Batch path, stage 4 (the tasks of stage 1, over the same input): drops the documents
    :class:`SimhashDedupCluster` listed for this task, with ``simhash_duplicate_of`` (the
    batch-path id of the kept member) in their metadata, and keeps the rest."""

    name = "🫂 SimHash dedup filter"

    def __init__(self, input_folder: DataFolderLike, exclusion_writer: Optional[DiskWriter] = None) -> None:
        super().__init__(exclusion_writer)
        self.input_folder = get_datafolder(input_folder)
        self._remove: Dict[int, int] = {}
        self._position = 0

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        name = f"{rank:05d}.remove.npz"
        self._remove = {}
        if self.input_folder.exists(name):
            r = _read_array(self.input_folder, name)
            self._remove = dict(zip(r["position"].tolist(), r["representative"].tolist()))
        self._position = 0
        yield from super().run(data, rank, world_size)

    def filter(self, doc: Document) -> bool | Tuple[bool, str]:
        position = self._position
        self._position += 1
        rep = self._remove.get(position)
        if rep is None:
            return True
        doc.metadata["simhash_duplicate_of"] = int(rep)
        return False, "simhash_duplicate"


class SimhashStoreWriter(PipelineStep):
    """Writes ``(key, fingerprint)`` of each document (``key`` is ``Document.id``) to
    ``output_folder/RANK.fps.npz`` and passes the documents on: put it after a filter, then
    :func:`load_into_store` the folder, so the next dump is checked against the kept ones."""

    name = "💾 SimHash store writer"
    type = "🫂 - DEDUP"

    def __init__(self, output_folder: DataFolderLike, **settings: Any) -> None:
        super().__init__()
        from .. import Simhasher

        self.output_folder = get_datafolder(output_folder)
        self.hasher = Simhasher(**settings)

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        keys: List[str] = []
        fps: List[int] = []
        for doc in data or ():
            fp = _fingerprint_of(doc, self.hasher)
            if fp is not None:
                keys.append(str(doc.id))
                fps.append(fp)
            yield doc
        _write_array(
            self.output_folder, f"{rank:05d}.fps.npz",
            {"key": np.array(keys, dtype=object).astype(str), "fingerprint": np.array(fps, dtype=np.uint64)},
        )


def load_into_store(folder: DataFolderLike, store: str, **settings: Any) -> Any:
    """Bulk-loads what :class:`SimhashStoreWriter` wrote in ``folder`` into the store at
    ``store`` (created if missing, with ``settings``), with ids from the store's
    ``next_id()`` on and ``Document.id`` as the key. Returns the bulk loader's summary."""
    from .. import Store

    data = get_datafolder(folder)
    keys: List[np.ndarray] = []
    fps: List[np.ndarray] = []
    for name in sorted(data.list_files(glob_pattern="*.fps.npz")):
        part = _read_array(data, name)
        keys.append(part["key"])
        fps.append(part["fingerprint"])
    all_keys = np.concatenate(keys) if keys else np.zeros(0, dtype=str)
    all_fps = np.concatenate(fps).astype(np.uint64) if fps else np.zeros(0, np.uint64)
    with Store.open(str(store), **settings) as s:
        first = s.next_id()
        ids = np.arange(first, first + len(all_fps), dtype=np.uint64)
        return s.bulk_load_fingerprints(ids, all_fps, [str(k) for k in all_keys])
