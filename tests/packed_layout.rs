//! The packed layout (format 8) against a model: random sequences of single inserts and
//! removals (deltas), bulk runs (new segments, whose upserts hide older chunks' entries),
//! folds (by enough deltas in a group, and by `compact`) and reopens. After every step queries
//! at every distance 0..=8 answer like a brute-force scan of the model, the pair scan finds
//! the model's pairs, and at the end `verify()` is clean.

mod common;

use std::collections::BTreeMap;

use common::families::ALL_FAMILIES;
use proptest::prelude::*;
use simhash_store::upgrade::FORMAT_VERSION;
use simhash_store::verify::Problem;
use simhash_store::{BulkOptions, Fingerprint, Result, Store};

#[derive(Debug, Clone)]
enum Op {
    Insert(u64, u64),
    Remove(u64),
    Bulk(Vec<(u64, u64)>),
    Compact,
    Reopen,
}

/// Fingerprints near three centres whose blocks repeat (skewed block values: few groups, many
/// documents each), so groups take many deltas and fold, and near-duplicates at every
/// distance are common.
fn fingerprint() -> impl Strategy<Value = u64> {
    (0usize..3, proptest::collection::vec(0u32..64, 0..6)).prop_map(|(c, bits)| {
        let centres = [0u64, 0x5555_5555_5555_5555, 0x0123_0123_0123_0123];
        bits.iter().fold(centres[c], |acc, b| acc ^ (1 << b))
    })
}

fn op() -> impl Strategy<Value = Op> {
    let id = 0u64..40;
    prop_oneof![
        6 => (id.clone(), fingerprint()).prop_map(|(id, fp)| Op::Insert(id, fp)),
        3 => id.clone().prop_map(Op::Remove),
        2 => proptest::collection::vec((id, fingerprint()), 0..60).prop_map(Op::Bulk),
        1 => Just(Op::Compact),
        1 => Just(Op::Reopen),
    ]
}

fn brute_force(model: &BTreeMap<u64, u64>, q: u64, k: u32) -> Vec<(u64, u32)> {
    let mut want: Vec<(u64, u32)> = model
        .iter()
        .map(|(&id, &fp)| (id, (fp ^ q).count_ones()))
        .filter(|&(_, d)| d <= k)
        .collect();
    want.sort_by_key(|&(id, d)| (d, id));
    want
}

fn check(store: &Store, model: &BTreeMap<u64, u64>) -> Result<()> {
    assert_eq!(store.len(), model.len() as u64);
    let mut queries: Vec<u64> = model.values().copied().take(6).collect();
    queries.extend([0u64, 0x5555_5555_5555_5554, 0x0123_0123_0123_8123, u64::MAX]);
    for &q in &queries {
        for k in 0..=8 {
            let got: Vec<(u64, u32)> = store
                .query(Fingerprint(q), k)?
                .iter()
                .map(|m| (m.id, m.distance))
                .collect();
            assert_eq!(got, brute_force(model, q, k), "query {q:#x} k {k}");
        }
    }
    let mut pairs: Vec<(u64, u64)> = store
        .pairs(3)
        .collect()?
        .into_iter()
        .map(|p| (p.a.min(p.b), p.a.max(p.b)))
        .collect();
    pairs.sort_unstable();
    let docs: Vec<(u64, u64)> = model.iter().map(|(&id, &fp)| (id, fp)).collect();
    let mut want = Vec::new();
    for (x, &(a, fa)) in docs.iter().enumerate() {
        for &(b, fb) in &docs[x + 1..] {
            if (fa ^ fb).count_ones() <= 3 {
                want.push((a.min(b), a.max(b)));
            }
        }
    }
    want.sort_unstable();
    assert_eq!(pairs, want);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn packed_store_equals_model(ops in proptest::collection::vec(op(), 1..40)) {
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut store = Store::open(dir.path())?;
        let mut model = BTreeMap::new();
        for op in ops {
            match op {
                Op::Insert(id, fp) => {
                    store.insert(id, Fingerprint(fp))?;
                    model.insert(id, fp);
                }
                Op::Remove(id) => {
                    prop_assert_eq!(store.remove(id)?, model.remove(&id).is_some());
                }
                Op::Bulk(docs) => {
                    let mut loader = store.bulk_loader_with(BulkOptions::default())?;
                    for &(id, fp) in &docs {
                        loader.add(id, Fingerprint(fp))?;
                        model.insert(id, fp);
                    }
                    loader.finish()?;
                }
                Op::Compact => store.compact()?,
                Op::Reopen => {
                    drop(store);
                    store = Store::open(dir.path())?;
                }
            }
            check(&store, &model)?;
        }
        let report = store.verify()?;
        prop_assert!(report.is_clean(), "{report}");
    }
}

