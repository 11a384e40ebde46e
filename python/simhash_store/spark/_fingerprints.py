"""``fingerprints``: the SimHash fingerprint of a text column, on Arrow batches."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from ._common import check_columns, check_type, require_pyspark

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame


def fingerprints(
    df: "DataFrame", text_col: str = "text", out_col: str = "fingerprint", **settings: Any
) -> "DataFrame":
    """``df`` with a column ``out_col``: the 64-bit SimHash fingerprint of ``text_col``.

    The fingerprint is a ``LongType``: the 64 bits as a signed two's-complement long
    (:func:`simhash_store.to_signed` of what :meth:`simhash_store.Simhasher.fingerprint`
    gives; :func:`simhash_store.to_unsigned` turns it back). It is null when the text is null
    or has no features (only stop words, punctuation or boilerplate), the documents a store
    would skip. ``settings`` are the keyword arguments of :class:`simhash_store.Simhasher`
    (the defaults are the store's); they are checked here, on the driver.

    Each Arrow batch's string column goes to the Rust fingerprinter as its offsets and bytes:
    one native call per batch, on the task's core.

    >>> from simhash_store import Simhasher, to_signed
    >>> from simhash_store.spark import fingerprints
    >>> df = spark.createDataFrame([(1, "a page about storage engines"), (2, None)],
    ...                            "id long, text string")              # doctest: +SKIP
    >>> rows = fingerprints(df).collect()                               # doctest: +SKIP
    >>> rows[0].fingerprint == to_signed(Simhasher().fingerprint("a page about storage engines"))  # doctest: +SKIP
    True
    >>> rows[1].fingerprint is None                                     # doctest: +SKIP
    True

    Raises:
        ValueError: ``text_col`` is missing, or ``out_col`` already exists.
        TypeError: ``text_col`` is not a string column.
        TypeError, ValueError: an unknown setting or a bad value (as ``Simhasher``).
    """
    require_pyspark()
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from .. import Simhasher

    check_columns(df, "the DataFrame", [text_col])
    check_type(df, "the DataFrame", text_col, [StringType], "a string (StringType)")
    if out_col in df.columns:
        raise ValueError(
            f"the DataFrame already has a column {out_col!r}: drop it or pass another out_col"
        )
    hasher = Simhasher(**settings)
    schema = StructType(list(df.schema.fields) + [StructField(out_col, LongType(), True)])
    position = df.columns.index(text_col)

    def fingerprint_batches(batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
        import pyarrow as pa

        for batch in batches:
            fps = fingerprint_array(hasher, batch.column(position))
            yield pa.RecordBatch.from_arrays(
                list(batch.columns) + [fps], names=list(batch.schema.names) + [out_col]
            )

    return df.mapInArrow(fingerprint_batches, schema)


def fingerprint_array(hasher: Any, texts: "pa.Array") -> "pa.Array":
    """The fingerprints (int64, null for null or featureless texts) of an Arrow string array."""
    import numpy as np
    import pyarrow as pa

    from .._native import spark_fingerprint_utf8

    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if pa.types.is_string(texts.type):
        offset_type = np.int32
    elif pa.types.is_large_string(texts.type):
        offset_type = np.int64
    else:
        raise TypeError(f"texts must be an Arrow string array, not {texts.type}")
    n = len(texts)
    buffers = texts.buffers()
    offsets = np.frombuffer(buffers[1], dtype=offset_type)[texts.offset : texts.offset + n + 1] \
        if n else np.zeros(1, dtype=offset_type)
    data = (
        np.frombuffer(buffers[2], dtype=np.uint8)
        if len(buffers) > 2 and buffers[2] is not None
        else np.zeros(0, dtype=np.uint8)
    )
    valid = texts.is_valid().to_numpy(zero_copy_only=False)
    fps, ok = spark_fingerprint_utf8(hasher, np.ascontiguousarray(offsets), data, valid)
    return pa.array(fps, type=pa.int64(), mask=~ok)
