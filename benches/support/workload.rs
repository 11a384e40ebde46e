//! The benchmarks' fingerprint distributions (`--workload`): uniform random, or drawn with the
//! statistics of real documents.
//!
//! - `uniform`: 64 independent fair bits.
//! - `real`: each 16-bit block drawn from the distribution fitted on default fingerprints of
//!   real texts (`workload_real.json`, written by `examples/workload_fit.rs`): a table of the
//!   block's most frequent values with their probabilities, else independent biased bits.
//!   Blocks are drawn independently of each other. This reproduces the measured share of 1s of
//!   each bit and how often two fingerprints share a block value (the shared-block factor).
//! - `templated`: `real`, except that 10% of the documents are pages of one of 20,000 site
//!   templates, chosen with Zipf(1.1) popularity: the template (a `real` fingerprint) with 0
//!   to 3 bits flipped, so that the pages of a site agree on most bits and the most popular
//!   template holds about 1% of all documents (the crawl model of `docs/scale-out.md`).
//! - `crowded:<share>`: uniform, except that a `share` of the documents (0..=1) has block 0
//!   equal to [`CROWDED_VALUE`]: one group of block family 0 holds that share of the store.
//!
//! [`Workload::draw`] draws a fresh fingerprint; the benchmarks build their stored sets and
//! their queries from it, with their own planted near-duplicates. Besides those, every
//! workload but `uniform` makes 1% of the stored fingerprints exact copies of earlier ones
//! ([`Workload::exact_duplicate`]). The Python twin, `python/benches/workload.py`, reads the
//! same parameters.

use std::fmt;

use super::rng::SplitMix;

/// The fitted parameters of the `real` workload.
pub const REAL_PARAMS: &str = include_str!("workload_real.json");

/// The block-0 value of the crowded group of `crowded:<share>`.
pub const CROWDED_VALUE: u16 = 0x5eed;

/// Site templates of the `templated` workload.
const TEMPLATES: usize = 20_000;
/// The exponent of their Zipf popularity.
const TEMPLATE_ZIPF: f64 = 1.1;
/// Share of the `templated` workload's documents that are pages of a template.
const TEMPLATED_SHARE: f64 = 0.1;

/// A fingerprint distribution.
pub enum Workload {
    Uniform,
    Real(Box<RealModel>),
    Templated {
        model: Box<RealModel>,
        /// Cumulative Zipf popularity of the templates.
        popularity: Vec<f64>,
    },
    Crowded {
        share: f64,
    },
}

// Each benchmark uses some of these.
#[allow(dead_code)]
impl Workload {
    /// Parses `uniform`, `real`, `templated` or `crowded:<share>`.
    pub fn parse(s: &str) -> Result<Workload, String> {
        match s {
            "uniform" => Ok(Workload::Uniform),
            "real" => Ok(Workload::Real(Box::new(RealModel::fitted()))),
            "templated" => {
                let weights: Vec<f64> = (1..=TEMPLATES)
                    .map(|rank| (rank as f64).powf(-TEMPLATE_ZIPF))
                    .collect();
                let total: f64 = weights.iter().sum();
                let popularity = weights
                    .iter()
                    .scan(0.0, |acc, w| {
                        *acc += w / total;
                        Some(*acc)
                    })
                    .collect();
                Ok(Workload::Templated {
                    model: Box::new(RealModel::fitted()),
                    popularity,
                })
            }
            _ => match s.strip_prefix("crowded:").map(str::parse::<f64>) {
                Some(Ok(share)) if (0.0..=1.0).contains(&share) => Ok(Workload::Crowded { share }),
                _ => Err(format!(
                    "unknown workload {s}: uniform, real, templated or crowded:<share in 0..=1>"
                )),
            },
        }
    }

