//! Property tests ("fuzzing") of the parser and the evaluator over
//! generated input:
//!
//! - random text from the characters and words Nix is made of: the guarded
//!   parse gives rnix's tree and errors unless it refuses the text, and
//!   compiling it never panics; its error renders;
//! - random expressions from a grammar of the language (literals, `let`,
//!   `rec` and plain sets, functions with patterns, calls, lists, selects
//!   with `or`, `?`, every operator, `if`/`assert`/`with`, interpolation,
//!   builtins, under a `let` binding every name they use to more of the
//!   same, so recursion and cycles happen):
//!   evaluating, printing and converting to JSON never panics and ends, in
//!   a result or a typed error, within a watchdog.
//!
//! `KDEPLOY_FUZZ_CASES` sets the number of cases of each (default 100, so
//! that `cargo test` stays fast; CI can raise it). A failure prints the
//! smallest input proptest found; one that ends the process (a stack
//! overflow aborts it before proptest can say anything) is named by the
//! file `KDEPLOY_FUZZ_LAST`, when set: each program is written there before
//! it is evaluated.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use kdeploy_lang::io::Stdlib;
use kdeploy_lang::Session;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use rowan::ast::AstNode;

/// How long one evaluation may take before it counts as a hang.
const WATCHDOG: Duration = Duration::from_secs(120);

fn cases() -> u32 {
    std::env::var("KDEPLOY_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(100)
}

fn runner() -> TestRunner {
    TestRunner::new(Config { cases: cases(), failure_persistence: None, ..Config::default() })
}

fn session() -> Session {
    let mut s = Session::new(vec![std::env::temp_dir()], Stdlib::Absent);
    s.ev.trace = Box::new(|_| {});
    s
}

// ---------------------------------------------------------------- text

const PIECES: &[&str] = &[
    " ", "\n", "\t", "#c\n", "/*c*/", "a", "b", "x", "_", "-", "'", "1", "0", "9", ".", "..", "...", ",", ";", ":",
    "=", "==", "!=", "!", "?", "@", "+", "++", "-", "*", "/", "//", "<", "<=", ">", ">=", "&&", "||", "->", "|>", "<|",
    "(", ")", "[", "]", "{", "}", "${", "$", "\"", "''", "'''", "\\", "\\n", "~/", "./", "/a", "<a>", "a:b", "let",
    "in", "rec", "with", "if", "then", "else", "assert", "inherit", "or", "__curPos", "1.5e3", "é",
];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..40).prop_map(|p| p.concat())
}

#[test]
fn random_text_parses_as_rnix_does_unless_refused_and_never_panics() {
    runner()
        .run(&text(), |t| {
            if let Ok(ours) = kdeploy_lang::parse::parse(&t) {
                let theirs = rnix::Root::parse(&t);
                prop_assert_eq!(format!("{:#?}", ours.root.syntax()), format!("{:#?}", theirs.syntax()));
                prop_assert_eq!(&ours.errors[..], theirs.errors());
            }
            let mut s = session();
            if let Err(e) = s.ev.compile(&t, "/fuzz/input.nix", "input.nix".into()) {
                prop_assert!(!s.render_error(&e, false).is_empty());
            }
            Ok(())
        })
        .unwrap();
}

// ---------------------------------------------------------------- expressions

const NAMES: &[&str] = &["x", "y", "f", "g", "s", "l"];

const BUILTINS: &[&str] = &[
    "length",
    "head",
    "tail",
    "map",
    "filter",
    "foldl'",
    "genList",
    "concatLists",
    "concatMap",
    "elem",
    "elemAt",
    "attrNames",
    "attrValues",
    "listToAttrs",
    "hasAttr",
    "getAttr",
    "removeAttrs",
    "mapAttrs",
    "toString",
    "toJSON",
    "fromJSON",
    "stringLength",
    "substring",
    "concatStringsSep",
    "replaceStrings",
    "split",
    "match",
    "sort",
    "lessThan",
    "add",
    "sub",
    "mul",
    "div",
    "seq",
    "deepSeq",
    "tryEval",
    "throw",
    "isList",
    "isAttrs",
    "typeOf",
    "genericClosure",
    "functionArgs",
    "intersectAttrs",
    "catAttrs",
    "all",
    "any",
    "partition",
    "trace",
    "hashString",
    "compareVersions",
    "splitVersion",
    "unsafeGetAttrPos",
    "addErrorContext",
];

const OPERATORS: &[&str] =
    &["+", "-", "*", "/", "++", "//", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "->", "|>", "<|"];

const LITERALS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "7",
    "(-1)",
    "9223372036854775807",
    "100000000000000000",
    "0.5",
    "1.0e300",
    "true",
    "false",
    "null",
    "\"\"",
    "\"ab\"",
    "\"a\\n${\"b\"}\"",
    "''x ${\"y\"}''",
    "[ ]",
    "{ }",
    "__curPos",
    "/a/b",
    "\"key\"",
];

fn name() -> impl Strategy<Value = &'static str> {
    prop::sample::select(NAMES)
}

fn leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => name().prop_map(String::from),
        3 => prop::sample::select(LITERALS).prop_map(String::from),
        1 => prop::sample::select(BUILTINS).prop_map(|b| format!("builtins.{b}")),
    ]
}

fn set(entries: Vec<(&str, String)>, rec: bool) -> String {
    // One value per name: a name defined twice is only a duplicate error.
    let entries: std::collections::BTreeMap<_, _> = entries.into_iter().collect();
    let body: Vec<String> = entries.iter().map(|(n, v)| format!("{n} = {v};")).collect();
    format!("{}{{ {} }}", if rec { "rec " } else { "" }, body.join(" "))
}

