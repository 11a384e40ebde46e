//! Phase 2 of the upsert plan: what the adds meet in the store (rules 3 and 4).

use super::*;

/// A stored document that the adds delete.
pub(super) struct Removed {
    pub(super) id: u64,
    pub(super) fingerprint: u64,
}

/// Phase 2's result: the stored documents and keys the adds meet.
pub(super) struct Met {
    /// Phase 1's result.
    pub(super) resolved: Resolved,
    /// Survivors that replace a stored document; the others are new.
    pub(super) replaced: u64,
    /// The `added` times that survivors keep from the stored documents they replace.
    pub(super) kept: AddedTimes,
    /// Block entries of replaced documents whose fingerprint changes: (id, fingerprint).
    pub(super) changed: Vec<(u64, u64)>,
    /// Ids of survivors that an earlier add removed from the store by taking their key:
    /// stored anew.
    pub(super) renewed: Vec<u64>,
    /// Stored documents the adds delete and do not add again, by id, ids distinct.
    pub(super) removed: Vec<Removed>,
    /// Each key the adds claim, in key order, with its stored owner.
    pub(super) claimed: Vec<(Claim, Option<u64>)>,
    /// Keys of replaced or removed documents that still name them and that no add claims,
    /// sorted.
    pub(super) stale_keys: Vec<String>,
}

/// Reads what the adds meet in the store: rules 3 and 4.
pub(super) fn look_up(stored: &impl Stored, adds: &impl Adds, resolved: Resolved) -> Result<Met> {
    let range = if stored.count() == 0 {
        None
    } else if resolved.survivors.len() < RANGE_CHECK_MIN {
        Some((0, u64::MAX))
    } else {
        stored.id_range()?
    };
    let Some((lo, hi)) = range else {
        // Nothing stored: nothing to replace, remove or take keys from.
        return Ok(Met {
            claimed: resolved.claims.keys.iter().map(|&c| (c, None)).collect(),
            resolved,
            replaced: 0,
            kept: AddedTimes::AllNew,
            changed: Vec::new(),
            renewed: Vec::new(),
            removed: Vec::new(),
            stale_keys: Vec::new(),
        });
    };

    // Keys of replaced or removed documents, with their ids: deleted if still pointing to
    // their document and not claimed by the adds.
    let mut old_keys: Vec<(String, u64)> = Vec::new();

    // Survivors against the store, in batches of sorted ids.
    let (mut replaced, mut kept, mut changed) = (0, AddedTimes::AllNew, Vec::new());
    for seqs in resolved.survivors.chunks(LOOKUP_BATCH) {
        let ids: Vec<u64> = seqs.iter().map(|&s| adds.id(s)).collect();
        if !ids.iter().any(|id| (lo..=hi).contains(id)) {
            continue;
        }
        for ((&seq, &id), old) in seqs.iter().zip(&ids).zip(stored.documents_of(&ids)?) {
            let Some(old) = old else { continue };
            replaced += 1;
            kept.keep(adds.len(), seq, old.added);
            if old.fingerprint.0 != adds.fingerprint(seq) {
                changed.push((id, old.fingerprint.0));
            }
            if let Some(old_key) = old.key {
                if adds.key(seq) != Some(old_key.as_bytes()) {
                    old_keys.push((old_key, id));
                }
            }
        }
    }

    // Dropped ids: deleted if stored.
    let mut removed = stored_documents(stored, &resolved.dropped, &mut old_keys)?;

    // Claimed keys: their stored owners are removed unless the adds store them again.
    let mut owners = Vec::with_capacity(resolved.claims.keys.len());
    for batch in resolved.claims.keys.chunks(LOOKUP_BATCH) {
        let keys: Vec<&[u8]> = batch
            .iter()
            .map(|c| adds.key(c.last).unwrap_or_default())
            .collect();
        owners.extend(stored.owners_of(&keys)?);
    }
    let mut owners_to_remove: Vec<u64> = owners
        .iter()
        .flatten()
        .copied()
        .filter(|&z| !resolved.names_id(adds, z))
        .collect();
    owners_to_remove.sort_unstable();
    owners_to_remove.dedup();
    removed.extend(stored_documents(stored, &owners_to_remove, &mut old_keys)?);
    // Disjoint: the adds name the dropped ids, not the owners removed.
    removed.sort_unstable_by_key(|r| r.id);

    // The first claim of a key takes it from its stored owner, unless that is the same id
    // or an earlier add of the owner gave up the key.
    let mut renewed = resolved.claims.taken_from.clone();
    for (claim, owner) in resolved.claims.keys.iter().zip(&owners) {
        let Some(z) = *owner else { continue };
        if z != adds.id(claim.first)
            && resolved
                .order
                .first_add(adds, z)
                .is_none_or(|t| t > claim.first)
        {
            renewed.push(z);
        }
    }

    old_keys.retain(|(key, _)| !resolved.claims_key(adds, key.as_bytes()));
    old_keys.sort_unstable();
    old_keys.dedup_by(|a, b| a.0 == b.0);
    let mut stale_keys = Vec::new();
    for batch in old_keys.chunks(LOOKUP_BATCH) {
        let keys: Vec<&[u8]> = batch.iter().map(|(k, _)| k.as_bytes()).collect();
        for ((key, id), owner) in batch.iter().zip(stored.owners_of(&keys)?) {
            if owner == Some(*id) {
                stale_keys.push(key.clone());
            }
        }
    }

    Ok(Met {
        claimed: resolved.claims.keys.iter().copied().zip(owners).collect(),
        resolved,
        replaced,
        kept,
        changed,
        renewed,
        removed,
        stale_keys,
    })
}

/// The stored documents among `ids` (sorted); their keys go to `old_keys`.
pub(super) fn stored_documents(
    stored: &impl Stored,
    ids: &[u64],
    old_keys: &mut Vec<(String, u64)>,
) -> Result<Vec<Removed>> {
    let mut found = Vec::new();
    for batch in ids.chunks(LOOKUP_BATCH) {
        for (&id, old) in batch.iter().zip(stored.documents_of(batch)?) {
            let Some(old) = old else { continue };
            found.push(Removed {
                id,
                fingerprint: old.fingerprint.0,
            });
            if let Some(key) = old.key {
                old_keys.push((key, id));
            }
        }
    }
    Ok(found)
}
