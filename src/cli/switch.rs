//! `kdeploy switch CLUSTER`: evaluate, then converge the nodes (see
//! `deploy::switch`). Progress lines go to stderr, the recap to stdout
//! (`--output json` for machines). Exit codes: 0 converged, 1 evaluation
//! error, 2 usage, 3 deploy failed (rolled back) or a node locked by
//! another run, 4 a node unreachable (nothing changed), 5 a node's lock
//! lost to another run mid-run, 6 refused before changing anything, 7
//! nodes changed but the deployer's record not written, 8 partial (the
//! nodes reached converged, unreachable ones `--max-unreachable`
//! tolerates skipped), 130 interrupted.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};

use super::eval::report;
use super::eval_cache::Evaluation;
use super::inputs::{self, Inputs};
use super::interrupt::run_cancellable;
use super::{EXIT_DEPLOY_FAILED, EXIT_INTERRUPTED, EXIT_LOCK_LOST, EXIT_PARTIAL, EXIT_UNREACHABLE, EXIT_USAGE};
use crate::deploy::events::{Event, Sink, Tee};
use crate::deploy::live::Progress;
use crate::deploy::recap::{Recap, RecapData};
use crate::deploy::step::Deadlines;
use crate::deploy::{Cancel, Outcome, RunOptions, SshSettings, SwitchOptions};
use crate::store::cache::BinaryCache;

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
}

/// SSH settings shared by switch and rollback.
#[derive(Args, Clone, Default)]
pub struct SshArgs {
    /// Log in with this private key (overrides the cluster's ssh.key and ~/.ssh/config's
    /// IdentityFile; default: the ssh-agent, else ~/.ssh/id_ed25519, id_ecdsa, id_rsa).
    #[arg(long, value_name = "FILE")]
    pub ssh_key: Option<PathBuf>,
    /// Read this OpenSSH client configuration instead of ~/.ssh/config ("none": no file).
    /// Its HostName, User, Port, IdentityFile, UserKnownHostsFile and ProxyJump apply to
    /// each node's address where the cluster and the flags say nothing.
    #[arg(long, short = 'F', value_name = "FILE")]
    pub ssh_config: Option<PathBuf>,
    /// Check host keys against this known_hosts file (default: ~/.ssh/config's
    /// UserKnownHostsFile, else ~/.ssh/known_hosts).
    #[arg(long, value_name = "FILE")]
    pub known_hosts: Option<PathBuf>,
    /// Record the key of a node not yet in known_hosts (a changed key is always refused).
    #[arg(long)]
    pub accept_new_host_keys: bool,
    /// Reach every node through this bastion, USER@HOST:PORT (overrides the cluster's ssh.jumpHost).
    #[arg(long, value_name = "USER@HOST:PORT")]
    pub jump_host: Option<crate::transport::JumpHost>,
    /// Seconds to wait for a node to answer.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub connect_timeout: u64,
    /// Keep the SSH connections open for SECS seconds after the run, for the next run to
    /// use (as OpenSSH's ControlPersist, which Ansible turns on for 60 s): a re-run then
    /// skips connecting and logging in. A background `kdeploy keeper` process holds them,
    /// behind a socket only this user can reach, closes each one unused for SECS and
    /// exits once no run has used it for SECS. 0: connect anew each run, start no keeper.
    #[arg(long, value_name = "SECS", env = "KDEPLOY_PERSIST", default_value_t = 60)]
    pub persist: u64,
}

impl SshArgs {
    pub fn settings(&self) -> SshSettings {
        let mut s = SshSettings::default();
        s.key = self.ssh_key.clone();
        s.known_hosts = self.known_hosts.clone();
        s.accept_new_host_keys = self.accept_new_host_keys;
        s.connect_timeout = Some(Duration::from_secs(self.connect_timeout.max(1)));
        s.jump_host = self.jump_host.clone();
        s.config_file = self.ssh_config.clone();
        s.persist = Some(Duration::from_secs(self.persist));
        s
    }
}

/// Deadlines on the nodes, shared by switch and rollback.
#[derive(Args, Clone)]
pub struct DeadlineArgs {
    /// Seconds a hook may run on a node before it is killed and its step fails.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pub hook_timeout: u64,
    /// Seconds one try of a check may run.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub check_timeout: u64,
    /// Seconds one systemctl operation (stop, start, restart, reload) may take.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub unit_timeout: u64,
}

