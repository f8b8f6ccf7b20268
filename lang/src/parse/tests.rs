//! The guard against rnix: every text people write passes it, the depth it
//! measures bounds the depth of rnix's tree, and hostile text is refused
//! where it goes wrong.

use super::*;
use rnix::WalkEvent;
use rowan::ast::AstNode;

/// Every `.nix` file of the corpus, the stdlib and the example clusters.
fn texts() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut dirs = vec![root.join("lang/tests/corpus"), root.join("stdlib"), root.join("clusters")];
    let mut out = Vec::new();
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "nix") {
                out.push((p.display().to_string(), std::fs::read_to_string(&p).unwrap_or_default()));
            }
        }
    }
    assert!(out.len() > 500, "the corpus and the stdlib are found");
    out
}

fn tree_depth(root: &rnix::Root) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for event in root.syntax().preorder() {
        match event {
            WalkEvent::Enter(_) => {
                depth += 1;
                max = max.max(depth);
            }
            WalkEvent::Leave(_) => depth -= 1,
        }
    }
    max
}

/// How much deeper than the scan's count rnix's tree may be: a few nodes
/// per level (a binding is an attribute path, its value and the set).
fn tree_bound(scanned: usize) -> usize {
    3 * scanned + 8
}

#[test]
fn texts_people_write_pass_and_their_depth_bounds_the_tree() {
    let mut deepest = (0, String::new());
    for (name, text) in texts() {
        if name.ends_with("nesting-too-deep.nix") {
            continue;
        }
        let scanned = scan::scan(&text).unwrap_or_else(|r| panic!("{name}: {r:?}"));
        let parsed = rnix::Root::parse(&text);
        let tree = tree_depth(&parsed.tree());
        assert!(tree <= tree_bound(scanned.depth), "{name}: tree {tree} deep, scan said {}", scanned.depth);
        if !name.contains("/tests/corpus/") && scanned.depth > deepest.0 {
            deepest = (scanned.depth, name);
        }
    }
    // The stdlib and the clusters are far from the bound.
    assert!(deepest.0 < MAX_NESTING / 5, "{deepest:?}");
}

/// (opener, closer, levels the scan counts per repetition)
const SHAPES: &[(&str, &str, usize)] = &[
    ("[", "]", 1),
    ("(", ")", 1),
    ("-", "", 1),
    ("!", "", 1),
    ("{a=", ";}", 3),
    ("let a = 1; in ", "", 1),
    ("x: ", "", 1),
    ("if true then ", " else 1", 1),
    ("with {}; ", "", 1),
    ("\"${", "}\"", 3),
    ("[1] ++ ", "", 1),
    ("{} // ", "", 1),
    ("1 + ", "", 1),
    ("f ", "", 1),
    ("a.x or ", "", 1),
    ("", "?a", 1),
];

fn nest(open: &str, close: &str, n: usize) -> String {
    format!("{}1{}", open.repeat(n), close.repeat(n))
}

#[test]
fn nesting_past_the_bound_is_refused_where_it_passes() {
    for &(open, close, per) in SHAPES {
        let n = MAX_NESTING / per + 5;
        let text = nest(open, close, n);
        let Err(Refusal::TooDeep { at }) = parse(&text) else { panic!("{open}: not refused") };
        if open.is_empty() {
            continue;
        }
        // Among the openers, near the repetition that passes the bound.
        let start = usize::from(at.start());
        let expected = open.len() * (MAX_NESTING / per);
        assert!(
            start + 2 * open.len() >= expected && start <= expected + 2 * open.len(),
            "{open}: at {start}, expected {expected}"
        );
    }
}

#[test]
fn nesting_within_the_bound_parses_into_a_tree_the_bound_covers() {
    for &(open, close, per) in SHAPES {
        let n = MAX_NESTING / per - 2;
        let text = nest(open, close, n);
        let p = parse(&text).unwrap_or_else(|r| panic!("{open}: {n} levels refused: {r:?}"));
        assert!(p.errors.is_empty(), "{open}: {:?}", p.errors.first());
        let scanned = scan::scan(&text).unwrap().depth;
        assert!(tree_depth(&p.root) <= tree_bound(scanned), "{open}: tree {} deep", tree_depth(&p.root));
    }
}

#[test]
fn siblings_do_not_nest() {
    let many = 100_000;
    for text in [
        format!("[ {} ]", "1 ".repeat(many)),
        format!("{{ {} }}", (0..many).map(|i| format!("a{i} = 1 + 1;")).collect::<String>()),
        format!("{{ inherit {}; }}", (0..many).map(|i| format!(" a{i}")).collect::<String>()),
        format!("{{ {} }}: 1", (0..many).map(|i| format!("a{i} ? 1, ")).collect::<String>()),
        format!("let {} in 1", (0..many).map(|i| format!("a{i} = [ x.y or 1 (f 1) ];")).collect::<String>()),
    ] {
        let s = scan::scan(&text).unwrap_or_else(|r| panic!("{}: {r:?}", &text[..40]));
        assert!(s.depth < 10, "{}: {} deep", &text[..40], s.depth);
    }
}

#[test]
fn long_runs_without_spaces_are_refused_and_located() {
    for (text, run) in [
        (format!("let a = {{ }}; in a{}", ".a".repeat(200_000)), 16..400_017),
        (format!("[ 1{} ]", "+1".repeat(200_000)), 2..400_003),
    ] {
        let Err(Refusal::LongRun { at }) = parse(&text) else { panic!("{}: not refused", &text[..20]) };
        assert_eq!(usize::from(at.start())..usize::from(at.end()), run, "{}", &text[..20]);
    }
    // Long runs that are read once pass: inside strings, one long path, and
    // a few thousand characters of anything.
    for text in [
        format!("1 + ./a{}", "/b".repeat(200_000)),
        format!("\"{}\"", "a.b+c/".repeat(200_000)),
        format!("''{}''", "a.b+c/".repeat(200_000)),
        format!("let a = {{ a = a; }}; in a{}", ".a".repeat(2_000)),
        format!("1{}", "+1".repeat(400)),
    ] {
        assert!(parse(&text).is_ok(), "{}", &text[..20]);
    }
}
