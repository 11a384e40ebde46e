//! [`SimhashConfig`]: every parameter that changes a fingerprint.
//!
//! A store records the configuration by field name (its serde form, `src/settings/`) and
//! refuses to open with a different one. A new field needs, here and nowhere else in the
//! library: its doc, its value in `Default`, a `with_*` setter, a check in `validate` if not
//! every value is valid, and a serde default that gives the behaviour from before it
//! existed (`#[serde(default)]` for `false` / `0`, else `#[serde(default = "...")]`): a
//! record written before the field reads with it. Stores need no new format version.
//! Renaming a field or an enum variant changes the record: never do it.

use serde::{Deserialize, Serialize};

use super::SketchKind;
use crate::error::{Error, Result};

/// Largest word shingle size [`SimhashConfig::word_shingles`] accepts.
pub const MAX_WORD_SHINGLES: u8 = 8;
/// Largest character shingle size [`SimhashConfig::cjk_char_shingles`] and
/// [`SimhashConfig::word_char_shingles`] accept.
pub const MAX_CHAR_SHINGLES: u8 = 16;
/// Largest base [`SimhashConfig::latin_count_pieces`] and ratio
/// [`SimhashConfig::latin_count_pieces_ratio`] accept.
pub const MAX_COUNT_PIECES: u8 = 16;

/// How a feature's count in the text becomes the term-frequency part of its weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TfScaling {
    /// The count itself: a feature that occurs ten times weighs ten times as much. The
    /// default: the features a text repeats carry its fingerprint, so the one-off features
    /// that small edits add or remove move it least.
    Raw,
    /// `sqrt(count)`.
    Sqrt,
    /// `1 + ln(count)` (sublinear TF).
    Log,
    /// 1 for every distinct feature.
    Binary,
    /// `count^a`, with an exponent that falls as the text grows:
    /// `a = 1.1 - 0.3 ln(n / 1000)`, clamped to `0.5..=1.6`, where `n` is the text's number
    /// of feature occurrences (about its length in characters). Raw TF lets the same edit
    /// cost fewer bits the longer the text (a long text repeats its features more, so new
    /// ones weigh less); this evens that out: short texts weigh their repeated features more
    /// (a boilerplate line in a 300-character page moves it less), long ones less (a 20%
    /// rewrite of a 5,000-character page moves it more). With the other defaults it gains
    /// nothing on the labelled set (F1 at k = 3 0.851 against raw TF's 0.867 on English,
    /// 0.862 against 0.856 on Chinese; `docs/fingerprint-research.md`) and counts features before weighing
    /// them, so fingerprinting is about 35% slower than with [`Raw`](Self::Raw).
    LengthAdaptive,
}

/// [`TfScaling::LengthAdaptive`]'s exponent at 1,000 feature occurrences.
const ADAPTIVE_EXPONENT_AT_1000: f64 = 1.1;
/// How much [`TfScaling::LengthAdaptive`]'s exponent falls per factor e of occurrences.
const ADAPTIVE_SLOPE: f64 = 0.3;
/// The range [`TfScaling::LengthAdaptive`]'s exponent is clamped to (the set it was tuned on
/// has 200 to 5,000 characters per document: beyond that the exponent stops moving).
const ADAPTIVE_EXPONENT_RANGE: std::ops::RangeInclusive<f64> = 0.5..=1.6;

impl TfScaling {
    /// The scaled term frequency of a feature seen `count` (>= 1) times in a text of
    /// `occurrences` feature occurrences in all (only [`LengthAdaptive`](Self::LengthAdaptive)
    /// looks at it).
    #[inline]
    pub fn apply(self, count: u32, occurrences: u64) -> f64 {
        let c = f64::from(count);
        match self {
            TfScaling::Raw => c,
            TfScaling::Sqrt => c.sqrt(),
            TfScaling::Log => 1.0 + c.ln(),
            TfScaling::Binary => 1.0,
            TfScaling::LengthAdaptive if count == 1 => 1.0,
            TfScaling::LengthAdaptive => c.powf(Self::adaptive_exponent(occurrences)),
        }
    }

