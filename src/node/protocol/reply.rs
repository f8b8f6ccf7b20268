//! Every reply of the node program, decoded here and only here: one
//! function per command from what it printed on stdout to a typed value.
//! A line the decoder does not know — another keyword, a field too few,
//! a hash that is not 64 lowercase hex digits, a number that is not one —
//! is a [`Malformed`] reply, never skipped: the protocol version pins the
//! vocabulary, so an unknown line means the two sides disagree.

use std::collections::{BTreeMap, BTreeSet};

use super::super::gc::{GcReport, NodeGeneration};
use super::super::manifest::{Manifest, ManifestError};
use crate::store::Digest;

/// A reply line (or a reply's shape) the decoder does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?}")]
pub struct Malformed(pub String);

fn bad(line: &str) -> Malformed {
    Malformed(line.chars().take(200).collect())
}

/// A blob hash as the program prints it: 64 lowercase hex digits.
fn hash(s: &str) -> Option<Digest> {
    (s.len() == 64 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
        .then(|| Digest::parse(s))
        .flatten()
}

/// A count or generation: decimal digits only (no sign, no space).
fn number(s: &str) -> Option<u64> {
    s.bytes().all(|b| b.is_ascii_digit()).then(|| s.parse().ok()).flatten()
}

/// A phase name as the program accepts one (its `is_name`).
pub(super) fn is_name(s: &str) -> bool {
    !s.is_empty() && !s.starts_with(['.', '-']) && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._@-".contains(&b))
}

/// What `status` (and `lock --status`) reports: the committed generation,
/// the next free number, the generation each phase link points into.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeStatus {
    /// (generation, node hash) last committed.
    pub current: Option<(u64, Digest)>,
    /// Lowest generation number not used on the node.
    pub next: u64,
    pub phases: BTreeMap<String, u64>,
    /// A link moved since the last commit (a run died or was cut off).
    pub pending: bool,
    /// What differs from the linked generations (only with `--verify`).
    pub drift: Vec<Drift>,
    /// The node has `zstd`: `put` may send it blobs compressed.
    pub zstd: bool,
    /// Phases the node moved back by itself since the last commit: its
    /// deployer armed them and never confirmed (`arm`).
    pub rolled_back: Vec<SelfRollback>,
}

/// A phase a node moved back by itself (a `rolled-back` line of `status`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SelfRollback {
    pub phase: String,
    /// The generation the phase points into again (`None`: it was new, and is gone).
    pub generation: Option<u64>,
    /// When, as the node's clock told (UTC, `2026-12-06T17:00:00Z`).
    pub at: String,
    /// What failed on the way back (unit operations, the switch); empty when nothing did.
    pub failed: Vec<String>,
}

impl std::fmt::Display for SelfRollback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.generation {
            Some(g) => write!(f, "phase {} back to generation {g} at {}", self.phase, self.at)?,
            None => write!(f, "phase {} removed again at {}", self.phase, self.at)?,
        }
        if !self.failed.is_empty() {
            write!(f, " (failed on the way: {})", self.failed.join(", "))?;
        }
        Ok(())
    }
}

/// One difference between a node and its linked generations: a managed
/// file replaced or edited by hand, or an enabled unit not running.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Drift {
    pub phase: String,
    /// "file" or "unit".
    pub kind: String,
    /// The managed path or the unit name.
    pub what: String,
    pub why: String,
}

impl std::fmt::Display for Drift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} {} {}", self.phase, self.kind, self.what, self.why)
    }
}

