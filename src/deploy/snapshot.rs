//! Backups of a membership's data (etcd's) on the deployer:
//! `.kdeploy/snapshots/<membership>/`, a directory only its owner may
//! enter, outside what the evaluator may read (`lang/src/io.rs`), one file
//! per snapshot named for when it was taken and from which node
//! (`2026-12-06T141500Z-k8s-master01.db`, so names sort by time), 0600.
//! A snapshot is written under a temporary name and renamed once it is
//! complete and on disk: a crash or a failed command leaves nothing under
//! a real name. The `keep` newest stay. [`take`] streams a member's
//! `snapshot` command into a new file, bounded in size; etcd checks a
//! snapshot's own hash when it restores one (`restore.rs`).

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use super::error::SnapshotError;
use super::events::{Event, Sink};
use super::step::{output_tail, within, Deadlines};
use crate::node::Node;
use crate::schema::Membership;

/// The largest snapshot taken: etcd's recommended backend quota is 8 GiB.
pub const MAX_SNAPSHOT: u64 = 16 << 30;

/// One membership's snapshots on the deployer.
#[derive(Debug, Clone)]
pub struct Snapshots {
    dir: PathBuf,
}

impl Snapshots {
    /// The snapshots of `membership` under the project's `.kdeploy`.
    pub fn at(state_dir: &Path, membership: &str) -> Snapshots {
        Snapshots { dir: state_dir.join("snapshots").join(membership) }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every snapshot, oldest first (none when the directory is absent).
    pub fn list(&self) -> Result<Vec<PathBuf>, SnapshotError> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(SnapshotError::io("cannot read", &self.dir, e)),
        };
        let mut out = Vec::new();
        for entry in entries {
            let path = entry.map_err(|e| SnapshotError::io("cannot read", &self.dir, e))?.path();
            if path.extension().is_some_and(|x| x == "db") {
                out.push(path);
            }
        }
        out.sort();
        Ok(out)
    }

    /// The most recent snapshot, if any.
    pub fn newest(&self) -> Result<Option<PathBuf>, SnapshotError> {
        Ok(self.list()?.pop())
    }

    /// A new file for a snapshot of `node` taken at `secs`: its final
    /// name, and the temporary file it is written to.
    fn create(&self, node: &str, secs: u64) -> Result<(PathBuf, PathBuf, fs::File), SnapshotError> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(|e| SnapshotError::io("cannot create", &self.dir, e))?;
        // an existing directory keeps its mode otherwise
        fs::set_permissions(&self.dir, fs::Permissions::from_mode(0o700))
            .map_err(|e| SnapshotError::io("cannot chmod", &self.dir, e))?;
        let stamp = file_stamp(secs);
        let mut n = 0;
        let path = loop {
            // a second one in the same second sorts after the first: `Z.1-` > `Z-`
            let count = if n == 0 { String::new() } else { format!(".{n}") };
            let p = self.dir.join(format!("{stamp}{count}-{node}.db"));
            if !p.exists() {
                break p;
            }
            n += 1;
        };
        let tmp = path.with_extension("db.part");
        let file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(|e| SnapshotError::io("cannot create", &tmp, e))?;
        Ok((path, tmp, file))
    }

    /// Remove all but the `keep` newest (at least one stays); what was removed.
    pub fn prune(&self, keep: usize) -> Result<Vec<PathBuf>, SnapshotError> {
        let all = self.list()?;
        let old = all.len().saturating_sub(keep.max(1));
        let mut removed = Vec::new();
        for p in all.into_iter().take(old) {
            fs::remove_file(&p).map_err(|e| SnapshotError::io("cannot remove", &p, e))?;
            removed.push(p);
        }
        Ok(removed)
    }
}

/// `2026-12-06T141500Z`: a UTC time that sorts as text and fits a file name.
fn file_stamp(secs: u64) -> String {
    // record::format_time: `YYYY-MM-DD HH:MM:SS UTC`
    let t = super::record::format_time(secs);
    let (date, rest) = t.split_once(' ').unwrap_or((&t, ""));
    let clock: String = rest.chars().take(8).filter(|c| *c != ':').collect();
    format!("{date}T{clock}Z")
}