    /// A fresh fingerprint of this distribution.
    pub fn draw(&self, rng: &mut SplitMix) -> u64 {
        match self {
            Workload::Uniform => rng.next(),
            Workload::Real(model) => model.draw(rng),
            Workload::Templated { model, popularity } => {
                if unit(rng) >= TEMPLATED_SHARE {
                    return model.draw(rng);
                }
                let u = unit(rng);
                let site = popularity.partition_point(|&c| c < u) as u64;
                let template = model.draw(&mut SplitMix(
                    0x7e3a_91a7 ^ site.wrapping_mul(0x9e37_79b9_7f4a_7c15),
                ));
                let flips = rng.below(4) as u32;
                rng.flip(template, flips)
            }
            Workload::Crowded { share } => {
                let fp = rng.next();
                if unit(rng) < *share {
                    (fp & !(0xffff << 48)) | (u64::from(CROWDED_VALUE) << 48)
                } else {
                    fp
                }
            }
        }
    }

    /// Whether stored fingerprint number `i` should be an exact copy of an earlier one, and of
    /// which (drawn with `rng`): 1% of them, for every workload but `uniform`.
    pub fn exact_duplicate(&self, i: u64, rng: &mut SplitMix) -> Option<u64> {
        match self {
            Workload::Uniform => None,
            _ if i % 100 == 98 => Some(rng.below(i)),
            _ => None,
        }
    }

    /// Whether `fp` lies in the crowded group of a `crowded:<share>` workload.
    pub fn in_crowded_group(&self, fp: u64) -> bool {
        matches!(self, Workload::Crowded { .. }) && (fp >> 48) as u16 == CROWDED_VALUE
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Workload::Uniform => f.write_str("uniform"),
            Workload::Real(_) => f.write_str("real"),
            Workload::Templated { .. } => f.write_str("templated"),
            Workload::Crowded { share } => write!(f, "crowded:{share}"),
        }
    }
}

/// A uniform number in [0, 1).
fn unit(rng: &mut SplitMix) -> f64 {
    (rng.next() >> 11) as f64 / (1u64 << 53) as f64
}

/// Walker's alias table over `0..len`: one random number draws an index in constant time.
struct Alias {
    /// Per slot: the probability (scaled to 2^32) of keeping the slot, else its alias.
    slots: Vec<(u32, u16)>,
}

impl Alias {
    /// The table for weights `w` (at most 65536 of them, not all zero).
    fn new(w: &[f64]) -> Alias {
        let n = w.len();
        let total: f64 = w.iter().sum();
        let mut scaled: Vec<f64> = w.iter().map(|x| x * n as f64 / total).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&i| scaled[i] < 1.0);
        let mut slots: Vec<(u32, u16)> = (0..n).map(|i| (u32::MAX, i as u16)).collect();
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            slots[s] = (
                (scaled[s] * 4_294_967_296.0).min(4_294_967_295.0) as u32,
                l as u16,
            );
            scaled[l] -= 1.0 - scaled[s];
            if scaled[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        Alias { slots }
    }

    fn draw(&self, r: u64) -> u16 {
        let slot = (((r >> 32) * self.slots.len() as u64) >> 32) as usize;
        let (keep, alias) = self.slots[slot];
        if (r as u32) < keep {
            slot as u16
        } else {
            alias
        }
    }
}

/// The fitted distribution of one 16-bit block: with probability `table_share` one of the
/// table's values, else independent biased bits, drawn as two independent bytes (small
/// tables: a draw stays in the L1 cache).
struct BlockModel {
    /// `table_share` scaled to 2^32.
    table_threshold: u32,
    table_values: Vec<u16>,
    table: Alias,
    low: Alias,
    high: Alias,
}

impl BlockModel {
    /// From the table's `(value, probability)` pairs and the bits' shares of 1s (bit 0 first).
    fn new(top: &[(u16, f64)], bits: &[f64]) -> BlockModel {
        let share: f64 = top.iter().map(|&(_, p)| p).sum();
        let byte = |shift: usize| {
            let w: Vec<f64> = (0..256usize)
                .map(|v| {
                    (0..8)
                        .map(|j| {
                            let one = bits[shift + j];
                            if (v >> j) & 1 == 1 {
                                one
                            } else {
                                1.0 - one
                            }
                        })
                        .product()
                })
                .collect();
            Alias::new(&w)
        };
        let weights: Vec<f64> = top.iter().map(|&(_, p)| p).collect();
        BlockModel {
            table_threshold: (share * 4_294_967_296.0).min(4_294_967_295.0) as u32,
            table_values: top.iter().map(|&(v, _)| v).collect(),
            table: Alias::new(if weights.is_empty() { &[1.0] } else { &weights }),
            low: byte(0),
            high: byte(8),
        }
    }

