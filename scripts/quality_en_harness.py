#!/usr/bin/env python3
"""English-half experiments on the labelled near-duplicate set, in Python, for speed.

    python3 scripts/quality_en_harness.py ../shared/quality            # every variant
    python3 scripts/quality_en_harness.py ../shared/quality default occ  # some of them
    python3 scripts/quality_en_harness.py ../shared/quality "0.3-default (boilerplate lines dropped)"

Not part of the crate or its tests (the set lives outside the repository). It re-implements
the default English features of `Simhasher` (lowercase, Cyrillic look-alikes folded, words =
runs of letters/digits/_, the crate's English stop words dropped, the words plus character
trigrams of the remaining words run together) and feature variants, and replaces xxh3 by
random +-1 vectors per distinct feature: 640 of them, read as ten 64-bit fingerprints
("seeds"). For each variant it prints, over those ten: the mean (and standard deviation) of
F1 at k = 3, the mean best F1 over k = 0..10, seed 0's values, the "noise-free" best F1 (the
threshold taken on each pair's distance averaged over the ten, about what 640 bits would
give), and the mean distance per edit kind. On the default it gives F1@3 0.815 and best
0.917, against 0.824 / 0.913 from the crate (the hash differs), close enough to rank
variants; docs/fingerprint-research.md has the numbers and what they mean. Needs numpy.
"""

import gzip
import json
import math
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
STOP = set((ROOT / "src/simhash/text/stopwords_en.txt").read_text().split())
FOLD = str.maketrans({"а": "a", "с": "c", "е": "e", "о": "o", "р": "p", "х": "x", "у": "y",
                      "і": "i", "ё": "e", "ј": "j", "ѕ": "s", "ԁ": "d", "һ": "h", "к": "k",
                      "ӏ": "l", "ԛ": "q", "ԝ": "w", "ү": "y", "ї": "i", "ﬁ": "fi", "ﬂ": "fl",
                      "ﬀ": "ff", "ﬃ": "ffi", "ﬄ": "ffl"})
WORD = re.compile(r"\w+")

# Boilerplate lines, the rule of src/simhash/text/boilerplate.rs (the markers are read from it).
_RS = (ROOT / "src/simhash/text/boilerplate.rs").read_text()
_MARKERS_SRC = _RS[_RS.index("pub(crate) const MARKERS"):]
MARKERS = re.findall(r'^\s+"([^"]*)",', _MARKERS_SRC[:_MARKERS_SRC.index("];")], re.M)
NAV = re.compile(r"(?<![A-Za-z0-9_])(previous|prev|next)(?![A-Za-z0-9_])", re.I)
CRUMB = re.compile(r" (?:>|»|›|>>|/) ")


def _whole(line, m):
    if not (m[0].isascii() and m[0].isalnum() and m[-1].isascii() and m[-1].isalnum()):
        return m in line
    return re.search(r"(?<![A-Za-z0-9_])" + re.escape(m) + r"(?![A-Za-z0-9_])", line) is not None


def is_boilerplate(line):
    line = line.strip()
    if not line or sum(2 if ord(c) >= 0x2E80 else 1 for c in line) > 160:
        return False
    low = line.lower()
    if any(_whole(low, m) for m in MARKERS):
        return True
    words = {w.lower() for w in NAV.findall(line)}
    if words and ((words & {"previous", "prev"} and "next" in words) or len(line.split()) <= 8):
        return True
    parts = CRUMB.split(line)
    return len(parts) >= 3 and all(
        sum(c.isalpha() for c in p) >= 2 and len(p.split()) <= 4 for p in parts)


def drop_boilerplate(text):
    """The text without its boilerplate lines (whole if they are all it has)."""
    kept = [ln for ln in text.split("\n") if not is_boilerplate(ln.rstrip("\r"))]
    return "\n".join(kept) if any(ln.strip() for ln in kept) else text


def load(data):
    docs = []
    for name in ("originals.jsonl.gz", "variants.jsonl.gz"):
        for line in gzip.open(data / name, "rt", encoding="utf-8"):
            d = json.loads(line)
            if d["lang"] == "en":
                docs.append((d["id"], d["text"], d.get("kind")))
    index = {doc_id: i for i, (doc_id, _, _) in enumerate(docs)}
    kinds = {}
    for line in open(data / "pairs_truth.jsonl"):
        p = json.loads(line)
        if p["a"] in index and p["b"] in index:
            kinds[tuple(sorted((index[p["a"]], index[p["b"]])))] = p["kind"]
    negatives = {}
    for i, (doc_id, _, kind) in enumerate(docs):
        if kind == "g_rewrite":
            negatives[tuple(sorted((i, index[doc_id.split("~")[0]])))] = "g_rewrite"
    return docs, kinds, negatives