impl DeadlineArgs {
    pub fn deadlines(&self) -> Deadlines {
        let s = |n: u64| Duration::from_secs(n.max(1));
        Deadlines { hook: s(self.hook_timeout), check: s(self.check_timeout), unit: s(self.unit_timeout) }
    }
}

#[derive(Args)]
#[command(after_help = "\
Exit codes: 0 converged (or nothing to do), 1 evaluation error, 2 usage error,
3 deploy failed (touched nodes rolled back) or a node is locked by another run,
4 some node unreachable (nothing was changed on any node; see --max-unreachable), 5 a node's lock was
lost mid-run (the deployer paused or cut off for 30 s or more; another run may
hold it: stopped before the next change, nothing undone on that node), 6 refused before
changing anything (an anchor move or upgrade jump the rules forbid, a damaged deployer
record, a membership kdeploy cannot tell, a plan that prunes, removes etcd members or
drains for an upgrade not confirmed: it asks on a terminal; --yes for scripts; a plan
that needs a node --max-unreachable would skip), 7 nodes changed but the deployer's record
could not be written (switch again once the cause is fixed), 8 partial: the nodes reached
converged and the unreachable ones --max-unreachable tolerates were skipped (the recap
lists them; the next switch that reaches them converges them), 130 interrupted by
Ctrl-C (touched nodes rolled back; a second Ctrl-C exits at once).

Examples:
  kdeploy switch clusters/lab.nix --ssh-key .lab/id_ed25519 --known-hosts .lab/known_hosts
  kdeploy switch clusters/lab.nix --dry-run
  kdeploy switch clusters/lab.nix --on etcd --output json")]
pub struct SwitchArgs {
    /// The cluster file.
    pub(super) file: PathBuf,
    /// Select this attribute path from the file's value first.
    #[arg(long = "attr", short = 'A')]
    pub(super) attr: Option<String>,
    /// Only these nodes: names, roles, @TAG, name patterns (w*), !WORD to leave out (repeat or comma-separate).
    #[arg(long, value_name = "NAME|ROLE")]
    pub(super) on: Vec<String>,
    /// Print the plan and change nothing: per node and phase, a unified diff of every
    /// changed text file against what the node runs (binaries by size and hash, secrets
    /// masked) and the unit actions it would take.
    #[arg(long)]
    pub(super) dry_run: bool,
    /// Also reset the nodes deployed before but no longer in the cluster (without it they
    /// are named and left alone). One that does not answer is removed without being
    /// reached: its etcd member through a live one, its Kubernetes Node through the API;
    /// a later switch resets it once it answers.
    #[arg(long)]
    pub(super) prune: bool,
    /// At most this many nodes receiving blobs over SSH at once (0: one more than the CPUs, at
    /// least 3). The others wait their turn after their own checks; a node fetching from
    /// the binary cache takes no slot.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(super) uploads: usize,
    /// Go on when at most N of the selected nodes are unreachable, as if --on had left
    /// them out: they stay on their recorded generation, the recap lists them as
    /// unreachable, the run exits 8, and the next switch that reaches them converges
    /// them. A plan that needs one of them is refused before anything changes (exit 6):
    /// an upgrade, a hook delegated to it, a node joining through it (the anchor), an
    /// etcd membership change while it is a member, or restarting etcd members so that,
    /// with it down, fewer than a quorum would be up. More than N unreachable: nothing
    /// changes (exit 4). 0, the default: any unreachable node stops the run.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(super) max_unreachable: usize,
    /// Do not take the etcd snapshot that comes before a change of etcd, the control
    /// planes or etcd's members (kept in .kdeploy/snapshots/etcd/; settings.etcd.backup).
    /// For a cluster whose members cannot give one: without this flag such a switch is
    /// refused before it changes anything (exit 6).
    #[arg(long)]
    pub(super) no_snapshot: bool,
    #[command(flatten)]
    pub(super) run: RunArgs,
    #[command(flatten)]
    pub(super) inputs: Inputs,
}

/// What every command that runs on nodes (switch, rollback, reset) takes
/// besides its own flags.
#[derive(Args)]
pub struct RunArgs {
    /// At most this many nodes connecting or pushing at once.
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub parallel: usize,
    /// Recap format on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    /// Also print each unit action, skipped hook and passed check.
    #[arg(long, short)]
    pub verbose: bool,
    /// Go on without asking when the plan resets nodes, removes phases from a node
    /// (--prune, a role taken away), removes etcd members or drains nodes for an
    /// upgrade. Without it such a plan is shown and asked about on a terminal, and
    /// refused (exit 6, nothing changed) without one.
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[command(flatten)]
    pub ssh: SshArgs,
    #[command(flatten)]
    pub deadlines: DeadlineArgs,
}

