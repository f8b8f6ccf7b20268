//! What every evaluating subcommand shares: the `--arg`/`--argstr` inputs,
//! the project root(s), the stdlib override, and — for clusters — turning
//! the evaluated value into hashed closures with a resolver over the
//! project's store.

use std::path::{Path, PathBuf};

use clap::Args;
use kdeploy_lang::{Arg, EvalError, Session, Value};

pub use super::decode::Origin;
use super::eval_cache::{self, Evaluation};
use crate::closure::{self, Closures, Cluster};
use crate::store::http::{split_hosts, HttpFetcher, Proxies, Retry};
use crate::store::{Fetched, Resolver, Store, DEFAULT_MAX_DOWNLOAD};

#[derive(Args, Clone, Default)]
pub struct Inputs {
    /// Pass NAME = EXPR to a file whose value is a function with formals.
    #[arg(long, num_args = 2, value_names = ["NAME", "EXPR"], action = clap::ArgAction::Append)]
    pub arg: Vec<String>,
    /// Pass NAME = VALUE (a string) likewise.
    #[arg(long, num_args = 2, value_names = ["NAME", "VALUE"], action = clap::ArgAction::Append)]
    pub argstr: Vec<String>,
    /// Project root: files may be read only below it, and `file` sources are relative to it
    /// (default: the file's directory, or the current one).
    #[arg(long)]
    pub root: Vec<PathBuf>,
    /// Use this stdlib directory instead of the one built into kdeploy.
    #[arg(long, env = "KDEPLOY_STDLIB")]
    pub stdlib: Option<PathBuf>,
    /// The deployer's blob store (default: .kdeploy/store under the project root).
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// The deployer's secret store: the etcd PKI, tokens and keys kdeploy makes (default:
    /// .kdeploy/secrets under the project root). Kept 0700; never inside the repository's
    /// tracked files.
    #[arg(long, value_name = "DIR", env = "KDEPLOY_SECRETS")]
    pub secrets: Option<PathBuf>,
    /// Let `local` sources (files of this machine a cluster names, e.g. download.local, etcd.certDir)
    /// be read from below DIR too. Without it: the project root and /usr/bin, /usr/sbin,
    /// /usr/local/bin, /usr/local/sbin, /usr/lib, /usr/libexec, /usr/local/lib, /opt, /bin, /sbin.
    /// Repeatable; the environment variable takes DIR[:DIR...].
    #[arg(long, value_name = "DIR", env = "KDEPLOY_ALLOW_LOCAL", value_delimiter = ':')]
    pub allow_local: Vec<PathBuf>,
    /// Let a cluster's `secretCommand` sources run their programs on this machine (each once
    /// per run, without a shell, in the project root; their output is the secret). Without
    /// it a cluster that names one is refused: a cluster file from elsewhere runs nothing.
    #[arg(long, env = "KDEPLOY_ALLOW_SECRET_COMMANDS")]
    pub allow_secret_commands: bool,
    /// Seconds a download may wait for a connection, an answer or its next bytes before the
    /// attempt fails (five attempts, with growing pauses, before the run stops).
    #[arg(long, value_name = "SECS", env = "KDEPLOY_DOWNLOAD_TIMEOUT", default_value_t = 30)]
    pub download_timeout: u64,
    /// The largest download taken, in bytes (an artifact over HTTP(S) or file://, or a member
    /// of an archive): one announced larger is refused before its body, one growing larger is
    /// cut off. Default 4294967296 (4 GiB).
    #[arg(long, value_name = "BYTES", env = "KDEPLOY_MAX_DOWNLOAD")]
    pub max_download: Option<u64>,
    /// Evaluate the cluster even when nothing its last evaluation read has changed
    /// (without it, a run takes the cluster kept in .kdeploy/eval/ then: each file the
    /// evaluation read is read and hashed again, each directory listed, and any change
    /// means a new evaluation).
    #[arg(long, env = "KDEPLOY_NO_EVAL_CACHE")]
    pub no_eval_cache: bool,
}

/// Why a command stopped: bad usage (exit 2) or a failure (exit 1).
pub enum Failure {
    Usage(String),
    Eval(Box<EvalError>),
    Closure(String),
}

impl From<Box<EvalError>> for Failure {
    fn from(e: Box<EvalError>) -> Self {
        Failure::Eval(e)
    }
}

impl From<closure::Error> for Failure {
    fn from(e: closure::Error) -> Self {
        Failure::Closure(e.to_string())
    }
}

impl From<crate::store::Error> for Failure {
    fn from(e: crate::store::Error) -> Self {
        Failure::Closure(e.to_string())
    }
}

