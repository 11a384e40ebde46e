"""``fingerprints``: the SimHash fingerprint of a text column, on Arrow batches."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._common import check_columns, require_ray

if TYPE_CHECKING:
    import pyarrow as pa
    import ray.data


def fingerprints(
    ds: "ray.data.Dataset", text_col: str = "text", out_col: str = "fingerprint", **settings: Any
) -> "ray.data.Dataset":
    """``ds`` with a column ``out_col``: the 64-bit SimHash fingerprint of ``text_col``, as
    Arrow ``uint64`` (the value :meth:`simhash_store.Simhasher.fingerprint` gives; no
    two's-complement detour, Ray keeps unsigned columns). It is null when the text is null or
    has no features (the documents a store would skip). ``settings`` are the keyword
    arguments of :class:`simhash_store.Simhasher` (the defaults are the store's), checked here
    on the driver.

    Each Arrow batch's string column goes to the Rust fingerprinter as its offsets and bytes:
    one native call per batch; Ray runs one such task per CPU of each worker.

    >>> import ray                                                        # doctest: +SKIP
    >>> from simhash_store import Simhasher
    >>> from simhash_store.ray import fingerprints
    >>> ds = ray.data.from_items([{"id": 1, "text": "a page about storage engines"}])  # doctest: +SKIP
    >>> row = fingerprints(ds).take(1)[0]                                 # doctest: +SKIP
    >>> row["fingerprint"] == Simhasher().fingerprint("a page about storage engines")  # doctest: +SKIP
    True

    Raises:
        ValueError: ``text_col`` is missing, or ``out_col`` already exists.
        TypeError, ValueError: an unknown setting or a bad value (as ``Simhasher``).
    """
    require_ray()
    from .. import Simhasher

    check_columns(ds, "the Dataset", [text_col])
    if out_col in ds.schema().names:
        raise ValueError(
            f"the Dataset already has a column {out_col!r}: drop it or pass another out_col"
        )
    hasher = Simhasher(**settings)

    def fingerprint_batch(table: "pa.Table") -> "pa.Table":
        import pyarrow as pa

        from ..spark._fingerprints import fingerprint_array

        texts = table.column(text_col)
        if pa.types.is_null(texts.type):
            texts = texts.cast(pa.string())
        fps = fingerprint_array(hasher, texts)
        unsigned = pa.Array.from_buffers(pa.uint64(), len(fps), fps.buffers(), fps.null_count)
        return table.append_column(out_col, unsigned)

    return ds.map_batches(fingerprint_batch, batch_format="pyarrow")
