"""Random reads from a store's SST files, cold: what the disk under a store larger than memory
gives a query, without the store.

A k = 3 query of a store of N random fingerprints reads one group of about N / 65536 entries
in each of the four block families (about 130 KB each at a billion documents); read
concurrently, it waits for four such reads at once. This times random `pread`s of SIZE bytes
from the store's larger SST files on THREADS threads, with the page cache dropped first (run as
root) and `POSIX_FADV_RANDOM` set, as RocksDB does.

    sync; echo 3 > /proc/sys/vm/drop_caches
    python3 benches/disk_reads.py STORE_DIR SIZE THREADS READS
    python3 benches/disk_reads.py /data/store-1b 131072 4 800

Prints reads per second, MB/s and the median latency of one read.
"""

import glob
import os
import random
import statistics
import sys
import threading
import time


def main() -> None:
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    store, size, threads, reads = sys.argv[1], *map(int, sys.argv[2:])
    files = [f for f in glob.glob(os.path.join(store, "*.sst")) if os.path.getsize(f) > 4 * size]
    if not files:
        sys.exit(f"no SST file larger than {4 * size} bytes in {store}")
    handles = []
    for f in files:
        fd = os.open(f, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        handles.append((fd, os.path.getsize(f)))
    latencies: list[float] = []

    def work(count: int, seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(count):
            fd, length = rng.choice(handles)
            offset = rng.randrange(0, length - size)
            start = time.perf_counter()
            os.pread(fd, size, offset)
            latencies.append(time.perf_counter() - start)

    start = time.perf_counter()
    workers = [threading.Thread(target=work, args=(reads // threads, i)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - start
    done = len(latencies)
    print(
        f"{size >> 10} KiB x {threads} threads: {done / elapsed:.0f} reads/s, "
        f"{done * size / elapsed / 1e6:.0f} MB/s, p50 {statistics.median(latencies) * 1e6:.0f} us"
    )


if __name__ == "__main__":
    main()
