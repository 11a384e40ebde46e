//! The Hamming distance `k` a query or a pair scan asks for: its range and its default, the
//! one place they are written.
//!
//! Two behaviours, each with its own function: a query clamps ([`clamped`]: every stored
//! document is within 64 bits, so a larger `k` asks for the same answer as 64); a pair scan's
//! kernel, a partition and a verification reject ([`checked`]), since theirs is a setting a
//! caller should get right.

use crate::error::{Error, Result};

/// The largest meaningful distance: a fingerprint's width.
pub const MAX_DISTANCE: u32 = 64;

/// The distance the command, the service and the Python package use unless told otherwise:
/// suits pages of a few hundred words or more.
pub const DEFAULT_K: u32 = 3;

/// `k`, or [`MAX_DISTANCE`] for a larger one: the same answer.
#[inline]
pub(crate) fn clamped(k: u32) -> u32 {
    k.min(MAX_DISTANCE)
}

/// `k` if it is at most [`MAX_DISTANCE`].
///
/// # Errors
/// [`Error::InvalidArgument`] for a larger `k`.
pub(crate) fn checked(k: u32) -> Result<u32> {
    if k > MAX_DISTANCE {
        return Err(Error::InvalidArgument(format!(
            "k must be in 0..={MAX_DISTANCE}, got {k}"
        )));
    }
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamps_and_checks_the_same_range() {
        for k in [0, 3, MAX_DISTANCE, MAX_DISTANCE + 1, u32::MAX] {
            assert_eq!(clamped(k), k.min(MAX_DISTANCE));
            assert_eq!(checked(k).ok(), (k <= MAX_DISTANCE).then_some(k));
        }
        assert!(
            matches!(checked(65), Err(Error::InvalidArgument(m)) if m == "k must be in 0..=64, got 65")
        );
    }
}
