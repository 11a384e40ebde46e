//! Phase 1 of the upsert plan: the adds among themselves (rules 1 and 2).

use rayon::prelude::*;

use super::*;

/// The adds in id order, to find the adds of one id.
pub(super) enum IdOrder {
    /// Ids are strictly increasing: add order is id order, one add per id.
    Ascending,
    /// `id << 64 | seq` of every add, sorted.
    Sorted(Vec<u128>),
}

impl IdOrder {
    /// The first add of `id`.
    pub(super) fn first_add(&self, adds: &impl Adds, id: u64) -> Option<u32> {
        match self {
            IdOrder::Ascending => {
                let n = adds.len() as u32;
                let (mut lo, mut hi) = (0u32, n);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if adds.id(mid) < id {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                (lo < n && adds.id(lo) == id).then_some(lo)
            }
            IdOrder::Sorted(order) => {
                let at = order.partition_point(|&x| x < u128::from(id) << 64);
                order
                    .get(at)
                    .filter(|&&x| (x >> 64) as u64 == id)
                    .map(|&x| x as u64 as u32)
            }
        }
    }

    /// The next add of `id` after add `seq` (an add of `id`).
    pub(super) fn next_add(&self, id: u64, seq: u32) -> Option<u32> {
        match self {
            IdOrder::Ascending => None,
            IdOrder::Sorted(order) => {
                let at = order.partition_point(|&x| x <= (u128::from(id) << 64 | u128::from(seq)));
                order
                    .get(at)
                    .filter(|&&x| (x >> 64) as u64 == id)
                    .map(|&x| x as u64 as u32)
            }
        }
    }
}

/// The last add of each id.
pub(super) struct LastAdds {
    /// Sequence numbers of the last add of each id, in id order.
    pub(super) seqs: Vec<u32>,
    /// Adds that an add of the same id supersedes.
    pub(super) superseded: u64,
    /// The adds in id order.
    pub(super) order: IdOrder,
}

/// The last add of each id. The sorted order is kept only when keys need it.
pub(super) fn last_add_per_id(adds: &(impl Adds + Sync)) -> LastAdds {
    let n = adds.len();
    if adds.ids_ascending() {
        return LastAdds {
            seqs: (0..n as u32).collect(),
            superseded: 0,
            order: IdOrder::Ascending,
        };
    }
    let mut order: Vec<u128> = (0..n as u32)
        .into_par_iter()
        .map(|seq| (u128::from(adds.id(seq)) << 64) | u128::from(seq))
        .collect();
    order.par_sort_unstable();
    let mut seqs: Vec<u32> = Vec::with_capacity(n);
    for (i, &x) in order.iter().enumerate() {
        let id = (x >> 64) as u64;
        let next_same = order.get(i + 1).is_some_and(|&y| (y >> 64) as u64 == id);
        if !next_same {
            seqs.push(x as u64 as u32);
        }
    }
    let superseded = (n - seqs.len()) as u64;
    // Without keys, nothing asks for the adds of an id.
    let order = if adds.has_keys() {
        IdOrder::Sorted(order)
    } else {
        IdOrder::Ascending
    };
    LastAdds {
        seqs,
        superseded,
        order,
    }
}

/// An external key the adds name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Claim {
    /// The first add naming it.
    pub(super) first: u32,
    /// The last add naming it.
    pub(super) last: u32,
    /// The id that owns the key in the end: that of `last` if it is its id's last add.
    pub(super) owner: Option<u64>,
}

/// Who claims each key of the adds.
#[derive(Debug, Default)]
pub(super) struct Claims {
    /// Every distinct key, in key order.
    pub(super) keys: Vec<Claim>,
    /// Ids whose document an add of another id removes by taking its key from them.
    pub(super) taken_from: Vec<u64>,
}