    /// [`LengthAdaptive`](Self::LengthAdaptive)'s exponent for a text of `occurrences` feature
    /// occurrences.
    pub fn adaptive_exponent(occurrences: u64) -> f64 {
        let n = occurrences.max(1) as f64;
        let a = ADAPTIVE_EXPONENT_AT_1000 - ADAPTIVE_SLOPE * (n / 1000.0).ln();
        a.clamp(
            *ADAPTIVE_EXPONENT_RANGE.start(),
            *ADAPTIVE_EXPONENT_RANGE.end(),
        )
    }
}

/// The inverse-document-frequency part of a feature's weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum IdfWeighting {
    /// No IDF: weights are term frequencies only. The default: on Chinese technical text,
    /// where every English word gets the median IDF, jieba's IDF lowered the best F1 from
    /// 0.93 to 0.88 (see `docs/fingerprint-research.md`).
    None,
    /// jieba's IDF table (about 270,000 Chinese words); a word that is not in it (every
    /// non-Chinese word, and new words found by the HMM) gets the table's median IDF. A word
    /// shingle gets the mean IDF of its words. Character shingles get no IDF (1), so with
    /// this option words weigh several times more than character shingles.
    Jieba,
}

/// How text becomes a 64-bit SimHash fingerprint: tokenizer, features, stop words,
/// weighting and hash seed.
///
/// `Default` is the configuration chosen by measurement on a labelled Chinese and English
/// near-duplicate set (see "Fingerprint quality" in `docs/design.md`). Every field is public;
/// the `with_*` methods set one field and return the configuration, for chaining.
/// [`Simhasher::new`](crate::Simhasher::new) validates the whole.
///
/// The pipeline, in order:
/// 0. **Boilerplate**: with [`drop_boilerplate`](Self::drop_boilerplate), short lines that
///    are copyright notices, share buttons, previous/next links, breadcrumbs, adverts or
///    repost notices are left out.
/// 1. **Normalize**: lowercase; with [`normalize`](Self::normalize), also fold full-width
///    forms, ligatures and Cyrillic/Greek look-alike letters to ASCII.
/// 2. **Tokenize**: runs of CJK ideographs are segmented into words by jieba
///    ([`hmm`](Self::hmm) for unknown words); runs of letters, digits and `_` of any other
///    script are words. Punctuation, symbols and whitespace only separate words: they are
///    never features.
/// 3. **Filter**: with [`stop_words`](Self::stop_words), the built-in Chinese and English stop
///    words are dropped (and single-character Chinese stop words from the ideograph shingles).
/// 4. **Features**, each counted over the text:
///    - [`words`](Self::words): the words;
///    - [`word_shingles`](Self::word_shingles): runs of consecutive words;
///    - [`cjk_char_shingles`](Self::cjk_char_shingles): runs of consecutive CJK ideographs,
///      everything else skipped;
///    - [`word_char_shingles`](Self::word_char_shingles): runs of consecutive characters of
///      each non-CJK word ([`word_char_shingles_within_words`](Self::word_char_shingles_within_words)),
///      or of the non-CJK words concatenated in order.
/// 5. **Weigh**: [`tf`](Self::tf) of the count times [`idf`](Self::idf); with
///    [`latin_count_pieces`](Self::latin_count_pieces), a non-CJK word or character shingle
///    seen many times is split into pieces of its count first (1-3, 4-7, 8-15, ... by
///    default, [`latin_count_pieces_ratio`](Self::latin_count_pieces_ratio)).
/// 6. **Hash**: xxh3-64 of the feature with [`seed`](Self::seed); each bit of the
///    fingerprint is the sign of the weighted sum of that bit over the features.
///
/// Character shingles are what make the fingerprint robust: a changed character changes a
/// jieba word and maybe its neighbours' segmentation, but only `n` of the hundreds of
/// ideograph n-grams. Shingles of the Latin words taken across words would also make lines
/// run together (`foo\nbar` -> `foobar`) change Latin words but not the character runs;
/// taken within words (the default since 0.4) they leave word order out of the
/// fingerprint, so that moved paragraphs and the words around an edit cost nothing.
///
/// ```
/// use simhash_store::{SimhashConfig, Simhasher};
/// let config = SimhashConfig::default().with_word_shingles(2).with_seed(7);
/// let hasher = Simhasher::new(config.clone())?;
/// assert_eq!(hasher.config(), &config);
/// # Ok::<_, simhash_store::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimhashConfig {
    /// Fold full-width letters, digits and punctuation, ligatures and the Cyrillic and Greek
    /// letters that look like Latin ones (`а с е о р х у і`, ...) to ASCII before
    /// tokenizing, so that such substitutions do not change the fingerprint.
    /// Default: `true`.
    pub normalize: bool,
    /// Let jieba's HMM join characters that are not in its dictionary into new words.
    /// Default: `true`.
    pub hmm: bool,
    /// Drop the built-in Chinese and English stop words. Default: `true`.
    pub stop_words: bool,
    /// Use single words as features. Default: `true`.
    pub words: bool,
    /// Also use runs of this many consecutive words (after stop words are dropped) as
    /// features; `0` for none, else `2..=8`. Default: `0`.
    pub word_shingles: u8,
    /// Also use runs of this many consecutive CJK ideographs as features: the text's
    /// ideographs in order, with everything else (and, with `stop_words`, single-character
    /// stop words such as 的 了 在) skipped. `0` for none, else `1..=16`. Default: `1`
    /// (single ideographs: a changed character changes two features, not a word and its
    /// neighbours' segmentation).
    pub cjk_char_shingles: u8,
    /// Also use runs of this many consecutive characters of the non-CJK words (stop words
    /// dropped) as features: within each word, or across the words concatenated in order
    /// without separators (see
    /// [`word_char_shingles_within_words`](Self::word_char_shingles_within_words)). `0` for
    /// none, else `1..=16`. Default: `3`.
    pub word_char_shingles: u8,
    /// How a feature's count becomes its term frequency. Default: [`TfScaling::Raw`].
    pub tf: TfScaling,
    /// The inverse-document-frequency factor. Default: [`IdfWeighting::None`].
    pub idf: IdfWeighting,
    /// Seed of the xxh3-64 feature hash. Default: `0`.
    pub seed: u64,
    /// Leave out boilerplate lines: short lines (at most 160 columns) that are copyright
    /// notices, share buttons, previous/next links, breadcrumbs, adverts or repost notices,
    /// in English or Chinese, recognised by marker words (`©`, `all rights reserved`,
    /// `share on`, `subscribe`, `版权`, `转载`, `上一篇`, `分享到`, ...). A page crawled twice
    /// with a different banner then keeps its fingerprint; a text made only of such lines
    /// keeps them all. Default: `true` (new in format 3; stores of formats 1 and 2 read as
    /// `false`, the way their fingerprints were computed, and so does a JSON configuration
    /// without the field).
    #[serde(default)]
    pub drop_boilerplate: bool,
    /// Take [`word_char_shingles`](Self::word_char_shingles) within each word (`"stop
    /// words"` -> `sto top wor ord rds`; a word shorter than the shingle gives none) instead
    /// of across the words run together (`sto top opw pwo wor ord rds`). Within words, the
    /// shingles do not depend on word order: two swapped paragraphs, a deleted sentence or a
    /// replaced word change no shingle beyond the words themselves. Default: `true` (new in
    /// format 4; stores of formats 1 to 3, and a JSON configuration without the field, read
    /// as `false`).
    #[serde(default)]
    pub word_char_shingles_within_words: bool,
    /// Count pieces for the features of non-CJK words (the words and their character
    /// shingles), with base `b`: a feature seen fewer than `b` times is unchanged; one seen
    /// `c >= b` times is the features "occurrences 1 to b - 1", "b to br - 1", "br to br² -
    /// 1", ... of it (`r` is [`latin_count_pieces_ratio`](Self::latin_count_pieces_ratio)), as
    /// many as `c` reaches, each weighing the occurrences it holds (so their weights add up to
    /// `c`). Under raw TF a text that loses a fifth of its sentences loses a fifth of every
    /// count: its vector is scaled and the fingerprint hardly moves; with pieces, the features
    /// whose counts cross a piece's boundary change, so deleted and replaced text shows,
    /// while a typo (one count off by one) rarely crosses. `0` for none (CJK features never
    /// use them: counting every ideograph would cost speed for no gain on Chinese text),
    /// else `2..=16`. Default: `4` (new in format 4; stores of formats 1 to 3, and a JSON
    /// configuration without the field, read as `0`).
    #[serde(default)]
    pub latin_count_pieces: u8,
    /// How many times longer each count piece after the first is than the one before (see
    /// [`latin_count_pieces`](Self::latin_count_pieces)); `0` for the base itself (pieces at
    /// the powers of the base, as in format 4), else `2..=16`. With base 4 and ratio 2 the
    /// pieces are 1-3, 4-7, 8-15, 16-31, ...: a 20% cut of a count crosses a boundary for
    /// about a third of the frequent features (log₂ 1.25), twice as often as with ratio 4,
    /// while a 10% addition crosses one for about a seventh (log₂ 1.1); counts under 4, which
    /// typos move, keep one piece. Ignored without pieces. Default: `2` (new in format 5;
    /// stores of formats 1 to 4, and a JSON configuration without the field, read as `0`).
    #[serde(default)]
    pub latin_count_pieces_ratio: u8,
    /// Keep a [`Sketch`](crate::Sketch) of each text in its document record (64 bytes more
    /// per document), so that the store can verify near-duplicates
    /// ([`Store::query_verified`](crate::Store::query_verified)). It does not change the
    /// fingerprint. Default: [`SketchKind::None`] (new in format 6; older stores, and a JSON
    /// configuration without the field, keep none).
    #[serde(default)]
    pub sketch: SketchKind,
}

