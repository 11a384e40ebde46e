//! What a `load` that stops before its end leaves in the store, and what to do about it: told
//! after an error (a full disk, an unreadable input) and on Ctrl-C, which ends the process at
//! once, as a kill would.
//!
//! It is the bulk loader's guarantee (`BulkLoader`, "Crashes") in the load's terms: the store
//! holds every run whose ingestion began (one that was under way, and a merge of runs that
//! was, is completed by the next open for writing) and nothing of the documents still in
//! memory.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use simhash_store::bulk::{BulkPhase, BulkProgress};

use super::plural;

/// `before` until the store is opened.
const NOT_OPENED: u64 = u64::MAX;

/// How far a load has come, updated from its progress reports.
#[derive(Debug)]
pub struct LoadState {
    path: PathBuf,
    /// Whether the store existed before the load.
    existed: bool,
    /// The documents the store held when the load opened it ([`NOT_OPENED`] until then).
    before: AtomicU64,
    /// Whether the load made its bulk loader.
    loading: AtomicBool,
    /// Runs whose ingestion began.
    runs: AtomicU32,
    /// Documents the load had read (and handed to the loader) when the last of them began.
    documents: AtomicU64,
    /// Whether the merge of the load's runs began.
    merging: AtomicBool,
    /// Whether the loader finished.
    done: AtomicBool,
}

impl LoadState {
    /// The state of a load into the store at `path`, before it opens the store.
    pub fn new(path: &Path) -> Arc<LoadState> {
        Arc::new(LoadState {
            path: path.to_path_buf(),
            existed: path.join("CURRENT").exists(),
            before: AtomicU64::new(NOT_OPENED),
            loading: AtomicBool::new(false),
            runs: AtomicU32::new(0),
            documents: AtomicU64::new(0),
            merging: AtomicBool::new(false),
            done: AtomicBool::new(false),
        })
    }

    /// The load opened the store, which held `documents`.
    pub fn opened(&self, documents: u64) {
        self.before.store(documents, Ordering::SeqCst);
    }

    /// The load made its bulk loader.
    pub fn loading(&self) {
        self.loading.store(true, Ordering::SeqCst);
    }

    /// Takes a progress report of the loader.
    pub fn progress(&self, p: &BulkProgress) {
        match p.phase {
            BulkPhase::Ingesting => {
                // Reported once per run, before its journal is written, with the runs
                // ingested before it.
                self.documents.store(p.documents, Ordering::SeqCst);
                self.runs.store(p.runs + 1, Ordering::SeqCst);
            }
            BulkPhase::Merging => self.merging.store(true, Ordering::SeqCst),
            BulkPhase::Done => self.done.store(true, Ordering::SeqCst),
            _ => {}
        }
    }

    /// Whether the load began loading and did not finish: then the store may hold part of it.
    pub fn stopped_midway(&self) -> bool {
        self.loading.load(Ordering::SeqCst) && !self.done.load(Ordering::SeqCst)
    }

    /// What the store holds now, and what to do to complete the load.
    pub fn describe(&self) -> String {
        let path = self.path.display();
        let before = self.before.load(Ordering::SeqCst);
        let runs = self.runs.load(Ordering::SeqCst);
        if self.done.load(Ordering::SeqCst) {
            return format!("every document this load read is in the store at {path}");
        }
        if before == NOT_OPENED {
            return format!(
                "nothing was written: the load had not opened the store at {path} yet{}",
                if self.existed {
                    ", which is as it was"
                } else {
                    " (no store was created)"
                }
            );
        }
        let store = if self.existed {
            format!("the store at {path}")
        } else {
            format!("the store at {path}, which this load created,")
        };
        // What the store held before, for a store that was there.
        let before = self.existed.then(|| {
            format!(
                "the {} it held before this load",
                plural(before, "document", "documents")
            )
        });
        let state = if runs == 0 {
            match before {
                Some(before) => format!(
                    "{store} is unchanged: it holds {before}; the documents this load read were \
                     not stored"
                ),
                None => format!(
                    "{store} holds no documents: the documents this load read were not stored"
                ),
            }
        } else {
            let merge = if self.merging.load(Ordering::SeqCst) {
                "; its runs were being merged: queries find their documents once the next open \
                 for writing has finished the merge"
            } else {
                ""
            };
            let documents = self.documents.load(Ordering::SeqCst);
            format!(
                "{store} is consistent: it holds {}the documents of the runs of this load that \
                 were ingested ({}, the first {} it read; an ingestion under way is \
                 completed by the next open for writing: `load`, `remove`, `compact`, \
                 `serve`){merge}; the documents read after them were not stored",
                before.map(|b| b + " and ").unwrap_or_default(),
                plural(u64::from(runs), "run", "runs"),
                plural(documents, "document", "documents"),
            )
        };
        format!(
            "{state}. Run the same load again to complete it: a document with an id or a key (a \
             file's path, a WARC record's URL, a JSON Lines `id` or key field) replaces the one \
             stored under it, so nothing is stored twice; documents with neither (`--format lines`, \
             JSON Lines without ids or keys) would be stored again"
        )
    }
}

