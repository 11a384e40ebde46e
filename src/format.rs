//! Every on-disk format a store can have, and every fact about each: the release that
//! introduced it, what changed, how its settings record is encoded, how its block families
//! are laid out, and whether this build writes it. Nothing else in the crate compares format
//! numbers.
//!
//! | format | release | change |
//! |---|---|---|
//! | 1 | 0.1.0 | the key and value layout of every family (`docs/design.md`, "Bytes on disk"); the settings record in bincode, fields in order without names |
//! | 2 | 0.2.0 | the settings record may hold `TfScaling::LengthAdaptive`, which format 1 readers cannot decode |
//! | 3 | 0.3.0 | the settings record ends with `drop_boilerplate` |
//! | 4 | 0.4.0 | the settings record ends with `word_char_shingles_within_words` and `latin_count_pieces` |
//! | 5 | 0.5.0 | the settings record ends with `latin_count_pieces_ratio` |
//! | 6 | 0.6.0 | the settings record is JSON by field name with the word lists' content hashes; a `docs` value may end with a sketch |
//! | 7 | 0.7.0 | packed posting blocks: chunks and deltas in the block families (`src/postings/`), `meta/next_segment` |
//! | 8 | 0.8.0 | a chunk's ids apart from it, under a key of their own (`src/postings/chunk.rs`), so that a query reads remainders only |
//! | 9 | 0.9.0 | split groups: a group too large to scan is written as four copies ordered by the 12-bit parts of its remainders (`src/postings/write.rs`), so that a query reads about 4/4,096 of it |
//!
//! This build writes format 9 only. Stores of formats 1 to 8 open read-only: queries, pair
//! scans, export and [`Store::upgrade`](crate::Store::upgrade) read them, and a write fails
//! with [`Error::LegacyFormat`](crate::Error::LegacyFormat), which names
//! `simhash-store upgrade`.

/// How a store lays out its block families (by its [`Format`]; the layouts are
/// `src/postings/`'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// One key per document (formats 1-6, read only).
    Entries,
    /// Packed chunks and deltas (formats 7 to 9; 7 and 8 read only).
    Packed,
}

/// An on-disk format of a store (see [`Store::format`](crate::Store::format)). This build
/// reads every format and writes [`Format::CURRENT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Format {
    /// simhash-store 0.1: the original layout; bincode settings record.
    V1 = 1,
    /// 0.2: the settings record may hold `TfScaling::LengthAdaptive`.
    V2 = 2,
    /// 0.3: the settings record ends with `drop_boilerplate`.
    V3 = 3,
    /// 0.4: the settings record ends with `word_char_shingles_within_words` and
    /// `latin_count_pieces`.
    V4 = 4,
    /// 0.5: the settings record ends with `latin_count_pieces_ratio`.
    V5 = 5,
    /// 0.6: settings recorded by name with word-list hashes; sketches in `docs`.
    V6 = 6,
    /// 0.7: packed posting blocks (chunks and deltas), `meta/next_segment`.
    V7 = 7,
    /// 0.8: each chunk's ids apart from it, under a key of their own.
    V8 = 8,
    /// 0.9: groups too large to scan written split, by the parts of their remainders.
    V9 = 9,
}

/// How a format encodes its settings record (`meta/simhasher`, `src/settings/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SettingsEncoding {
    /// Formats 1 to 5: bincode, fields in order without names; the format's record is
    /// format 5's less the fields appended after it (`src/settings/legacy.rs`).
    Positional,
    /// Format 6 on: JSON that names every field (`src/settings/record.rs`).
    ByName,
}

impl Format {
    /// The format this build writes: every new store's.
    pub const CURRENT: Format = Format::V9;
    /// The oldest format this build reads.
    pub const OLDEST: Format = Format::V1;
    /// Every format, oldest first.
    pub const ALL: [Format; 9] = [
        Format::V1,
        Format::V2,
        Format::V3,
        Format::V4,
        Format::V5,
        Format::V6,
        Format::V7,
        Format::V8,
        Format::V9,
    ];

