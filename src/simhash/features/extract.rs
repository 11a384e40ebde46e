//! Feature extraction: text -> the occurrences of its hashed features, with their IDF, handed
//! to a [`Sink`] (the SimHash sums directly under raw TF, or a count per distinct feature).
//!
//! The text goes through one chunk at a time (`text/chunks.rs`): normalized
//! (`text/normalize.rs`), then walked run by run (`text::tokenize::Words`): each word of
//! ideographs gives its ideographs (the ideograph shingles) and itself, each other word
//! itself and its letters (the word character shingles). The ideograph and letter streams and
//! the word shingles carry over from chunk to chunk.
//!
//! Features are kept by their 64-bit hash only: no per-token `String` is ever made. Two
//! distinct features with the same xxh3-64 hash would be merged, which at the sizes of a
//! document (thousands of features) has probability around 10^-12.

use crate::simhash::config::{IdfWeighting, SimhashConfig, MAX_WORD_SHINGLES};
use crate::simhash::text::boilerplate::drop_lines;
use crate::simhash::text::chunks::{chunks, CHUNK_BYTES};
use crate::simhash::text::normalize::normalize_into;
use crate::simhash::text::stopwords::is_stop_code_point;
use crate::simhash::text::tokenize::{CharShingles, Kind, Words};

use super::hash::SeededXxh3;
use super::idf::IDF;
use super::seed_hashes::{IdeographHashes, SeedHashes};
use super::sink::Sink;
use super::unit_batch::UnitBatch;

/// The code point of the character whose UTF-8 is `utf8`.
#[inline(always)]
fn code_point(utf8: &[u8]) -> u32 {
    let cont = |b: u8| u32::from(b & 0x3F);
    match *utf8 {
        [a] => u32::from(a),
        [a, b] => (u32::from(a & 0x1F) << 6) | cont(b),
        [a, b, c] => (u32::from(a & 0x0F) << 12) | (cont(b) << 6) | cont(c),
        [a, b, c, d] => (u32::from(a & 0x07) << 18) | (cont(b) << 12) | (cont(c) << 6) | cont(d),
        _ => 0,
    }
}

/// The hash and mean IDF of the word shingle made of the words at positions `range` (in text
/// order, kept in `ring` modulo `n`): xxh3-64 of the words' hashes, little-endian, in order.
fn shingle(
    ring: &[(u64, f64)],
    range: std::ops::Range<usize>,
    n: usize,
    hasher: &SeededXxh3,
) -> (u64, f64) {
    let mut bytes = [0u8; 8 * MAX_WORD_SHINGLES as usize];
    let mut len = 0;
    let mut idf_sum = 0.0;
    let words = range.len().max(1);
    for k in range {
        let (h, idf) = ring.get(k % n).copied().unwrap_or_default();
        if let Some(dst) = bytes.get_mut(len..len + 8) {
            dst.copy_from_slice(&h.to_le_bytes());
            len += 8;
        }
        idf_sum += idf;
    }
    let hashed = bytes.get(..len).unwrap_or(&bytes);
    (hasher.hash(hashed), idf_sum / words as f64)
}

/// [`extract_observing`] without an observer.
#[cfg(test)]
pub(crate) fn extract(
    config: &SimhashConfig,
    seeds: &SeedHashes,
    text: &str,
    sink: &mut impl Sink,
) {
    extract_observing(config, seeds, text, sink, &mut |_| ());
}

/// Extracts the feature occurrences of `text` under `config` into `sink`, in text order
/// (features of IDF factor 1 in batches), and hands `observe` each chunk of the normalized
/// text (boilerplate lines dropped), in order: what the text's [`Sketch`](crate::Sketch) is
/// made of, in the same pass. `seeds` must be `SeedHashes::new(config.seed)`.
pub(crate) fn extract_observing(
    config: &SimhashConfig,
    seeds: &SeedHashes,
    text: &str,
    sink: &mut impl Sink,
    observe: &mut impl FnMut(&str),
) {
    if config.drop_boilerplate {
        let text = drop_lines(text);
        extract_in_chunks(config, seeds, &text, sink, CHUNK_BYTES, observe);
    } else {
        extract_in_chunks(config, seeds, text, sink, CHUNK_BYTES, observe);
    }
}