/// The write end of the pipe that the Ctrl-C handler writes to (-1: none).
static INTERRUPT_PIPE: AtomicI32 = AtomicI32::new(-1);

/// The SIGINT handler: one byte into the pipe (`write` is async-signal-safe).
extern "C" fn on_interrupt(_: libc::c_int) {
    let fd = INTERRUPT_PIPE.load(Ordering::SeqCst);
    if fd >= 0 {
        let byte = 1u8;
        // SAFETY: `fd` is the open write end of the pipe made in `say_state_on_interrupt`,
        // never closed; the buffer is one live byte.
        unsafe { libc::write(fd, std::ptr::from_ref(&byte).cast(), 1) };
    }
}

/// On Ctrl-C (SIGINT), prints what the store holds (`state`) and ends the process at once,
/// with exit code 130, as a kill would: the store opens consistent afterwards (the bulk
/// loader's journal). A thread waits for the signal handler's byte, so that the printing is
/// not done in the handler.
///
/// # Errors
/// The pipe cannot be made.
pub fn say_state_on_interrupt(state: Arc<LoadState>) -> std::io::Result<()> {
    let mut fds = [-1; 2];
    // SAFETY: `fds` has room for the two descriptors `pipe` writes.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let [read_end, write_end] = fds;
    INTERRUPT_PIPE.store(write_end, Ordering::SeqCst);
    std::thread::Builder::new()
        .name("interrupt".into())
        .spawn(move || loop {
            let mut byte = 0u8;
            // SAFETY: `read_end` is the open read end of the pipe; the buffer is one byte.
            let n = unsafe { libc::read(read_end, std::ptr::from_mut(&mut byte).cast(), 1) };
            if n == 1 {
                eprintln!("\ninterrupted: {}", state.describe());
                // SAFETY: ends the process without running exit handlers, as a kill would:
                // RocksDB's threads may be in the middle of a write, which the journal makes
                // safe, while exit handlers running beside them would not be.
                unsafe { libc::_exit(130) };
            }
            if n == 0
                || (n < 0
                    && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted)
            {
                return;
            }
        })?;
    // SAFETY: `on_interrupt` only loads an atomic and calls `write`, both async-signal-safe.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_interrupt as extern "C" fn(libc::c_int) as libc::sighandler_t,
        )
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(existed: bool) -> LoadState {
        LoadState {
            path: PathBuf::from("pages.db"),
            existed,
            before: AtomicU64::new(NOT_OPENED),
            loading: AtomicBool::new(false),
            runs: AtomicU32::new(0),
            documents: AtomicU64::new(0),
            merging: AtomicBool::new(false),
            done: AtomicBool::new(false),
        }
    }

    #[test]
    fn each_stage_is_described() {
        let s = state(true);
        assert!(s
            .describe()
            .starts_with("nothing was written: the load had not opened the store at pages.db yet, which is as it was"));
        s.opened(7);
        s.loading();
        assert!(s.stopped_midway());
        assert!(s.describe().starts_with(
            "the store at pages.db is unchanged: it holds the 7 documents it held before this load;"
        ));
        s.runs.store(2, Ordering::SeqCst);
        s.documents.store(5000, Ordering::SeqCst);
        let two_runs = s.describe();
        assert!(
            two_runs.starts_with(
                "the store at pages.db is consistent: it holds the 7 documents it held before this \
                 load and the documents of the runs of this load that were ingested (2 runs, the \
                 first 5000 documents it read;"
            ),
            "{two_runs}"
        );
        assert!(!two_runs.contains("merged"), "{two_runs}");
        s.merging.store(true, Ordering::SeqCst);
        assert!(s.describe().contains("its runs were being merged"));
        assert!(s
            .describe()
            .contains(". Run the same load again to complete it"));
        s.done.store(true, Ordering::SeqCst);
        assert!(!s.stopped_midway());

        let new = state(false);
        new.opened(0);
        assert!(new
            .describe()
            .starts_with("the store at pages.db, which this load created, holds no documents:"));
        new.runs.store(1, Ordering::SeqCst);
        assert!(new.describe().starts_with(
            "the store at pages.db, which this load created, is consistent: it holds the documents of the runs"
        ));
    }
}
