//! `kdeploy keeper`: the connection keeper's process, started by a run
//! given `--persist` (`transport::keeper`), never by hand.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

#[derive(Args)]
pub struct KeeperArgs {
    /// The socket to serve on (in the user's private keeper directory).
    #[arg(long, value_name = "PATH")]
    socket: PathBuf,
    /// Exit once no run has used a connection for this many seconds.
    #[arg(long, value_name = "SECS")]
    persist: u64,
}

pub fn run(args: KeeperArgs) -> ExitCode {
    let served = super::switch::runtime()
        .block_on(crate::transport::keeper::serve(&args.socket, Duration::from_secs(args.persist.max(1))));
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            super::print_error(&format!("connection keeper on {}: {e}", args.socket.display()));
            ExitCode::from(super::EXIT_ERROR)
        }
    }
}
