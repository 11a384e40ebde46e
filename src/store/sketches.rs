//! What a [`Store`] checks about the sketches it is given and asked for.

use super::Store;
use crate::error::{Error, Result};
use crate::simhash::SketchKind;
use crate::sketch::Sketch;

impl Store {
    /// Whether the store keeps a sketch per document ([`SimhashConfig::sketch`](crate::SimhashConfig::sketch)).
    pub fn keeps_sketches(&self) -> bool {
        self.simhasher().config().sketch != SketchKind::None
    }

    /// [`Error::NoSketches`] unless the store keeps sketches.
    pub(crate) fn require_sketches(&self) -> Result<()> {
        if self.keeps_sketches() {
            Ok(())
        } else {
            Err(Error::NoSketches {
                path: self.path().to_path_buf(),
            })
        }
    }

    /// A sketch given with document `id` must be for a store that keeps sketches (the
    /// document record of another store has no place for it).
    pub(crate) fn check_sketch(&self, id: u64, sketch: Option<&Sketch>) -> Result<()> {
        if sketch.is_some() && !self.keeps_sketches() {
            return Err(Error::InvalidArgument(format!(
                "document {id} comes with a sketch, but the store at {} keeps none: leave the sketch out, or load into a new store made with SimhashConfig::with_sketch",
                self.path().display()
            )));
        }
        Ok(())
    }
}