impl Inputs {
    pub fn args(&self) -> Vec<(String, Arg)> {
        let mut out = Vec::new();
        for pair in self.arg.chunks(2) {
            out.push((pair[0].clone(), Arg::Expr(pair[1].clone())));
        }
        for pair in self.argstr.chunks(2) {
            out.push((pair[0].clone(), Arg::Str(pair[1].clone())));
        }
        out
    }

    pub fn roots(&self, file: Option<&Path>) -> Vec<PathBuf> {
        if !self.root.is_empty() {
            return self.root.clone();
        }
        match file {
            Some(f) if f.is_dir() => vec![f.to_path_buf()],
            Some(f) => {
                vec![f.parent().filter(|p| !p.as_os_str().is_empty()).map_or(PathBuf::from("."), |p| p.to_path_buf())]
            }
            None => vec![PathBuf::from(".")],
        }
    }

    /// An evaluator over the project roots; it never reads kdeploy's
    /// private state (`.kdeploy/`, the `--secrets` directory).
    pub fn session(&self, file: Option<&Path>) -> Session {
        let mut s = Session::new(self.roots(file), crate::stdlib::stdlib(self.stdlib.clone()));
        if let Some(dir) = &self.secrets {
            s.hide(dir);
        }
        s.ev.trace = super::decode::trace_hook();
        s
    }

    fn http_fetcher(&self, store: &Store) -> HttpFetcher {
        // partial downloads next to the ones a user drops in by hand
        let partial = store.dir().parent().unwrap_or(store.dir()).join("downloads/.partial");
        let timeout = std::time::Duration::from_secs(self.download_timeout.max(1));
        HttpFetcher::new(partial, Retry::default(), timeout)
    }

    /// Every artifact of every activated phase of every node in the
    /// deployer's store before any node is reached: each once, in parallel,
    /// verified by sha256, through the cluster's proxy when the environment
    /// names none; a bar per download on a terminal and a line on stderr
    /// for each one fetched. A failure names every artifact that could not
    /// be had.
    pub fn fetch_artifacts(&self, resolver: &Resolver, closures: &Closures) -> Result<Fetched, Failure> {
        let artifacts: Vec<&crate::schema::Artifact> = closures
            .cluster
            .nodes
            .values()
            // a generate-only phase is staged with what is at hand, never fetched for
            .flat_map(|n| n.phases.iter().filter(|p| p.activate).flat_map(|p| p.files.iter()))
            .filter_map(|f| match &f.source {
                crate::schema::Source::Artifact(a) => Some(a),
                _ => None,
            })
            .collect();
        let events = super::download_bars::DownloadBars::for_stderr();
        let proxies = cluster_proxies(&closures.cluster.proxy);
        if proxies.is_none() {
            return Ok(resolver.fetch_all(&artifacts, FETCH_PARALLEL, &events)?);
        }
        let fetcher = self
            .http_fetcher(resolver.store())
            .with_cluster_proxies(&proxies)
            .map_err(|e| Failure::Usage(e.to_string()))?;
        Ok(resolver.fetch_all_with(&fetcher, &artifacts, FETCH_PARALLEL, &events)?)
    }

    /// Sources are resolved against the first project root.
    pub fn resolver(&self, file: Option<&Path>) -> Resolver {
        let root = self.roots(file).remove(0);
        let store = Store::new(self.store.clone().unwrap_or_else(|| Store::default_dir(&root)));
        // partial downloads next to the ones a user drops in by hand
        let fetcher = self.http_fetcher(&store);
        let resolver = Resolver::new(root, store, Box::new(fetcher))
            .allow_local(self.allow_local.iter().cloned())
            .allow_secret_commands(self.allow_secret_commands)
            .max_download(self.max_download.unwrap_or(DEFAULT_MAX_DOWNLOAD));
        match &self.secrets {
            Some(dir) => resolver.with_secrets(dir),
            None => resolver,
        }
    }
}

/// Evaluate a cluster file (with `-A` selection) to its value.
pub fn eval_file(
    session: &mut Session,
    file: &Path,
    attr: Option<&str>,
    args: &[(String, Arg)],
) -> Result<Value, Failure> {
    if !file.exists() {
        return Err(Failure::Usage(format!("{}: no such file or directory", file.display())));
    }
    let v = session.eval_file(file, args)?;
    Ok(match attr {
        Some(a) => session.select(v, a, args)?,
        None => v,
    })
}

/// [`eval_file`], then require a cluster value: what `plan`, `switch` and
/// `certs` start with (a usage error otherwise).
pub fn eval_cluster(
    session: &mut Session,
    file: &Path,
    attr: Option<&str>,
    args: &[(String, Arg)],
) -> Result<Value, Failure> {
    let value = eval_file(session, file, attr, args)?;
    if !is_cluster(&value) {
        return Err(Failure::Usage(format!("{}: not a cluster value (no schemaVersion and nodes)", file.display())));
    }
    Ok(value)
}

