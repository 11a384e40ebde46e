//! Phase 3 of the upsert plan: the writes that apply what phase 2 found.

use super::*;

/// The writes that apply what phase 2 found.
pub(super) fn emit(adds: &impl Adds, met: Met) -> UpsertPlan {
    let Met {
        resolved,
        replaced,
        mut kept,
        mut changed,
        renewed,
        removed,
        claimed,
        stale_keys,
    } = met;

    // A survivor whose stored document an earlier add removed is stored anew.
    for id in renewed {
        if let Some(&seq) = resolved
            .survivor_index(adds, id)
            .and_then(|j| resolved.survivors.get(j))
        {
            kept.renew(seq);
        }
    }
    changed.extend(removed.iter().map(|r| (r.id, r.fingerprint)));

    // A claimed key ends owned by its owner, or is deleted if it had one before.
    let mut key_writes: Vec<KeyWrite> = claimed
        .into_iter()
        .filter_map(|(claim, stored_owner)| {
            let key = KeyName::Add(claim.last);
            match (claim.owner, stored_owner) {
                (Some(id), _) => Some(KeyWrite::Put(key, id)),
                (None, Some(_)) => Some(KeyWrite::Delete(key)),
                (None, None) => None,
            }
        })
        .collect();
    // Claimed keys are in key order; merge in the stale ones.
    if !stale_keys.is_empty() {
        key_writes.extend(
            stale_keys
                .into_iter()
                .map(|k| KeyWrite::Delete(KeyName::Stored(k))),
        );
        key_writes.sort_by(|a, b| a.key().bytes(adds).cmp(b.key().bytes(adds)));
    }

    UpsertPlan {
        added: resolved.survivors.len() as u64 - replaced,
        replaced,
        removed: removed.len() as u64,
        superseded: resolved.superseded,
        survivors: resolved.survivors,
        added_times: kept,
        block_deletes: changed,
        doc_deletes: removed.iter().map(|r| r.id).collect(),
        key_writes,
    }
}
