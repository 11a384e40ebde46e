//! The checks behind the fuzz targets in `fuzz_targets/`, one function per target. Each takes
//! the fuzzer's bytes and panics on a finding. `tests/fuzz_corpus.rs` in the main crate
//! includes this file (`#[path]`) and replays the committed corpora through the same
//! functions on the stable toolchain, without libFuzzer; so this file uses only
//! `simhash_store` and crates the main crate depends on (`tempfile`, `xxhash_rust`).
//!
//! The `decode_values` target needs crate-private decoders: its check is
//! `codec::check_decoders` in the main crate.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use simhash_store::readers::{decode_text, html_to_text, Format, ReaderOptions};
use simhash_store::simhash::{IdfWeighting, TfScaling};
use simhash_store::{
    read_input, Entry, Error, Fingerprint, InsertOutcome, Pair, SimhashConfig, Simhasher, Store,
    Strategy,
};

// ---------------------------------------------------------------------------------------
// Scratch space

/// Where the checks put their temporary files and stores: `$FUZZ_SCRATCH_DIR` if set, else
/// `/dev/shm` when there is one (RocksDB's fsyncs cost nothing there), else the system's
/// temporary directory. Each file and store is removed when its check returns.
fn scratch() -> PathBuf {
    if let Some(dir) = std::env::var_os("FUZZ_SCRATCH_DIR") {
        return dir.into();
    }
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.into()
    } else {
        std::env::temp_dir()
    }
}

// ---------------------------------------------------------------------------------------
// fingerprint

fn default_hasher() -> &'static Simhasher {
    static H: OnceLock<Simhasher> = OnceLock::new();
    H.get_or_init(Simhasher::default)
}

/// A second default hasher, built separately: its per-seed tables must come out the same.
fn second_hasher() -> &'static Simhasher {
    static H: OnceLock<Simhasher> = OnceLock::new();
    H.get_or_init(|| Simhasher::new(SimhashConfig::default()).expect("the default is valid"))
}

/// Hashers with other settings, so every feature kind and weighting runs.
fn variant_hashers() -> &'static [Simhasher] {
    static H: OnceLock<Vec<Simhasher>> = OnceLock::new();
    H.get_or_init(|| {
        [
            SimhashConfig::default()
                .with_word_shingles(3)
                .with_tf(TfScaling::Log)
                .with_idf(IdfWeighting::Jieba)
                .with_seed(7),
            SimhashConfig::default()
                .with_normalize(false)
                .with_hmm(false)
                .with_stop_words(false)
                .with_cjk_char_shingles(4)
                .with_word_char_shingles(0)
                .with_tf(TfScaling::Binary),
            SimhashConfig::default()
                .with_words(false)
                .with_cjk_char_shingles(16)
                .with_word_char_shingles(16)
                .with_tf(TfScaling::Sqrt)
                .with_seed(u64::MAX),
        ]
        .into_iter()
        .map(|c| Simhasher::new(c).expect("a valid configuration"))
        .collect()
    })
}

/// Target `fingerprint`: any text (the bytes, lossily decoded as UTF-8) fingerprints without
/// panicking, to the same value every time and with every hasher built from the same
/// configuration; `NoFeatures` exactly when nothing was counted. Caller-weighted features
/// (the text's words with small integer weights, exact in `f64`) give exactly the fingerprint
/// of a plain reference SimHash, and bad weights are refused.
pub fn fingerprint(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let hasher = default_hasher();
    let first = hasher.fingerprint(&text);
    let with_count = hasher.fingerprint_with_count(&text);
    match (&first, &with_count) {
        (Ok(a), Ok((b, n))) => {
            assert_eq!(a, b, "fingerprint and fingerprint_with_count differ");
            assert!(*n > 0, "a fingerprint from zero features");
        }
        (Err(Error::NoFeatures), Err(Error::NoFeatures)) => {}
        other => panic!("unexpected results {other:?}"),
    }
    let again = second_hasher().fingerprint(&text);
    assert_eq!(
        format!("{first:?}"),
        format!("{again:?}"),
        "two default hashers disagree"
    );
    for h in variant_hashers() {
        match h.fingerprint_with_count(&text) {
            Ok((_, n)) => assert!(n > 0, "a fingerprint from zero features"),
            Err(Error::NoFeatures) => {}
            Err(e) => panic!("{:?}: {e}", h.config()),
        }
    }
    weighted_features(&text);
}

