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
    /// The length of the MANIFEST that `CURRENT` names: the writer appends to it before it
    /// deletes a table file, so an unchanged length means no file was deleted in between.
    manifest_len: Option<u64>,
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
        let manifest_len = current
            .as_deref()
            .and_then(|name| std::str::from_utf8(name).ok())
            .and_then(|name| std::fs::metadata(path.join(name.trim_end())).ok())
            .map(|m| m.len());
        Ok(WalListing {
            logs,
            current,
            manifest_len,
        })
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
/// A secondary instance also forgives damage: where a table file of the latest state cannot
/// be opened (a damaged footer, index or properties block, or a missing file), RocksDB
/// rolls its view back to the last state whose files all open (its point-in-time recovery),
/// so queries would answer from an older state, without an error. So every open is checked
/// by a strict read-only open of the same directory ([`check_tables`]), which opens every
/// table file of the latest state and fails naming the one it cannot read.
///
/// After [`SECONDARY_OPEN_ATTEMPTS`] raced attempts (sleeping 2, 4, .. 64 ms between them)
/// the open fails with [`Error::WriterBusy`] rather than return a view that may have a hole.
pub(crate) fn open_secondary(
    opts: &Options,
    path: &Path,
    secondary: &Path,
    descriptors: impl Fn() -> Vec<ColumnFamilyDescriptor>,
) -> Result<DB> {
    retry_raced(path, SECONDARY_OPEN_ATTEMPTS, backoff, || {
        let before = WalListing::read(path)?;
        let opened = DB::open_cf_descriptors_as_secondary(opts, path, secondary, descriptors())
            .and_then(|db| check_tables(opts, path, &descriptors).map(|()| db));
        let after = WalListing::read(path)?;
        let min_log = match &opened {
            Ok(db) => Ok(db
                .property_int_value("rocksdb.min-log-number-to-keep")
                .map_err(|e| super::error("read the oldest log to keep", None, path, e))?
                .unwrap_or(0)),
            Err(e) => Err(e),
        };
        Ok(match race(&before, &after, min_log) {
            Some(race) => Attempt::Raced(race),
            None => {
                Attempt::Done(opened.map_err(|e| super::error("open the store", None, path, e)))
            }
        })
    })
}

/// Opens every table file of the store's latest state, through a strict read-only open
/// (which, unlike a secondary one, fails on a file it cannot open instead of falling back to
/// an older state), and closes them again.
fn check_tables(
    opts: &Options,
    path: &Path,
    descriptors: impl Fn() -> Vec<ColumnFamilyDescriptor>,
) -> std::result::Result<(), rocksdb::Error> {
    let mut strict = opts.clone();
    // Every table file is opened (footer, index, filter and properties read and checked).
    strict.set_max_open_files(-1);
    strict.set_paranoid_checks(true);
    DB::open_cf_descriptors_read_only(&strict, path, descriptors(), false).map(drop)
}

/// How one read-only open attempt ended.
enum Attempt<T> {
    /// Without a race with the writer: this is the result.
    Done(Result<T>),
    /// The writer changed the store in a way that may have left a hole in the view (what).
    Raced(String),
}

/// The pause after raced attempt `attempt` (1-based): 2, 4, .. 64 ms, so that a writer
/// that flushes in bursts gets time to finish one.
fn backoff(attempt: u32) -> std::time::Duration {
    std::time::Duration::from_millis(1 << attempt.min(6))
}

/// Runs `attempt` until it ends without a race, at most `attempts` times (pausing
/// `pause(n)` after the n-th), then fails with [`Error::WriterBusy`] naming the last race.
fn retry_raced<T>(
    path: &Path,
    attempts: u32,
    pause: impl Fn(u32) -> std::time::Duration,
    mut attempt: impl FnMut() -> Result<Attempt<T>>,
) -> Result<T> {
    let mut n = 1;
    loop {
        match attempt()? {
            Attempt::Done(result) => return result,
            Attempt::Raced(last) if n >= attempts => {
                return Err(Error::WriterBusy {
                    path: path.to_path_buf(),
                    attempts: n,
                    last,
                })
            }
            Attempt::Raced(_) => {
                std::thread::sleep(pause(n));
                n += 1;
            }
        }
    }
}

