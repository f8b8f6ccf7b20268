//! What a switch would change inside files, for `switch --dry-run` and
//! `kdeploy diff`: per node, phase and changed path, a unified diff of a
//! text file (the deployed bytes read from the node's store, the new ones
//! from the closure), a binary by size and hash, a secret by nothing but
//! the fact that it changes. A node's old text is its own words: each
//! line is [`shown`] before it is coloured. Reading is the only I/O: one bounded read per
//! old blob; rendering ([`describe`]) is a pure function.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use similar::{ChangeTag, TextDiff};

use super::plan::{Diffs, Plan};
use crate::node::{FileEntry, Node, StoredBlob};
use crate::schema::Source;
use crate::shown::shown;
use crate::store::{Digest, Resolver};

/// Text files larger than this are shown by size and hash only.
pub const MAX_TEXT: u64 = 1 << 20;

/// One side of a changed file, as far as it may be shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    Absent,
    Text(String),
    Binary {
        size: u64,
        hash: String,
    },
    /// A secret (or a blob kept with the node's secrets): never shown.
    Secret,
    /// Not at hand (e.g. a download not fetched, or the node's copy gone).
    Unknown {
        hash: String,
    },
}

impl Content {
    fn from_bytes(bytes: Vec<u8>, hash: &Digest) -> Content {
        match String::from_utf8(bytes) {
            Ok(t) if !t.contains('\0') && t.len() as u64 <= MAX_TEXT => Content::Text(t),
            Ok(t) => Content::Binary { size: t.len() as u64, hash: hash.short() },
            Err(e) => Content::Binary { size: e.as_bytes().len() as u64, hash: hash.short() },
        }
    }

    /// The text, or nothing for an absent side.
    fn text(&self) -> &str {
        if let Content::Text(t) = self {
            t
        } else {
            ""
        }
    }

    fn summary(&self) -> String {
        match self {
            Content::Absent => "absent".into(),
            Content::Text(t) => format!("text, {} bytes", t.len()),
            Content::Binary { size, hash } => format!("binary, {size} bytes, {hash}"),
            Content::Secret => "secret".into(),
            Content::Unknown { hash } => format!("content {hash}"),
        }
    }
}

/// The lines for one changed path: a unified diff of two texts, else what
/// may be said about each side; a mode or owner change on its own line.
pub fn describe(
    path: &str,
    old: (&Content, Option<&FileEntry>),
    new: (&Content, Option<&FileEntry>),
    color: bool,
) -> String {
    let mut s = String::new();
    if let (Some(o), Some(n)) = (old.1, new.1) {
        if o.mode != n.mode {
            let _ = writeln!(s, "mode {} -> {}", o.mode, n.mode);
        }
        if (&o.owner, &o.group) != (&n.owner, &n.group) {
            let _ = writeln!(s, "owner {}:{} -> {}:{}", o.owner, o.group, n.owner, n.group);
        }
        if o.hash == n.hash {
            return s;
        }
    }
    match (old.0, new.0) {
        (Content::Secret, _) | (_, Content::Secret) => s += "secret: content changes (not shown)\n",
        (Content::Text(_) | Content::Absent, Content::Text(_) | Content::Absent)
            if !matches!((old.0, new.0), (Content::Absent, Content::Absent)) =>
        {
            s += &unified(path, old.0.text(), new.0.text(), color);
        }
        (a, b) => {
            let _ = writeln!(s, "{} -> {}", a.summary(), b.summary());
        }
    }
    s
}

fn unified(path: &str, old: &str, new: &str, color: bool) -> String {
    let diff = TextDiff::from_lines(old, new);
    let mut s = String::new();
    let paint = |code: &str, line: &str| if color { format!("\x1b[{code}m{line}\x1b[0m") } else { line.to_string() };
    let _ = writeln!(s, "{}", paint("1", &format!("--- a{path}")));
    let _ = writeln!(s, "{}", paint("1", &format!("+++ b{path}")));
    for group in diff.grouped_ops(3) {
        let (first, last) = (&group[0], &group[group.len() - 1]);
        let (o0, o1) = (first.old_range().start, last.old_range().end);
        let (n0, n1) = (first.new_range().start, last.new_range().end);
        let _ = writeln!(s, "{}", paint("36", &format!("@@ -{} +{} @@", range(o0, o1), range(n0, n1))));
        for op in &group {
            for change in diff.iter_changes(op) {
                let (sign, code) = match change.tag() {
                    ChangeTag::Delete => ("-", "31"),
                    ChangeTag::Insert => ("+", "32"),
                    ChangeTag::Equal => (" ", ""),
                };
                let text = change.value();
                let line = format!("{sign}{}", shown(text.strip_suffix('\n').unwrap_or(text)));
                let _ = writeln!(s, "{}", if code.is_empty() { line } else { paint(code, &line) });
                if !text.ends_with('\n') {
                    s += "\\ No newline at end of file\n";
                }
            }
        }
    }
    s
}