/// [`extract_observing`], with chunks of about `chunk_bytes` bytes.
fn extract_in_chunks(
    config: &SimhashConfig,
    seeds: &SeedHashes,
    text: &str,
    sink: &mut impl Sink,
    chunk_bytes: usize,
    observe: &mut impl FnMut(&str),
) {
    let mut extractor = Extractor::new(config, seeds, sink);
    // One chunk's normalized text at a time: the features are those of the whole text (see
    // `text/chunks.rs`), and memory does not grow with the text.
    let mut norm = String::new();
    for chunk in chunks(text, chunk_bytes) {
        norm.clear();
        let has_cjk = normalize_into(chunk, config.normalize, &mut norm);
        observe(&norm);
        extractor.chunk(&norm, has_cjk);
    }
    extractor.finish();
}

/// The state of feature extraction that carries over from one chunk of a text to the next.
struct Extractor<'a, S: Sink> {
    config: &'a SimhashConfig,
    seeds: &'a SeedHashes,
    /// Hash words and character features.
    word_hasher: SeededXxh3,
    char_hasher: SeededXxh3,
    /// Hashes single ideographs (with a table when they are features, the default).
    ideograph_hashes: IdeographHashes<'a>,
    sink: &'a mut S,
    /// Word features weigh their IDF.
    use_idf: bool,
    /// The words are the only word features, of weight 1 (the default).
    plain_words: bool,
    /// Words or word shingles are features: words of ideographs are jieba's.
    segmented_words: bool,
    /// `config.stop_words` and `config.cjk_char_shingles`, at hand.
    stop_words: bool,
    cjk_char_shingles: u8,
    /// Shingles of the ideographs, when they are longer than one.
    ideographs: CharShingles,
    /// Shingles of the non-CJK words' characters, stop words dropped, concatenated.
    letters: CharShingles,
    /// The last `word_shingles` words' hashes and IDFs, as a ring, and the words seen.
    ring: [(u64, f64); MAX_WORD_SHINGLES as usize],
    seen: usize,
    /// Features of IDF factor 1 not yet handed to the sink.
    units: UnitBatch,
    /// Features of non-CJK words are counted in pieces (`config.latin_count_pieces`): they
    /// go to the sink apart, through `latin_units`.
    count_latin: bool,
    latin_units: UnitBatch,
    /// `config.word_char_shingles_within_words`.
    within_words: bool,
}

impl<'a, S: Sink> Extractor<'a, S> {
    fn new(config: &'a SimhashConfig, seeds: &'a SeedHashes, sink: &'a mut S) -> Self {
        Extractor {
            config,
            seeds,
            word_hasher: seeds.word_hasher(),
            char_hasher: seeds.char_hasher(),
            ideograph_hashes: seeds.ideograph_hashes(config.cjk_char_shingles == 1),
            sink,
            use_idf: config.idf == IdfWeighting::Jieba,
            plain_words: config.words
                && config.word_shingles == 0
                && config.idf == IdfWeighting::None,
            segmented_words: config.words || config.word_shingles >= 2,
            stop_words: config.stop_words,
            cjk_char_shingles: config.cjk_char_shingles,
            ideographs: CharShingles::new(usize::from(config.cjk_char_shingles)),
            letters: CharShingles::new(usize::from(config.word_char_shingles)),
            ring: [(0, 0.0); MAX_WORD_SHINGLES as usize],
            seen: 0,
            units: UnitBatch::new(),
            count_latin: config.latin_count_pieces > 0,
            latin_units: UnitBatch::new(),
            within_words: config.word_char_shingles_within_words,
        }
    }

    /// One occurrence of a feature of a non-CJK word, of IDF factor 1.
    #[inline(always)]
    fn latin_unit(&mut self, hash: u64) {
        if !self.count_latin {
            self.unit(hash);
            return;
        }
        if self.latin_units.push_if(hash, true) {
            self.flush_latin_units();
        }
    }

    /// Hands the features of non-CJK words collected so far to the sink.
    fn flush_latin_units(&mut self) {
        self.sink.add_latin_units(self.latin_units.take());
    }