/// What may have made a hole in a secondary open's view, from the store's listings before
/// and after it and, when it opened, the oldest log its state keeps (`min_log`); `None`
/// when nothing did (see [`open_secondary`] for why these checks are enough).
fn race(
    before: &WalListing,
    after: &WalListing,
    min_log: std::result::Result<u64, &rocksdb::Error>,
) -> Option<String> {
    if before.current != after.current {
        return Some("the writer switched to a new MANIFEST".to_string());
    }
    match min_log {
        Ok(min_log) => {
            // A log of the view deleted during the open: one that was there before...
            let gone = before
                .logs
                .range(min_log..)
                .find(|log| !after.logs.contains(log));
            // ... or one created during it, older than the oldest log of the view left.
            let first_left = after.logs.range(min_log..).next();
            match (gone, first_left) {
                (Some(log), _) => Some(format!("log {log:06}.log was deleted")),
                (None, Some(&first)) if first != min_log && !before.logs.contains(&first) => {
                    Some(format!(
                        "the writer started log {first:06}.log and may have deleted logs \
                         from {min_log:06} on"
                    ))
                }
                _ => None,
            }
        }
        Err(e) if e.kind() == rocksdb::ErrorKind::TryAgain => Some(e.to_string()),
        Err(e) if !before.logs.is_subset(&after.logs) => {
            Some(format!("a log was deleted, and: {e}"))
        }
        Err(e) if table_file_deleted(&e.kind(), e.as_ref(), before, after) => {
            Some(format!("a table file was deleted: {e}"))
        }
        Err(_) => None,
    }
}

