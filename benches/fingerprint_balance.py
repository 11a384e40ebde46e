"""How balanced a fingerprinter's bits are on the development set, per language.

    cargo run --release --example quality_fps -- ../shared/quality /tmp/fps.jsonl [OPTIONS]
    python3 benches/fingerprint_balance.py ../shared/quality /tmp/fps.jsonl [/tmp/other.jsonl ...]

For each file of fingerprints (``{"id", "fp"}`` lines, as ``quality_fps`` writes them) and
each language, over the distinct fingerprints of the originals (not the edited variants):
the share of 1s of the least and the most biased bit (uniform: 50%), and the shared-block
factor of each block: how much more often two fingerprints share that 16-bit block value
than two uniform random ones (``65536 * sum c(c-1) / (n(n-1))``; uniform: 1). Prints a
Markdown table.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
from collections import Counter


def fp_of(v) -> int:
    if isinstance(v, str):
        return int(v, 16)
    return v % (1 << 64)


def main() -> int:
    data, files = sys.argv[1], sys.argv[2:]
    lang = {}
    with gzip.open(os.path.join(data, "originals.jsonl.gz"), "rt", encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            lang[doc["id"]] = doc["lang"]
    print("| fingerprints | lang | distinct | least 1s | most 1s | shared-block factor, blocks 0 / 1 / 2 / 3 |")
    print("|---|---|---:|---:|---:|---|")
    for path in files:
        by_lang = {"zh": set(), "en": set()}
        with open(path) as f:
            for line in f:
                row = json.loads(line)
                if row["id"] in lang:
                    by_lang[lang[row["id"]]].add(fp_of(row["fp"]))
        for l, fps in by_lang.items():
            n = len(fps)
            ones = [sum((fp >> i) & 1 for fp in fps) / n for i in range(64)]
            factors = []
            for b in range(4):
                c = Counter((fp >> (48 - 16 * b)) & 0xFFFF for fp in fps)
                factors.append(65536 * sum(x * (x - 1) for x in c.values()) / (n * (n - 1)))
            print(
                f"| {os.path.basename(path)} | {l} | {n} | {min(ones):.0%} | {max(ones):.0%} | "
                + " / ".join(f"{x:.1f}" for x in factors)
                + " |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