/// Take a snapshot of `name` from `node` (a member) with the membership's
/// `snapshot` command, into a new file of `snapshots`; then keep only
/// the newest. The file's path, once complete.
pub async fn take(
    node: &Node<'_>,
    name: &str,
    spec: &Membership,
    snapshots: &Snapshots,
    d: &Deadlines,
    sink: &dyn Sink,
) -> Result<PathBuf, SnapshotError> {
    let command = spec.snapshot.as_deref().ok_or_else(|| SnapshotError::Off { membership: name.to_string() })?;
    let host = node.host().name().to_string();
    let (path, tmp, file) = snapshots.create(&host, super::record::now())?;
    let written = stream(node, &format!("exec {}", within(d.hook, command)), file, &tmp).await;
    let bytes = match written {
        Ok(b) => b,
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
    };
    fs::rename(&tmp, &path).map_err(|e| SnapshotError::io("cannot rename", &tmp, e))?;
    let removed = snapshots.prune(spec.keep.unwrap_or(5) as usize)?;
    sink.emit(Event::Snapshot {
        membership: name.to_string(),
        node: host,
        path: path.clone(),
        bytes,
        removed: removed.len(),
    });
    Ok(path)
}

/// Run `script` under `node`'s lock, its stdout into `file` (synced);
/// the bytes written. A failing command, an empty or oversized snapshot
/// is an error quoting the command's stderr.
async fn stream(node: &Node<'_>, script: &str, mut file: fs::File, tmp: &Path) -> Result<u64, SnapshotError> {
    let host = node.host().name().to_string();
    let mut p = node.spawn_held(script).await?;
    p.close_stdin();
    let mut bytes: u64 = 0;
    let mut write_error = None;
    while let Some(chunk) = p.stdout.recv().await {
        bytes += chunk.len() as u64;
        if write_error.is_none() && bytes <= MAX_SNAPSHOT {
            if let Err(e) = file.write_all(&chunk) {
                write_error = Some(e);
            }
        }
    }
    let out = node.held_output(p.wait().await)?;
    if let Some(e) = write_error {
        return Err(SnapshotError::io("cannot write", tmp, e));
    }
    if !out.success() {
        return Err(SnapshotError::Failed { node: host, status: out.status, output: output_tail(&out) });
    }
    if bytes == 0 {
        return Err(SnapshotError::Empty { node: host });
    }
    if bytes > MAX_SNAPSHOT {
        return Err(SnapshotError::TooLarge { node: host, bytes });
    }
    file.sync_all().map_err(|e| SnapshotError::io("cannot sync", tmp, e))?;
    Ok(bytes)
}

/// A snapshot a switch takes before its first change: of `membership`,
/// from the first of `from` (held nodes that run a member) that gives one.
#[derive(Debug, Clone)]
pub struct SnapshotPlan {
    pub membership: String,
    pub spec: Membership,
    pub from: Vec<String>,
}

/// The snapshot a switch needs before changing `membership`: when backups
/// are on and the run changes one of the phases `snapshot_before` names
/// (`changing`) or the membership itself (`members_change`), and some node
/// it holds runs a member (`running`, in the order to ask them). None on a
/// first switch: no member runs, there is nothing to lose.
pub fn needed(
    membership: &str,
    spec: &Membership,
    changing: &std::collections::BTreeSet<&str>,
    members_change: bool,
    running: Vec<String>,
) -> Option<SnapshotPlan> {
    spec.snapshot.as_ref()?;
    let touched = members_change || spec.snapshot_before.iter().any(|p| changing.contains(p.as_str()));
    (touched && !running.is_empty()).then(|| SnapshotPlan {
        membership: membership.to_string(),
        spec: spec.clone(),
        from: running,
    })
}

/// Take `plan`'s snapshot from the first node of `plan.from` that gives
/// one; when none does, an error naming each node's reason (nothing was
/// changed yet: the run stops).
pub async fn before(
    session: &super::execute::Session<'_>,
    plan: &SnapshotPlan,
    state_dir: &Path,
    d: &Deadlines,
    sink: &dyn Sink,
) -> Result<PathBuf, SnapshotError> {
    let snapshots = Snapshots::at(state_dir, &plan.membership);
    let mut tried = Vec::new();
    for name in &plan.from {
        let Some(o) = session.get(name) else { continue };
        match take(&o.node, &plan.membership, &plan.spec, &snapshots, d, sink).await {
            Ok(p) => return Ok(p),
            Err(e @ SnapshotError::Io { .. }) => return Err(e),
            Err(e) => tried.push((name.clone(), e.to_string())),
        }
    }
    Err(SnapshotError::NoneTaken { membership: plan.membership.clone(), tried })
}

