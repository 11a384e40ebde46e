//! Store formats and upgrading: every on-disk [`Format`] and what it means, and
//! [`Store::upgrade`](crate::Store::upgrade), which copies every document of a store of any format this build reads
//! (older ones are read-only) into a new store of [`FORMAT_VERSION`], through the bulk
//! loader, and verifies the copy. [`Store::format_version`](crate::Store::format_version) tells a store's format.

pub use crate::store::upgrade::{UpgradeOptions, UpgradePhase, UpgradeProgress, UpgradeSummary};
pub use crate::store::{Format, FORMAT_VERSION, MIN_FORMAT_VERSION};