    fn draw(&self, rng: &mut SplitMix) -> u16 {
        if (rng.next() as u32) < self.table_threshold {
            self.table_values[usize::from(self.table.draw(rng.next()))]
        } else {
            (self.high.draw(rng.next()) << 8) | self.low.draw(rng.next())
        }
    }
}

/// The `real` workload: each block drawn from its own fitted distribution.
#[allow(dead_code)] // the measured values are for the tests
pub struct RealModel {
    blocks: Vec<BlockModel>,
    /// Per block, the probability of each of its 65536 values (for the tests).
    pub probabilities: Vec<Vec<f64>>,
    /// The measured share of 1s of each bit (bit `i` is `1 << i`) of the texts fitted on.
    pub measured_bit_ones: Vec<f64>,
    /// The measured shared-block factor of each block (block 0 is bits 63..48).
    pub measured_factor: Vec<f64>,
}

#[allow(dead_code)]
impl RealModel {
    /// The model of `workload_real.json`.
    pub fn fitted() -> RealModel {
        let v: serde_json::Value = serde_json::from_str(REAL_PARAMS).expect("workload_real.json");
        let floats = |x: &serde_json::Value| -> Vec<f64> {
            x.as_array()
                .expect("an array")
                .iter()
                .map(|f| f.as_f64().expect("a number"))
                .collect()
        };
        let mut blocks = Vec::new();
        let mut probabilities = Vec::new();
        for b in v["blocks"].as_array().expect("blocks") {
            let bits = floats(&b["bits"]);
            let top: Vec<(u16, f64)> = b["top"]
                .as_array()
                .expect("top")
                .iter()
                .map(|e| {
                    let value = e[0].as_u64().expect("a value") as u16;
                    (value, e[1].as_f64().expect("a probability"))
                })
                .collect();
            let q: f64 = top.iter().map(|&(_, p)| p).sum();
            let mut p: Vec<f64> = (0..65536usize)
                .map(|value| {
                    (1.0 - q)
                        * (0..16)
                            .map(|j| {
                                if (value >> j) & 1 == 1 {
                                    bits[j]
                                } else {
                                    1.0 - bits[j]
                                }
                            })
                            .product::<f64>()
                })
                .collect();
            for &(value, pv) in &top {
                p[usize::from(value)] += pv;
            }
            blocks.push(BlockModel::new(&top, &bits));
            probabilities.push(p);
        }
        RealModel {
            blocks,
            probabilities,
            measured_bit_ones: floats(&v["bit_ones"]),
            measured_factor: floats(&v["shared_block_factor"]),
        }
    }

    /// A fresh fingerprint: block 0 in bits 63..48.
    pub fn draw(&self, rng: &mut SplitMix) -> u64 {
        self.blocks
            .iter()
            .fold(0u64, |fp, b| (fp << 16) | u64::from(b.draw(rng)))
    }

    /// The shared-block factor of block `b` of the model: 65536 times the probability that
    /// two draws share that block's value.
    pub fn factor(&self, b: usize) -> f64 {
        65536.0 * self.probabilities[b].iter().map(|p| p * p).sum::<f64>()
    }
}

/// The shared-block factor of `fps` in block `b`: how much more often two of them share that
/// block's value than two uniform random fingerprints (`65536 * sum c(c-1) / (n(n-1))`).
#[allow(dead_code)]
pub fn shared_block_factor(fps: &[u64], b: usize) -> f64 {
    let mut counts = vec![0u64; 65536];
    for &fp in fps {
        counts[((fp >> (48 - 16 * b)) & 0xffff) as usize] += 1;
    }
    let pairs: f64 = counts
        .iter()
        .map(|&c| (c * c.saturating_sub(1)) as f64)
        .sum();
    let n = fps.len() as f64;
    65536.0 * pairs / (n * (n - 1.0)).max(1.0)
}