/// A group of more documents than a chunk holds, by bulk runs and by single inserts, folded
/// and not: every chunk of it is read.
#[test]
fn groups_larger_than_a_chunk() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let store = Store::open(dir.path())?;
    assert_eq!(store.format_version(), FORMAT_VERSION);
    let mut model = BTreeMap::new();
    let mut state = 7u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 16
    };
    // Block 0 is the same for all: one group of 10,000 in family block0.
    let mut loader = store.bulk_loader()?;
    for id in 0..10_000u64 {
        let fp = 0xabcd_0000_0000_0000 | (next() & 0xffff_ffff_ffff);
        loader.add(id, Fingerprint(fp))?;
        model.insert(id, fp);
    }
    loader.finish()?;
    for id in 10_000..10_300u64 {
        let fp = 0xabcd_0000_0000_0000 | (next() & 0xffff_ffff_ffff);
        store.insert(id, Fingerprint(fp))?;
        model.insert(id, fp);
    }
    for id in (0..10_300u64).step_by(7) {
        store.remove(id)?;
        model.remove(&id);
    }
    let sample: Vec<u64> = model.values().copied().step_by(97).collect();
    for compacted in [false, true] {
        if compacted {
            store.compact()?;
        }
        for &q in &sample {
            for k in [0, 3, 6] {
                let got: Vec<(u64, u32)> = store
                    .query(Fingerprint(q ^ 0b101), k)?
                    .iter()
                    .map(|m| (m.id, m.distance))
                    .collect();
                assert_eq!(got, brute_force(&model, q ^ 0b101, k));
            }
        }
        let report = store.verify()?;
        assert!(report.is_clean(), "{report}");
        assert_eq!(store.len(), model.len() as u64);
    }
    Ok(())
}

/// The delta key (formats 7 and 8) of document `id` with fingerprint `fp` in family `block0`:
/// block 0, the kind byte `00`, the other three blocks, the id (docs/design.md).
fn block0_delta_key(fp: u64, id: u64) -> Vec<u8> {
    let mut key = Vec::with_capacity(17);
    key.extend_from_slice(&fp.to_be_bytes()[..2]);
    key.push(0x00);
    key.extend_from_slice(&fp.to_be_bytes()[2..]);
    key.extend_from_slice(&id.to_be_bytes());
    key
}

/// `verify` finds an entry without its document and a document whose entry a stray removal
/// hides, in a packed store: the checksum notices, and the entry-by-entry pass names them.
#[test]
fn verify_names_orphans_and_hidden_entries() -> std::result::Result<(), Box<dyn std::error::Error>>
{
    let dir = tempfile::tempdir()?;
    let (a, b) = (0x1234_5678_9abc_def0u64, 0x0fed_cba9_8765_4321u64);
    {
        let store = Store::open(dir.path())?;
        let mut loader = store.bulk_loader()?;
        loader.add(1, Fingerprint(a))?;
        loader.add(2, Fingerprint(b))?;
        loader.finish()?;
        assert!(store.verify()?.is_clean());
    }
    {
        let db = rocksdb::DB::open_cf(&rocksdb::Options::default(), dir.path(), ALL_FAMILIES)?;
        let block0 = db.cf_handle(ALL_FAMILIES[0]).ok_or("block0")?;
        // An added entry of a document that does not exist.
        db.put_cf(block0, block0_delta_key(a ^ 1, 9), b"")?;
        // A removal hiding document 2's entry in every segment (watermark above them all).
        db.put_cf(block0, block0_delta_key(b, 2), u32::MAX.to_be_bytes())?;
        db.flush_cf(block0)?;
    }
    let store = Store::open(dir.path())?;
    let report = store.verify()?;
    assert!(!report.is_clean(), "{report}");
    assert!(
        report
            .problems
            .iter()
            .any(|p| matches!(p, Problem::OrphanBlockEntry { id: 9, .. })),
        "{report}"
    );
    assert!(
        report
            .problems
            .iter()
            .any(|p| matches!(p, Problem::MissingBlockEntry { id: 2, .. })),
        "{report}"
    );
    // A query reports a document from the first family whose block matches, block 0 here,
    // where the removal hides it: the damage shows, as `verify` says.
    assert!(store.query(Fingerprint(b), 0)?.is_empty());
    Ok(())
}