    /// One occurrence of a feature of IDF factor 1.
    #[inline(always)]
    fn unit(&mut self, hash: u64) {
        self.unit_if(hash, true);
    }

    /// One occurrence of a feature of IDF factor 1 if `keep` (without a branch on `keep`,
    /// see [`UnitBatch::push_if`]).
    #[inline(always)]
    fn unit_if(&mut self, hash: u64, keep: bool) {
        if self.units.push_if(hash, keep) {
            self.flush_units();
        }
    }

    /// Hands the features of IDF factor 1 collected so far to the sink.
    fn flush_units(&mut self) {
        self.sink.add_units(self.units.take());
    }

    /// Takes the features of a normalized chunk of the text.
    fn chunk(&mut self, norm: &str, has_cjk: bool) {
        let config = self.config;
        let segment = self.segmented_words;
        if !segment && config.word_char_shingles == 0 && config.cjk_char_shingles == 0 {
            return;
        }
        // A chunk without ideographs need not be segmented (see `Words`).
        for (run, kind) in Words::new(norm, config.hmm, segment && has_cjk) {
            match kind {
                Kind::CjkWord => self.cjk_word(run),
                Kind::OtherWord => self.word(run, false),
                Kind::Ideographs => self.ideographs(run),
            }
        }
    }

    /// Takes the features of the word of ideographs `w`, and those of its ideographs.
    ///
    /// Most Chinese words are one to four ideographs of three bytes. Their features are taken
    /// by straight-line code for each length: a loop over the characters and xxh3's own
    /// dispatch on the length would be mispredicted for nearly every word, at the cost of
    /// more than the rest of the work on it.
    #[inline(always)]
    fn cjk_word(&mut self, w: &str) {
        let taken = match w.len() {
            3 => self.short_cjk_word::<3>(w),
            6 => self.short_cjk_word::<6>(w),
            9 => self.short_cjk_word::<9>(w),
            12 => self.short_cjk_word::<12>(w),
            _ => false,
        };
        if !taken {
            self.ideographs(w);
            self.word(w, true);
        }
    }

    /// [`cjk_word`](Self::cjk_word) for a word of `N` bytes, if they are `N / 3` characters of
    /// three bytes; returns whether they were (else nothing is taken).
    #[inline(always)]
    fn short_cjk_word<const N: usize>(&mut self, w: &str) -> bool {
        let Ok(utf8) = <&[u8; N]>::try_from(w.as_bytes()) else {
            return false;
        };
        let chars = utf8.chunks_exact(3);
        // Without `any`, which would branch on each character.
        if chars
            .clone()
            .fold(false, |long, c| long | (c.first() >= Some(&0xF0)))
        {
            return false;
        }
        if self.cjk_char_shingles == 1 {
            for c in chars {
                let cp = code_point(c);
                let stop = self.stop_words && is_stop_code_point(cp);
                let hash = self.ideograph_hashes.hash(cp, c);
                self.unit_if(hash, !stop);
            }
        } else {
            self.ideographs(w);
        }
        if self.segmented_words {
            let (h, stop) = if N == 3 {
                let h = self.word_hasher.hash(utf8);
                (h, is_stop_code_point(code_point(utf8)))
            } else {
                let h = self.word_hasher.hash(utf8);
                (h, self.seeds.is_stop(h))
            };
            self.hashed_word(w, true, h, stop);
        }
        true
    }

    /// Takes the ideograph features of the ideographs `run`: the ideographs of the text in
    /// order, single-character stop words dropped, whatever the segmentation.
    #[inline(always)]
    fn ideographs(&mut self, run: &str) {
        let n = self.cjk_char_shingles;
        if n == 0 {
            return;
        }
        let bytes = run.as_bytes();
        let mut i = 0;
        while let Some(&lead) = bytes.get(i) {
            // Ideographs are 3 bytes (U+3400..U+FAFF, nearly all) or 4.
            let len = if lead >= 0xF0 { 4 } else { 3 };
            let utf8 = bytes.get(i..i + len).unwrap_or_default();
            i += len;
            let cp = code_point(utf8);
            let stop = self.stop_words && is_stop_code_point(cp);
            if n == 1 {
                // The default.
                let hash = self.ideograph_hashes.hash(cp, utf8);
                self.unit_if(hash, !stop);
            } else if !stop {
                let c = char::from_u32(cp).unwrap_or_default();
                let hash = self.ideographs.push(c).map(|s| self.char_hasher.hash(s));
                if let Some(hash) = hash {
                    self.unit(hash);
                }
            }
        }
    }

