//! Records the git commit the command is built from, for `simhash-store --version`
//! (`SIMHASH_STORE_COMMIT`): from git in a checkout, from `.cargo_vcs_info.json` in a crate
//! downloaded from a registry, "unknown" otherwise. Only with the `cli` feature, so the
//! library alone is not rebuilt at every commit.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_CLI").is_none() {
        return;
    }
    let commit = from_git()
        .or_else(from_vcs_info)
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=SIMHASH_STORE_COMMIT={commit}");
}

/// The abbreviated commit of HEAD, and a rerun whenever HEAD or the branch it names moves.
fn from_git() -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git").args(args).output().ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
    };
    // Not the commit of a repository this crate was merely unpacked into.
    let top = git(&["rev-parse", "--show-toplevel"])?;
    let here = std::env::var("CARGO_MANIFEST_DIR").ok()?;
    if Path::new(&top).canonicalize().ok()? != Path::new(&here).canonicalize().ok()? {
        return None;
    }
    let commit = git(&["rev-parse", "--short=12", "HEAD"])?;
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        // Only files that exist: cargo reruns the script at every build for a missing one.
        if let Some(path) = git(&["rev-parse", "--git-path", &name]) {
            if Path::new(&path).exists() {
                println!("cargo:rerun-if-changed={path}");
            }
        }
    }
    Some(commit)
}

/// `cargo package` writes the commit it packaged into `.cargo_vcs_info.json`.
fn from_vcs_info() -> Option<String> {
    let text = std::fs::read_to_string(Path::new(".cargo_vcs_info.json")).ok()?;
    let at = text.find("\"sha1\"")?;
    let rest = &text[at + "\"sha1\"".len()..];
    let start = rest.find('"')? + 1;
    let sha1 = rest[start..].split('"').next()?;
    (sha1.len() >= 12 && sha1.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| sha1[..12].to_string())
}
