//! The demo runs, loads every generated page and reports precision and recall, plain and
//! verified.
#![cfg(feature = "cli")]

use std::process::Command;

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

fn number_after(text: &str, word: &str) -> Option<f64> {
    let at = text.find(word)? + word.len();
    text[at..].split_whitespace().next()?.parse().ok()
}

#[test]
fn demo_reports_recall() -> Result {
    let out = Command::new(env!("CARGO_BIN_EXE_simhash-store"))
        .args(["demo", "--pages", "400"])
        .output()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("400 documents") || stdout.contains(" documents ("),
        "{stdout}"
    );
    let precision = number_after(&stdout, "precision").ok_or("no precision")?;
    let recall = number_after(&stdout, "recall").ok_or("no recall")?;
    assert!(precision > 0.9, "{stdout}");
    assert!(recall > 0.6, "{stdout}");
    assert!(stdout.contains("0 bad records"), "{stdout}");
    let verified = &stdout[stdout
        .find("verified (--verified")
        .ok_or("no verified answers")?..];
    let v_precision = number_after(verified, "precision").ok_or("no verified precision")?;
    let v_recall = number_after(verified, "recall").ok_or("no verified recall")?;
    assert!(v_precision > 0.9, "{stdout}");
    assert!(v_recall >= recall, "{stdout}");
    Ok(())
}
