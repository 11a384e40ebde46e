//! What the docs say about this build agrees with it: the version (`Cargo.toml`), the store
//! format it writes (`Format::CURRENT`) and the names of its release files, in every doc
//! (README, CHANGELOG, `docs/*.md`, the Python package's README, type stubs and sources).

use std::path::{Path, PathBuf};

use simhash_store::upgrade::{Format, FORMAT_VERSION, MIN_FORMAT_VERSION};

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file a user reads for facts about this build, with its text.
fn docs() -> Result<Vec<(String, String)>> {
    let root = repo();
    let mut paths: Vec<PathBuf> = vec![
        root.join("README.md"),
        root.join("CHANGELOG.md"),
        root.join("python/README.md"),
        root.join("python/simhash_store/_native.pyi"),
    ];
    let mut dirs = vec![root.join("docs"), root.join("python/simhash_store")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md" || e == "py") {
                paths.push(path);
            }
        }
    }
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let name = p.strip_prefix(&root).unwrap_or(&p).display().to_string();
            Ok((name, std::fs::read_to_string(&p)?))
        })
        .collect()
}

/// The version-like token (digits and dots, not ending in a dot) at the start of `s`.
fn version_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    s[..end].trim_end_matches('.')
}

/// Each place `prefix` is followed by a digit in `text`: the version there and the rest of
/// the line after it.
fn versions_after<'a>(text: &'a str, prefix: &str) -> Vec<(&'a str, &'a str)> {
    text.match_indices(prefix)
        .filter_map(|(at, _)| {
            let rest = &text[at + prefix.len()..];
            rest.starts_with(|c: char| c.is_ascii_digit()).then(|| {
                let v = version_at(rest);
                let line_end = rest.find('\n').unwrap_or(rest.len());
                (v, &rest[v.len()..line_end])
            })
        })
        .collect()
}

/// `major.minor` of a version.
fn minor(version: &str) -> &str {
    match version.match_indices('.').nth(1) {
        Some((at, _)) => &version[..at],
        None => version,
    }
}

/// A version as numbers, to compare.
fn parse(version: &str) -> Vec<u32> {
    version.split('.').filter_map(|p| p.parse().ok()).collect()
}

/// The wheel's platform tags, as `scripts/build-wheels.sh` names the wheel it builds.
fn wheel_tags() -> Result<String> {
    let script = std::fs::read_to_string(repo().join("scripts/build-wheels.sh"))?;
    let (_, rest) = script
        .split_once("simhash_store-VERSION-")
        .ok_or("scripts/build-wheels.sh names no wheel")?;
    let (tags, _) = rest
        .split_once(".whl")
        .ok_or("scripts/build-wheels.sh names no wheel")?;
    Ok(tags.to_string())
}

#[test]
fn release_file_names_are_this_version() -> Result {
    let tags = wheel_tags()?;
    assert!(tags.starts_with("cp39-abi3-manylinux"), "{tags}");
    let mut seen = 0;
    for (name, text) in docs()? {
        for (v, rest) in versions_after(&text, "simhash_store-") {
            seen += 1;
            assert_eq!(v, VERSION, "{name}: a Python file of version {v}{rest}");
            if let Some(after) = rest.strip_prefix('-') {
                assert!(
                    after.starts_with(&format!("{tags}.whl")),
                    "{name}: a wheel named simhash_store-{v}-{after}, but scripts/build-wheels.sh \
                     builds simhash_store-{v}-{tags}.whl"
                );
            } else {
                assert!(
                    rest.starts_with(".tar.gz"),
                    "{name}: simhash_store-{v}{rest}"
                );
            }
        }
        for (v, rest) in versions_after(&text, "simhash-store-") {
            seen += 1;
            assert_eq!(v, VERSION, "{name}: an archive of version {v}{rest}");
            assert!(
                rest.starts_with("-x86_64-unknown-linux-gnu"),
                "{name}: simhash-store-{v}{rest}"
            );
        }
    }
    assert!(seen >= 4, "the docs name {seen} release files");
    Ok(())
}

#[test]
fn version_lines_are_this_builds() -> Result {
    let mut seen = 0;
    for (name, text) in docs()? {
        for line in text
            .lines()
            .filter(|l| l.contains("(commit ") && l.contains("writes store format"))
        {
            seen += 1;
            assert!(
                line.contains(&format!("simhash-store {VERSION} (commit ")),
                "{name}: {line}"
            );
            assert!(
                line.contains(&format!(
                    "writes store format {FORMAT_VERSION}, reads formats {MIN_FORMAT_VERSION}-{FORMAT_VERSION})"
                )),
                "{name}: {line}"
            );
        }
    }
    assert!(seen >= 1, "no doc shows `simhash-store --version`");
    Ok(())
}

