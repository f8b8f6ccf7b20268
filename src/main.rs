//! The `kdeploy` command: parses the command line and dispatches to one
//! module per subcommand under `cli/`. Exit codes are documented in the
//! README and in `kdeploy --help`.

mod cli;
mod stdlib;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::run()
}
