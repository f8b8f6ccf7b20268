//! `kdeploy completions SHELL` and `kdeploy man`: what a shell and `man`
//! need, generated from the same clap definition the commands parse with,
//! so they never fall behind a flag.

use std::io::Write;
use std::process::ExitCode;

use clap::{Args, CommandFactory};
use clap_complete::Shell;

#[derive(Args)]
#[command(after_help = "\
Install:
  bash:  kdeploy completions bash > /etc/bash_completion.d/kdeploy
  zsh:   kdeploy completions zsh > \"${fpath[1]}/_kdeploy\"
  fish:  kdeploy completions fish > ~/.config/fish/completions/kdeploy.fish")]
pub struct CompletionsArgs {
    /// The shell to complete in.
    shell: Shell,
}

#[derive(Args)]
#[command(after_help = "\
Install: kdeploy man > /usr/local/share/man/man1/kdeploy.1, then `man kdeploy`.
Each subcommand's own page: kdeploy SUBCOMMAND --help.")]
pub struct ManArgs {}

pub fn completions(args: CompletionsArgs) -> ExitCode {
    // into memory first: clap_complete panics on a write error (a closed pipe)
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut super::Cli::command(), "kdeploy", &mut script);
    let _ = std::io::stdout().lock().write_all(&script);
    ExitCode::SUCCESS
}

pub fn man(_: ManArgs) -> ExitCode {
    let mut page = Vec::new();
    if let Err(e) = clap_mangen::Man::new(super::Cli::command()).render(&mut page) {
        eprintln!("error: rendering the man page: {e}");
        return ExitCode::from(super::EXIT_ERROR);
    }
    let _ = std::io::stdout().lock().write_all(&page);
    ExitCode::SUCCESS
}