/// The default record of each release before this one, as that release wrote it (formats 1
/// to 5 in bincode, the same fields by name here): a field added since reads as its serde
/// default, the behaviour from before it, so a new field needs no change here.
const RELEASE_DEFAULTS: [(u32, &str); 6] = [
    (
        2,
        r#"{"normalize":true,"hmm":true,"stop_words":true,"words":true,"word_shingles":0,"cjk_char_shingles":1,"word_char_shingles":3,"tf":"Raw","idf":"None","seed":0}"#,
    ),
    (
        3,
        r#"{"normalize":true,"hmm":true,"stop_words":true,"words":true,"word_shingles":0,"cjk_char_shingles":1,"word_char_shingles":3,"tf":"Raw","idf":"None","seed":0,"drop_boilerplate":true}"#,
    ),
    (
        4,
        r#"{"normalize":true,"hmm":true,"stop_words":true,"words":true,"word_shingles":0,"cjk_char_shingles":1,"word_char_shingles":3,"tf":"Raw","idf":"None","seed":0,"drop_boilerplate":true,"word_char_shingles_within_words":true,"latin_count_pieces":4}"#,
    ),
    (
        5,
        r#"{"normalize":true,"hmm":true,"stop_words":true,"words":true,"word_shingles":0,"cjk_char_shingles":1,"word_char_shingles":3,"tf":"Raw","idf":"None","seed":0,"drop_boilerplate":true,"word_char_shingles_within_words":true,"latin_count_pieces":4,"latin_count_pieces_ratio":2}"#,
    ),
    // 0.6 added `sketch`, off by default; its other defaults are 0.5's.
    (
        6,
        r#"{"normalize":true,"hmm":true,"stop_words":true,"words":true,"word_shingles":0,"cjk_char_shingles":1,"word_char_shingles":3,"tf":"Raw","idf":"None","seed":0,"drop_boilerplate":true,"word_char_shingles_within_words":true,"latin_count_pieces":4,"latin_count_pieces_ratio":2}"#,
    ),
    // 0.7 changed no fingerprint default.
    (
        7,
        r#"{"normalize":true,"hmm":true,"stop_words":true,"words":true,"word_shingles":0,"cjk_char_shingles":1,"word_char_shingles":3,"tf":"Raw","idf":"None","seed":0,"drop_boilerplate":true,"word_char_shingles_within_words":true,"latin_count_pieces":4,"latin_count_pieces_ratio":2}"#,
    ),
];

