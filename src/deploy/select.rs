//! `--on`: which nodes a command works on, the same rule for every
//! command. The flag may repeat and each value may hold comma-separated
//! words; a word is a node name or a role and picks every node it
//! matches; a word that matches nothing is an error naming it (a typo
//! must not shrink a run silently). No words: every node.

use crate::closure::Closures;
use crate::deploy::record::Generation;

/// The nodes `on` picks among `nodes` (name, roles), sorted; `within`
/// names where they were looked for, for the error.
pub fn select<'a>(
    on: &[String],
    nodes: impl IntoIterator<Item = (&'a str, &'a [String])>,
    within: &str,
) -> Result<Vec<String>, String> {
    let nodes: Vec<(&str, &[String])> = nodes.into_iter().collect();
    let words: Vec<&str> = on.iter().flat_map(|s| s.split(',')).map(str::trim).filter(|s| !s.is_empty()).collect();
    let mut out: Vec<String> = Vec::new();
    for want in &words {
        let hits: Vec<&str> =
            nodes.iter().filter(|(n, roles)| n == want || roles.iter().any(|r| r == want)).map(|(n, _)| *n).collect();
        if hits.is_empty() {
            return Err(format!("--on {want}: no node or role of that name in {within}"));
        }
        out.extend(hits.into_iter().map(str::to_string));
    }
    if words.is_empty() {
        out = nodes.iter().map(|(n, _)| n.to_string()).collect();
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The nodes of the cluster definition `on` picks.
pub fn in_cluster(closures: &Closures, on: &[String]) -> Result<Vec<String>, String> {
    let nodes = closures.cluster.nodes.iter().map(|(n, node)| (n.as_str(), node.roles.as_slice()));
    select(on, nodes, &format!("cluster {}", closures.cluster.name))
}

/// The nodes of a recorded generation `on` picks (roles: as recorded;
/// records from before roles were kept match by name only).
pub fn in_generation(g: &Generation, on: &[String]) -> Result<Vec<String>, String> {
    let nodes = g.nodes.iter().map(|(n, r)| (n.as_str(), r.roles.as_slice()));
    select(on, nodes, &format!("generation {}", g.number))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes() -> Vec<(String, Vec<String>)> {
        let v = |r: &[&str]| r.iter().map(|s| s.to_string()).collect();
        vec![
            ("cp1".into(), v(&["control-plane", "etcd"])),
            ("w1".into(), v(&["worker"])),
            ("w2".into(), v(&["worker"])),
        ]
    }

    fn pick(on: &[&str]) -> Result<Vec<String>, String> {
        let n = nodes();
        let on: Vec<String> = on.iter().map(|s| s.to_string()).collect();
        select(&on, n.iter().map(|(a, r)| (a.as_str(), r.as_slice())), "cluster t")
    }

    #[test]
    fn names_and_roles_comma_separated_or_repeated() {
        assert_eq!(pick(&[]).unwrap(), ["cp1", "w1", "w2"]);
        assert_eq!(pick(&["worker"]).unwrap(), ["w1", "w2"]);
        assert_eq!(pick(&["w2,etcd", "w2"]).unwrap(), ["cp1", "w2"]);
        assert_eq!(pick(&[" w1 , ,"]).unwrap(), ["w1"]);
    }

    #[test]
    fn a_word_matching_nothing_is_an_error() {
        let e = pick(&["w1,wrk"]).unwrap_err();
        assert_eq!(e, "--on wrk: no node or role of that name in cluster t");
    }
}
