//! Running the `simhash-store` command in the command-line tests.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// The tests' result: any error, boxed.
pub type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Runs the command with `args` and waits for it.
pub fn run(args: &[&str]) -> Result<Output> {
    Ok(Command::new(env!("CARGO_BIN_EXE_simhash-store"))
        .args(args)
        .output()?)
}

/// Runs the command with `args`, `stdin` on its standard input.
pub fn run_with_stdin(args: &[&str], stdin: &str) -> Result<Output> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_simhash-store"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let written = child
        .stdin
        .take()
        .ok_or("stdin")?
        .write_all(stdin.as_bytes());
    // A command that fails before it reads its input (a usage error) may exit before the
    // write: its status and output tell what happened.
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other?,
    }
    Ok(child.wait_with_output()?)
}

/// Asserts that the command succeeded (showing its standard error if not) and returns its
/// standard output.
pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The fingerprint configuration the store at `store` records (`stats --json`).
pub fn recorded_config(store: &str) -> Result<serde_json::Value> {
    let out = run(&["stats", "--json", "--store", store])?;
    ok(&out);
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    Ok(v["fingerprint_config"].take())
}