/// The key (format 8) of the ids of chunk `number` of segment `segment` of block value
/// `value`: the value, the kind byte `02`, `u32::MAX` − segment, the chunk number
/// (docs/design.md).
fn ids_key(value: u16, segment: u32, number: u32) -> Vec<u8> {
    let mut key = value.to_be_bytes().to_vec();
    key.push(0x02);
    key.extend_from_slice(&(u32::MAX - segment).to_be_bytes());
    key.extend_from_slice(&number.to_be_bytes());
    key
}

/// A chunk's ids are a key of their own: a query that matches in a chunk whose ids are gone
/// or cut short fails with a decode error naming the key, and so does `verify`, instead of
/// answering with wrong ids; a query that matches nothing in that chunk does not read them.
#[test]
fn a_chunk_without_its_ids_is_a_decode_error() -> std::result::Result<(), Box<dyn std::error::Error>>
{
    let (a, b) = (0x1234_5678_9abc_def0u64, 0x1234_0fed_cba9_8765u64);
    for damage in ["missing", "short"] {
        let dir = tempfile::tempdir()?;
        {
            let store = Store::open(dir.path())?;
            let mut loader = store.bulk_loader()?;
            loader.add(1, Fingerprint(a))?;
            loader.add(2, Fingerprint(b))?;
            loader.finish()?;
            assert_eq!(store.query(Fingerprint(a), 0)?.len(), 1);
        }
        {
            let db = rocksdb::DB::open_cf(&rocksdb::Options::default(), dir.path(), ALL_FAMILIES)?;
            let block0 = db.cf_handle(ALL_FAMILIES[0]).ok_or("block0")?;
            // Both documents share block 0 (0x1234): one chunk of segment 1 in block0.
            let key = ids_key(0x1234, 1, 0);
            let ids = db
                .get_cf(block0, &key)?
                .ok_or("the ids key of the bulk run's chunk")?;
            if damage == "missing" {
                db.delete_cf(block0, &key)?;
            } else {
                db.put_cf(block0, &key, &ids[..ids.len() - 1])?;
            }
            db.flush_cf(block0)?;
        }
        let store = Store::open(dir.path())?;
        // Document 1 is reported by family 0 (the first whose block matches): its chunk's ids
        // are needed.
        match store.query(Fingerprint(a), 0) {
            Err(simhash_store::Error::Decode { key, .. }) => {
                assert!(key.starts_with("123402"), "{damage}: {key}")
            }
            other => panic!("{damage}: {other:?}"),
        }
        // Nothing within 0 of this one in that chunk: the ids are not read.
        assert!(store.query(Fingerprint(a ^ 0xff), 0)?.is_empty());
        match store.verify() {
            Ok(report) => assert!(!report.is_clean(), "{damage}: {report}"),
            Err(e) => assert!(matches!(e, simhash_store::Error::Decode { .. }), "{e}"),
        }
    }
    Ok(())
}

