//! The planner's rules one add at a time: what the store will hold once a sequence of adds,
//! not yet written, is. [`StagedBatch`](crate::StagedBatch) asks this between adds
//! (to decide the next one against the store as the earlier ones leave it); the planner
//! then writes them all at once.
//!
//! In the terms of the rules of `mod.rs`: an add is stored (a *survivor*) if it is the last
//! add of its id and, if it has a key, the last add naming that key (rules 1 and 2); a stored
//! document is replaced or removed (*displaced*) if an add has its id or names its key
//! (rule 3); a key the adds name ends owned by its last claimant if that add survives, else
//! by nobody.

use std::collections::HashMap;

use crate::fingerprint::Fingerprint;
use crate::upsert::Entry;

/// A sequence of adds not yet written, in add order.
#[derive(Debug, Default)]
pub(crate) struct PendingAdds {
    /// Every add, in order.
    entries: Vec<Entry>,
    /// The last add of each id.
    last_of_id: HashMap<u64, usize>,
    /// The last add naming each key.
    last_of_key: HashMap<String, usize>,
}

impl PendingAdds {
    /// Appends `entry`.
    pub(crate) fn push(&mut self, entry: Entry) {
        let at = self.entries.len();
        self.last_of_id.insert(entry.id, at);
        if let Some(key) = &entry.key {
            self.last_of_key.insert(key.clone(), at);
        }
        self.entries.push(entry);
    }

    /// The number of adds.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no add.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The adds, in order.
    pub(crate) fn into_entries(self) -> Vec<Entry> {
        self.entries
    }

    /// Whether add `at` is stored once the adds are.
    pub(crate) fn survives(&self, at: usize) -> bool {
        let Some(entry) = self.entries.get(at) else {
            return false;
        };
        self.last_of_id.get(&entry.id) == Some(&at)
            && entry
                .key
                .as_ref()
                .is_none_or(|key| self.last_of_key.get(key) == Some(&at))
    }

    /// The survivors within Hamming distance `k` of `fp`, with their positions and distances,
    /// in add order.
    pub(crate) fn within(
        &self,
        fp: Fingerprint,
        k: u32,
    ) -> impl Iterator<Item = (usize, &Entry, u32)> {
        self.entries
            .iter()
            .enumerate()
            .map(move |(at, e)| (at, e, e.fingerprint.distance(fp)))
            .filter(move |&(at, _, distance)| distance <= k && self.survives(at))
    }

    /// Whether the adds replace or remove the stored document `id` holding `key`.
    pub(crate) fn displace(&self, id: u64, key: Option<&str>) -> bool {
        self.last_of_id.contains_key(&id) || key.is_some_and(|k| self.last_of_key.contains_key(k))
    }

    /// Who owns `key` once the adds are stored, if the adds name it: `Some(Some(at))` for
    /// survivor `at`, `Some(None)` for nobody; `None` if no add names it (its stored owner
    /// keeps it unless [`PendingAdds::displace`]d).
    pub(crate) fn owner_of_key(&self, key: &str) -> Option<Option<(usize, u64)>> {
        let &at = self.last_of_key.get(key)?;
        let owner = self.entries.get(at).filter(|_| self.survives(at));
        Some(owner.map(|e| (at, e.id)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(id: u64, key: Option<&str>) -> Entry {
        let e = Entry::new(id, Fingerprint(id));
        match key {
            Some(k) => e.with_key(k),
            None => e,
        }
    }

    #[test]
    fn the_last_add_of_an_id_and_of_a_key_survives() {
        let mut p = PendingAdds::default();
        p.push(add(1, Some("x")));
        p.push(add(2, Some("x"))); // takes "x": 1 is removed
        p.push(add(1, None)); // 1 again, without a key
        p.push(add(3, Some("y")));
        p.push(add(3, Some("z"))); // 3 gives up "y"
        let survivors: Vec<usize> = p.within(Fingerprint(0), 64).map(|(at, ..)| at).collect();
        assert_eq!(survivors, [1, 2, 4]);
        assert_eq!(p.owner_of_key("x"), Some(Some((1, 2))));
        assert_eq!(p.owner_of_key("y"), Some(None));
        assert_eq!(p.owner_of_key("w"), None);
        assert!(p.displace(1, None));
        assert!(p.displace(9, Some("y")));
        assert!(!p.displace(9, Some("w")));
    }
}
