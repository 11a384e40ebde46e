"""``load_parquet``: a Spark result (Parquet) into a store."""

from __future__ import annotations

import os
from typing import Any, Optional, Union


def load_parquet(
    path: Union[str, "os.PathLike[str]"],
    store: Any,
    *,
    id_col: str = "id",
    fingerprint_col: str = "fingerprint",
    key_col: Optional[str] = "key",
    batch_rows: int = 4_000_000,
    progress: bool = False,
) -> int:
    """Loads the Parquet files under ``path`` (a Spark job's output: ``id``, ``fingerprint``
    as a signed long, optional ``key``) into ``store`` (a :class:`simhash_store.Store` or a
    store directory) with :meth:`simhash_store.Store.bulk_load_fingerprints`, ``batch_rows``
    rows at a time. Rows with a null fingerprint are skipped; a missing ``key_col`` column
    means no keys. Returns the number of documents given to the store.

    The same as ``python -m simhash_store.spark load-parquet PATH --store DIR``.

    Raises:
        ValueError: a missing id or fingerprint column, or a null id.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.dataset as ds

    from .. import Store

    if batch_rows < 1:
        raise ValueError(f"batch_rows must be at least 1, got {batch_rows}")
    dataset = ds.dataset(os.fspath(path), format="parquet")
    names = dataset.schema.names
    for c in (id_col, fingerprint_col):
        if c not in names:
            raise ValueError(
                f"{os.fspath(path)!r} has no column {c!r}; its columns are {', '.join(names)}"
            )
    columns = [id_col, fingerprint_col] + ([key_col] if key_col and key_col in names else [])
    own = not isinstance(store, Store)
    target = Store.open(os.fspath(store)) if own else store
    total = 0
    try:
        pending: list = []
        rows = 0

        def flush() -> None:
            nonlocal pending, rows, total
            if not pending:
                return
            table = pa.Table.from_batches(pending).combine_chunks()
            pending, rows = [], 0
            table = table.filter(table.column(fingerprint_col).is_valid())
            if table.column(id_col).null_count:
                raise ValueError(f"column {id_col!r} has nulls: every document needs an id")
            ids = table.column(id_col).to_numpy().astype(np.int64, copy=False)
            fps = table.column(fingerprint_col).to_numpy().astype(np.int64, copy=False)
            keys = table.column(key_col).to_pylist() if len(columns) == 3 else None
            target.bulk_load_fingerprints(ids, fps, keys, progress=progress or None)
            total += len(ids)

        for batch in dataset.to_batches(columns=columns):
            pending.append(batch)
            rows += batch.num_rows
            if rows >= batch_rows:
                flush()
        flush()
    finally:
        if own:
            target.close()
    return total
