//! [`IdAssigner`]: the one rule that gives documents their ids where the caller does not,
//! for `simhash-store load`, the service's writer and the Python package.

/// Gives documents their ids, in the order they are stored: the id a document gives; else
/// the id of the document that holds its external key, unless that id was given to another
/// document (which then replaces the holder); else a new id, past every id stored, given or
/// handed out. Ids never wrap: once id 2^64-1 is stored or given, no new id is left.
///
/// The caller looks up who holds a key (the store, or documents it has not stored yet) and
/// which ids were given; the assigner decides.
///
/// ```
/// use simhash_store::IdAssigner;
/// let mut ids = IdAssigner::starting_at(Some(10));
/// ids.give(20); // a document gives id 20: new ids come after it
/// assert_eq!(ids.new_id(), Some(21));
/// // A key held by document 5 keeps its id, unless the load gave 5 to another document.
/// assert_eq!(ids.for_key(Some(5), |id| id == 20), Some(5));
/// assert_eq!(ids.for_key(Some(20), |id| id == 20), Some(22));
/// ids.give(u64::MAX);
/// assert_eq!(ids.new_id(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdAssigner {
    /// Greater than every id stored, given or handed out; `None` once id 2^64-1 is.
    next: Option<u64>,
}

impl IdAssigner {
    /// An assigner whose first new id is `next` (`None`: no new id is left).
    pub fn starting_at(next: Option<u64>) -> IdAssigner {
        IdAssigner { next }
    }

    /// The id [`IdAssigner::new_id`] would hand out next, if any is left.
    pub fn peek(&self) -> Option<u64> {
        self.next
    }

    /// Notes that a document gives `id`: new ids come after it.
    pub fn give(&mut self, id: u64) {
        self.next = match (self.next, id.checked_add(1)) {
            (Some(next), Some(after)) => Some(next.max(after)),
            _ => None,
        };
    }

    /// A new id, past every id stored, given or handed out; `None` once none is left.
    pub fn new_id(&mut self) -> Option<u64> {
        let id = self.next?;
        self.next = id.checked_add(1);
        Some(id)
    }

    /// The id of a document without one whose key `holder` holds (`None`: no document
    /// does): the holder's id, unless `given_away(id)` says it was given to another
    /// document; else a new id ([`IdAssigner::new_id`]). A document without a key takes
    /// `for_key(None, ..)`, a new id.
    pub fn for_key(
        &mut self,
        holder: Option<u64>,
        given_away: impl FnOnce(u64) -> bool,
    ) -> Option<u64> {
        match holder {
            Some(id) if !given_away(id) => Some(id),
            _ => self.new_id(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use proptest::prelude::*;

    use super::*;

    /// A document to store: the id it gives, its key.
    type Doc = (Option<u64>, Option<u8>);

    /// The rule written out plainly: a new id is one past the largest id stored, given or
    /// handed out before, or none past 2^64-1.
    fn model(stored: &BTreeMap<u8, u64>, docs: &[Doc]) -> Vec<Option<u64>> {
        let mut keys = stored.clone();
        let mut seen: BTreeSet<u64> = stored.values().copied().collect();
        let mut given = BTreeSet::new();
        let mut out = Vec::new();
        for &(id, key) in docs {
            let holder = key.and_then(|k| keys.get(&k).copied());
            let got = match (id, holder) {
                (Some(id), _) => {
                    given.insert(id);
                    Some(id)
                }
                (None, Some(h)) if !given.contains(&h) => Some(h),
                _ => match seen.last() {
                    None => Some(0),
                    Some(&max) => max.checked_add(1),
                },
            };
            if let Some(got) = got {
                seen.insert(got);
                if let Some(k) = key {
                    keys.insert(k, got);
                }
            }
            out.push(got);
            if got.is_none() {
                break;
            }
        }
        out
    }

    fn assign(stored: &BTreeMap<u8, u64>, docs: &[Doc]) -> Vec<Option<u64>> {
        let next = match stored.values().max() {
            None => Some(0),
            Some(&max) => max.checked_add(1),
        };
        let mut ids = IdAssigner::starting_at(next);
        let mut keys = stored.clone();
        let mut given = BTreeSet::new();
        let mut out = Vec::new();
        for &(id, key) in docs {
            let got = match id {
                Some(id) => {
                    ids.give(id);
                    given.insert(id);
                    Some(id)
                }
                None => {
                    let holder = key.and_then(|k| keys.get(&k).copied());
                    ids.for_key(holder, |h| given.contains(&h))
                }
            };
            if let (Some(got), Some(k)) = (got, key) {
                keys.insert(k, got);
            }
            out.push(got);
            if got.is_none() {
                break;
            }
        }
        out
    }

    fn id() -> impl Strategy<Value = u64> {
        prop_oneof![0..40u64, Just(u64::MAX - 1), Just(u64::MAX)]
    }

    proptest! {
        #[test]
        fn assigns_as_the_model(
            stored in prop::collection::btree_map(0..6u8, 0..30u64, 0..4),
            docs in prop::collection::vec((prop::option::of(id()), prop::option::of(0..6u8)), 0..24),
        ) {
            prop_assert_eq!(assign(&stored, &docs), model(&stored, &docs));
        }
    }

    #[test]
    fn no_id_is_left_after_the_largest() {
        let mut ids = IdAssigner::starting_at(Some(u64::MAX));
        assert_eq!(ids.new_id(), Some(u64::MAX));
        assert_eq!(ids.new_id(), None);
        assert_eq!(ids.for_key(Some(3), |_| false), Some(3));
        assert_eq!(ids.for_key(Some(3), |_| true), None);
        let mut ids = IdAssigner::starting_at(Some(5));
        ids.give(2);
        assert_eq!(ids.peek(), Some(5));
        ids.give(u64::MAX);
        assert_eq!(ids.peek(), None);
    }
}