/// `fingerprint_features` against a reference SimHash over the whitespace-separated words of
/// `text`. Weights: the word's length mod 4; a word containing `~` weighs -1 and one
/// containing `^` weighs infinity, both of which must be refused.
fn weighted_features(text: &str) {
    let features: Vec<(&str, f64)> = text
        .split_whitespace()
        .map(|w| {
            let weight = if w.contains('~') {
                -1.0
            } else if w.contains('^') {
                f64::INFINITY
            } else {
                (w.len() % 4) as f64
            };
            (w, weight)
        })
        .collect();
    let got = default_hasher().fingerprint_features(features.iter().copied());
    if features.iter().any(|&(_, w)| !w.is_finite() || w < 0.0) {
        assert!(
            matches!(got, Err(Error::InvalidArgument(_))),
            "a bad weight was accepted: {got:?}"
        );
        return;
    }
    let seed = default_hasher().config().seed;
    let mut weights: HashMap<u64, f64> = HashMap::new();
    for &(f, w) in &features {
        *weights
            .entry(xxhash_rust::xxh3::xxh3_64_with_seed(f.as_bytes(), seed))
            .or_default() += w;
    }
    if weights.values().all(|&w| w == 0.0) {
        assert!(
            matches!(got, Err(Error::NoFeatures)),
            "no positive weight, yet {got:?}"
        );
        return;
    }
    let mut sums = [0f64; 64];
    for (&hash, &w) in &weights {
        for (bit, sum) in sums.iter_mut().enumerate() {
            *sum += if hash >> bit & 1 == 1 { w } else { -w };
        }
    }
    let expected = sums
        .iter()
        .enumerate()
        .filter(|(_, &s)| s > 0.0)
        .fold(0u64, |fp, (bit, _)| fp | 1 << bit);
    match got {
        Ok(fp) => assert_eq!(fp, Fingerprint(expected), "{features:?}"),
        Err(e) => panic!("{e} for {features:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// readers

/// Reads `data` as a file of `format` (`None`: detected), with documents limited to `max`
/// bytes, and consumes every record. Errors are fine; a panic, a hang, a record over the limit
/// or more records than the input could hold are not.
fn read_all(data: &[u8], format: Option<Format>, max: usize) {
    let file = tempfile::Builder::new()
        .prefix("simhash-store-fuzz-")
        .tempfile_in(scratch())
        .expect("a temporary file");
    let path = file.path().to_path_buf();
    std::fs::write(&path, data).expect("writing the input file");
    let mut opts = ReaderOptions::default();
    opts.format = format;
    opts.max_doc_bytes = max;
    let records = read_input(&path, &opts).expect("an existing file opens");
    let mut n = 0usize;
    for item in records {
        n += 1;
        // Every record, good or bad, consumes at least one byte (gzip can multiply them).
        assert!(
            n <= 64 * data.len() + 64,
            "{n} records from {} bytes: the reader does not advance",
            data.len()
        );
        match item {
            Ok(record) => {
                assert!(
                    record.body.len() <= max,
                    "a body of {} bytes passed the limit of {max}",
                    record.body.len()
                );
                assert_eq!(&*record.location.path, path.as_path());
                if let Ok(Some(text)) = record.text(&opts) {
                    // What `simhash-store load` does next.
                    let _ = default_hasher().fingerprint(&text);
                }
            }
            Err(bad) => {
                assert_eq!(&*bad.location.path, path.as_path());
                assert!(!bad.to_string().is_empty());
            }
        }
    }
}

/// A small document limit, so the too-large paths run on small inputs too.
const SMALL_LIMIT: usize = 64;

/// Target `warc`: the bytes as a WARC file (gzipped if they start with the gzip magic), read
/// with the default limit and with a 64-byte one (detecting the format that time).
pub fn warc(data: &[u8]) {
    read_all(
        data,
        Some(Format::Warc),
        ReaderOptions::default().max_doc_bytes,
    );
    read_all(data, None, SMALL_LIMIT);
}

/// Target `jsonl`: the bytes as JSON Lines (default limit), detected (64-byte limit) and as
/// one document per line.
pub fn jsonl(data: &[u8]) {
    read_all(
        data,
        Some(Format::Jsonl),
        ReaderOptions::default().max_doc_bytes,
    );
    read_all(data, None, SMALL_LIMIT);
    read_all(data, Some(Format::Lines), SMALL_LIMIT);
}

/// Charsets a server might declare, valid or not.
const DECLARED: [Option<&str>; 7] = [
    None,
    Some("utf-8"),
    Some("gbk"),
    Some("utf-16le"),
    Some("iso-8859-1"),
    Some("shift_jis"),
    Some("no-such-charset"),
];

/// Target `html`: the bytes as an HTML page, main text and all text, under a declared charset
/// chosen by the input's length; and as a text file. Errors (undecodable) are fine.
pub fn html(data: &[u8]) {
    let declared = DECLARED[data.len() % DECLARED.len()];
    for main_text in [true, false] {
        if let Ok(text) = html_to_text(data, declared, main_text) {
            let _ = default_hasher().fingerprint(&text);
        }
    }
    let _ = decode_text(data);
}

// ---------------------------------------------------------------------------------------
// store_model

/// The fuzzer's bytes, read one at a time; zeros once they run out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn u64(&mut self) -> u64 {
        (0..8).fold(0, |v, _| v << 8 | u64::from(self.byte()))
    }

    /// Few ids, so operations collide, and the extremes of the key encoding.
    fn id(&mut self) -> u64 {
        match self.byte() % 16 {
            n @ 0..=11 => u64::from(n),
            12 => u64::MAX,
            13 => u64::MAX - 1,
            14 => 1 << 32,
            _ => 1 << 63,
        }
    }

    /// A fingerprint a few bits from one of four centres, or any 64 bits.
    fn fp(&mut self) -> u64 {
        const CENTRES: [u64; 4] = [0, 0xdead_beef_0bad_f00d, 0x0123_4567_89ab_cdef, u64::MAX];
        let b = self.byte();
        if b >= 0xf0 {
            return self.u64();
        }
        let mut fp = CENTRES[usize::from(b % 4)];
        for _ in 0..(b / 4) % 6 {
            fp ^= 1 << (self.byte() % 64);
        }
        fp
    }

    /// One of six keys (prefixes of each other, non-ASCII, a NUL, the longest allowed), an
    /// invalid one (empty, too long), or none.
    fn key(&mut self) -> Option<String> {
        Some(match self.byte() % 10 {
            0 => "https://a.example/".into(),
            1 => "https://a.example/1".into(),
            2 => "https://a.example/10".into(),
            3 => "键/ü".into(),
            4 => "\0".into(),
            5 => "x".repeat(simhash_store::MAX_EXTERNAL_KEY_LEN),
            6 => String::new(),
            7 => "y".repeat(simhash_store::MAX_EXTERNAL_KEY_LEN + 1),
            _ => return None,
        })
    }

    fn k(&mut self) -> u32 {
        match self.byte() % 16 {
            n @ 0..=8 => u32::from(n),
            9 => 11,
            10 => 12,
            11 => 15,
            12 => 20,
            13 => 63,
            14 => 64,
            _ => 100,
        }
    }

    fn entry(&mut self) -> Entry {
        let mut e = Entry::new(self.id(), Fingerprint(self.fp()));
        e.key = self.key();
        if self.byte() % 2 == 1 {
            e.text_len = Some(u64::from(self.byte()));
        }
        e
    }
}

#[derive(Debug)]
enum Op {
    InsertEntry(Entry),
    /// `Store::insert`: no key, no text length.
    Insert(u64, u64),
    Batch(Vec<Entry>),
    Remove(u64),
    RemoveKey(Option<String>),
    Query(u64, u32, Strategy),
    QueryBatch(Vec<u64>, u32),
    InsertIfNew(Entry, u32),
    Get(u64, Option<String>),
    Pairs(u32, usize),
    Flush,
    Compact,
    Reopen,
}

/// The longest sequence one input runs.
const MAX_OPS: usize = 96;
/// Pair scans, compactions and reopens cost tens of milliseconds each: at most this many per
/// input (later ones are skipped), so most of the time goes to many cheap operations.
const MAX_COSTLY_OPS: usize = 4;

fn parse_ops(data: &[u8]) -> Vec<Op> {
    let mut b = Bytes(data);
    let mut ops = Vec::new();
    let mut costly = 0;
    while !b.0.is_empty() && ops.len() < MAX_OPS {
        let op = match b.byte() % 16 {
            0..=2 => Op::InsertEntry(b.entry()),
            3 => Op::Insert(b.id(), b.fp()),
            4 => Op::Batch((0..b.byte() % 6).map(|_| b.entry()).collect()),
            5 | 6 => Op::Remove(b.id()),
            7 => Op::RemoveKey(b.key()),
            8 | 9 => {
                let (fp, k) = (b.fp(), b.k());
                let strategy = match b.byte() % 3 {
                    0 => Strategy::Auto,
                    // Probing every block value within 4+ bits costs seconds.
                    1 if k < 16 => Strategy::Probe,
                    _ => Strategy::FullScan,
                };
                Op::Query(fp, k, strategy)
            }
            10 => Op::QueryBatch((0..b.byte() % 4).map(|_| b.fp()).collect(), b.k()),
            11 => Op::InsertIfNew(b.entry(), b.k()),
            12 => Op::Get(b.id(), b.key()),
            13 => Op::Pairs(b.k().min(12), usize::from(b.byte() % 4) + 1),
            14 => {
                if b.byte() % 2 == 0 {
                    Op::Flush
                } else {
                    Op::Compact
                }
            }
            _ => Op::Reopen,
        };
        if matches!(op, Op::Pairs(..) | Op::Compact | Op::Reopen) {
            costly += 1;
            if costly > MAX_COSTLY_OPS {
                continue;
            }
        }
        ops.push(op);
    }
    ops
}

#[derive(Debug, Clone, PartialEq)]
struct Doc {
    fp: u64,
    key: Option<String>,
    text_len: Option<u64>,
    /// The store's `added` time, once seen: an upsert must keep it.
    added: Option<u64>,
}

/// What the store should hold.
#[derive(Debug, Default, Clone)]
struct Model {
    docs: BTreeMap<u64, Doc>,
}

/// (distance, id, fingerprint, key), the order queries return.
type Found = Vec<(u32, u64, u64, Option<String>)>;

fn valid_key(key: &str) -> bool {
    !key.is_empty() && key.len() <= simhash_store::MAX_EXTERNAL_KEY_LEN
}

impl Model {
    fn key_holder(&self, key: &str) -> Option<u64> {
        self.docs
            .iter()
            .find(|(_, d)| d.key.as_deref() == Some(key))
            .map(|(&id, _)| id)
    }

    /// Applies an upsert; `false` (and no change) for an invalid key.
    fn insert(&mut self, e: &Entry) -> bool {
        if let Some(key) = &e.key {
            if !valid_key(key) {
                return false;
            }
            if let Some(other) = self.key_holder(key).filter(|&o| o != e.id) {
                self.docs.remove(&other);
            }
        }
        let added = self.docs.get(&e.id).and_then(|d| d.added);
        self.docs.insert(
            e.id,
            Doc {
                fp: e.fingerprint.0,
                key: e.key.clone(),
                text_len: e.text_len,
                added,
            },
        );
        true
    }

    fn query(&self, q: u64, k: u32) -> Found {
        let mut v: Found = self
            .docs
            .iter()
            .map(|(&id, d)| ((d.fp ^ q).count_ones(), id, d.fp, d.key.clone()))
            .filter(|&(dist, ..)| dist <= k)
            .collect();
        v.sort();
        v
    }

    fn pairs(&self, k: u32) -> Vec<Pair> {
        let docs: Vec<(u64, u64)> = self.docs.iter().map(|(&id, d)| (id, d.fp)).collect();
        let mut v = Vec::new();
        for (i, &(a, fa)) in docs.iter().enumerate() {
            for &(b, fb) in &docs[i + 1..] {
                let d = (fa ^ fb).count_ones();
                if d <= k {
                    v.push(Pair::new(a, b, d));
                }
            }
        }
        v.sort_by_key(|p| (p.a, p.b));
        v
    }
}

fn found(matches: Vec<simhash_store::Match>) -> Found {
    matches
        .into_iter()
        .map(|m| (m.distance, m.id, m.fingerprint.0, m.key))
        .collect()
}

fn open(dir: &Path) -> Store {
    Store::builder()
        .block_cache_size(/* 8 MiB */ 8 << 20)
        .open(dir)
        .expect("the store opens")
}

/// Checks every document, the key index and `next_id` against the model, and records the
/// `added` times first seen.
fn compare_all(store: &Store, model: &mut Model) {
    assert_eq!(store.len(), model.docs.len() as u64, "len");
    let docs: Vec<_> = store
        .documents()
        .expect("documents")
        .map(|d| d.expect("a document decodes"))
        .collect();
    assert_eq!(
        docs.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
        model.docs.keys().copied().collect::<Vec<_>>(),
        "ids"
    );
    for (id, doc) in docs {
        let m = model.docs.get_mut(&id).expect("listed above");
        assert_eq!(
            (doc.fingerprint.0, &doc.key, doc.text_len),
            (m.fp, &m.key, m.text_len),
            "document {id}"
        );
        assert_eq!(
            *m.added.get_or_insert(doc.added),
            doc.added,
            "added of {id}"
        );
        if let Some(key) = &m.key {
            assert_eq!(store.id_for_key(key).expect("id_for_key"), Some(id));
        }
    }
    // No id is left after 2^64-1: `next_id` says so instead of saturating into it.
    match model
        .docs
        .keys()
        .next_back()
        .map_or(Some(0), |&id| id.checked_add(1))
    {
        Some(next) => assert_eq!(store.next_id().expect("next_id"), next, "next_id"),
        None => assert!(
            matches!(store.next_id(), Err(simhash_store::Error::NoIdLeft { .. })),
            "next_id after 2^64-1"
        ),
    }
}

/// Target `store_model`: a sequence of operations (see [`parse_ops`]) on a fresh store and on
/// a `BTreeMap` model; every answer must agree with the model (queries and pair scans: with
/// brute force), after a reopen the store holds what the model holds, and at the end every
/// document, key and `next_id` match and `verify()` is clean.
pub fn store_model(data: &[u8]) {
    let ops = parse_ops(data);
    let dir = tempfile::Builder::new()
        .prefix("simhash-store-fuzz-")
        .tempdir_in(scratch())
        .expect("a store directory");
    let mut store = Some(open(dir.path()));
    let mut model = Model::default();
    for (step, op) in ops.iter().enumerate() {
        let s = store.as_ref().expect("open between steps");
        let ctx = || format!("step {step}: {op:?}\nall: {ops:?}");
        match op {
            Op::InsertEntry(e) => {
                let ok = model.insert(e);
                let got = s.insert_entry(e.clone());
                assert_eq!(got.is_ok(), ok, "{got:?} {}", ctx());
                if !ok {
                    assert!(matches!(got, Err(Error::InvalidArgument(_))), "{}", ctx());
                }
            }
            Op::Insert(id, fp) => {
                s.insert(*id, Fingerprint(*fp)).expect("insert");
                model.insert(&Entry::new(*id, Fingerprint(*fp)));
            }
            Op::Batch(entries) => {
                let mut after = model.clone();
                let ok = entries.iter().all(|e| after.insert(e));
                let got = s.insert_batch(entries.iter().cloned());
                assert_eq!(got.is_ok(), ok, "{got:?} {}", ctx());
                if ok {
                    model = after;
                }
            }
            Op::Remove(id) => {
                let got = s.remove(*id).expect("remove");
                assert_eq!(got, model.docs.remove(id).is_some(), "{}", ctx());
            }
            Op::RemoveKey(key) => {
                let key = key.as_deref().unwrap_or("never-used");
                let expected = model.key_holder(key);
                if let Some(id) = expected {
                    model.docs.remove(&id);
                }
                assert_eq!(
                    s.remove_key(key).expect("remove_key"),
                    expected,
                    "{}",
                    ctx()
                );
            }
            Op::Query(fp, k, strategy) => {
                let got = found(
                    s.query_with(Fingerprint(*fp), *k, *strategy)
                        .expect("query"),
                );
                assert_eq!(got, model.query(*fp, *k), "{}", ctx());
            }
            Op::QueryBatch(fps, k) => {
                let q: Vec<Fingerprint> = fps.iter().map(|&f| Fingerprint(f)).collect();
                let got: Vec<Found> = s
                    .query_batch(&q, *k)
                    .expect("query_batch")
                    .into_iter()
                    .map(found)
                    .collect();
                let expected: Vec<Found> = fps.iter().map(|&f| model.query(f, *k)).collect();
                assert_eq!(got, expected, "{}", ctx());
            }
            Op::InsertIfNew(e, k) => {
                let dups: Found = model
                    .query(e.fingerprint.0, *k)
                    .into_iter()
                    .filter(|(_, id, _, key)| *id != e.id && (e.key.is_none() || *key != e.key))
                    .collect();
                let got = s.insert_if_new(e.clone(), *k);
                if !dups.is_empty() {
                    match got {
                        Ok(InsertOutcome::Duplicate(m)) => assert_eq!(found(m), dups, "{}", ctx()),
                        other => panic!("{other:?}, expected duplicates {dups:?} {}", ctx()),
                    }
                } else if model.insert(e) {
                    assert!(
                        matches!(got, Ok(InsertOutcome::Inserted)),
                        "{got:?} {}",
                        ctx()
                    );
                } else {
                    assert!(
                        matches!(got, Err(Error::InvalidArgument(_))),
                        "{got:?} {}",
                        ctx()
                    );
                }
            }
            Op::Get(id, key) => {
                let doc = s.document(*id).expect("document");
                let m = model.docs.get_mut(id);
                assert_eq!(
                    doc.as_ref()
                        .map(|d| (d.fingerprint.0, d.key.clone(), d.text_len)),
                    m.as_ref().map(|m| (m.fp, m.key.clone(), m.text_len)),
                    "{}",
                    ctx()
                );
                if let (Some(doc), Some(m)) = (doc, m) {
                    assert_eq!(*m.added.get_or_insert(doc.added), doc.added, "{}", ctx());
                }
                assert_eq!(
                    s.get(*id).expect("get"),
                    model.docs.get(id).map(|d| Fingerprint(d.fp)),
                    "{}",
                    ctx()
                );
                if let Some(key) = key {
                    assert_eq!(
                        s.id_for_key(key).expect("id_for_key"),
                        model.key_holder(key),
                        "{}",
                        ctx()
                    );
                }
            }
            Op::Pairs(k, chunk) => {
                let mut got = Vec::new();
                let stats = s
                    .pairs(*k)
                    .chunk_size(*chunk)
                    .for_each(|p| {
                        got.push(p);
                        Ok::<_, Error>(())
                    })
                    .expect("pairs");
                got.sort_by_key(|p| (p.a, p.b));
                let expected = model.pairs(*k);
                assert_eq!(stats.pairs, expected.len() as u64, "{}", ctx());
                assert_eq!(got, expected, "{}", ctx());
            }
            Op::Flush => s.flush().expect("flush"),
            Op::Compact => s.compact().expect("compact"),
            Op::Reopen => {
                drop(store.take());
                let s = open(dir.path());
                compare_all(&s, &mut model);
                store = Some(s);
            }
        }
        assert_eq!(
            store.as_ref().map(Store::len),
            Some(model.docs.len() as u64),
            "len {}",
            ctx()
        );
    }
    // A reopen is one of the operations, not done here: each open costs a new write-ahead
    // log, which RocksDB preallocates (70 MB, zeroed pages on tmpfs).
    let s = store.take().expect("open at the end");
    compare_all(&s, &mut model);
    let report = s.verify().expect("verify");
    assert!(report.is_clean(), "{report}\n{ops:?}");
}