/// A built-in word list ([`SimhashConfig::WORD_LISTS`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct WordList {
    /// Its name in a store's settings record.
    pub(crate) name: &'static str,
    /// What it is, for messages.
    pub(crate) what: &'static str,
    /// xxh3-64 of its content.
    pub(crate) content_hash: fn() -> u64,
    /// Whether fingerprints under a configuration depend on it.
    pub(crate) used_by: fn(&SimhashConfig) -> bool,
}

impl Default for SimhashConfig {
    fn default() -> Self {
        SimhashConfig {
            normalize: true,
            hmm: true,
            stop_words: true,
            words: true,
            word_shingles: 0,
            cjk_char_shingles: 1,
            word_char_shingles: 3,
            tf: TfScaling::Raw,
            idf: IdfWeighting::None,
            seed: 0,
            drop_boilerplate: true,
            word_char_shingles_within_words: true,
            latin_count_pieces: 4,
            latin_count_pieces_ratio: 2,
            sketch: SketchKind::None,
        }
    }
}

impl SimhashConfig {
    /// The default configuration of simhash-store 0.`minor`, for `minor` from 2 to this
    /// release, else `None`: what a store made by that release with its defaults records.
    ///
    /// ```
    /// use simhash_store::SimhashConfig;
    /// assert_eq!(SimhashConfig::release_default(5), Some(SimhashConfig::default()));
    /// let v4 = SimhashConfig::release_default(4).unwrap();
    /// assert_eq!(v4.latin_count_pieces_ratio, 0);
    /// assert_eq!(SimhashConfig::release_default(99), None);
    /// for minor in 2..=7 {
    ///     assert!(SimhashConfig::release_default(minor).is_some(), "0.{minor}");
    /// }
    /// ```
    pub fn release_default(minor: u32) -> Option<SimhashConfig> {
        if let Some((_, record)) = RELEASE_DEFAULTS.iter().find(|(m, _)| *m == minor) {
            return serde_json::from_str(record).ok();
        }
        let this_release = env!("CARGO_PKG_VERSION_MINOR").parse::<u32>().ok();
        (this_release == Some(minor)).then(SimhashConfig::default)
    }

