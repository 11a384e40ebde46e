//! `simhash-store completions SHELL`: the shell completion script, generated from the
//! command-line definition (the release archive carries the bash, zsh and fish ones).

use std::io;
use std::process::ExitCode;

use clap_complete::Shell;

/// Arguments of `simhash-store completions`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  simhash-store completions bash > ~/.local/share/bash-completion/completions/simhash-store
  simhash-store completions zsh > ~/.zfunc/_simhash-store   # with fpath+=~/.zfunc
  simhash-store completions fish > ~/.config/fish/completions/simhash-store.fish")]
pub struct Args {
    /// The shell to write the completion script for.
    #[arg(value_enum)]
    pub shell: Shell,

    // Taken as every subcommand takes it; `completions` writes nothing to standard error.
    #[command(flatten)]
    #[allow(dead_code)]
    quiet: super::QuietArg,
}

/// Writes the completion script of `command` for the shell to standard output.
pub fn run(args: Args, command: &mut clap::Command) -> anyhow::Result<ExitCode> {
    let name = command.get_name().to_string();
    clap_complete::generate(args.shell, command, name, &mut io::stdout());
    Ok(ExitCode::SUCCESS)
}
