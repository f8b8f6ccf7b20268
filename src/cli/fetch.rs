//! `kdeploy fetch CLUSTER`: every artifact the cluster's nodes need, in the
//! deployer's store ahead of a switch — each once, in parallel, verified by
//! sha256, resumed where a transfer was cut. For air-gapped sites: fetch on
//! a connected machine, carry the project's `.kdeploy/store` (or point
//! `--store` at the carried one). Exit codes: 0 everything in the store, 1
//! evaluation error or an artifact that could not be fetched or verified.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::eval::report;
use super::inputs::{self, Inputs};

#[derive(Args)]
#[command(after_help = "\
Artifacts already in the store (or dropped by hand into .kdeploy/downloads/ under their name)
are not fetched again; a download is checked against its declared sha256 before it enters
the store, and a mismatch, an HTTP error or a dead server names the artifact and its URL.
The proxy per scheme comes from http_proxy/HTTP_PROXY, https_proxy/HTTPS_PROXY or ALL_PROXY
(with NO_PROXY), else from the cluster's proxy.http / proxy.https (with proxy.noProxy); TLS uses the system's certificate
roots. A server silent for --download-timeout seconds counts as a failed attempt; five
attempts, with growing pauses. A bar per download on a terminal. `switch` does the same
before it reaches any node.

Examples:
  kdeploy fetch clusters/ha.nix
  kdeploy fetch clusters/ha.nix --store /media/usb/kdeploy-store")]
pub struct FetchArgs {
    /// The cluster file.
    file: PathBuf,
    /// Select this attribute path from the file's value first.
    #[arg(long = "attr", short = 'A')]
    attr: Option<String>,
    #[command(flatten)]
    inputs: Inputs,
}

pub fn run(args: FetchArgs) -> ExitCode {
    let mut session = args.inputs.session(Some(&args.file));
    let resolver = args.inputs.resolver(Some(&args.file));
    let result = (|| {
        let (closures, _) =
            inputs::cluster_closures(&mut session, &args.inputs, &args.file, args.attr.as_deref(), &resolver, false)?;
        args.inputs.fetch_artifacts(&resolver, &closures)
    })();
    match result {
        Ok(f) => {
            let bytes: u64 = f.fetched.iter().map(|(_, b)| b).sum();
            println!(
                "{} artifact(s): {} fetched ({:.1} MB), {} already in the store",
                f.cached + f.fetched.len(),
                f.fetched.len(),
                bytes as f64 / 1e6,
                f.cached
            );
            ExitCode::SUCCESS
        }
        Err(f) => report(&session, f),
    }
}