    /// The built-in word lists fingerprints can depend on, each with the settings that use
    /// it. A store records the content hashes of those its settings use.
    pub(crate) const WORD_LISTS: [WordList; 3] = [
        WordList {
            name: "stop_words",
            what: "stop-word lists",
            content_hash: super::text::stopwords::content_hash,
            used_by: |c| c.stop_words,
        },
        WordList {
            name: "idf",
            what: "IDF table",
            content_hash: super::features::idf::content_hash,
            used_by: |c| c.idf == IdfWeighting::Jieba,
        },
        WordList {
            name: "boilerplate",
            what: "boilerplate marker lists",
            content_hash: super::text::boilerplate::content_hash,
            used_by: |c| c.drop_boilerplate,
        },
    ];

    /// Sets [`normalize`](Self::normalize).
    #[must_use]
    pub fn with_normalize(mut self, on: bool) -> Self {
        self.normalize = on;
        self
    }

    /// Sets [`hmm`](Self::hmm).
    #[must_use]
    pub fn with_hmm(mut self, on: bool) -> Self {
        self.hmm = on;
        self
    }

    /// Sets [`stop_words`](Self::stop_words).
    #[must_use]
    pub fn with_stop_words(mut self, on: bool) -> Self {
        self.stop_words = on;
        self
    }

    /// Sets [`words`](Self::words).
    #[must_use]
    pub fn with_words(mut self, on: bool) -> Self {
        self.words = on;
        self
    }

    /// Sets [`word_shingles`](Self::word_shingles).
    #[must_use]
    pub fn with_word_shingles(mut self, n: u8) -> Self {
        self.word_shingles = n;
        self
    }