/// The sections of the changelog: each release's heading and text.
fn changelog() -> Result<Vec<(String, String)>> {
    let text = std::fs::read_to_string(repo().join("CHANGELOG.md"))?;
    Ok(text
        .split("\n## [")
        .skip(1)
        .map(|s| {
            let (heading, body) = s.split_once('\n').unwrap_or((s, ""));
            (heading.to_string(), body.to_string())
        })
        .collect())
}

#[test]
fn the_changelog_opens_with_this_version() -> Result {
    let sections = changelog()?;
    let (heading, _) = sections.first().ok_or("CHANGELOG.md has no section")?;
    assert!(
        heading.starts_with(&format!("{VERSION}]")),
        "CHANGELOG.md's newest section is [{heading}, this build is {VERSION}"
    );
    Ok(())
}

#[test]
fn each_release_writes_the_format_of_its_time() -> Result {
    // The release of the format this build writes is not newer than the build.
    assert!(
        parse(Format::CURRENT.release()) <= parse(VERSION),
        "this build ({VERSION}) writes format {FORMAT_VERSION}, which is of release {}",
        Format::CURRENT.release()
    );
    assert_eq!(Format::CURRENT.version(), FORMAT_VERSION);
    let mut seen = 0;
    for (heading, body) in changelog()? {
        let version = version_at(&heading);
        let Some((_, rest)) = body.split_once("Store format: **") else {
            continue;
        };
        seen += 1;
        let written: u32 = version_at(rest).parse()?;
        let want = Format::ALL
            .into_iter()
            .filter(|f| parse(f.release()) <= parse(version))
            .map(Format::version)
            .max();
        assert_eq!(
            Some(written),
            want,
            "CHANGELOG.md: {version} writes format {written}"
        );
    }
    assert!(
        seen >= 3,
        "{seen} changelog sections name their store format"
    );
    Ok(())
}

#[test]
fn the_design_tables_name_each_formats_release() -> Result {
    let text = std::fs::read_to_string(repo().join("docs/design.md"))?;
    let code = std::fs::read_to_string(repo().join("src/format.rs"))?;
    for (name, text) in [("docs/design.md", text), ("src/format.rs", code)] {
        for format in Format::ALL {
            let row = format!("| {} | {} |", format.version(), format.release());
            assert!(text.contains(&row), "{name} has no row `{row}`");
        }
        let next = format!("| {} | ", FORMAT_VERSION + 1);
        assert!(
            !text.contains(&next),
            "{name} has a row for a format after this build's"
        );
    }
    Ok(())
}

/// How far from "new store" a format number is read as the format of new stores, in bytes.
const NEAR: usize = 40;

/// The text from `near` bytes before `at` to `near` bytes after the `len` bytes there
/// (widened to character boundaries).
fn around(text: &str, at: usize, len: usize, near: usize) -> &str {
    let mut start = at.saturating_sub(near);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + len + near).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    &text[start..end]
}

/// The sentences (or so: text between full stops that end a word) of `text` that contain
/// `needle`, case-insensitively.
fn sentences_with<'a>(text: &'a str, needle: &str) -> Vec<&'a str> {
    let needle = needle.to_lowercase();
    text.split(". ")
        .filter(|s| s.to_lowercase().contains(&needle))
        .collect()
}

/// Every number after `format ` in `sentence`.
fn formats_in(sentence: &str) -> Vec<u32> {
    versions_after(sentence, "format ")
        .into_iter()
        .chain(versions_after(sentence, "Format "))
        .filter_map(|(v, _)| v.parse().ok())
        .collect()
}