/// Whether an open that failed with `kind` and `message` found a table file missing that a
/// compaction deleted meanwhile: the MANIFEST read during the open still listed it, and grew
/// since (the record that removes it). A file missing while the MANIFEST did not grow was not
/// deleted by the writer: the store is damaged. RocksDB reports the missing file as an I/O
/// error, or, when it meets it while recovering the MANIFEST's state, as corruption ("... may
/// be corrupted").
fn table_file_deleted(
    kind: &rocksdb::ErrorKind,
    message: &str,
    before: &WalListing,
    after: &WalListing,
) -> bool {
    matches!(
        kind,
        rocksdb::ErrorKind::IOError | rocksdb::ErrorKind::Corruption
    ) && message.contains("No such file")
        && before.manifest_len != after.manifest_len
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(logs: &[u64], current: &str) -> WalListing {
        WalListing {
            logs: logs.iter().copied().collect(),
            current: Some(current.as_bytes().to_vec()),
            manifest_len: Some(1000),
        }
    }

    #[test]
    fn a_table_file_missing_is_a_race_only_while_the_manifest_grew() {
        let before = listing(&[7], "MANIFEST-000005\n");
        let mut grown = listing(&[7], "MANIFEST-000005\n");
        grown.manifest_len = Some(1200);
        let io =
            "IO error: No such file or directory: While open a file for random read: s/000049.sst";
        let recovering = "Corruption: Corruption: IO error: No such file or directory: While open a \
                          file for random read: s/000049.sst  The file s/MANIFEST-000005 may be corrupted.";
        for (kind, message) in [
            (rocksdb::ErrorKind::IOError, io),
            (rocksdb::ErrorKind::Corruption, recovering),
        ] {
            assert!(
                table_file_deleted(&kind, message, &before, &grown),
                "{message}"
            );
            assert!(
                !table_file_deleted(&kind, message, &before, &before),
                "{message}"
            );
        }
        let damaged = "Corruption: Bad table magic number in s/000049.sst";
        assert!(!table_file_deleted(
            &rocksdb::ErrorKind::Corruption,
            damaged,
            &before,
            &grown
        ));
    }

    #[test]
    fn a_quiet_writer_is_no_race() {
        let same = listing(&[7, 8], "MANIFEST-000005\n");
        assert_eq!(
            race(&same, &listing(&[7, 8], "MANIFEST-000005\n"), Ok(7)),
            None
        );
        // Logs below the view's oldest may go, and the writer may start a log after the view's.
        let after = listing(&[8, 9], "MANIFEST-000005\n");
        assert_eq!(race(&same, &after, Ok(8)), None);
        // A writer's open records its largest recovered log plus one, which need not exist
        // yet; the writer may start exactly that log during the open.
        assert_eq!(
            race(&listing(&[4], "M\n"), &listing(&[4], "M\n"), Ok(5)),
            None
        );
        assert_eq!(
            race(&listing(&[4], "M\n"), &listing(&[4, 5], "M\n"), Ok(5)),
            None
        );
        // But a newer one started during the open means 5 may have come and gone.
        assert!(race(&listing(&[4], "M\n"), &listing(&[4, 6], "M\n"), Ok(5)).is_some());
    }

    #[test]
    fn every_kind_of_race_is_named() {
        let before = listing(&[7, 8], "MANIFEST-000005\n");
        let new_manifest = listing(&[7, 8], "MANIFEST-000009\n");
        assert_eq!(
            race(&before, &new_manifest, Ok(7)).as_deref(),
            Some("the writer switched to a new MANIFEST")
        );
        // A log of the view deleted during the open.
        let deleted = listing(&[7, 9], "MANIFEST-000005\n");
        assert_eq!(
            race(&before, &deleted, Ok(7)).as_deref(),
            Some("log 000008.log was deleted")
        );
        // Every log of the view gone and a new one started: the view may lack 7 and 8.
        let replaced = listing(&[10], "MANIFEST-000005\n");
        assert_eq!(
            race(&before, &replaced, Ok(9)).as_deref(),
            Some("the writer started log 000010.log and may have deleted logs from 000009 on")
        );
    }

    #[test]
    fn an_open_raced_every_time_gives_up_with_writer_busy() {
        let path = Path::new("/some/store");
        let mut calls = 0;
        let err = retry_raced::<()>(
            path,
            5,
            |_| std::time::Duration::ZERO,
            || {
                calls += 1;
                Ok(Attempt::Raced(format!("race {calls}")))
            },
        )
        .unwrap_err();
        assert_eq!(calls, 5);
        match &err {
            Error::WriterBusy {
                path: p,
                attempts,
                last,
            } => {
                assert_eq!(p, path);
                assert_eq!(*attempts, 5);
                assert_eq!(last, "race 5");
            }
            other => panic!("expected WriterBusy, got {other:?}"),
        }
        let message = err.to_string();
        assert!(message.contains("/some/store") && message.contains("5 read-only open attempts"));
    }

    #[test]
    fn an_open_that_stops_racing_returns_its_result_and_errors_pass_through() {
        let path = Path::new("/some/store");
        let mut calls = 0;
        let pauses = std::cell::RefCell::new(Vec::new());
        let value = retry_raced(
            path,
            SECONDARY_OPEN_ATTEMPTS,
            |n| {
                pauses.borrow_mut().push(backoff(n));
                std::time::Duration::ZERO
            },
            || {
                calls += 1;
                Ok(if calls < 3 {
                    Attempt::Raced("busy".into())
                } else {
                    Attempt::Done(Ok(calls))
                })
            },
        )
        .unwrap();
        assert_eq!(value, 3);
        assert_eq!(
            *pauses.borrow(),
            [2, 4].map(std::time::Duration::from_millis).to_vec()
        );
        assert_eq!(backoff(6), backoff(40));
        // A listing error ends the retries at once.
        let err = retry_raced::<()>(path, SECONDARY_OPEN_ATTEMPTS, backoff, || {
            Err(Error::io("list", path, std::io::Error::other("gone")))
        })
        .unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err:?}");
    }
}