    /// Sets [`cjk_char_shingles`](Self::cjk_char_shingles).
    #[must_use]
    pub fn with_cjk_char_shingles(mut self, n: u8) -> Self {
        self.cjk_char_shingles = n;
        self
    }

    /// Sets [`word_char_shingles`](Self::word_char_shingles).
    #[must_use]
    pub fn with_word_char_shingles(mut self, n: u8) -> Self {
        self.word_char_shingles = n;
        self
    }

    /// Sets [`tf`](Self::tf).
    #[must_use]
    pub fn with_tf(mut self, tf: TfScaling) -> Self {
        self.tf = tf;
        self
    }

    /// Sets [`idf`](Self::idf).
    #[must_use]
    pub fn with_idf(mut self, idf: IdfWeighting) -> Self {
        self.idf = idf;
        self
    }

    /// Sets [`seed`](Self::seed).
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets [`drop_boilerplate`](Self::drop_boilerplate).
    #[must_use]
    pub fn with_drop_boilerplate(mut self, on: bool) -> Self {
        self.drop_boilerplate = on;
        self
    }

    /// Sets [`word_char_shingles_within_words`](Self::word_char_shingles_within_words).
    #[must_use]
    pub fn with_word_char_shingles_within_words(mut self, on: bool) -> Self {
        self.word_char_shingles_within_words = on;
        self
    }

    /// Sets [`latin_count_pieces`](Self::latin_count_pieces).
    #[must_use]
    pub fn with_latin_count_pieces(mut self, base: u8) -> Self {
        self.latin_count_pieces = base;
        self
    }

    /// Sets [`latin_count_pieces_ratio`](Self::latin_count_pieces_ratio).
    #[must_use]
    pub fn with_latin_count_pieces_ratio(mut self, ratio: u8) -> Self {
        self.latin_count_pieces_ratio = ratio;
        self
    }

    /// Sets [`sketch`](Self::sketch).
    #[must_use]
    pub fn with_sketch(mut self, sketch: SketchKind) -> Self {
        self.sketch = sketch;
        self
    }