/// `status [--verify]`: `current none|N HASH`, `next N`, `phase NAME N`
/// per link, `pending`, `has zstd`, `lock OWNER...`, and with `--verify`
/// `drift TAB PHASE TAB file|unit TAB WHAT TAB WHY` per difference.
pub fn status(text: &str) -> Result<NodeStatus, Malformed> {
    let mut st = NodeStatus::default();
    for line in text.lines() {
        if let Some(d) = line.strip_prefix("drift\t") {
            match d.splitn(4, '\t').collect::<Vec<_>>().as_slice() {
                [phase, kind @ ("file" | "unit"), what, why] if is_name(phase) => st.drift.push(Drift {
                    phase: phase.to_string(),
                    kind: kind.to_string(),
                    what: what.to_string(),
                    why: why.to_string(),
                }),
                _ => return Err(bad(line)),
            }
            continue;
        }
        // the holder's `lock.owner` line, free text: shown, not read
        if line.starts_with("lock ") {
            continue;
        }
        match line.split(' ').collect::<Vec<_>>().as_slice() {
            ["current", "none"] => st.current = None,
            ["current", n, h] => {
                st.current = Some((number(n).ok_or_else(|| bad(line))?, hash(h).ok_or_else(|| bad(line))?))
            }
            ["next", n] => st.next = number(n).ok_or_else(|| bad(line))?,
            ["phase", p, n] if is_name(p) => {
                st.phases.insert(p.to_string(), number(n).ok_or_else(|| bad(line))?);
            }
            ["pending"] => st.pending = true,
            ["rolled-back", p, g, at, outcome] if is_name(p) => {
                let generation = match *g {
                    "none" => None,
                    g => Some(number(g).ok_or_else(|| bad(line))?),
                };
                let failed = match (*outcome, outcome.strip_prefix("failed:")) {
                    ("ok", _) => Vec::new(),
                    (_, Some(what)) if what.split(',').all(is_name) => what.split(',').map(str::to_string).collect(),
                    _ => return Err(bad(line)),
                };
                let at = at.to_string();
                if !at.bytes().all(|b| b.is_ascii_alphanumeric() || b":-".contains(&b)) {
                    return Err(bad(line));
                }
                st.rolled_back.push(SelfRollback { phase: p.to_string(), generation, at, failed });
            }
            ["has", "zstd"] => st.zstd = true,
            _ => return Err(bad(line)),
        }
    }
    Ok(st)
}

/// `have`: the hashes the node lacks, one per line.
pub fn hashes(text: &str) -> Result<Vec<Digest>, Malformed> {
    text.lines().map(|l| hash(l).ok_or_else(|| bad(l))).collect()
}

/// What a node's `fetch` could not get from the binary cache.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct NotFetched {
    /// Every blob not fetched (to send over SSH).
    pub failed: Vec<Digest>,
    /// Those the cache holds wrong (other bytes, or more of them than
    /// announced): to put into the cache again.
    pub rejected: Vec<Digest>,
    /// What the node said about them (its stderr, free text).
    pub why: String,
}

/// `fetch`: `HASH rejected|unavailable` per blob not fetched; `why` is
/// the command's stderr.
pub fn not_fetched(stdout: &str, why: &str) -> Result<NotFetched, Malformed> {
    let mut not = NotFetched { why: why.trim().to_string(), ..Default::default() };
    for line in stdout.lines() {
        match line.split(' ').collect::<Vec<_>>().as_slice() {
            [h, what @ ("rejected" | "unavailable")] => {
                let d = hash(h).ok_or_else(|| bad(line))?;
                if *what == "rejected" {
                    not.rejected.push(d);
                }
                not.failed.push(d);
            }
            _ => return Err(bad(line)),
        }
    }
    Ok(not)
}

/// One phase of a generation's phase record (`kdeploy-phases`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhaseEntry {
    pub hash: Digest,
    /// The generation the phase was staged in.
    pub generation: u64,
    pub active: bool,
}

/// A generation's phase record, by phase name: what `commit` is given
/// and `phase-record`, `state` and `gc-info` print back.
pub type PhaseRecord = BTreeMap<String, PhaseEntry>;

/// One `name TAB hash TAB generation TAB 0|1` line.
fn record_line(line: &str) -> Result<(String, PhaseEntry), Malformed> {
    match line.split('\t').collect::<Vec<_>>().as_slice() {
        [name, h, g, a @ ("0" | "1")] if is_name(name) => Ok((
            name.to_string(),
            PhaseEntry {
                hash: hash(h).ok_or_else(|| bad(line))?,
                generation: number(g).ok_or_else(|| bad(line))?,
                active: *a == "1",
            },
        )),
        _ => Err(bad(line)),
    }
}

/// The phase record as `commit` reads it on stdin (the inverse of
/// [`phase_record`]).
pub fn render_record(record: &PhaseRecord) -> String {
    record.iter().map(|(n, e)| format!("{n}\t{}\t{}\t{}\n", e.hash.hex(), e.generation, e.active as u8)).collect()
}

