//! Read-only stores: opening a RocksDB secondary instance whose view has no hole, beside a
//! writer that keeps committing, flushing and deleting its write-ahead logs.

use std::collections::BTreeSet;
use std::path::Path;

use rocksdb::{ColumnFamilyDescriptor, Options, DB};

use crate::error::{Error, Result};

/// How many times a read-only open is tried while the writer keeps deleting the write-ahead
/// logs it needs (see [`open_secondary`]).
const SECONDARY_OPEN_ATTEMPTS: u32 = 20;

/// The write-ahead logs of a store directory and the MANIFEST that `CURRENT` names, listed at
/// one moment.
struct WalListing {
    /// The numbers of the write-ahead logs (`000123.log`).
    logs: BTreeSet<u64>,
    /// What `CURRENT` holds (the live MANIFEST's name); `None` when there is no `CURRENT`.
    current: Option<Vec<u8>>,
}

impl WalListing {
    fn read(path: &Path) -> Result<WalListing> {
        let mut logs = BTreeSet::new();
        for entry in std::fs::read_dir(path).map_err(|e| Error::io("list", path, e))? {
            let name = entry.map_err(|e| Error::io("list", path, e))?.file_name();
            let number = name
                .to_str()
                .and_then(|name| name.strip_suffix(".log"))
                .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|digits| digits.parse::<u64>().ok());
            logs.extend(number);
        }
        let current_path = path.join("CURRENT");
        let current = match std::fs::read(&current_path) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io("read", current_path, e)),
        };
        Ok(WalListing { logs, current })
    }
}

/// Opens `path` as a RocksDB secondary instance whose view is a prefix of the writer's
/// history: every write batch up to some point, none after it.
///
/// The hazard: a secondary open reads `CURRENT` and the MANIFEST (the SST files, and
/// `min_log`: every write-ahead log numbered below it is in those files), then lists the
/// directory and replays the logs numbered `min_log` or more that it finds. A log the writer
/// flushes and deletes in between is skipped without an error (facebook/rocksdb#5323): its
/// batches are in an SST file the state read does not list, while newer logs are replayed,
/// so whole batches are missing before newer ones.
///
/// Why the logs and `CURRENT` listed before and after the open are enough to tell:
/// - The writer deletes a log only after a MANIFEST record raising `min_log` above it is
///   written. The open reads the MANIFEST to its end after the first listing, so records
///   written before it are in the state read. A skipped log is therefore numbered `min_log`
///   (as read) or more and deleted during the open.
/// - Logs are created one at a time in number order and become obsolete in number order, so
///   a log that still exists after the open proves that no newer one was deleted before.
///   Let `first` be the oldest log numbered `min_log` or more after the open. A skipped log
///   is older than `first` (or there is no `first`: then no log was created during the open,
///   as the writer's newest log always stays, and none of the view's logs from before was
///   deleted). It was there before the open (the first rule below sees it gone), or created
///   during it, which needs `first` to be created during it too (not in the first listing)
///   and to differ from `min_log` (a log older than `first` and at least `min_log` exists).
/// - So the open is tried again when a log numbered `min_log` or more that was there
///   before is gone after, or when `first` is new and is not `min_log` itself; logs below
///   `min_log` may go (the state read covers them). `min_log` is not always a log: a
///   writer's open records its largest recovered log plus one.
/// - A new MANIFEST (a roll-over, or a writer opening the store, which also flushes and
///   deletes old logs) changes `CURRENT`: an open that saw it change is tried again, and so
///   is one RocksDB gave up with `TryAgain` (its MANIFEST was deleted under it).
/// - SST files deleted by compaction do not make holes: one is deleted after the record
///   that removes it, which the secondary reads while it opens the files
///   (`max_open_files(-1)`), and RocksDB never installs a state whose files are missing.
/// - Logs live in the store directory: the store sets no `wal_dir` and neither recycles nor
///   archives logs (`recycle_log_file_num` and `WAL_ttl_seconds` are 0).
///
/// Not covered: two RocksDB background jobs deleting obsolete logs out of order (one holds
/// an older log while the other deletes a newer one), which would need a job to stall for a
/// whole writer round between finding a log obsolete and unlinking it. (Retrying whenever
/// any log disappears would be simpler, but beside a writer that flushes every few
/// milliseconds it retries almost every open: 96 to 100 of 100 without a hole in
/// `tests/read_only_beside_writer.rs`.)
///
/// After [`SECONDARY_OPEN_ATTEMPTS`] raced attempts (sleeping 2, 4, .. 64 ms between them)
/// the open fails with [`Error::WriterBusy`] rather than return a view that may have a hole.
pub(crate) fn open_secondary(
    opts: &Options,
    path: &Path,
    secondary: &Path,
    descriptors: impl Fn() -> Vec<ColumnFamilyDescriptor>,
) -> Result<DB> {
    let mut attempt = 1;
    loop {
        let before = WalListing::read(path)?;
        let opened = DB::open_cf_descriptors_as_secondary(opts, path, secondary, descriptors());
        let after = WalListing::read(path)?;
        let race = if before.current != after.current {
            Some("the writer switched to a new MANIFEST".to_string())
        } else {
            match &opened {
                Ok(db) => {
                    let min_log = db
                        .property_int_value("rocksdb.min-log-number-to-keep")
                        .map_err(|e| Error::rocks("read the oldest log to keep", None, path, e))?
                        .unwrap_or(0);
                    // A log of the view deleted during the open: one that was there before...
                    let gone = before
                        .logs
                        .range(min_log..)
                        .find(|log| !after.logs.contains(log));
                    // ... or one created during it, older than the oldest log of the view left.
                    let first_left = after.logs.range(min_log..).next();
                    match (gone, first_left) {
                        (Some(log), _) => Some(format!("log {log:06}.log was deleted")),
                        (None, Some(&first))
                            if first != min_log && !before.logs.contains(&first) =>
                        {
                            Some(format!(
                                "the writer started log {first:06}.log and may have deleted \
                                 logs from {min_log:06} on"
                            ))
                        }
                        _ => None,
                    }
                }
                Err(e) if e.kind() == rocksdb::ErrorKind::TryAgain => Some(e.to_string()),
                Err(e) if !before.logs.is_subset(&after.logs) => {
                    Some(format!("a log was deleted, and: {e}"))
                }
                Err(_) => None,
            }
        };
        let Some(race) = race else {
            return opened.map_err(|e| Error::rocks("open the store", None, path, e));
        };
        drop(opened);
        if attempt == SECONDARY_OPEN_ATTEMPTS {
            return Err(Error::WriterBusy {
                path: path.to_path_buf(),
                attempts: attempt,
                last: race,
            });
        }
        // A writer that flushes in bursts gets time to finish one.
        std::thread::sleep(std::time::Duration::from_millis(1 << attempt.min(6)));
        attempt += 1;
    }
}
