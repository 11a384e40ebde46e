"""``python -m simhash_store.spark load-parquet PATH --store DIR``: a Spark result into a store."""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

from ..errors import Error
from ._load import load_parquet


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m simhash_store.spark",
        description="Tools for the results of simhash_store.spark jobs.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    load = commands.add_parser(
        "load-parquet",
        help="load Parquet files (id, fingerprint as a signed long, optional key) into a store",
        description="Loads the Parquet files under PATH (a Spark job's output with columns id, "
        "fingerprint and optionally key) into the store DIR with the bulk loader. Example: "
        "python -m simhash_store.spark load-parquet out/ --store pages.db",
    )
    load.add_argument("path", help="a Parquet file or a folder of them")
    load.add_argument("--store", required=True, help="the store directory (created if missing)")
    load.add_argument("--id-col", default="id")
    load.add_argument("--fingerprint-col", default="fingerprint")
    load.add_argument("--key-col", default="key", help="ignored when the files have no such column")
    load.add_argument("--batch-rows", type=int, default=4_000_000)
    load.add_argument("--progress", action="store_true", help="draw a progress line")
    args = parser.parse_args(argv)
    if not os.path.exists(args.path):
        print(
            f"error: {args.path} does not exist: give a Parquet file or a folder of them "
            "(a Spark job's output with columns id and fingerprint)",
            file=sys.stderr,
        )
        return 1
    try:
        n = load_parquet(
            args.path,
            args.store,
            id_col=args.id_col,
            fingerprint_col=args.fingerprint_col,
            key_col=args.key_col,
            batch_rows=args.batch_rows,
            progress=args.progress,
        )
    except (Error, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: cannot read {args.path}: {e}", file=sys.stderr)
        return 1
    print(f"loaded {n} document{'' if n == 1 else 's'} into {args.store}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
