//! Crash points for the crate's own tests (`crash_tests.rs`): a test arms one point on its
//! thread, and the loader stops there with an error, leaving the store as a kill would. In
//! other builds no point is ever hit.

use crate::error::Result;

/// Where a load can be stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Point {
    /// Run `run` (0-based) stops after ingesting `families` column families.
    #[cfg_attr(not(test), allow(dead_code))]
    RunIngestion { run: u32, families: u32 },
    /// `finish` stops after the last spooled run, before the merge.
    BeforeMerge,
    /// The merge stops after ingesting block family `i`, before marking it done.
    AfterMergeFamily(usize),
}

#[cfg(test)]
thread_local! {
    static ARMED: std::cell::Cell<Option<Point>> = const { std::cell::Cell::new(None) };
}

/// Arms `point` (or none) for loads on this thread.
#[cfg(test)]
pub(crate) fn arm(point: Option<Point>) {
    ARMED.with(|a| a.set(point));
}

/// The families after which run `run`'s ingestion stops, if a point says so.
pub(crate) fn crash_after_families(run: u32) -> Option<u32> {
    #[cfg(test)]
    if let Some(Point::RunIngestion { run: r, families }) = ARMED.with(std::cell::Cell::get) {
        if r == run {
            return Some(families);
        }
    }
    let _ = run;
    None
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
