"""``progress=True``: a progress line for long loads and scans, on standard error.

Uses tqdm when it is installed, else a line redrawn at most twice a second.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable


def bar() -> Callable[[Any], None]:
    try:
        from tqdm import tqdm  # type: ignore[import-not-found]
    except ImportError:
        return _Line()
    return _Tqdm(tqdm)


class _Tqdm:
    def __init__(self, tqdm: Any) -> None:
        self._bar = tqdm(unit=" docs", unit_scale=True, desc="loading")

    def __call__(self, p: Any) -> None:
        self._bar.set_description(p.phase)
        self._bar.update(p.documents - self._bar.n)
        if p.phase == "done":
            self._bar.close()


class _Line:
    def __init__(self) -> None:
        self._last = 0.0

    def __call__(self, p: Any) -> None:
        now = time.monotonic()
        if p.phase != "done" and now - self._last < 0.5:
            return
        self._last = now
        end = "\n" if p.phase == "done" else "\r"
        sys.stderr.write(
            f"{p.phase}: {p.documents:,} documents, {p.bytes / 1e6:,.1f} MB, "
            f"{p.rate:,.0f} docs/s, {p.runs} run(s), {p.elapsed:.1f} s   {end}"
        )
        sys.stderr.flush()


def scan_bar() -> Callable[[int, int], None]:
    """``progress=True`` of a pair scan: ``(scanned, total)`` keys."""
    try:
        from tqdm import tqdm  # type: ignore[import-not-found]
    except ImportError:
        return _ScanLine()
    return _ScanTqdm(tqdm)


class _ScanTqdm:
    def __init__(self, tqdm: Any) -> None:
        self._bar = tqdm(unit=" keys", unit_scale=True, desc="scanning")

    def __call__(self, scanned: int, total: int) -> None:
        self._bar.total = total
        self._bar.update(scanned - self._bar.n)


class _ScanLine:
    def __init__(self) -> None:
        self._last = 0.0

    def __call__(self, scanned: int, total: int) -> None:
        now = time.monotonic()
        done = total > 0 and scanned >= total
        if not done and now - self._last < 0.5:
            return
        self._last = now
        share = scanned / total if total else 1.0
        end = "\n" if done else "\r"
        sys.stderr.write(f"scanning: {scanned:,} of {total:,} keys ({share:.0%})   {end}")
        sys.stderr.flush()
