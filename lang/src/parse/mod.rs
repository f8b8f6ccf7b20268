//! Parsing into rnix's syntax tree, in time linear in the text: rnix 0.15.1's
//! tokenizer and parser, adapted (see each module) so that neither a long
//! run of path characters nor a deep tree costs quadratic time, and with one
//! bound, [`MAX_NESTING`], on how deeply constructs nest. The tree is rnix's
//! own ([`rnix::Root`]), so lowering uses rnix's typed AST unchanged.

mod parser;
mod tokenizer;

pub use parser::MAX_NESTING;
pub use tokenizer::tokenize;

use rnix::{ParseError, TextRange};
use rowan::ast::AstNode;

pub struct Parse {
    pub root: rnix::Root,
    /// rnix's errors, first first.
    pub errors: Vec<ParseError>,
    /// Where the nesting first went past [`MAX_NESTING`], if it did.
    pub too_deep: Option<TextRange>,
}

pub fn parse(text: &str) -> Parse {
    let p = parser::parse(tokenize(text));
    let root = rnix::Root::cast(rnix::SyntaxNode::new_root(p.green)).expect("the parser makes a root node");
    Parse { root, errors: p.errors, too_deep: p.too_deep }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `.nix` file of the corpus and the stdlib, and a few texts that
    /// exercise the path look-ahead and error recovery.
    fn texts() -> Vec<(String, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut dirs = vec![root.join("tests/lang"), root.join("tests/lang/differs"), root.join("stdlib")];
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
        for t in [
            "a.b.c_d.e-f/g",
            "<nixpkgs/a_b>",
            "<a<b>",
            "x:y_z",
            "a_b:c",
            "a/b/c_d ./x/${y}z",
            "a//b",
            "1+1+1-1",
            "{ a = [ 1 2 ] ++ [ 3 ]; }.a or [ ]",
            "(((1)",
            "[[[1]]",
            "- - -1",
            "!!!true",
            "a ++ b // c -> d",
            "\"${\"${x}\"}\" ''a${b}c''",
            "let in",
            "{ a, b ? 1, ... }@c: a",
            "f x y z",
        ] {
            out.push((t.to_string(), t.to_string()));
        }
        assert!(out.len() > 500, "the corpus and the stdlib are found");
        out
    }

    #[test]
    fn same_tokens_as_rnix() {
        for (name, text) in texts() {
            let ours: Vec<_> = tokenize(&text).collect();
            let theirs: Vec<_> = rnix::tokenize(&text).collect();
            assert_eq!(ours, theirs, "{name}");
        }
    }

    #[test]
    fn same_trees_as_rnix() {
        for (name, text) in texts() {
            let ours = parse(&text);
            if ours.too_deep.is_some() {
                // Past the bound, by design (and rnix takes quadratic time).
                assert!(name.ends_with("nesting-too-deep.nix"), "{name} is too deep");
                continue;
            }
            let theirs = rnix::Root::parse(&text);
            if theirs.errors().contains(&ParseError::RecursionLimitExceeded) {
                // rnix gives up past 512 levels of `parse_expr`.
                assert!(!ours.errors.contains(&ParseError::RecursionLimitExceeded), "{name}");
                continue;
            }
            assert_eq!(format!("{:#?}", ours.root.syntax()), format!("{:#?}", theirs.syntax()), "{name}");
            assert_eq!(ours.errors, theirs.errors(), "{name}");
        }
    }

    #[test]
    fn nesting_is_bounded_and_located() {
        let n = MAX_NESTING as usize;
        for (open, close) in [
            ("[", "]"),
            ("(", ")"),
            ("-", ""),
            ("!", ""),
            ("{a=", ";}"),
            ("[1]++", ""),
            ("1+", ""),
            ("f ", ""),
            ("a?b+", ""),
        ] {
            let text = format!("{}1{}", open.repeat(n + 5), close.repeat(n + 5));
            let p = parse(&text);
            let at = p.too_deep.unwrap_or_else(|| panic!("{open}: not refused"));
            // It points among the openers, past the first MAX_NESTING / 2.
            let start = usize::from(at.start());
            assert!(start > n / 2 && start < open.len() * (n + 5), "{open}: at {start}");
            assert!(p.errors.contains(&ParseError::RecursionLimitExceeded));
            // Just under the bound parses.
            let depth = n - 2;
            let text = format!("{}1{}", open.repeat(depth), close.repeat(depth));
            assert!(parse(&text).too_deep.is_none(), "{open}: {depth} levels refused");
        }
    }
}