/// `phase-record N`: the record's lines.
pub fn phase_record(text: &str) -> Result<PhaseRecord, Malformed> {
    text.lines().map(record_line).collect()
}

/// What `state` prints: the committed generation's phase record and the
/// manifest each phase link points at (a manifest that does not parse is
/// kept as its error: what to do about it is the caller's).
#[derive(Debug, Default)]
pub struct NodeState {
    pub record: PhaseRecord,
    pub manifests: BTreeMap<String, Result<Manifest, ManifestError>>,
}

/// `state`: `@record` then record lines, then per linked phase
/// `@manifest PHASE` and the manifest's lines.
pub fn state(text: &str) -> Result<NodeState, Malformed> {
    let mut st = NodeState::default();
    let mut texts: Vec<(String, String)> = Vec::new();
    let mut in_record = false;
    for line in text.lines() {
        if line == "@record" && texts.is_empty() && !in_record {
            in_record = true;
        } else if let Some(p) = line.strip_prefix("@manifest ") {
            if !is_name(p) || texts.iter().any(|(q, _)| q == p) {
                return Err(bad(line));
            }
            texts.push((p.to_string(), String::new()));
        } else if let Some((_, m)) = texts.last_mut() {
            m.push_str(line);
            m.push('\n');
        } else if in_record {
            let (name, e) = record_line(line)?;
            st.record.insert(name, e);
        } else {
            return Err(bad(line));
        }
    }
    if !in_record {
        return Err(bad(text.lines().next().unwrap_or("(nothing)")));
    }
    st.manifests = texts.into_iter().map(|(p, m)| (p, Manifest::parse(&m))).collect();
    Ok(st)
}

/// `gc-info`: `@gen N` per generation directory, each followed by the
/// phase record it was committed with (none: never committed).
pub fn gc_info(text: &str) -> Result<Vec<NodeGeneration>, Malformed> {
    let mut out: Vec<NodeGeneration> = Vec::new();
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("@gen ") {
            let number = number(n).ok_or_else(|| bad(line))?;
            out.push(NodeGeneration { number, committed: false, uses: BTreeSet::new() });
            continue;
        }
        let g = out.last_mut().ok_or_else(|| bad(line))?;
        let (_, e) = record_line(line)?;
        g.committed = true;
        g.uses.insert(e.generation);
    }
    Ok(out)
}

/// `gc [--dry-run]`: `removed generation N BYTES`, `removed
/// blob|secret|partial NAME BYTES`, then `referenced HASH` per blob still
/// named.
pub fn gc(text: &str) -> Result<GcReport, Malformed> {
    let mut r = GcReport::default();
    for line in text.lines() {
        let w: Vec<&str> = line.split(' ').collect();
        let n = |s: &str| number(s).ok_or_else(|| bad(line));
        match w.as_slice() {
            ["removed", "generation", g, b] => {
                r.generations.push(n(g)?);
                r.bytes += n(b)?;
            }
            ["removed", kind @ ("blob" | "secret" | "partial"), name, b] if !name.is_empty() => {
                match *kind {
                    "blob" => r.blobs += 1,
                    "secret" => r.secrets += 1,
                    _ => r.partial += 1,
                }
                r.bytes += n(b)?;
            }
            ["referenced", h] => {
                r.referenced.insert(hash(h).ok_or_else(|| bad(line))?);
            }
            _ => return Err(bad(line)),
        }
    }
    Ok(r)
}

/// `forget`: `removed PATH` per directory removed.
pub fn forget(text: &str) -> Result<Vec<String>, Malformed> {
    text.lines().map(|l| l.strip_prefix("removed /").map(|p| format!("/{p}")).ok_or_else(|| bad(l))).collect()
}

/// What `blob` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredBlob {
    Missing,
    TooBig(u64),
    Bytes(Vec<u8>),
}