    /// Takes the features of the word `w`. The common case (a word of ideographs under the
    /// default configuration) is kept small enough to be inlined into the token loop.
    #[inline(always)]
    fn word(&mut self, w: &str, cjk: bool) {
        let (h, stop) = if cjk && w.len() <= 4 {
            // One ideograph (3 or 4 bytes): the stop words among them are the stop
            // characters.
            let h = self.word_hasher.hash(w.as_bytes());
            (h, is_stop_code_point(code_point(w.as_bytes())))
        } else {
            let h = self.word_hasher.hash(w.as_bytes());
            (h, self.seeds.is_stop(h))
        };
        self.hashed_word(w, cjk, h, stop);
    }

    /// Takes the features of the word `w`, of hash `h`, a stop word if `stop`.
    #[inline(always)]
    fn hashed_word(&mut self, w: &str, cjk: bool, h: u64, stop: bool) {
        let stop = self.stop_words && stop;
        if cjk && self.plain_words {
            // The default, and most words of Chinese text.
            self.unit_if(h, !stop);
            return;
        }
        if stop {
            return;
        }
        if !cjk && self.config.word_char_shingles > 0 {
            self.letters(w);
        }
        if self.plain_words {
            self.latin_unit(h);
        } else {
            self.word_features(h, w, cjk);
        }
    }

    /// Takes the character shingles of the non-CJK word `w`.
    #[inline(always)]
    fn letters(&mut self, w: &str) {
        if self.within_words {
            self.letters.reset();
        }
        for c in w.chars() {
            let hash = self.letters.push(c).map(|s| self.char_hasher.hash(s));
            if let Some(hash) = hash {
                self.latin_unit(hash);
            }
        }
    }

    /// Takes the word features of the word `w` of hash `h` under any configuration.
    #[inline(always)]
    fn word_features(&mut self, h: u64, w: &str, cjk: bool) {
        let config = self.config;
        let use_idf = self.use_idf;
        if config.words {
            match (use_idf, !cjk && self.count_latin) {
                (true, true) => self.sink.add_latin(h, || IDF.get(w)),
                (true, false) => self.sink.add(h, || IDF.get(w)),
                (false, true) => self.latin_unit(h),
                (false, false) => self.unit(h),
            }
        }
        let n = usize::from(config.word_shingles);
        if n >= 2 {
            let idf = if use_idf { IDF.get(w) } else { 1.0 };
            if let Some(slot) = self.ring.get_mut(self.seen % n) {
                *slot = (h, idf);
            }
            self.seen += 1;
            if self.seen >= n {
                let (h, idf) = shingle(&self.ring, self.seen - n..self.seen, n, &self.word_hasher);
                if use_idf {
                    self.sink.add(h, || idf);
                } else {
                    self.unit(h);
                }
            }
        }
    }