/// Whether a value is an attribute set with `schemaVersion` and `nodes`
/// (checked without evaluating anything inside it).
pub fn is_cluster(v: &Value) -> bool {
    matches!(v, Value::Attrs(a) if a.get("schemaVersion").is_some() && a.get("nodes").is_some())
}

/// A cluster value → hashed closures. Secrets not made yet hash as such.
pub fn closures(
    session: &mut Session,
    v: &Value,
    resolver: &Resolver,
    origin: Option<Origin>,
) -> Result<Closures, Failure> {
    closures_of(super::decode::typed_cluster(session, v, origin)?, resolver, false)
}

/// The cluster `file` (at `attr`) as the engine's types: the evaluation
/// cache's (`eval_cache`) when nothing its last evaluation read has
/// changed, else evaluated, decoded and kept for the next run.
pub fn typed(
    session: &mut Session,
    inputs: &Inputs,
    file: &Path,
    attr: Option<&str>,
) -> Result<(Cluster, Evaluation), Failure> {
    let state_dir = inputs.roots(Some(file)).remove(0).join(".kdeploy");
    let slot = if inputs.no_eval_cache { None } else { eval_cache::Slot::new(&state_dir, inputs, file, attr) };
    if let Some(cluster) = slot.as_ref().and_then(|s| s.load(session)) {
        return Ok((cluster, Evaluation::Kept));
    }
    if slot.is_some() {
        session.ev.io.observe();
    }
    let traced = super::decode::printed_count();
    let value = eval_cluster(session, file, attr, &inputs.args())?;
    let cluster = super::decode::typed_cluster(session, &value, Some(Origin { inputs, file, attr }))?;
    if let (Some(slot), Some(traces)) = (slot, super::decode::printed_since(traced)) {
        slot.store(session.ev.io.observed(), traces, &cluster);
    }
    Ok((cluster, Evaluation::Evaluated))
}

/// The cluster `file` (at `attr`) into hashed closures ([`typed`], then
/// [`closures_of`]): what every command on a cluster starts with.
pub fn cluster_closures(
    session: &mut Session,
    inputs: &Inputs,
    file: &Path,
    attr: Option<&str>,
    resolver: &Resolver,
    make_secrets: bool,
) -> Result<(Closures, Evaluation), Failure> {
    let (cluster, how) = typed(session, inputs, file, attr)?;
    Ok((closures_of(cluster, resolver, make_secrets)?, how))
}

/// A typed cluster → hashed closures; `make_secrets`: first make the
/// secrets the cluster names that the deployer's secret store lacks (what
/// `switch` does).
pub fn closures_of(cluster: Cluster, resolver: &Resolver, make_secrets: bool) -> Result<Closures, Failure> {
    closure::validate(&cluster)?;
    if make_secrets {
        let made = resolver.ensure_secrets(&cluster)?;
        for name in &made.made {
            eprintln!("secret made: {name} (in {})", resolver.secrets().dir().display());
        }
    }
    let closures = closure::build(cluster, resolver)?;
    resolver.save_hashes();
    Ok(closures)
}

/// How many artifacts are fetched at once.
pub const FETCH_PARALLEL: usize = 4;

/// The cluster's proxies: `proxy.http` for http:// URLs, `proxy.https`
/// (else `proxy.http`, as most sites give one proxy for both) for
/// https://, and `proxy.noProxy`.
fn cluster_proxies(proxy: &crate::schema::Proxy) -> Proxies {
    Proxies {
        https: proxy.https.clone().or(proxy.http.clone()),
        http: proxy.http.clone(),
        no_proxy: proxy.no_proxy.as_deref().map_or(vec![], split_hosts),
    }
}

/// The cluster `file` (at `attr`) evaluated into closures, with no
/// secret made (for commands that push nothing: reset, snapshot, exec, gc,
/// restore), and the resolver of its project; a failure is reported and
/// its exit code returned.
pub fn closures_unsecreted(
    inputs: &Inputs,
    file: &std::path::Path,
    attr: Option<&str>,
) -> Result<(Resolver, Closures), std::process::ExitCode> {
    let mut session = inputs.session(Some(file));
    let resolver = inputs.resolver(Some(file));
    let made = cluster_closures(&mut session, inputs, file, attr, &resolver, false).map(|(c, _)| c);
    match made {
        Ok(c) => Ok((resolver, c)),
        Err(f) => Err(super::eval::report(&session, f)),
    }
}
