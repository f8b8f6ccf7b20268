//! The evaluation cache, as Nix keeps one: the cluster a run evaluated, as
//! the engine's types, kept in `.kdeploy/eval/` under a key naming all that
//! decides it besides the files (this binary, the cluster file, `-A`, the
//! `--arg`s, the roots, the stdlib, the working directory), with every
//! question the evaluation put to the files and its answer
//! (`kdeploy_lang::observed`). A later run with the same key asks those
//! questions again — reads and hashes each file, lists each directory — and
//! takes the kept cluster only if every answer is the same; evaluation being
//! pure, it is then the value evaluating would give. Anything else (no entry,
//! an unreadable or foreign one, one answer changed) evaluates as if there
//! were no cache. `trace` messages the evaluation printed are kept and
//! printed again. Failed evaluations are never kept. Entries are 0600 in a
//! 0700 directory (a cluster names its secrets, never holds them), the
//! newest [`KEPT`] stay.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use kdeploy_lang::observed::Observation;
use kdeploy_lang::Session;
use serde::{Deserialize, Serialize};

use super::inputs::Inputs;
use crate::closure::{self, Cluster};

/// How many entries the cache keeps (one per file, attribute and inputs).
pub const KEPT: usize = 16;

/// An entry larger than this is not read (the cluster of 1500 nodes is about
/// 60 MB of JSON).
const MAX_ENTRY: u64 = 1 << 30;

/// Where a run's cluster came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evaluation {
    Evaluated,
    /// The cache's: nothing its evaluation read had changed.
    Kept,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    observed: Vec<Observation>,
    traces: Vec<String>,
    /// `Cluster` as JSON (`closure::parse_cluster` reads it back).
    cluster: String,
}

/// Where a cluster's entry lives, if this binary and the inputs can be named.
pub struct Slot {
    path: PathBuf,
}

impl Slot {
    /// The entry for `file` at `attr` with `inputs`, in `state_dir` (the
    /// project's `.kdeploy`).
    pub fn new(state_dir: &Path, inputs: &Inputs, file: &Path, attr: Option<&str>) -> Option<Slot> {
        let key = key(inputs, file, attr)?;
        Some(Slot { path: state_dir.join("eval").join(format!("{key}.json")) })
    }

    /// The kept cluster, if every answer its evaluation saw is still the
    /// same through `session`'s I/O; its traces printed again.
    pub fn load(&self, session: &Session) -> Option<Cluster> {
        let meta = std::fs::metadata(&self.path).ok()?;
        if meta.len() > MAX_ENTRY {
            return None;
        }
        let entry: Entry = serde_json::from_slice(&std::fs::read(&self.path).ok()?).ok()?;
        if !session.ev.io.still_holds(&entry.observed) {
            return None;
        }
        let cluster = closure::parse_cluster(&entry.cluster).ok()?;
        for t in &entry.traces {
            eprintln!("trace: {t}");
        }
        Some(cluster)
    }

    /// Keeps `cluster` with what its evaluation saw; best effort (a cache
    /// that cannot be written costs the next run an evaluation, nothing more).
    pub fn store(&self, observed: Vec<Observation>, traces: Vec<String>, cluster: &Cluster) {
        let Ok(json) = serde_json::to_string(cluster) else { return };
        let Ok(bytes) = serde_json::to_vec(&Entry { observed, traces, cluster: json }) else { return };
        let Some(dir) = self.path.parent() else { return };
        if std::fs::create_dir_all(dir).is_err()
            || std::fs::set_permissions(dir, PermissionsExt::from_mode(0o700)).is_err()
        {
            return;
        }
        if crate::store::write_private(&self.path, &bytes).is_ok() {
            prune(dir);
        }
    }
}

/// All that decides the cluster besides what the evaluation reads, hashed.
/// `None` when this binary cannot be named (then nothing is cached).
fn key(inputs: &Inputs, file: &Path, attr: Option<&str>) -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let m = std::fs::metadata(&exe).ok()?;
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let roots: Vec<PathBuf> = inputs.roots(Some(file)).iter().map(|r| canonical(r)).collect();
    let named = serde_json::json!({
        "kdeploy": env!("CARGO_PKG_VERSION"),
        // rebuilt, replaced or moved: another binary, another stdlib
        "binary": [exe, m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec()],
        "schema": closure::SCHEMA_VERSION,
        "file": canonical(file),
        "attr": attr,
        "arg": inputs.arg,
        "argstr": inputs.argstr,
        "roots": roots,
        "stdlib": inputs.stdlib.as_deref().map(canonical),
        "secrets": inputs.secrets.as_deref().map(canonical),
        // `--arg` expressions' paths are relative to it
        "cwd": std::env::current_dir().ok(),
    });
    Some(blake3::hash(named.to_string().as_bytes()).to_hex()[..32].to_string())
}