    /// The features that need the whole text: the one shingle of a stream too short for
    /// one of full length.
    fn finish(mut self) {
        let last = self.ideographs.finish().map(|s| self.char_hasher.hash(s));
        if let Some(hash) = last {
            self.unit(hash);
        }
        // Within words, a word shorter than the shingle gives none (the word is a feature).
        let last = (!self.within_words)
            .then(|| self.letters.finish().map(|s| self.char_hasher.hash(s)))
            .flatten();
        if let Some(hash) = last {
            self.latin_unit(hash);
        }
        // A text with fewer words than the shingle size still gets one shingle of all of
        // them, unless single words are features anyway.
        let n = usize::from(self.config.word_shingles);
        if n >= 2 && self.seen > 0 && self.seen < n && !self.config.words {
            let (h, idf) = shingle(&self.ring, 0..self.seen, n, &self.word_hasher);
            self.sink.add(h, || idf);
        }
        self.flush_units();
        self.flush_latin_units();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simhash::features::feature_map::Features;

    fn only_words() -> SimhashConfig {
        SimhashConfig::default()
            .with_cjk_char_shingles(0)
            .with_word_char_shingles(0)
    }

    fn extract(config: &SimhashConfig, text: &str, features: &mut Features) {
        features.clear();
        super::extract(config, &SeedHashes::new(config.seed), text, features);
    }

    fn count(config: &SimhashConfig, text: &str) -> usize {
        let mut f = Features::default();
        extract(config, text, &mut f);
        f.len()
    }

    #[test]
    fn stop_words_follow_the_seed() {
        assert_eq!(count(&SimhashConfig::default().with_seed(1), "的 the"), 0);
    }

    #[test]
    fn punctuation_and_stop_words_are_not_features() {
        let c = SimhashConfig::default();
        assert_eq!(count(&c, ""), 0);
        assert_eq!(
            count(&c, "，。！？、；：“”‘’（）《》 ,.!?;:\"'()<> \n\t"),
            0
        );
        assert_eq!(count(&c, "的 了 是 the of and"), 0);
        assert_eq!(
            count(&only_words().with_stop_words(false), "的 了 是 the of and"),
            6
        );
        assert_eq!(count(&only_words(), "Database DATABASE database"), 1);
    }

    #[test]
    fn counts_repeats_once_per_distinct_feature() {
        let mut f = Features::default();
        extract(&only_words(), "server server client", &mut f);
        let mut counts: Vec<u32> = f.values().map(|x| x.count).collect();
        counts.sort_unstable();
        assert_eq!(counts, [1, 2]);
    }

    #[test]
    fn shingles_add_features() {
        let c = only_words();
        let text = "alpha beta gamma delta";
        assert_eq!(count(&c, text), 4);
        assert_eq!(count(&c.clone().with_word_shingles(2), text), 4 + 3);
        assert_eq!(
            count(&c.clone().with_words(false).with_word_shingles(2), text),
            3
        );
        assert_eq!(
            count(&c.clone().with_words(false).with_word_shingles(8), text),
            1
        );
        // Across words: "ab" + "cd" (the stop word "the" dropped) -> abc, bcd
        let across = c
            .clone()
            .with_words(false)
            .with_word_char_shingles(3)
            .with_word_char_shingles_within_words(false);
        assert_eq!(count(&across, "ab, the cd"), 2);
        assert_eq!(count(&across, "abc, the cde"), 4);
        // Within words (the default): none from words shorter than the shingle.
        let within = across.with_word_char_shingles_within_words(true);
        assert_eq!(count(&within, "ab, the cd"), 0);
        assert_eq!(count(&within, "abc, the cde"), 2);
        assert_eq!(count(&within, "abcd abcd"), 2);
        // 数据库的数据 -> 数据库数据 (的 dropped) -> 数据 据库 库数 (数据 twice)
        assert_eq!(
            count(
                &c.clone().with_words(false).with_cjk_char_shingles(2),
                "数据库的数据"
            ),
            3
        );
    }

    #[test]
    fn only_features_of_non_cjk_words_are_counted_in_pieces() {
        for config in [
            SimhashConfig::default(),
            SimhashConfig::default().with_idf(IdfWeighting::Jieba),
        ] {
            let mut f = Features::default();
            // 数据库 (a word and three ideographs), backup (a word and four trigrams).
            extract(&config, "数据库 backup", &mut f);
            let latin = f.values().filter(|x| x.latin).count();
            assert_eq!((f.len(), latin), (9, 5), "{config:?}");
            extract(&config.with_latin_count_pieces(0), "数据库 backup", &mut f);
            assert!(f.values().all(|x| !x.latin));
        }
    }

    #[test]
    fn character_shingles_across_words_ignore_line_breaks_inside_words() {
        let c = SimhashConfig::default()
            .with_words(false)
            .with_word_char_shingles_within_words(false);
        let mut a = Features::default();
        let mut b = Features::default();
        extract(&c, "install the macos\npackage 安装\n软件包", &mut a);
        extract(&c, "install the macospackage 安装软件包", &mut b);
        let mut ka: Vec<_> = a.keys().collect();
        let mut kb: Vec<_> = b.keys().collect();
        ka.sort();
        kb.sort();
        assert_eq!(ka, kb);
    }

    /// A long text of everything the chunks must not change: Chinese sentences, Latin and
    /// mixed words, digits, full-width and upper-case letters, `\r\n`, ideographs outside the
    /// main block, jieba's dictionary words with letters (`T恤`).
    fn mixed_text(len: usize) -> String {
        const PARTS: &[&str] = &[
            "数据库",
            "服务器",
            "的",
            "了",
            "我们",
            "中出",
            "叛徒",
            "历史学者认为",
            "。",
            "，",
            "、",
            "“",
            "”",
            "……",
            " ",
            "\n",
            "\r\n",
            "\r",
            "\t",
            "Server",
            "the",
            "café",
            "file.txt",
            "c++",
            "3.14",
            "100%",
            "ＡＢＣ",
            "１２３",
            "！",
            "　",
            "ﬁle",
            "dаtа",
            "T恤",
            "t恤",
            "卡拉OK",
            "〇",
            "\u{3400}",
            "\u{20000}",
            "\u{2A6E0}",
            "\u{F900}",
            "e\u{301}",
            "한국어",
        ];
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut text = String::new();
        while text.len() < len {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            text.push_str(PARTS[(rng % PARTS.len() as u64) as usize]);
        }
        text
    }

    #[test]
    fn chunks_give_the_features_of_the_whole_text() {
        let text = mixed_text(60_000);
        let configs = [
            SimhashConfig::default(),
            SimhashConfig::default()
                .with_word_char_shingles_within_words(false)
                .with_latin_count_pieces(0),
            only_words(),
            SimhashConfig::default()
                .with_word_shingles(3)
                .with_idf(IdfWeighting::Jieba)
                .with_tf(crate::simhash::config::TfScaling::Log),
            SimhashConfig::default()
                .with_cjk_char_shingles(2)
                .with_word_char_shingles(4),
            SimhashConfig::default()
                .with_words(false)
                .with_cjk_char_shingles(3),
            SimhashConfig::default()
                .with_normalize(false)
                .with_stop_words(false)
                .with_hmm(false),
        ];
        for config in configs {
            let seeds = SeedHashes::new(config.seed);
            let features = |chunk_bytes: usize| {
                let mut f = Features::default();
                extract_in_chunks(&config, &seeds, &text, &mut f, chunk_bytes, &mut |_| ());
                let mut f: Vec<(u64, u32, u32, bool)> = f
                    .into_iter()
                    .map(|(h, x)| (h, x.count, x.idf.to_bits(), x.latin))
                    .collect();
                f.sort_unstable();
                f
            };
            let sums = |chunk_bytes: usize| {
                let mut s = crate::simhash::sums::bit_sums::Sums::default();
                extract_in_chunks(&config, &seeds, &text, &mut s, chunk_bytes, &mut |_| ());
                (s.fingerprint().ok(), s.occurrences())
            };
            let whole = (features(usize::MAX), sums(usize::MAX));
            assert!(whole.1 .1 > 5_000, "{config:?}: {} occurrences", whole.1 .1);
            for chunk_bytes in [1, 7, 64, 1000, CHUNK_BYTES] {
                let chunks = (features(chunk_bytes), sums(chunk_bytes));
                assert!(chunks == whole, "{config:?}, {chunk_bytes}");
            }
        }
    }

    #[test]
    fn idf_weights_chinese_words() {
        let c = only_words().with_idf(IdfWeighting::Jieba);
        let mut f = Features::default();
        extract(&c, "劳动防护", &mut f);
        let idf: Vec<f32> = f.values().map(|x| x.idf).collect();
        assert_eq!(idf.len(), 1);
        assert!((idf[0] - 13.9).abs() < 0.01, "{idf:?}");
        extract(&c.with_idf(IdfWeighting::None), "劳动防护", &mut f);
        assert!(f.values().all(|x| x.idf == 1.0));
    }
}
