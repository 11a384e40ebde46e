//! Crash points for the crate's own tests (`src/store/bulk_loader/crash_tests.rs`, `src/store/backup.rs`):
//! a test arms one point on its thread, and the bulk loader, the journal's ingestion or a
//! backup stops there with an error, leaving the store as a kill would. In other builds no
//! point is ever hit.

use crate::error::Result;

/// Where a load can be stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Point {
    /// The `run`-th journal ingested on this thread since the point was armed (0-based: a
    /// bulk load's runs, then its merge) stops after ingesting `families` column families.
    #[cfg_attr(not(test), allow(dead_code))]
    RunIngestion { run: u32, families: u32 },
    /// `finish` stops after the last spooled run, before the merge.
    BeforeMerge,
    /// The merge stops after ingesting block family `i`, before marking it done.
    AfterMergeFamily(usize),
    /// The merge's ingestion of block family `i` fails before it begins, on the ingestion's
    /// thread, while the next family is merged.
    MergeIngestion(usize),
    /// A backup stops once its copy is complete, before renaming it to its destination.
    BeforeBackupRename,
}

#[cfg(test)]
thread_local! {
    static ARMED: std::cell::Cell<Option<Point>> = const { std::cell::Cell::new(None) };
    /// Journals ingested on this thread since the point was armed.
    static INGESTED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Arms `point` (or none) for loads on this thread.
#[cfg(test)]
pub(crate) fn arm(point: Option<Point>) {
    ARMED.with(|a| a.set(point));
    INGESTED.with(|n| n.set(0));
}

/// Called by a journal's ingestion before each column family, `families` of them done: an
/// error if a [`Point::RunIngestion`] says this journal stops there.
pub(crate) fn before_ingesting(families: u32) -> Result<()> {
    #[cfg(test)]
    if let Some(point @ Point::RunIngestion { run, families: f }) = ARMED.with(std::cell::Cell::get)
    {
        if run == INGESTED.with(std::cell::Cell::get) && f == families {
            return hit(point);
        }
    }
    let _ = families;
    Ok(())
}

/// Called by a journal's ingestion when it is done.
pub(crate) fn ingested() {
    #[cfg(test)]
    INGESTED.with(|n| n.set(n.get() + 1));
}

/// An error if `point` is armed.
pub(crate) fn hit(point: Point) -> Result<()> {
    #[cfg(test)]
    if ARMED.with(std::cell::Cell::get) == Some(point) {
        return Err(crate::error::Error::InvalidArgument(format!(
            "simulated crash at {point:?} (a test hook): reopen the store to recover"
        )));
    }
    let _ = point;
    Ok(())
}