/// Only the newest [`KEPT`] entries stay.
fn prune(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut kept: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            Some((e.metadata().ok()?.modified().ok()?, e.path()))
        })
        .collect();
    kept.sort_by_key(|k| std::cmp::Reverse(k.0));
    for (_, old) in kept.into_iter().skip(KEPT) {
        let _ = std::fs::remove_file(old);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::inputs::typed;

    /// A project whose cluster is read from `c.json` (tag `tag`), names the
    /// entries of `dir/` and whether `flag` exists, and traces once.
    struct Project {
        dir: tempfile::TempDir,
    }

    impl Project {
        fn new() -> Project {
            let p = Project { dir: tempfile::tempdir().unwrap() };
            p.write(
                "cluster.nix",
                r#"{ extra ? "none" }:
                let c = builtins.fromJSON (builtins.readFile ./c.json);
                    listed = builtins.attrNames (builtins.readDir ./dir);
                    flag = if builtins.pathExists ./flag then "flag" else "no-flag";
                in builtins.trace "evaluated" (c // { nodes.a = c.nodes.a // { tags = c.nodes.a.tags ++ listed ++ [ flag extra ]; }; })"#,
            );
            std::fs::create_dir(p.dir.path().join("dir")).unwrap();
            p.write("dir/one", "");
            p.set_tag("v1");
            p
        }

        fn write(&self, name: &str, text: &str) {
            std::fs::write(self.dir.path().join(name), text).unwrap();
        }

        fn set_tag(&self, tag: &str) {
            let c = serde_json::json!({
                "name": "t", "phaseOrder": ["base"], "schemaVersion": closure::SCHEMA_VERSION,
                "settings": {}, "warnings": [],
                "nodes": {"a": {
                    "address": "10.0.0.1", "roles": [], "settings": {}, "tags": [tag],
                    "ssh": {"jumpHost": null, "key": null, "port": 22, "user": "root"},
                    "phases": [{"activate": true, "checks": [], "directories": [], "hooks": [], "name": "base",
                                "units": [], "files": [{"group": "root", "mode": "0644", "owner": "root",
                                "path": "/etc/t", "source": {"text": "t\n"}}]}],
                }},
            });
            self.write("c.json", &c.to_string());
        }

        fn inputs(&self) -> Inputs {
            Inputs { root: vec![self.dir.path().to_path_buf()], ..Default::default() }
        }

        /// The cluster's tags and where it came from.
        fn tags_with(&self, inputs: &Inputs) -> (Vec<String>, Evaluation) {
            let mut session = inputs.session(Some(&self.file()));
            match typed(&mut session, inputs, &self.file(), None) {
                Ok((c, how)) => (c.nodes["a"].tags.clone(), how),
                Err(_) => panic!("the cluster did not evaluate"),
            }
        }

        fn tags(&self) -> (Vec<String>, Evaluation) {
            self.tags_with(&self.inputs())
        }

        fn file(&self) -> PathBuf {
            self.dir.path().join("cluster.nix")
        }

        fn entries(&self) -> Vec<PathBuf> {
            let dir = self.dir.path().join(".kdeploy/eval");
            std::fs::read_dir(dir).map_or(vec![], |d| d.filter_map(|e| Some(e.ok()?.path())).collect())
        }
    }

    fn tags(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn kept_until_a_file_it_read_changes() {
        let p = Project::new();
        let first = tags(&["v1", "one", "no-flag", "none"]);
        assert_eq!(p.tags(), (first.clone(), Evaluation::Evaluated));
        assert_eq!(p.tags(), (first.clone(), Evaluation::Kept));
        // a file read by builtins.readFile
        p.set_tag("v2");
        assert_eq!(p.tags(), (tags(&["v2", "one", "no-flag", "none"]), Evaluation::Evaluated));
        assert_eq!(p.tags().1, Evaluation::Kept);
        // the cluster file itself, to the same value: evaluated again all the same
        p.write("cluster.nix", &format!("{} ", std::fs::read_to_string(p.file()).unwrap()));
        assert_eq!(p.tags(), (tags(&["v2", "one", "no-flag", "none"]), Evaluation::Evaluated));
    }

    #[test]
    fn a_listing_or_an_existence_that_changed_is_evaluated_again() {
        let p = Project::new();
        assert_eq!(p.tags().1, Evaluation::Evaluated);
        p.write("dir/two", "");
        assert_eq!(p.tags(), (tags(&["v1", "one", "two", "no-flag", "none"]), Evaluation::Evaluated));
        p.write("flag", "");
        assert_eq!(p.tags(), (tags(&["v1", "one", "two", "flag", "none"]), Evaluation::Evaluated));
        assert_eq!(p.tags().1, Evaluation::Kept);
        std::fs::remove_file(p.dir.path().join("flag")).unwrap();
        assert_eq!(p.tags(), (tags(&["v1", "one", "two", "no-flag", "none"]), Evaluation::Evaluated));
    }

    #[test]
    fn other_inputs_are_other_entries_and_the_flag_skips_the_cache() {
        let p = Project::new();
        let mut with_arg = p.inputs();
        with_arg.argstr = vec!["extra".into(), "given".into()];
        assert_eq!(p.tags().1, Evaluation::Evaluated);
        assert_eq!(p.tags_with(&with_arg), (tags(&["v1", "one", "no-flag", "given"]), Evaluation::Evaluated));
        assert_eq!(p.tags_with(&with_arg).1, Evaluation::Kept);
        assert_eq!(p.tags().1, Evaluation::Kept);
        assert_eq!(p.entries().len(), 2);

        let mut uncached = p.inputs();
        uncached.no_eval_cache = true;
        assert_eq!(p.tags_with(&uncached).1, Evaluation::Evaluated);
        assert_eq!(p.tags_with(&uncached).1, Evaluation::Evaluated);
    }

    #[test]
    fn a_damaged_entry_is_evaluated_again_and_replaced() {
        let p = Project::new();
        assert_eq!(p.tags().1, Evaluation::Evaluated);
        let [entry] = &p.entries()[..] else { panic!("one entry: {:?}", p.entries()) };
        for damage in ["", "{", "{\"observed\": [], \"traces\": [], \"cluster\": \"{}\"}", "\u{0}\u{1}"] {
            std::fs::write(entry, damage).unwrap();
            assert_eq!(p.tags().1, Evaluation::Evaluated, "{damage:?}");
            assert_eq!(p.tags().1, Evaluation::Kept, "{damage:?}");
        }
    }

    /// The example clusters hash the same kept as evaluated.
    #[test]
    fn a_kept_cluster_hashes_as_the_evaluated_one() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        for name in ["seed", "ha"] {
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join(format!("{name}.nix"));
            std::fs::copy(repo.join("clusters").join(format!("{name}.nix")), &file).unwrap();
            let inputs = Inputs { root: vec![dir.path().to_path_buf()], ..Default::default() };
            let hashes = || {
                let mut session = inputs.session(Some(&file));
                let (cluster, how) = typed(&mut session, &inputs, &file, None).unwrap_or_else(|_| panic!("{name}"));
                let closures = crate::cli::inputs::closures_of(cluster, &inputs.resolver(Some(&file)), false)
                    .unwrap_or_else(|_| panic!("{name}"));
                let hashes: Vec<(String, String)> =
                    closures.nodes.iter().map(|(n, c)| (n.clone(), c.hash.hex())).collect();
                (hashes, how)
            };
            let (evaluated, how) = hashes();
            assert_eq!(how, Evaluation::Evaluated, "{name}");
            assert!(evaluated.len() >= 3, "{name}: {evaluated:?}");
            assert_eq!(hashes(), (evaluated, Evaluation::Kept), "{name}");
        }
    }

    #[test]
    fn entries_are_private_and_keep_the_traces() {
        let p = Project::new();
        p.tags();
        let [entry] = &p.entries()[..] else { panic!("one entry: {:?}", p.entries()) };
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(entry), 0o600);
        assert_eq!(mode(entry.parent().unwrap()), 0o700);
        let kept: Entry = serde_json::from_slice(&std::fs::read(entry).unwrap()).unwrap();
        assert_eq!(kept.traces, ["evaluated"]);
        let read: Vec<&str> = kept.observed.iter().map(|o| o.path.rsplit('/').next().unwrap_or("")).collect();
        assert_eq!(read, ["cluster.nix", "cluster.nix", "c.json", "dir", "flag"], "{:?}", kept.observed);
    }
}