/// `blob HASH MAX`: `size N`, then the N bytes when N is at most MAX.
/// (Not there is the refusal `not-found`, read by the caller.)
pub fn blob(out: &[u8], max: u64) -> Result<StoredBlob, Malformed> {
    let nl = out.iter().position(|&b| b == b'\n').ok_or_else(|| bad(&String::from_utf8_lossy(out)))?;
    let head = String::from_utf8_lossy(&out[..nl]);
    let size = head.strip_prefix("size ").and_then(number).ok_or_else(|| bad(&head))?;
    let body = &out[nl + 1..];
    match size > max {
        true if body.is_empty() => Ok(StoredBlob::TooBig(size)),
        false if body.len() as u64 == size => Ok(StoredBlob::Bytes(body.to_vec())),
        _ => Err(Malformed(format!("{head} then {} bytes", body.len()))),
    }
}

/// The commands that print nothing on stdout when they succeed.
pub fn nothing(text: &str) -> Result<(), Malformed> {
    match text.lines().next() {
        None => Ok(()),
        Some(l) => Err(bad(l)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(b: u8) -> String {
        Digest([b; 32]).hex()
    }

    #[test]
    fn status_reads_every_line_kind() {
        let text = format!(
            "current 3 {}\nnext 5\nphase etcd 3\nphase kubelet 2\npending\nhas zstd\nlock run pid=1 since=x\n\
             drift\tetcd\tfile\t/etc/a b\tedited (size)\ndrift\tetcd\tunit\tetcd.service\tinactive\n",
            h(7)
        );
        let st = status(&text).unwrap();
        assert_eq!(st.current, Some((3, Digest([7; 32]))));
        assert_eq!((st.next, st.pending, st.zstd), (5, true, true));
        assert_eq!(st.phases.len(), 2);
        assert_eq!(st.drift[0].what, "/etc/a b");
        let back = status("next 2\nrolled-back preinstall 1 2026-12-06T17:00:00Z ok\nrolled-back cni none t failed:switch,units-after\n").unwrap();
        assert_eq!(back.rolled_back[0].generation, Some(1));
        assert_eq!(back.rolled_back[1].failed, ["switch", "units-after"]);
        assert_eq!(
            back.rolled_back[1].to_string(),
            "phase cni removed again at t (failed on the way: switch, units-after)"
        );
        assert_eq!(status("current none\nnext 1\n").unwrap(), NodeStatus { next: 1, ..Default::default() });
    }

    #[test]
    fn status_refuses_what_it_does_not_know() {
        for text in [
            "current 3\n",
            "current x 00\n",
            &format!("current 3 {}\n", h(0xab).to_uppercase()),
            "next -1\n",
            "next +1\n",
            "phase ../x 1\n",
            "has gzip\n",
            "pending now\n",
            "drift\tetcd\tdisk\tx\ty\n",
            "drift\tetcd\tfile\tx\n",
            "hello\n",
            "rolled-back ../x 1 t ok\n",
            "rolled-back p x t ok\n",
            "rolled-back p 1 t;reboot ok\n",
            "rolled-back p 1 t maybe\n",
            "rolled-back p 1 t failed:a b\n",
            "rolled-back p 1 t\n",
            "next 1\0\n",
            &format!("next {}\n", "9".repeat(30)),
        ] {
            assert!(status(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn have_and_fetch_replies() {
        assert_eq!(hashes(&format!("{}\n{}\n", h(1), h(2))).unwrap(), [Digest([1; 32]), Digest([2; 32])]);
        assert!(hashes("\n").is_err(), "an empty line is not a hash");
        assert!(hashes(&format!("{} \n", h(1))).is_err());
        let not = not_fetched(&format!("{} rejected\n{} unavailable\n", h(1), h(2)), " no curl \n").unwrap();
        assert_eq!((not.failed.len(), not.rejected, not.why.as_str()), (2, vec![Digest([1; 32])], "no curl"));
        assert!(not_fetched(&format!("{} gone\n", h(1)), "").is_err());
        assert!(not_fetched(&h(1), "").is_err());
    }

    #[test]
    fn phase_records_round_trip_and_refuse_bad_lines() {
        let mut r = PhaseRecord::new();
        r.insert("etcd".into(), PhaseEntry { hash: Digest([7; 32]), generation: 3, active: true });
        r.insert("kubelet".into(), PhaseEntry { hash: Digest([8; 32]), generation: 2, active: false });
        assert_eq!(phase_record(&render_record(&r)).unwrap(), r);
        for line in ["etcd\tx\t1\t1", &format!("etcd\t{}\t1\t2", h(1)), &format!("-x\t{}\t1\t1", h(1)), "a\tb\tc"] {
            assert!(phase_record(line).is_err(), "{line:?}");
        }
    }

    #[test]
    fn state_sections() {
        let rec = format!("etcd\t{}\t3\t1\n", h(7));
        let st =
            state(&format!("@record\n{rec}@manifest etcd\nkdeploy-manifest 1\n@manifest x\nnot a manifest\n")).unwrap();
        assert_eq!(st.record.len(), 1);
        assert!(st.manifests["etcd"].is_ok());
        assert!(st.manifests["x"].is_err(), "kept as its error");
        assert!(state("@record\n").unwrap().manifests.is_empty());
        assert!(state("").is_err(), "no @record: not a state reply");
        assert!(state("stray\n@record\n").is_err());
        assert!(state("@record\n@manifest a\n@manifest a\n").is_err(), "a phase twice");
        assert!(state("@record\n@manifest a/b\n").is_err());
    }

    #[test]
    fn gc_info_and_gc() {
        let info = format!("@gen 1\nf\t{}\t1\t1\n@gen 2\n", h(1));
        let gens = gc_info(&info).unwrap();
        assert_eq!((gens[0].committed, gens[1].committed), (true, false));
        assert!(gc_info(&format!("f\t{}\t1\t1\n", h(1))).is_err(), "a record before any generation");
        assert!(gc_info("@gen x\n").is_err());
        let out =
            format!("removed generation 1 100\nremoved blob {} 5\nremoved partial a.b 1\nreferenced {}\n", h(1), h(2));
        let r = gc(&out).unwrap();
        assert_eq!((r.generations, r.blobs, r.partial, r.bytes, r.referenced.len()), (vec![1], 1, 1, 106, 1));
        assert!(gc("removed everything\n").is_err());
        assert!(gc("removed blob x -1\n").is_err());
    }

    #[test]
    fn forget_blob_and_nothing() {
        assert_eq!(forget("removed /var/lib/etcd\n").unwrap(), ["/var/lib/etcd"]);
        assert!(forget("removed var\n").is_err());
        assert_eq!(blob(b"size 3\nabc", 10).unwrap(), StoredBlob::Bytes(b"abc".to_vec()));
        assert_eq!(blob(b"size 3\n\n\0\n", 10).unwrap(), StoredBlob::Bytes(b"\n\0\n".to_vec()));
        assert_eq!(blob(b"size 30\n", 10).unwrap(), StoredBlob::TooBig(30));
        assert!(blob(b"size 3\nab", 10).is_err(), "short");
        assert!(blob(b"size 30\nabc", 10).is_err(), "bytes of a blob too big");
        assert!(blob(b"abc", 10).is_err());
        assert!(nothing("").is_ok());
        assert!(nothing("\n").is_err(), "even an empty line is output");
    }

    #[test]
    fn a_huge_line_is_reported_short() {
        let e = status(&"x".repeat(1 << 20)).unwrap_err();
        assert!(e.0.len() <= 200);
    }

    fn g(number: u64, uses: &[u64]) -> NodeGeneration {
        NodeGeneration { number, committed: !uses.is_empty(), uses: uses.iter().copied().collect() }
    }

    #[test]
    fn gc_info_and_gc_report_in_full() {
        let h = Digest([3; 32]).hex();
        let info = format!("@gen 1\nfiles\t{h}\t1\t1\n@gen 2\n@gen 3\nfiles\t{h}\t1\t1\netcd\t{h}\t3\t0\n");
        assert_eq!(gc_info(&info).unwrap(), vec![g(1, &[1]), g(2, &[]), g(3, &[1, 3])]);
        assert!(gc_info("files\tx\t1\t1\n").is_err());
        assert!(gc_info("@gen x\n").is_err());
        let out = format!(
            "removed generation 1 4096\nremoved blob {h} 10\nremoved secret {h} 5\nremoved partial {h}.Ab12 1\nreferenced {h}\n"
        );
        let r = gc(&out).unwrap();
        assert_eq!((r.generations.clone(), r.blobs, r.secrets, r.partial, r.bytes), (vec![1], 1, 1, 1, 4112));
        assert!(r.referenced.contains(&Digest([3; 32])));
        assert!(gc("removed everything\n").is_err());
    }
}
