#![no_main]
//! The request decoding of `simhash-store serve` (`src/server/api.rs`, compiled here alone):
//! every body decodes to a request or to an error message, never a panic.

use libfuzzer_sys::fuzz_target;

#[path = "../../src/server/api.rs"]
#[allow(dead_code)]
mod api;

fuzz_target!(|data: &[u8]| api::check_all(data));
