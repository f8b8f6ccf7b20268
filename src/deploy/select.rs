//! `--on`: which nodes a command works on, the same rule for every
//! command. The flag may repeat and each value may hold comma-separated
//! words. A word picks every node it matches: a node name, a role, `@TAG`
//! (a node's `tags`), or a pattern with `*` and `?` over node names; a
//! word starting with `!` takes what it matches away instead (only
//! exclusions: from every node). A word that matches nothing is an error
//! naming it — a typo must not shrink or widen a run silently. No words:
//! every node.

use super::error::Selection;
use crate::closure::Closures;
use crate::deploy::record::Generation;

/// One node as a selection sees it.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    pub name: &'a str,
    pub roles: &'a [String],
    pub tags: &'a [String],
}

/// The nodes `on` picks among `nodes`, sorted; `within` names where they
/// were looked for, for the error.
pub fn select(on: &[String], nodes: &[Candidate<'_>], within: &str) -> Result<Vec<String>, Selection> {
    let words: Vec<&str> = on.iter().flat_map(|s| s.split(',')).map(str::trim).filter(|s| !s.is_empty()).collect();
    let (out, keep): (Vec<&str>, Vec<&str>) = words.iter().partition(|w| w.starts_with('!'));
    let matched = |word: &str| -> Result<Vec<&str>, Selection> {
        let hits: Vec<&str> = nodes.iter().filter(|n| matches(word, n)).map(|n| n.name).collect();
        if hits.is_empty() {
            return Err(Selection::Unmatched { word: word.to_string(), within: within.to_string() });
        }
        Ok(hits)
    };
    let mut picked: Vec<&str> = Vec::new();
    for w in &keep {
        picked.extend(matched(w)?);
    }
    if keep.is_empty() {
        picked = nodes.iter().map(|n| n.name).collect();
    }
    for w in &out {
        let gone = matched(&w[1..])?;
        picked.retain(|n| !gone.contains(n));
    }
    let mut picked: Vec<String> = picked.into_iter().map(str::to_string).collect();
    picked.sort();
    picked.dedup();
    if picked.is_empty() && !words.is_empty() {
        return Err(Selection::AllExcluded { on: on.join(",") });
    }
    Ok(picked)
}

/// Does `word` (without `!`) pick `node`?
fn matches(word: &str, node: &Candidate<'_>) -> bool {
    if let Some(tag) = word.strip_prefix('@') {
        return node.tags.iter().any(|t| t == tag);
    }
    if word.contains(['*', '?']) {
        return glob(word.as_bytes(), node.name.as_bytes());
    }
    node.name == word || node.roles.iter().any(|r| r == word)
}

/// `*` any run of characters, `?` one; nothing else is special. Linear
/// backtracking to the last `*` only, so no pattern costs more than
/// pattern length × name length.
fn glob(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == b'?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// The nodes of the cluster definition `on` picks.
pub fn in_cluster(closures: &Closures, on: &[String]) -> Result<Vec<String>, Selection> {
    let nodes: Vec<Candidate<'_>> = closures
        .cluster
        .nodes
        .iter()
        .map(|(n, node)| Candidate { name: n, roles: &node.roles, tags: &node.tags })
        .collect();
    select(on, &nodes, &format!("cluster {}", closures.cluster.name))
}

/// The nodes of a recorded generation `on` picks (roles and tags as
/// recorded; records from before they were kept match by name only).
pub fn in_generation(g: &Generation, on: &[String]) -> Result<Vec<String>, Selection> {
    let nodes: Vec<Candidate<'_>> =
        g.nodes.iter().map(|(n, r)| Candidate { name: n, roles: &r.roles, tags: &r.tags }).collect();
    select(on, &nodes, &format!("generation {}", g.number))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(r: &[&str]) -> Vec<String> {
        r.iter().map(|s| s.to_string()).collect()
    }

    fn pick(on: &[&str]) -> Result<Vec<String>, Selection> {
        let nodes = [
            ("cp1", v(&["control-plane", "etcd"]), v(&["rack-a"])),
            ("w1", v(&["worker"]), v(&["rack-a", "gpu"])),
            ("w2", v(&["worker"]), v(&["rack-b"])),
            ("w10", v(&["worker"]), v(&[])),
        ];
        let c: Vec<Candidate<'_>> =
            nodes.iter().map(|(n, r, t)| Candidate { name: n, roles: r.as_slice(), tags: t.as_slice() }).collect();
        select(&v(on), &c, "cluster t")
    }

    #[test]
    fn names_and_roles_comma_separated_or_repeated() {
        assert_eq!(pick(&[]).unwrap(), ["cp1", "w1", "w10", "w2"]);
        assert_eq!(pick(&["worker"]).unwrap(), ["w1", "w10", "w2"]);
        assert_eq!(pick(&["w2,etcd", "w2"]).unwrap(), ["cp1", "w2"]);
        assert_eq!(pick(&[" w1 , ,"]).unwrap(), ["w1"]);
    }

    #[test]
    fn tags_patterns_and_exclusions() {
        assert_eq!(pick(&["@rack-a"]).unwrap(), ["cp1", "w1"]);
        assert_eq!(pick(&["w?"]).unwrap(), ["w1", "w2"]);
        assert_eq!(pick(&["w*"]).unwrap(), ["w1", "w10", "w2"]);
        assert_eq!(pick(&["*1*"]).unwrap(), ["cp1", "w1", "w10"]);
        assert_eq!(pick(&["worker,!@gpu"]).unwrap(), ["w10", "w2"]);
        // exclusions alone start from every node
        assert_eq!(pick(&["!etcd", "!w1?"]).unwrap(), ["w1", "w2"]);
        // a pattern that would backtrack exponentially answers at once
        let long = "a".repeat(60);
        assert!(!glob(format!("{}b", "*a".repeat(30)).as_bytes(), long.as_bytes()));
        assert!(glob(b"*a*a*", long.as_bytes()) && glob(b"a?*", b"ab") && !glob(b"a?", b"a"));
    }

    #[test]
    fn a_word_matching_nothing_is_an_error() {
        for (on, word) in [("w1,wrk", "wrk"), ("@rack-c", "@rack-c"), ("x*", "x*"), ("worker,!@nope", "@nope")] {
            let e = pick(&[on]).unwrap_err();
            assert!(matches!(&e, Selection::Unmatched { word: w, .. } if w == word), "{on}: {e:?}");
            assert!(e.to_string().starts_with(&format!("--on {word}: no node")), "{on}: {e}");
        }
        let e = pick(&["w1,!w1"]).unwrap_err();
        assert!(matches!(e, Selection::AllExcluded { .. }) && e.to_string().contains("every node is excluded"));
    }
}