/// The claims of the keys of the adds; `is_last` holds the last add of each id.
pub(super) fn claims(adds: &(impl Adds + Sync), order: &IdOrder, is_last: &SeqSet) -> Claims {
    let mut seqs: Vec<u32> = (0..adds.len() as u32)
        .filter(|&s| adds.key(s).is_some())
        .collect();
    let key = |s: u32| adds.key(s).unwrap_or_default();
    seqs.par_sort_unstable_by(|&a, &b| key(a).cmp(key(b)).then(a.cmp(&b)));
    let mut out = Claims::default();
    let mut group_first = 0;
    for (i, &s) in seqs.iter().enumerate() {
        let Some(&next) = seqs.get(i + 1).filter(|&&t| key(t) == key(s)) else {
            out.keys.push(Claim {
                first: seqs[group_first],
                last: s,
                owner: is_last.contains(s).then(|| adds.id(s)),
            });
            group_first = i + 1;
            continue;
        };
        // Add `next` names the key of add `s`: it takes it from the document of `s`, and so
        // removes that document, unless it is the same id or that id changed in between.
        let id = adds.id(s);
        if adds.id(next) != id && order.next_add(id, s).is_none_or(|t| t > next) {
            out.taken_from.push(id);
        }
    }
    out
}

/// A set of sequence numbers.
#[derive(Debug)]
pub(crate) struct SeqSet(Vec<u64>);

impl SeqSet {
    pub(super) fn new(n: usize) -> Self {
        SeqSet(vec![0; n.div_ceil(64)])
    }
    pub(super) fn insert(&mut self, s: u32) {
        if let Some(w) = self.0.get_mut(s as usize / 64) {
            *w |= 1 << (s % 64);
        }
    }
    pub(super) fn remove(&mut self, s: u32) {
        if let Some(w) = self.0.get_mut(s as usize / 64) {
            *w &= !(1 << (s % 64));
        }
    }
    pub(super) fn contains(&self, s: u32) -> bool {
        self.0
            .get(s as usize / 64)
            .is_some_and(|w| w & (1 << (s % 64)) != 0)
    }
}

/// Phase 1's result: what the adds do among themselves, before the store is read.
pub(super) struct Resolved {
    /// Sequence numbers of the surviving adds, in id order (ids distinct).
    pub(super) survivors: Vec<u32>,
    /// Ids whose last add names a key that a later add of another id claims, sorted.
    pub(super) dropped: Vec<u64>,
    /// The keys the adds name.
    pub(super) claims: Claims,
    /// Adds that are not stored.
    pub(super) superseded: u64,
    /// The adds in id order.
    pub(super) order: IdOrder,
}

impl Resolved {
    /// Where the survivor with `id` is in `survivors`.
    pub(super) fn survivor_index(&self, adds: &impl Adds, id: u64) -> Option<usize> {
        self.survivors
            .binary_search_by(|&s| adds.id(s).cmp(&id))
            .ok()
    }

    /// Whether the adds store or drop `id`.
    pub(super) fn names_id(&self, adds: &impl Adds, id: u64) -> bool {
        self.survivor_index(adds, id).is_some() || self.dropped.binary_search(&id).is_ok()
    }

    /// Whether the adds claim `key`.
    pub(super) fn claims_key(&self, adds: &impl Adds, key: &[u8]) -> bool {
        self.claims
            .keys
            .binary_search_by(|c| adds.key(c.last).unwrap_or_default().cmp(key))
            .is_ok()
    }
}

/// Resolves the adds among themselves: rules 1 and 2.
pub(super) fn resolve(adds: &(impl Adds + Sync)) -> Resolved {
    let LastAdds {
        seqs: last,
        superseded,
        order,
    } = last_add_per_id(adds);
    if !adds.has_keys() {
        return Resolved {
            survivors: last,
            dropped: Vec::new(),
            claims: Claims::default(),
            superseded,
            order,
        };
    }
    let mut is_last = SeqSet::new(adds.len());
    for &s in &last {
        is_last.insert(s);
    }
    let claims = claims(adds, &order, &is_last);
    let mut claimants = SeqSet::new(adds.len());
    for c in &claims.keys {
        claimants.insert(c.last);
    }
    let (survivors, dropped): (Vec<u32>, Vec<u32>) = last
        .into_iter()
        .partition(|&s| adds.key(s).is_none() || claimants.contains(s));
    // `last` is in id order, so `dropped` is too.
    let dropped: Vec<u64> = dropped.into_iter().map(|s| adds.id(s)).collect();
    Resolved {
        superseded: superseded + dropped.len() as u64,
        survivors,
        dropped,
        claims,
        order,
    }
}