/// `kdeploy snapshot`: a snapshot of `closures`' membership now, from the
/// first member that answers (`from`: only that node), under its lock.
/// Members that do not answer are reported and passed over.
pub async fn now(
    closures: &crate::closure::Closures,
    opts: &super::operation::RunOptions,
    from: Option<&str>,
    sink: &dyn Sink,
) -> Result<PathBuf, super::error::Error> {
    use super::error::RestoreRefused;
    let (name, spec) = closures
        .cluster
        .memberships
        .iter()
        .find(|(_, m)| m.snapshot.is_some())
        .ok_or(SnapshotError::Off { membership: "etcd".into() })?;
    let mut members: Vec<String> =
        closures.cluster.nodes.keys().filter(|n| spec.members.contains_key(*n)).cloned().collect();
    if let Some(f) = from {
        if !members.iter().any(|m| m == f) {
            return Err(RestoreRefused::NotAMember(f.to_string()).into());
        }
        members = vec![f.to_string()];
    }
    let targets = opts.ssh.targets_of(closures, &members)?;
    let work = async |session: &super::execute::Session<'_>| {
        let answered = session.nodes.iter().map(|o| o.name.clone()).collect();
        let plan = SnapshotPlan { membership: name.clone(), spec: spec.clone(), from: answered };
        before(session, &plan, &opts.state_dir, &opts.deadlines, sink).await
    };
    match super::operation::on_answering("snapshot", &targets, opts.parallel, sink, work).await {
        super::operation::Held::Done(r) => Ok(r?),
        _ => Err(SnapshotError::NoneTaken { membership: name.clone(), tried: Vec::new() }.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(s: &Snapshots, node: &str, secs: u64) -> PathBuf {
        let (path, tmp, mut f) = s.create(node, secs).expect("create");
        f.write_all(b"x").expect("write");
        fs::rename(&tmp, &path).expect("rename");
        path
    }

    #[test]
    fn snapshots_are_private_sorted_by_time_and_the_newest_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = Snapshots::at(dir.path(), "etcd");
        assert_eq!(s.newest().expect("newest"), None, "no directory: no snapshot");
        let a = touch(&s, "m2", 1_700_000_000);
        let b = touch(&s, "m1", 1_700_000_100);
        let c = touch(&s, "m1", 1_700_000_100);
        assert_ne!(b, c, "two in one second get two names");
        let mode = |p: &Path| fs::metadata(p).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode(s.dir()), 0o700);
        assert_eq!(mode(&a), 0o600);
        assert!(a.file_name().and_then(|n| n.to_str()).is_some_and(|n| n == "2023-11-14T221320Z-m2.db"), "{a:?}");
        assert_eq!(s.list().expect("list"), vec![a.clone(), b.clone(), c.clone()]);
        assert_eq!(s.prune(2).expect("prune"), vec![a]);
        assert_eq!(s.list().expect("list"), vec![b, c.clone()]);
        assert_eq!(s.prune(0).expect("prune").len(), 1, "one always stays");
        assert_eq!(s.newest().expect("newest"), Some(c));
    }

    #[test]
    fn a_snapshot_comes_before_changes_of_its_phases_or_members_once_a_member_runs() {
        let spec = Membership {
            snapshot: Some("save".into()),
            snapshot_before: vec!["etcd".into(), "control-plane".into()],
            ..Default::default()
        };
        let running = || vec!["m1".to_string(), "m2".to_string()];
        let phases = |p: &[&'static str]| p.iter().copied().collect::<std::collections::BTreeSet<&str>>();
        let p = needed("etcd", &spec, &phases(&["control-plane", "cni"]), false, running()).expect("control plane");
        assert_eq!(p.from, running());
        assert!(needed("etcd", &spec, &phases(&["etcd"]), false, running()).is_some());
        assert!(needed("etcd", &spec, &phases(&[]), true, running()).is_some(), "a member change");
        assert!(needed("etcd", &spec, &phases(&["cni", "addons"]), false, running()).is_none(), "other phases");
        assert!(needed("etcd", &spec, &phases(&["etcd"]), true, vec![]).is_none(), "first switch: no member runs");
        let off = Membership { snapshot: None, ..spec };
        assert!(needed("etcd", &off, &phases(&["etcd"]), true, running()).is_none(), "backups off");
    }

    #[test]
    fn a_half_written_snapshot_is_not_listed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = Snapshots::at(dir.path(), "etcd");
        let (_path, tmp, _f) = s.create("m1", 1_700_000_000).expect("create");
        assert!(tmp.exists());
        assert_eq!(s.newest().expect("newest"), None);
    }
}
