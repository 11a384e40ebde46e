//! Helpers shared by the integration tests: a tiny deterministic RNG (SplitMix64), so tests
//! do not depend on a particular `rand` API, and generators of fingerprint sets.
#![allow(dead_code)]

/// The store's column family names, for tests that open RocksDB directly.
pub mod families;

/// Block families read with RocksDB alone (split groups).
pub mod raw;

/// Copies of store directories, and small file systems to fill.
pub mod files;

/// Stores of format 6, which this build reads but does not write.
pub mod legacy;

/// Running the command (only built with the `cli` feature).
#[cfg(feature = "cli")]
pub mod cli;

/// A fresh database per test on the test server (`scripts/postgres-test-server.sh`).
#[cfg(feature = "postgres")]
pub mod postgres;

/// A reference model of ids and keys, for the load and insert tests.
pub mod id_model;

/// SplitMix64: small, fast, and good enough for test data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }

    /// `fp` with `d` distinct random bits flipped.
    pub fn flip(&mut self, fp: u64, d: u32) -> u64 {
        let mut bits: Vec<u32> = (0..64).collect();
        self.shuffle(&mut bits);
        bits[..d as usize]
            .iter()
            .fold(fp, |acc, b| acc ^ (1u64 << b))
    }
}

/// (id, fingerprint) pairs: `random` random fingerprints, and around each of `centres` random
/// centres two planted copies at every distance 0..=max_d, three ids sharing one fingerprint,
/// and four fingerprints that share exactly one block with the centre (so the block ranges a
/// query scans hold non-matching neighbours). Returns the documents and queries (the centres
/// and as many random fingerprints).
pub fn planted(
    rng: &mut Rng,
    random: usize,
    centres: usize,
    max_d: u32,
) -> (Vec<(u64, u64)>, Vec<u64>) {
    let mut fps = Vec::new();
    let mut queries = Vec::new();
    for _ in 0..random {
        fps.push(rng.next_u64());
    }
    for _ in 0..centres {
        let centre = rng.next_u64();
        queries.push(centre);
        for d in 0..=max_d {
            for _ in 0..2 {
                fps.push(rng.flip(centre, d));
            }
        }
        let d = rng.below(u64::from(max_d) + 1) as u32;
        let shared = rng.flip(centre, d);
        fps.extend([shared; 3]);
        for i in 0..4 {
            let mask = 0xffffu64 << (48 - 16 * i);
            fps.push((centre & mask) | (rng.next_u64() & !mask));
        }
    }
    for _ in 0..centres {
        queries.push(rng.next_u64());
    }
    (numbered(fps), queries)
}

/// Documents of `fps`, ids 0, 1, 2, ... in order: (id, fingerprint).
pub fn numbered(fps: Vec<u64>) -> Vec<(u64, u64)> {
    fps.into_iter()
        .enumerate()
        .map(|(id, fp)| (id as u64, fp))
        .collect()
}

/// Brute force: every pair of `docs` within `k`, by comparing every document with every
/// other, sorted.
pub fn brute_pairs(docs: &[(u64, u64)], k: u32) -> Vec<simhash_store::Pair> {
    let mut pairs = Vec::new();
    for (i, &(x, fx)) in docs.iter().enumerate() {
        for &(y, fy) in &docs[i + 1..] {
            let d = (fx ^ fy).count_ones();
            if d <= k {
                pairs.push(simhash_store::Pair::new(x, y, d));
            }
        }
    }
    pairs.sort_unstable();
    pairs
}

/// Brute force: (distance, id, fingerprint) of every document within `k` of `q`, sorted.
pub fn brute_force(docs: &[(u64, u64)], q: u64, k: u32) -> Vec<(u32, u64, u64)> {
    let mut v: Vec<(u32, u64, u64)> = docs
        .iter()
        .map(|&(id, fp)| ((fp ^ q).count_ones(), id, fp))
        .filter(|&(d, _, _)| d <= k)
        .collect();
    v.sort_unstable();
    v
}