/// Block families keep their memtables hashed by block value, and an iterator reads a memtable
/// only in the block value of its last seek: every scan over many groups (pairs, `verify`, a
/// full-scan query) must still see the groups that only the memtable holds, between groups
/// that only the files hold, with and without keys in the memtables.
#[test]
fn scans_see_groups_only_the_memtable_holds() -> std::result::Result<(), Box<dyn std::error::Error>>
{
    use simhash_store::Strategy;
    let dir = tempfile::tempdir()?;
    let store = Store::open(dir.path())?;
    let mut model = BTreeMap::new();
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    // In the files: every block value even.
    const EVEN: u64 = !0x0001_0001_0001_0001;
    let mut loader = store.bulk_loader()?;
    let mut bulk = Vec::new();
    for id in 0..300u64 {
        let fp = next() & EVEN;
        loader.add(id, Fingerprint(fp))?;
        bulk.push(fp);
        model.insert(id, fp);
    }
    loader.finish()?;
    store.flush()?;
    // In the memtables: near-duplicates of those at distance 0..=4, their odd block values
    // (a flipped low bit) in groups no file has, and other random documents.
    for (n, id) in (1000..1300u64).enumerate() {
        let base = bulk[n % bulk.len()];
        let flips = [0u64, 1, 1 << 16, 1 << 32, 1 << 48];
        let fp = if n % 3 == 2 {
            next()
        } else {
            flips.iter().take(n % 5 + 1).fold(base, |acc, f| acc ^ f)
        };
        store.insert(id, Fingerprint(fp))?;
        model.insert(id, fp);
    }
    let scan_all = |store: &Store| -> std::result::Result<(), Box<dyn std::error::Error>> {
        check(store, &model)?;
        let report = store.verify()?;
        assert!(report.is_clean(), "{report}");
        for &q in model.values().take(20) {
            for k in [0, 3, 8] {
                let got: Vec<(u64, u32)> = store
                    .query_with(Fingerprint(q), k, Strategy::FullScan)?
                    .iter()
                    .map(|m| (m.id, m.distance))
                    .collect();
                assert_eq!(got, brute_force(&model, q, k), "full scan {q:#x} k {k}");
            }
        }
        Ok(())
    };
    // Memtables hold keys: each block value is sought.
    scan_all(&store)?;
    // Empty memtables: the files are read in key order.
    store.flush()?;
    scan_all(&store)?;
    Ok(())
}

/// A query reads the blocks of its groups and no other: not the last block of the group
/// before (its ids, which RocksDB's index places under the next group's 2-byte prefix), nor
/// any past the group's last chunk. Counted with RocksDB's per-thread perf context, so the
/// store reads on the calling thread.
#[test]
fn a_query_reads_only_its_groups_blocks() -> std::result::Result<(), Box<dyn std::error::Error>> {
    use rocksdb::perf::{set_perf_stats, PerfContext, PerfMetric, PerfStatsLevel};
    let dir = tempfile::tempdir()?;
    let fp = |block0: u16, id: u64| Fingerprint::from_blocks([block0, 1, 2, (id % 7) as u16]);
    {
        let store = Store::open(dir.path())?;
        let mut loader = store.bulk_loader()?;
        // Group 7 of block0: three chunks of 4,096, then their ids; group 8: one chunk of
        // 4,096, then its ids. Ids 1,000 apart take 3 bytes each, so every chunk and every
        // chunk's ids are a data block of their own, as in a large store.
        for i in 0..3 * 4096 {
            loader.add(i * 1000, fp(7, i))?;
        }
        for i in 0..4096 {
            loader.add(20_000_000 + i * 1000, fp(8, i))?;
        }
        loader.finish()?;
    }
    set_perf_stats(PerfStatsLevel::EnableCount);
    let mut perf = PerfContext::default();
    // The data blocks a k = 0 query (family block0 alone) reads, with the store just opened.
    let mut blocks_read = |query: Fingerprint| -> Result<(usize, u64)> {
        let store = Store::builder().concurrent_reads(false).open(dir.path())?;
        perf.reset();
        let found = store.query(query, 0)?.len();
        Ok((found, perf.metric(PerfMetric::BlockReadCount)))
    };
    let other = |f: Fingerprint| Fingerprint(f.0 ^ 1 << 40);
    // No match: the group's one chunk (its ids are read only for a match).
    assert_eq!(blocks_read(other(fp(8, 0)))?, (0, 1));
    // A match: the chunk and its ids.
    let (found, blocks) = blocks_read(fp(8, 0))?;
    assert!(found > 0);
    assert_eq!(blocks, 2);
    // Group 7: its three chunks.
    assert_eq!(blocks_read(other(fp(7, 0)))?, (0, 3));
    set_perf_stats(PerfStatsLevel::Disable);
    Ok(())
}
