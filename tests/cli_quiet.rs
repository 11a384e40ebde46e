//! `-q`/`--quiet` is taken by every subcommand, with the same help, and leaves nothing on
//! standard error but errors and warnings.
#![cfg(feature = "cli")]

mod common;

use common::cli::{ok, run, Result};

/// The subcommands `simhash-store --help` lists.
fn subcommands() -> Result<Vec<String>> {
    let help = ok(&run(&["--help"])?);
    let (_, commands) = help.split_once("Commands:").ok_or("no Commands: section")?;
    Ok(commands
        .lines()
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        // A name is indented by two spaces; a wrapped description by more.
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect())
}

#[test]
fn every_subcommand_takes_quiet_with_one_meaning() -> Result {
    let commands = subcommands()?;
    assert!(commands.len() >= 14, "{commands:?}");
    let mut helps = Vec::new();
    for command in &commands {
        let help = ok(&run(&[command, "--help"])?);
        // The option's line and its description's lines, up to the next option or blank line,
        // as one line (wrapping depends on the other options).
        let mut lines = help
            .lines()
            .map(str::trim)
            .skip_while(|line| !line.starts_with("-q, --quiet"));
        let first = lines
            .next()
            .ok_or_else(|| format!("`{command} --help` has no -q, --quiet: {help}"))?;
        let words: Vec<&str> = std::iter::once(&first["-q, --quiet".len()..])
            .chain(lines.take_while(|line| !line.is_empty() && !line.starts_with('-')))
            .flat_map(str::split_whitespace)
            .collect();
        helps.push((command.clone(), words.join(" ")));
    }
    let first = &helps[0].1;
    assert!(first.starts_with("No progress bar"), "{first}");
    for (command, line) in &helps {
        assert_eq!(line, first, "`{command}` describes -q otherwise");
    }
    Ok(())
}

#[test]
fn quiet_leaves_standard_error_empty() -> Result {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("store");
    let s = path.to_str().ok_or("path")?;
    let input = dir.path().join("pages.txt");
    std::fs::write(&input, "one page about rivers and bridges of the north\n")?;
    ok(&run(&[
        "load",
        input.to_str().ok_or("path")?,
        "--store",
        s,
        "-q",
    ])?);
    let text = "one page about rivers and bridges of the north";
    let fp = ok(&run(&["query", "--store", s, "--text", text, "--json"])?);
    let fp: serde_json::Value = serde_json::from_str(&fp)?;
    let fp = fp["query"].as_str().ok_or("query fingerprint")?.to_string();
    let noisy: [&[&str]; 3] = [
        &["export", "--store", s, "--output", "/dev/null"],
        &["query", "--store", s, "--text", text],
        &["remove", "--store", s, "404"],
    ];
    for args in noisy {
        // Without -q each says something on standard error; with it, nothing.
        let out = run(args)?;
        ok(&out);
        assert!(!out.stderr.is_empty(), "{args:?}");
        let quiet: Vec<&str> = args.iter().copied().chain(["-q"]).collect();
        let out = run(&quiet)?;
        ok(&out);
        assert!(
            out.stderr.is_empty(),
            "{quiet:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for args in [
        vec!["stats", "--store", s, "-q"],
        vec!["verify", "--store", s, "--quiet"],
        vec!["get", "--store", s, "0", "-q"],
        vec!["compact", "--store", s, "-q"],
        vec!["query", "--store", s, "--fingerprint", &fp, "-q"],
        vec!["completions", "bash", "-q"],
    ] {
        let out = run(&args)?;
        ok(&out);
        assert!(out.stderr.is_empty(), "{args:?}");
    }
    Ok(())
}