    /// Checks that the configuration describes at least one kind of feature and that the
    /// shingle sizes are in range.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the field and the accepted values.
    pub fn validate(&self) -> Result<()> {
        if self.word_shingles == 1 || self.word_shingles > MAX_WORD_SHINGLES {
            return Err(Error::InvalidArgument(format!(
                "word_shingles is {}: use 0 (none) or 2..={MAX_WORD_SHINGLES}, and `words` for single words",
                self.word_shingles
            )));
        }
        for (name, n) in [
            ("cjk_char_shingles", self.cjk_char_shingles),
            ("word_char_shingles", self.word_char_shingles),
        ] {
            if n > MAX_CHAR_SHINGLES {
                return Err(Error::InvalidArgument(format!(
                    "{name} is {n}: use 0 (none) or 1..={MAX_CHAR_SHINGLES}"
                )));
            }
        }
        for (name, n, zero) in [
            ("latin_count_pieces", self.latin_count_pieces, "none"),
            (
                "latin_count_pieces_ratio",
                self.latin_count_pieces_ratio,
                "the base",
            ),
        ] {
            if n == 1 || n > MAX_COUNT_PIECES {
                return Err(Error::InvalidArgument(format!(
                    "{name} is {n}: use 0 ({zero}) or 2..={MAX_COUNT_PIECES}"
                )));
            }
        }
        if !self.words
            && self.word_shingles == 0
            && self.cjk_char_shingles == 0
            && self.word_char_shingles == 0
        {
            return Err(Error::InvalidArgument(
                "the configuration has no features: set `words`, `word_shingles`, `cjk_char_shingles` or `word_char_shingles`".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid() {
        assert!(SimhashConfig::default().validate().is_ok());
    }

    #[test]
    fn rejects_configs_without_features_or_with_bad_sizes() {
        let none = SimhashConfig::default()
            .with_words(false)
            .with_cjk_char_shingles(0)
            .with_word_char_shingles(0);
        assert!(matches!(none.validate(), Err(Error::InvalidArgument(_))));
        let one = SimhashConfig::default().with_word_shingles(1);
        assert!(matches!(one.validate(), Err(Error::InvalidArgument(_))));
        let big = SimhashConfig::default().with_word_shingles(MAX_WORD_SHINGLES + 1);
        assert!(matches!(big.validate(), Err(Error::InvalidArgument(_))));
        let chars = SimhashConfig::default().with_cjk_char_shingles(MAX_CHAR_SHINGLES + 1);
        assert!(matches!(chars.validate(), Err(Error::InvalidArgument(_))));
        let chars = SimhashConfig::default().with_word_char_shingles(MAX_CHAR_SHINGLES + 1);
        assert!(matches!(chars.validate(), Err(Error::InvalidArgument(_))));
        for base in [1, MAX_COUNT_PIECES + 1] {
            let pieces = SimhashConfig::default().with_latin_count_pieces(base);
            assert!(matches!(pieces.validate(), Err(Error::InvalidArgument(_))));
            let ratio = SimhashConfig::default().with_latin_count_pieces_ratio(base);
            assert!(matches!(ratio.validate(), Err(Error::InvalidArgument(_))));
        }
        for ratio in [0, 2, MAX_COUNT_PIECES] {
            let ratio = SimhashConfig::default().with_latin_count_pieces_ratio(ratio);
            assert!(ratio.validate().is_ok());
        }
        let only_chars = SimhashConfig::default().with_words(false);
        assert!(only_chars.validate().is_ok());
    }

    #[test]
    fn tf_scaling_is_monotone_and_one_at_one() {
        for tf in [
            TfScaling::Raw,
            TfScaling::Sqrt,
            TfScaling::Log,
            TfScaling::Binary,
            TfScaling::LengthAdaptive,
        ] {
            for n in [1, 100, 1000, 10_000, 1 << 40] {
                assert!((tf.apply(1, n) - 1.0).abs() < 1e-12, "{tf:?}");
                assert!(tf.apply(5, n) >= tf.apply(2, n), "{tf:?}");
            }
        }
    }

    #[test]
    fn adaptive_exponent_falls_with_length_within_its_range() {
        let a = TfScaling::adaptive_exponent;
        assert!((a(1000) - 1.1).abs() < 1e-12);
        assert!((a(2000) - (1.1 - 0.3 * 2f64.ln())).abs() < 1e-12);
        assert!(a(500) > a(1000) && a(1000) > a(2000));
        assert_eq!(a(0), 1.6);
        assert_eq!(a(10), 1.6);
        assert_eq!(a(1_000_000), 0.5);
        assert_eq!(a(u64::MAX), 0.5);
        // Raw TF is the exponent 1: at about 1,400 occurrences.
        assert!((TfScaling::LengthAdaptive.apply(7, 1396) - 7.0).abs() < 0.01);
    }

    #[test]
    fn serde_json_round_trip() {
        let c = SimhashConfig::default()
            .with_word_shingles(2)
            .with_cjk_char_shingles(3)
            .with_idf(IdfWeighting::Jieba)
            .with_tf(TfScaling::Sqrt)
            .with_seed(99)
            .with_latin_count_pieces(8)
            .with_latin_count_pieces_ratio(3);
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<SimhashConfig>(&json).unwrap(), c);
    }

    #[test]
    fn json_without_the_newer_fields_reads_as_the_old_behaviour() {
        let mut json = serde_json::to_value(SimhashConfig::default()).unwrap();
        let object = json.as_object_mut().unwrap();
        for field in [
            "drop_boilerplate",
            "word_char_shingles_within_words",
            "latin_count_pieces",
            "latin_count_pieces_ratio",
        ] {
            object.remove(field).unwrap();
        }
        let old: SimhashConfig = serde_json::from_value(json).unwrap();
        assert_eq!(
            old,
            SimhashConfig::default()
                .with_drop_boilerplate(false)
                .with_word_char_shingles_within_words(false)
                .with_latin_count_pieces(0)
                .with_latin_count_pieces_ratio(0)
        );
    }
}