impl RunArgs {
    /// What the engine runs with, records in `state_dir`.
    pub fn options(&self, state_dir: PathBuf, dry_run: bool, uploads: usize) -> RunOptions {
        RunOptions {
            dry_run,
            parallel: self.parallel,
            uploads,
            ssh: self.ssh.settings(),
            state_dir,
            deadlines: self.deadlines.deadlines(),
            // given or asked for once the progress display exists (`cli::confirm`)
            consent: Default::default(),
        }
    }
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().expect("tokio runtime")
}

/// The cluster's `transfer.cache`, if it names one.
fn binary_cache(url: Option<&str>, timeout_secs: u64) -> Result<Option<Arc<BinaryCache>>, crate::store::Error> {
    let Some(url) = url else { return Ok(None) };
    BinaryCache::new(url, Duration::from_secs(timeout_secs.max(1))).map(|c| Some(Arc::new(c)))
}

pub fn run(args: SwitchArgs) -> ExitCode {
    let t0 = Instant::now();
    let mut session = args.inputs.session(Some(&args.file));
    let resolver = args.inputs.resolver(Some(&args.file));
    let (closures, how) = match (|| {
        // A dry run changes nothing, on the nodes or in the secret store.
        let (closures, how) = inputs::cluster_closures(
            &mut session,
            &args.inputs,
            &args.file,
            args.attr.as_deref(),
            &resolver,
            !args.dry_run,
        )?;
        // every download verified before any node is reached
        args.inputs.fetch_artifacts(&resolver, &closures)?;
        Ok((closures, how))
    })() {
        Ok(c) => c,
        Err(f) => return report(&session, f),
    };
    let cache = match binary_cache(closures.cluster.transfer_cache.as_deref(), args.inputs.download_timeout) {
        Ok(c) => c,
        Err(e) => {
            super::print_error(&e);
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let mut opts = SwitchOptions {
        cache,
        on: args.on.clone(),
        run: args.run.options(resolver.project_root().join(".kdeploy"), args.dry_run, args.uploads),
        prune: args.prune,
        max_unreachable: args.max_unreachable,
        no_snapshot: args.no_snapshot,
        color: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    let selected = match crate::deploy::select::in_cluster(&closures, &opts.on) {
        Ok(s) => s,
        Err(e) => {
            super::print_error(&e);
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let recap = Recap::new(&closures.cluster.name, selected);
    let progress = Progress::for_stderr(args.run.verbose);
    opts.run.consent = super::confirm::consent(args.run.yes, &progress);
    let sink = Tee(vec![&recap as &dyn Sink, &progress]);
    sink.emit(Event::Evaluated {
        nodes: closures.cluster.nodes.len(),
        took: t0.elapsed(),
        kept: how == Evaluation::Kept,
    });
    let cancel = Cancel::default();
    let result = run_cancellable(crate::deploy::switch(&closures, &resolver, &opts, cancel.clone(), &sink), cancel);
    progress.finish();
    let mut data = recap.data();
    data.took = t0.elapsed().as_secs_f64();
    data.dry_run = args.dry_run;
    match result {
        Ok(r) => finish(&data, &r.plan_text, args.dry_run, args.run.output, r.outcome),
        Err(e) => {
            super::print_error(&e);
            ExitCode::from(super::exit::Exit::from(&e))
        }
    }
}

/// Prints the plan (for `--dry-run`) and the recap, and maps the outcome to
/// the exit code; shared by `switch` and `rollback`.
pub(super) fn finish(data: &RecapData, plan: &str, dry_run: bool, output: OutputFormat, outcome: Outcome) -> ExitCode {
    if dry_run && output == OutputFormat::Text {
        print!("{plan}");
    }
    match output {
        OutputFormat::Text => print!("{}", data.text()),
        OutputFormat::Json => println!("{}", data.json()),
    }
    match outcome {
        Outcome::Ok => ExitCode::SUCCESS,
        Outcome::Failed => ExitCode::from(EXIT_DEPLOY_FAILED),
        Outcome::Unreachable => ExitCode::from(EXIT_UNREACHABLE),
        Outcome::Interrupted => ExitCode::from(EXIT_INTERRUPTED),
        Outcome::LockLost => ExitCode::from(EXIT_LOCK_LOST),
        Outcome::Partial => ExitCode::from(EXIT_PARTIAL),
    }
}
