#![no_main]

use libfuzzer_sys::fuzz_target;

// The decoders are crate-private: the check is `codec::check_decoders`, exposed under
// `--cfg fuzzing` only.
fuzz_target!(|data: &[u8]| simhash_store::fuzz_decode_values(data));