#[test]
fn new_stores_are_of_the_current_format() -> Result {
    let mut seen = 0;
    for (name, text) in docs()? {
        // The changelog's older sections say what their release wrote (checked above).
        let text = if name == "CHANGELOG.md" {
            text.split("\n## [").nth(1).unwrap_or("").to_string()
        } else {
            text
        };
        let text = text.replace('\n', " ");
        // "New stores are format 8", "format 8, that of every new store".
        // (ASCII lowercase keeps every byte where it was.)
        let lower = text.to_ascii_lowercase();
        for (at, needle) in lower.match_indices("new store") {
            let near = around(&text, at, needle.len(), NEAR);
            let formats = formats_in(near);
            if formats.is_empty() {
                continue;
            }
            seen += 1;
            assert!(
                formats.contains(&FORMAT_VERSION),
                "{name}: \"{near}\" does not say that new stores are format {FORMAT_VERSION}"
            );
        }
        // "releases before 0.8 cannot open" / "0.7 and older cannot open a format 8 store".
        for sentence in sentences_with(&text, "cannot open")
            .into_iter()
            .chain(sentences_with(&text, "refuse it"))
        {
            for (v, _) in versions_after(sentence, "before ") {
                seen += 1;
                assert_eq!(
                    v,
                    minor(Format::CURRENT.release()),
                    "{name}: \"{sentence}\": format {FORMAT_VERSION} is of release {}",
                    Format::CURRENT.release()
                );
            }
        }
    }
    assert!(seen >= 4, "{seen} sentences about new stores' format");
    // "0.7 and older cannot open a format 8 store": each format is of a later release.
    for (name, text) in docs()? {
        let text = text.replace('\n', " ");
        for (at, _) in text.match_indices(" and older cannot open a format ") {
            let before = text[..at].rsplit(' ').next().unwrap_or("");
            let rest = &text[at + " and older cannot open a format ".len()..];
            let format = Format::from_version(version_at(rest).parse()?)
                .ok_or_else(|| format!("{name}: no format {}", version_at(rest)))?;
            assert!(
                parse(before) < parse(minor(format.release())),
                "{name}: \"{before} and older cannot open a format {}\", which is of release {}",
                format.version(),
                format.release()
            );
        }
    }
    let stub = std::fs::read_to_string(repo().join("python/simhash_store/_native.pyi"))?;
    let (_, after) = stub
        .split_once("def format_version")
        .ok_or("the stub has no format_version")?;
    let doc = after.split("\"\"\"").nth(1).unwrap_or("");
    assert!(
        doc.contains(&format!("version: {FORMAT_VERSION} ")),
        "the stub's format_version says: {doc}"
    );
    Ok(())
}

#[test]
fn install_commands_name_files_not_an_index() -> Result {
    // simhash-store is not on PyPI: an install command names a wheel, an sdist or a folder.
    for (name, text) in docs()? {
        for bad in ["pip install \"simhash-store[", "pip install simhash-store"] {
            assert!(
                !text.contains(bad),
                "{name}: `{bad}`, but the package is not on PyPI"
            );
        }
    }
    Ok(())
}

#[test]
fn build_commands_build_the_command() -> Result {
    // The binary needs the `cli` feature (`server` for `serve`); the default builds the
    // library alone. Examples and benchmarks build what they need themselves.
    let mut seen = 0;
    for (name, text) in docs()? {
        for line in text.lines() {
            let builds = line.contains("cargo build") || line.contains("cargo install");
            if !builds || line.contains("--example") || line.contains("--bench") {
                continue;
            }
            seen += 1;
            assert!(
                line.contains("--features server") || line.contains("--features cli"),
                "{name}: `{line}` builds no `simhash-store` command"
            );
            if text.contains("simhash-store serve") {
                assert!(
                    line.contains("--features server"),
                    "{name}: `{line}` has no `serve`"
                );
            }
        }
    }
    assert!(seen >= 2, "{seen} build commands in the docs");
    Ok(())
}

/// The formats a doc says this build reads: `1..=9`, `1 to 9` or `1-9` after `needle`.
fn ranges_after(text: &str, needle: &str) -> Vec<(u32, u32)> {
    text.match_indices(needle)
        .filter_map(|(at, _)| {
            let rest = text[at + needle.len()..].trim_start_matches(['`', '(']);
            let rest = rest.strip_prefix("formats ").unwrap_or(rest);
            let first = version_at(rest);
            let rest = &rest[first.len()..];
            let rest = ["..=", " to ", "-"]
                .iter()
                .find_map(|sep| rest.strip_prefix(sep))?;
            Some((first.parse().ok()?, version_at(rest).parse().ok()?))
        })
        .collect()
}

#[test]
fn the_formats_read_are_this_builds() -> Result {
    let mut seen = 0;
    for (name, text) in docs()? {
        let text = text.replace('\n', " ");
        for needle in ["this build reads ", "This build reads ", "reads formats "] {
            for range in ranges_after(&text, needle) {
                seen += 1;
                assert_eq!(
                    range,
                    (MIN_FORMAT_VERSION, FORMAT_VERSION),
                    "{name}: \"{needle}\" names formats {}..={}, this build reads {MIN_FORMAT_VERSION}..={FORMAT_VERSION}",
                    range.0,
                    range.1
                );
            }
        }
    }
    assert!(seen >= 3, "{seen} docs say which formats this build reads");
    Ok(())
}

/// Whether the Markdown `doc` has a section `title`: a heading that is the title, or starts
/// with it and goes on with ` (` or `:`; or a paragraph that leads with it in bold.
fn has_section(doc: &str, title: &str) -> bool {
    let heading = doc
        .lines()
        .filter(|line| line.starts_with('#'))
        .map(|line| line.trim_start_matches('#').trim())
        .any(|h| {
            h.strip_prefix(title).is_some_and(|rest| {
                rest.is_empty() || rest.starts_with(" (") || rest.starts_with(':')
            })
        });
    heading || doc.contains(&format!("**{title}**")) || doc.contains(&format!("**{title}.**"))
}