fn expr() -> impl Strategy<Value = String> {
    leaf().prop_recursive(5, 48, 4, |e| {
        let pair = (e.clone(), e.clone());
        prop_oneof![
            (name(), e.clone(), e.clone()).prop_map(|(n, v, b)| format!("(let {n} = {v}; in {b})")),
            (name(), name(), pair.clone(), e.clone()).prop_map(|(n, m, (v, w), b)| match n == m {
                true => format!("(let {n} = {v}; in {b})"),
                false => format!("(let {n} = {v}; {m} = {w}; in {b})"),
            }),
            (name(), e.clone()).prop_map(|(n, b)| format!("({n}: {b})")),
            (name(), name(), pair.clone()).prop_map(|(a, b, (d, body))| match a == b {
                true => format!("({{ {a}, ... }}: {body})"),
                false => format!("({{ {a}, {b} ? {d}, ... }}: {body})"),
            }),
            pair.clone().prop_map(|(f, x)| format!("({f} {x})")),
            prop::collection::vec(e.clone(), 0..4).prop_map(|v| format!("[ {} ]", v.join(" "))),
            prop::collection::vec((name(), e.clone()), 0..4).prop_map(|v| set(v, false)),
            prop::collection::vec((name(), e.clone()), 0..4).prop_map(|v| set(v, true)),
            (e.clone(), name()).prop_map(|(x, n)| format!("({x}).{n}")),
            (e.clone(), name(), e.clone()).prop_map(|(x, n, d)| format!("(({x}).{n} or {d})")),
            (e.clone(), name()).prop_map(|(x, n)| format!("(({x}) ? {n})")),
            (e.clone(), prop::sample::select(OPERATORS), e.clone()).prop_map(|(a, o, b)| format!("({a} {o} {b})")),
            (prop::sample::select(&["-", "!"][..]), e.clone()).prop_map(|(o, a)| format!("({o}{a})")),
            (e.clone(), pair.clone()).prop_map(|(c, (t, f))| format!("(if {c} then {t} else {f})")),
            pair.clone().prop_map(|(c, b)| format!("(assert {c}; {b})")),
            pair.clone().prop_map(|(ns, b)| format!("(with {ns}; {b})")),
            pair.clone().prop_map(|(a, b)| format!("\"${{{a}}}-${{{b}}}\"")),
            (prop::sample::select(BUILTINS), prop::collection::vec(e.clone(), 1..4))
                .prop_map(|(b, args)| format!("(builtins.{b} {})", args.join(" "))),
        ]
    })
}

/// An expression under a `let` binding every name it may use: the
/// bindings may refer to each other and to themselves (`x = [ x ];`).
fn program() -> impl Strategy<Value = String> {
    (prop::collection::vec(expr(), NAMES.len()), expr()).prop_map(|(values, body)| {
        let bindings: Vec<String> = NAMES.iter().zip(values).map(|(n, v)| format!("{n} = {v};")).collect();
        format!("let {} in {body}", bindings.join(" "))
    })
}

/// What one evaluation gave: a code for an error, or the value's text.
fn evaluate(text: &str) -> Result<String, String> {
    let mut s = session();
    let dir = PathBuf::from("/");
    let outcome = s.eval_expr(text, &dir, &[]).and_then(|v| {
        let printed = s.print(&v)?;
        let json = s.to_json(&v).unwrap_or_default();
        Ok(format!("{printed} {json}"))
    });
    outcome.map_err(|e| {
        let shown = s.render_error(&e, false);
        assert!(shown.contains(e.kind.code()), "the rendering names the code:\n{shown}");
        e.kind.code().to_string()
    })
}

#[test]
fn random_expressions_evaluate_or_fail_cleanly() {
    let outcomes = std::sync::Mutex::new(std::collections::BTreeMap::<String, usize>::new());
    let count = |what: &str| *outcomes.lock().unwrap().entry(what.to_string()).or_default() += 1;
    runner()
        .run(&program(), |text| {
            let (tx, rx) = mpsc::channel();
            if let Some(last) = std::env::var_os("KDEPLOY_FUZZ_LAST") {
                std::fs::write(last, &text).expect("writing KDEPLOY_FUZZ_LAST");
            }
            let t = text.clone();
            // A thread of its own: the watchdog turns a hang into a failure
            // (the thread is then left running), a panic into an error.
            std::thread::Builder::new()
                .name("fuzz-eval".into())
                .spawn(move || {
                    let r = std::panic::catch_unwind(|| evaluate(&t));
                    let _ = tx.send(r.map_err(|_| ()));
                })
                .expect("a thread");
            match rx.recv_timeout(WATCHDOG) {
                Ok(Ok(Ok(_value))) => {
                    count("a value");
                    Ok(())
                }
                Ok(Ok(Err(code))) => {
                    prop_assert!(code.starts_with("kdeploy::"), "an untyped error {code} for {text}");
                    count(&code);
                    Ok(())
                }
                Ok(Err(())) => Err(TestCaseError::fail(format!("the evaluation panicked: {text}"))),
                Err(_) => Err(TestCaseError::fail(format!("no answer within {WATCHDOG:?}: {text}"))),
            }
        })
        .unwrap();
    // What the cases came to: the grammar should reach evaluation.
    eprintln!("outcomes: {:?}", outcomes.lock().unwrap());
}
