//! `kdeploy certs CLUSTER`: every certificate the cluster's nodes get (the
//! etcd CA and the member/admin/node certificates), per node, with subject,
//! names, expiry, days left and a status. It evaluates the cluster to learn
//! which certificates exist and reads them from the deployer's secret store
//! only: no node is contacted, and key files are never opened. `--renew`
//! re-issues the certificates due within the window (keeping their keys);
//! the next `kdeploy switch` pushes them, since their keyed hashes change.
//! A user's own CA (`etcd.caDir`) is read only where `switch` would read
//! it (the project root, the system's directories, `--allow-local`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde::Serialize;
use time::OffsetDateTime;

use super::eval::report;
use super::inputs::{self, Failure, Inputs};
use super::switch::OutputFormat;
use crate::closure::{self, Cluster, Make, Secret, Source};
use crate::store::{pki, SecretStore};

#[derive(Args)]
#[command(after_help = "\
Status of each certificate: \"ok\"; \"due\" (it expires within the window, --within DAYS,
default 30); \"expired\"; \"not made yet\" (the next switch makes it); \"unreadable\" (the file
is not a PEM certificate). Key files are never read or printed.

--renew re-issues every certificate (not the CA) that is due or expired, keeping its key, in
the deployer's secret store (.kdeploy/secrets). Nothing changes on the nodes until the next
`kdeploy switch`, which pushes the new certificates and restarts etcd where they changed.

Exit codes: 0 listed (or renewed), 1 evaluation error or a secret store failure, 2 usage error.

Examples:
  kdeploy certs clusters/lab.nix
  kdeploy certs clusters/lab.nix --output json
  kdeploy certs clusters/lab.nix --renew --within 60 && kdeploy switch clusters/lab.nix")]
pub struct CertsArgs {
    /// The cluster file.
    file: PathBuf,
    /// Select this attribute path from the file's value first.
    #[arg(long = "attr", short = 'A')]
    attr: Option<String>,
    /// Only this node.
    #[arg(long, value_name = "NAME")]
    node: Option<String>,
    /// A certificate expiring within this many days is due.
    #[arg(long, value_name = "DAYS", default_value_t = pki::RENEW_DAYS)]
    within: i64,
    /// Re-issue the certificates that are due (then `kdeploy switch` to push them).
    #[arg(long)]
    renew: bool,
    /// Listing format on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    output: OutputFormat,
    #[command(flatten)]
    inputs: Inputs,
}

/// One certificate file of one node.
#[derive(Serialize)]
struct Row {
    node: String,
    /// Where it is installed on the node.
    path: String,
    /// Its name in the secret store.
    secret: String,
    status: &'static str,
    subject: Option<String>,
    names: Vec<String>,
    /// RFC 3339, UTC.
    not_after: Option<String>,
    days_left: Option<i64>,
    is_ca: bool,
}

pub fn run(args: CertsArgs) -> ExitCode {
    let mut session = args.inputs.session(Some(&args.file));
    let result = (|| {
        // The cluster's files are all we need: no hashing, no blob store.
        let (cluster, _) = inputs::typed(&mut session, &args.inputs, &args.file, args.attr.as_deref())?;
        closure::validate(&cluster)?;
        if let Some(n) = &args.node {
            if !cluster.nodes.contains_key(n) {
                return Err(Failure::Usage(format!("no node {n:?} in cluster {}", cluster.name)));
            }
        }
        // the same store switch uses (--secrets / KDEPLOY_SECRETS, else the
        // project's), confined as switch confines it (--allow-local)
        let resolver = args.inputs.resolver(Some(&args.file));
        let store = resolver.secrets();
        let now = OffsetDateTime::now_utc();
        let mut out = String::new();
        if args.renew {
            let made = store.renew(&cluster, args.within, now)?;
            for name in &made.made {
                eprintln!("renewed: {name}");
            }
            if made.made.is_empty() {
                eprintln!("nothing due within {} days", args.within);
            } else {
                eprintln!("run `kdeploy switch {}` to push the renewed certificates", args.file.display());
            }
        }
        let rows = rows(&cluster, store, args.node.as_deref(), args.within, now)?;
        match args.output {
            OutputFormat::Json => out = serde_json::to_string_pretty(&rows).expect("JSON") + "\n",
            OutputFormat::Text => text(&rows, &mut out),
        }
        Ok(out)
    })();
    match result {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(f) => report(&session, f),
    }
}

/// Certificate files per node in phase and file order; key files skipped.
fn rows(
    cluster: &Cluster,
    store: &SecretStore,
    only: Option<&str>,
    within: i64,
    now: OffsetDateTime,
) -> Result<Vec<Row>, Failure> {
    let mut out = Vec::new();
    for (node, n) in &cluster.nodes {
        if only.is_some_and(|o| o != node) {
            continue;
        }
        for f in n.phases.iter().flat_map(|p| &p.files) {
            let Source::Secret(Secret { name, make }) = &f.source else { continue };
            let is_cert = match make {
                Make::Ca(ca) => *name == ca.cert,
                Make::Cert(c) => *name == c.cert,
                Make::Token | Make::Hex { .. } | Make::CaPin(_) => false,
            };
            if is_cert {
                out.push(row(node, &f.path, name, store, within, now)?);
            }
        }
    }
    Ok(out)
}

fn row(
    node: &str,
    path: &str,
    name: &str,
    store: &SecretStore,
    within: i64,
    now: OffsetDateTime,
) -> Result<Row, Failure> {
    let mut r = Row {
        node: node.to_string(),
        path: path.to_string(),
        secret: name.to_string(),
        status: "not made yet",
        subject: None,
        names: Vec::new(),
        not_after: None,
        days_left: None,
        is_ca: false,
    };
    if !store.exists(name)? {
        return Ok(r);
    }
    // A certificate is public; only its own file is read, never the key's.
    match store.read(name).ok().and_then(|b| pki::inspect(&b).ok()) {
        None => r.status = "unreadable",
        Some(info) => {
            let left = info.not_after - now.unix_timestamp();
            r.status = if left <= 0 {
                "expired"
            } else if pki::is_due_within(info.not_after, now, within) {
                "due"
            } else {
                "ok"
            };
            r.subject = Some(info.subject);
            r.names = info.names;
            r.not_after = OffsetDateTime::from_unix_timestamp(info.not_after)
                .ok()
                .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok());
            r.days_left = Some(left.div_euclid(86400));
            r.is_ca = info.is_ca;
        }
    }
    Ok(r)
}

fn text(rows: &[Row], out: &mut String) {
    use std::fmt::Write;
    if rows.is_empty() {
        out.push_str("no certificates in this cluster\n");
    }
    let mut last = "";
    for r in rows {
        if r.node != last {
            let _ = writeln!(out, "{}", r.node);
            last = &r.node;
        }
        let when = match (&r.not_after, r.days_left) {
            (Some(t), Some(d)) => format!("{}  {d} days left", &t[..10.min(t.len())]),
            _ => "-".to_string(),
        };
        let _ = writeln!(out, "  {:<40} {:<13} {when}", r.path, r.status);
        if let Some(s) = &r.subject {
            let _ = writeln!(out, "    subject {s}{}", if r.is_ca { " (CA)" } else { "" });
        }
        if !r.names.is_empty() {
            let _ = writeln!(out, "    names   {}", r.names.join(", "));
        }
    }
}