    /// The format recorded as `version` (`meta/format_version`), if this build knows it.
    pub fn from_version(version: u32) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.version() == version)
    }

    /// The number recorded in `meta/format_version`.
    pub const fn version(self) -> u32 {
        self as u32
    }

    /// The release that introduced the format, e.g. `"0.7.0"`.
    pub fn release(self) -> &'static str {
        match self {
            Format::V1 => "0.1.0",
            Format::V2 => "0.2.0",
            Format::V3 => "0.3.0",
            Format::V4 => "0.4.0",
            Format::V5 => "0.5.0",
            Format::V6 => "0.6.0",
            Format::V7 => "0.7.0",
            Format::V8 => "0.8.0",
            Format::V9 => "0.9.0",
        }
    }

    /// Whether this build writes stores of the format (only [`Format::CURRENT`]); stores of
    /// the others open read-only until `simhash-store upgrade` copies them.
    pub fn is_writable(self) -> bool {
        self == Format::CURRENT
    }

    /// How the format's block families are laid out.
    pub(crate) fn layout(self) -> Layout {
        match self {
            Format::V7 | Format::V8 | Format::V9 => Layout::Packed,
            _ => Layout::Entries,
        }
    }

    /// How the format encodes its settings record.
    pub(crate) fn settings_encoding(self) -> SettingsEncoding {
        match self {
            Format::V1 | Format::V2 | Format::V3 | Format::V4 | Format::V5 => {
                SettingsEncoding::Positional
            }
            Format::V6 | Format::V7 | Format::V8 | Format::V9 => SettingsEncoding::ByName,
        }
    }

    /// The fields the format appended at the end of the positional settings record (one
    /// byte each; formats 1 and 2 hold the first ten, format 2 adds only a `TfScaling`
    /// variant). Empty for formats that record settings by name.
    pub(crate) fn appended_settings(self) -> &'static [&'static str] {
        match self {
            Format::V3 => &["drop_boilerplate"],
            Format::V4 => &["word_char_shingles_within_words", "latin_count_pieces"],
            Format::V5 => &["latin_count_pieces_ratio"],
            _ => &[],
        }
    }

    /// What the settings record of the format is called in messages.
    pub(crate) fn settings_what(self) -> &'static str {
        match self {
            Format::V1 | Format::V2 => "fingerprint configuration (format 1 or 2)",
            Format::V3 => "fingerprint configuration (format 3)",
            Format::V4 => "fingerprint configuration (format 4)",
            Format::V5 => "fingerprint configuration (format 5)",
            Format::V6 | Format::V7 | Format::V8 | Format::V9 => "fingerprint settings record",
        }
    }

    /// Whether the format records a segment counter (`meta/next_segment`).
    pub(crate) fn has_segments(self) -> bool {
        self.layout() == Layout::Packed
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "format {}", self.version())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_round_trip_and_only_the_current_format_is_written() {
        for (i, format) in Format::ALL.into_iter().enumerate() {
            assert_eq!(format.version(), i as u32 + 1);
            assert_eq!(Format::from_version(format.version()), Some(format));
            assert_eq!(format.is_writable(), format == Format::CURRENT);
            assert!(format
                .release()
                .starts_with(&format!("0.{}.", format.version())));
        }
        assert_eq!(Format::from_version(0), None);
        assert_eq!(Format::from_version(10), None);
        assert_eq!(Format::OLDEST, Format::ALL[0]);
        assert_eq!(Format::CURRENT, Format::ALL[Format::ALL.len() - 1]);
    }

    #[test]
    fn layouts_and_settings_encodings() {
        assert_eq!(Format::V6.layout(), Layout::Entries);
        assert_eq!(Format::V7.layout(), Layout::Packed);
        assert_eq!(Format::V8.layout(), Layout::Packed);
        assert_eq!(Format::V9.layout(), Layout::Packed);
        assert_eq!(Format::V5.settings_encoding(), SettingsEncoding::Positional);
        assert_eq!(Format::V6.settings_encoding(), SettingsEncoding::ByName);
        // Each positional format after 2 appended at least one field.
        for format in [Format::V3, Format::V4, Format::V5] {
            assert!(!format.appended_settings().is_empty());
        }
    }
}