/// Each reference to a section of a doc in `text`: `docs/guide.md, "Weighting"` (the file
/// name may be quoted in backticks, the quotes escaped, in Rust strings).
fn section_references(text: &str) -> Vec<(String, String)> {
    let text = text.replace("\\\"", "\"").replace('`', "");
    text.match_indices("docs/")
        .filter_map(|(at, _)| {
            let rest = &text[at..];
            let (file, rest) = rest.split_once(".md, \"")?;
            if file.contains(char::is_whitespace) {
                return None;
            }
            let (title, _) = rest.split_once('"')?;
            // A title may wrap: in a Rust string after a `\`, in a comment onto `///` or `//!`.
            let title = title.replace('\\', " ");
            let title = title
                .split_whitespace()
                .filter(|word| !matches!(*word, "///" | "//!" | "//"))
                .collect::<Vec<_>>()
                .join(" ");
            Some((format!("{file}.md"), title))
        })
        .collect()
}

/// The Rust sources under `dir`, with their text.
fn sources(dir: &Path) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            out.extend(sources(&path)?);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push((path.display().to_string(), std::fs::read_to_string(&path)?));
        }
    }
    Ok(out)
}

#[test]
fn section_references_name_sections_that_exist() -> Result {
    let mut seen = 0;
    let mut missing = Vec::new();
    let mut texts = docs()?;
    texts.extend(sources(&repo().join("src"))?);
    texts.extend(sources(&repo().join("python/src"))?);
    for (name, text) in texts {
        for (file, title) in section_references(&text) {
            seen += 1;
            let doc = std::fs::read_to_string(repo().join(&file))?;
            if !has_section(&doc, &title) {
                missing.push(format!("{name}: {file} has no section \"{title}\""));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    assert!(seen >= 10, "{seen} references to sections");
    Ok(())
}

/// `stats --help` says what the block families take per document at 100M as
/// `docs/benchmarks.md` measured it.
#[cfg(feature = "cli")]
#[test]
fn stats_help_gives_the_measured_bytes_per_document() -> Result {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_simhash-store"))
        .args(["stats", "--help"])
        .output()?;
    let help = String::from_utf8(out.stdout)?.replace('\n', " ");
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    let number_before = |text: &str, needle: &str| -> Option<f64> {
        let (before, _) = text.split_once(needle)?;
        before.rsplit(' ').next()?.parse().ok()
    };
    let said = number_before(&help, " bytes per document each at 100M")
        .ok_or("`stats --help` gives no bytes per document at 100M")?;
    let benchmarks = std::fs::read_to_string(repo().join("docs/benchmarks.md"))?;
    let (_, at_100m) = benchmarks
        .split_once("Per family at 100M: `block0..3` ")
        .ok_or("docs/benchmarks.md gives no bytes per document per family")?;
    let measured: f64 = version_at(at_100m).parse()?;
    assert!(
        (said - measured).abs() <= 0.5,
        "`stats --help` says about {said} bytes per document per block family, docs/benchmarks.md measured {measured}"
    );
    Ok(())
}

#[test]
fn the_helpers_read_what_they_should() {
    assert_eq!(version_at("0.8.0-cp39"), "0.8.0");
    assert_eq!(version_at("0.8. Then"), "0.8");
    assert_eq!(minor("0.8.0"), "0.8");
    assert!(parse("0.10.0") > parse("0.9.1"));
    assert_eq!(
        versions_after(
            "a simhash-store-0.8.0-x86 b simhash-store-VERSION",
            "simhash-store-"
        ),
        vec![("0.8.0", "-x86 b simhash-store-VERSION")]
    );
    assert_eq!(
        formats_in("New stores are format 8 (format 7 before)"),
        vec![8, 7]
    );
    assert!(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs").is_dir());
    assert_eq!(
        ranges_after("reads formats 1-9 and (`1..=5`)", "reads formats "),
        vec![(1, 9)]
    );
    assert_eq!(
        ranges_after("this build reads (`1..=5`)", "this build reads "),
        vec![(1, 5)]
    );
    assert_eq!(
        section_references(
            "see `docs/guide.md`, \"Weighting\" and (docs/design.md, \\\"Split groups\\\")"
        ),
        vec![
            ("docs/guide.md".to_string(), "Weighting".to_string()),
            ("docs/design.md".to_string(), "Split groups".to_string())
        ]
    );
}