def words_with_position(text):
    """The non-stop words of the normalized text and the relative position of each."""
    t = text.lower().translate(FOLD)
    n = max(len(t), 1)
    return [(m.group(0), (m.start() + m.end()) / 2 / n) for m in WORD.finditer(t)
            if m.group(0) not in STOP]


def occurrences(text, tri=3):
    """The default English feature occurrences, in text order, with positions."""
    words = words_with_position(text)
    run = "".join(w for w, _ in words)
    n = max(len(run), 1)
    return words + [("#" + run[i:i + tri], (i + 1.5) / n) for i in range(len(run) - tri + 1)]


def occurrences_within(text, tri=3):
    """The words and the character trigrams within each word (0.4's default)."""
    words = words_with_position(text)
    return words + [("#" + w[i:i + tri], p) for w, p in words for i in range(len(w) - tri + 1)]


def counts(items):
    """How many times each feature occurs."""
    out = {}
    for feature, _ in items:
        out[feature] = out.get(feature, 0) + 1
    return out


def count_pieces(items, base):
    """Count pieces: occurrences 1..base-1 of a feature are one feature, base..base^2-1
    another, and so on, each weighing the occurrences it holds (0.4's default, base 4)."""
    out = []
    for feature, c in counts(items).items():
        start, piece = 1, 0
        while start <= c:
            end = start * base
            out.append((f"{feature}\0{piece}", min(c, end - 1) - start + 1))
            start, piece = end, piece + 1
    return out


def cumulative_pieces(items, base):
    """Thresholds 1, base, base^2, ...: the piece of a threshold t <= count weighs t minus the
    threshold before it (so a deletion that crosses one loses a whole piece)."""
    out = []
    for feature, c in counts(items).items():
        t, prev = 1, 0
        while t <= c:
            out.append((f"{feature}\0{t}", t - prev))
            t, prev = t * base, t
    return out


def counted(items, weight):
    return [(f, weight(c, len(items))) for f, c in counts(items).items()]


def occurrence_indexed(items, weight=lambda j: 1.0):
    """The j-th occurrence of a feature is its own feature: deleting text is visible."""
    seen, out = {}, []
    for feature, _ in items:
        j = seen.get(feature, 0) + 1
        seen[feature] = j
        out.append((f"{feature}\0{j}", weight(j)))
    return out


def ramp(items, r, floor):
    """Features near the start and end of the text weigh less (templates sit there)."""
    return [(f, max(floor, min(1.0, p / r, (1 - p) / r))) for f, p in items]


def length_adaptive(a0, slope):
    def weight(c, n):
        a = min(1.6, max(0.5, a0 - slope * math.log(max(n, 1) / 1000)))
        return c ** a
    return lambda t: counted(occurrences(t), weight)


def one_e0ng(n):
    """PyPI `simhash` 2.1.2's defaults: word characters only, character n-grams, counts."""
    def features(text):
        s = "".join(WORD.findall(text.lower()))
        return [(s[i:i + n], 1.0) for i in range(max(len(s) - n + 1, 1))]
    return features


def b(features):
    """`features` of the text without boilerplate lines (the default since 0.3)."""
    return lambda t: features(drop_boilerplate(t))