/// A hunk range as unified diffs write it (1-based start, length).
fn range(start: usize, end: usize) -> String {
    match end - start {
        1 => format!("{}", start + 1),
        0 => format!("{start},0"),
        n => format!("{},{n}", start + 1),
    }
}

/// The new side of a file: what the closure will put there.
fn new_content(resolver: &Resolver, sources: &BTreeMap<Digest, Source>, hash: &Digest) -> Content {
    match sources.get(hash) {
        Some(s) if s.is_secret() => Content::Secret,
        Some(Source::Text(t)) => Content::from_bytes(t.as_bytes().to_vec(), hash),
        Some(Source::Artifact(_)) | None if !resolver.store().has(hash) => Content::Unknown { hash: hash.short() },
        None => Content::from_bytes(resolver.store().read(hash).unwrap_or_default(), hash),
        Some(src) => match std::fs::metadata(resolver.store().blob_path(hash)).map(|m| m.len()) {
            Ok(size) if size > MAX_TEXT => Content::Binary { size, hash: hash.short() },
            _ => resolver.bytes(src).map_or(Content::Unknown { hash: hash.short() }, |b| Content::from_bytes(b, hash)),
        },
    }
}

/// The deployed side: the node's store copy (secrets live elsewhere on
/// the node and are never read back).
async fn old_content(node: &Node<'_>, hash: &Digest) -> Content {
    match node.read_blob(hash, MAX_TEXT).await {
        Ok(StoredBlob::Bytes(b)) => Content::from_bytes(b, hash),
        Ok(StoredBlob::TooBig(size)) => Content::Binary { size, hash: hash.short() },
        Ok(StoredBlob::Missing) => Content::Secret,
        Err(_) => Content::Unknown { hash: hash.short() },
    }
}

/// Everything a changed node's plan steps change, described.
pub async fn collect(
    plan: &Plan,
    nodes: &[(&str, &Node<'_>)],
    sources: &BTreeMap<String, BTreeMap<Digest, Source>>,
    resolver: &Resolver,
    color: bool,
) -> Diffs {
    let mut out = Diffs::new();
    for np in &plan.nodes {
        let (Some((_, node)), Some(src)) = (nodes.iter().find(|(n, _)| *n == np.name), sources.get(&np.name)) else {
            continue;
        };
        for st in &np.steps {
            let old_files = st.from_manifest.as_ref().map(|m| m.files_by_path()).unwrap_or_default();
            let new_files = st.to_manifest.as_ref().map(|m| m.files_by_path()).unwrap_or_default();
            for path in st.files.added.iter().chain(&st.files.changed).chain(&st.files.removed) {
                let (o, n) = (old_files.get(path.as_str()).copied(), new_files.get(path.as_str()).copied());
                let old = match o {
                    Some(f) if n.is_none_or(|n| n.hash != f.hash) => old_content(node, &f.hash).await,
                    _ => Content::Absent,
                };
                let new = n.map_or(Content::Absent, |f| new_content(resolver, src, &f.hash));
                let text = describe(path, (&old, o), (&new, n), color);
                if !text.is_empty() {
                    out.insert((np.name.clone(), st.phase.clone(), path.clone()), text);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(mode: &str, content: &[u8]) -> FileEntry {
        FileEntry {
            path: "/etc/x".into(),
            mode: mode.into(),
            owner: "root".into(),
            group: "root".into(),
            hash: Digest::of(content),
        }
    }

    #[test]
    fn text_change_is_a_unified_diff() {
        let (a, b) = ("one\ntwo\nthree\n", "one\n2\nthree\n");
        let (ea, eb) = (entry("0644", a.as_bytes()), entry("0644", b.as_bytes()));
        let out =
            describe("/etc/x", (&Content::Text(a.into()), Some(&ea)), (&Content::Text(b.into()), Some(&eb)), false);
        assert_eq!(out, "--- a/etc/x\n+++ b/etc/x\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n");
    }

    #[test]
    fn secrets_never_show_content() {
        let e = entry("0600", b"old-key");
        let out =
            describe("/etc/k", (&Content::Secret, Some(&e)), (&Content::Secret, Some(&entry("0600", b"new"))), false);
        assert_eq!(out, "secret: content changes (not shown)\n");
        assert!(!out.contains("old-key"));
    }

    #[test]
    fn mode_only_and_binaries() {
        let (a, b) = (entry("0644", b"x"), entry("0755", b"x"));
        assert_eq!(
            describe("/x", (&Content::Absent, Some(&a)), (&Content::Absent, Some(&b)), false),
            "mode 0644 -> 0755\n"
        );
        let bin = Content::Binary { size: 9, hash: "abc".into() };
        let out = describe("/x", (&Content::Absent, None), (&bin, Some(&b)), false);
        assert_eq!(out, "absent -> binary, 9 bytes, abc\n");
    }

    #[test]
    fn added_text_file_diffs_against_nothing() {
        let out = describe("/n", (&Content::Absent, None), (&Content::Text("a\n".into()), None), false);
        assert_eq!(out, "--- a/n\n+++ b/n\n@@ -0,0 +1 @@\n+a\n");
    }
}
