"""``python -m simhash_store.ray load-parquet PATH --store DIR``: a Ray result into a store."""

from __future__ import annotations

import sys
from typing import List, Optional

from .._scaleout import load_parquet_main


def main(argv: Optional[List[str]] = None) -> int:
    return load_parquet_main("ray", argv)


if __name__ == "__main__":
    sys.exit(main())
