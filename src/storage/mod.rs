//! The storage layer under the postings and the store: what reads RocksDB through one
//! consistent state.
//!
//! - `view.rs`: [`View`], a snapshot of a writable store or a read-only store as opened.

mod view;

pub(crate) use view::View;