VARIANTS = {
    "default": lambda t: counted(occurrences(t), lambda c, n: c),
    "0.3-default (boilerplate lines dropped)": b(lambda t: counted(occurrences(t), lambda c, n: c)),
    "0.3 + TF^0.7": b(lambda t: counted(occurrences(t), lambda c, n: c ** 0.7)),
    "0.3 + log": b(lambda t: counted(occurrences(t), lambda c, n: 1 + math.log(c))),
    "0.3 + length-adaptive-1.0-0.3 + occ": b(lambda t: counted(occurrences(t), lambda c, n: c ** min(
        1.6, max(0.5, 1.0 - 0.3 * math.log(max(n, 1) / 1000)))) + occurrence_indexed(occurrences(t))),
    "0.3 + within-word trigrams": b(lambda t: counted(occurrences_within(t), lambda c, n: c)),
    "0.3 + pieces base 2": b(lambda t: count_pieces(occurrences(t), 2)),
    "0.3 + pieces base 3": b(lambda t: count_pieces(occurrences(t), 3)),
    "0.3 + pieces base 4": b(lambda t: count_pieces(occurrences(t), 4)),
    "0.3 + pieces base 8": b(lambda t: count_pieces(occurrences(t), 8)),
    "0.3 + cumulative pieces base 2": b(lambda t: cumulative_pieces(occurrences(t), 2)),
    "0.4-default (within-word trigrams, pieces base 4)": b(
        lambda t: count_pieces(occurrences_within(t), 4)),
    "log": lambda t: counted(occurrences(t), lambda c, n: 1 + math.log(c)),
    "occ": lambda t: occurrence_indexed(occurrences(t)),
    "occ-sqrt(2j-1)": lambda t: occurrence_indexed(occurrences(t), lambda j: math.sqrt(2 * j - 1)),
    "occ-lat4": lambda t: occurrence_indexed(occurrences(t, 4)),
    "default+occ/2": lambda t: counted(occurrences(t), lambda c, n: c)
    + [(f, 0.5 * w) for f, w in occurrence_indexed(occurrences(t))],
    "default+occ": lambda t: counted(occurrences(t), lambda c, n: c)
    + occurrence_indexed(occurrences(t)),
    "default+2occ": lambda t: counted(occurrences(t), lambda c, n: c)
    + [(f, 2 * w) for f, w in occurrence_indexed(occurrences(t))],
    "ramp-0.1": lambda t: ramp(occurrences(t), 0.1, 0.0),
    "ramp-0.15-floor-0.2": lambda t: ramp(occurrences(t), 0.15, 0.2),
    "tf^1.1": length_adaptive(1.1, 0.0),
    "length-adaptive-1.1-0.3": length_adaptive(1.1, 0.3),
    "length-adaptive-0.9-0.3": length_adaptive(0.9, 0.3),
    "1e0ng-4": one_e0ng(4),
    "1e0ng-5": one_e0ng(5),
}


def evaluate(name, features, docs, kinds, negatives, kmax=10):
    vocab, rows = {}, []
    for _, text, _ in docs:
        acc = {}
        for f, w in features(text):
            acc[f] = acc.get(f, 0.0) + w
        rows.append((np.array([vocab.setdefault(f, len(vocab)) for f in acc], dtype=np.int64),
                     np.array(list(acc.values()), dtype=np.float32)))
    rng = np.random.default_rng(12345)
    signs = (rng.integers(0, 2, size=(len(vocab), 640), dtype=np.int8) * 2 - 1).astype(np.float32)
    bits = np.array([(w @ signs[i]) > 0 for i, w in rows])
    n = len(docs)
    iu = np.triu_indices(n, 1)
    positive = np.zeros((n, n), bool)
    for a, b in kinds:
        positive[a, b] = True
    y = positive[iu]
    npos = y.sum()
    distances = []
    for s in range(10):
        b = bits[:, s * 64:(s + 1) * 64].astype(np.int16)
        distances.append((b @ (1 - b).T + (1 - b) @ b.T)[iu])

    def f1(d, k):
        tp = (y & (d <= k)).sum()
        fp = (~y & (d <= k)).sum()
        return 2 * tp / (2 * tp + fp + npos - tp)

    at3 = [f1(d, 3) for d in distances]
    best = [max(f1(d, k) for k in range(kmax + 1)) for d in distances]
    mean = np.mean(distances, axis=0)
    noise_free = max(f1(mean, t) for t in np.arange(0, 14, 0.1))
    linear = lambda a, b: a * n - a * (a + 1) // 2 + (b - a - 1)
    per_kind = {}
    for (a, b), kind in list(kinds.items()) + list(negatives.items()):
        per_kind.setdefault(kind, []).append(mean[linear(a, b)])
    kinds_s = " ".join(f"{k[:6]} {np.mean(v):.1f}" for k, v in sorted(per_kind.items()))
    print(f"| {name} | {np.mean(at3):.3f} ± {np.std(at3):.3f} | {np.mean(best):.3f} "
          f"| {at3[0]:.3f} / {best[0]:.3f} | {noise_free:.3f} | {kinds_s} |", flush=True)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    docs, kinds, negatives = load(Path(sys.argv[1]))
    names = sys.argv[2:] or list(VARIANTS)
    print("| variant | en F1@3 | en best F1 | seed 0 | noise-free best | mean distance per kind |")
    print("|---|---:|---:|---:|---:|---|")
    for name in names:
        evaluate(name, VARIANTS[name], docs, kinds, negatives)


if __name__ == "__main__":
    main()
