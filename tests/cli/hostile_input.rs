//! Hostile input to the language, through the `kdeploy` binary: inputs
//! nested 100000 levels deep, cyclic values forced by every operation that
//! walks values, absurd sizes and unbounded laziness. Each must end in a
//! result or a clean error (exit 1, a `kdeploy::` code, no panic, no
//! signal) with bounded memory: the child runs under a 1 GiB memory budget
//! and its peak resident memory is checked. A watchdog turns a hang into a
//! failure; times are printed (`--nocapture`), never asserted.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Generous: the slowest case takes seconds on a loaded machine.
const WATCHDOG: Duration = Duration::from_secs(300);

/// The budget the child evaluates under, and what its peak resident memory
/// may reach (the budget is checked every few thousand steps, and stacks
/// and the binary come on top).
const BUDGET: &str = "1G";
const MAX_RSS_KIB: i64 = 1536 * 1024;

struct Outcome {
    code: Option<i32>,
    signal: Option<i32>,
    stdout: String,
    stderr: String,
    secs: f64,
    rss_kib: i64,
}

/// Runs `kdeploy eval ARGS` with the watchdog; the peak resident memory
/// comes from the kernel's accounting of the child.
fn eval(args: &[&str]) -> Outcome {
    let start = Instant::now();
    // reaped by the wait4 loop below, which also reads its peak memory
    #[allow(clippy::zombie_processes)]
    let mut child = Command::new(env!("CARGO_BIN_EXE_kdeploy"))
        .arg("eval")
        .args(args)
        .env("KDEPLOY_MAX_MEMORY", BUDGET)
        .env_remove("KDEPLOY_STDLIB")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the kdeploy binary runs");
    let pid = child.id() as libc::pid_t;
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped")));
    let err = drain(Box::new(child.stderr.take().expect("piped")));
    let (status, rusage) = loop {
        let mut status = 0;
        // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
        let mut rusage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: waits only for our own child, with valid pointers.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut rusage) };
        if r == pid {
            break (status, rusage);
        }
        assert!(r == 0, "wait4 failed: {}", std::io::Error::last_os_error());
        if start.elapsed() > WATCHDOG {
            let _ = child.kill();
            panic!("kdeploy eval {args:?} did not finish within {WATCHDOG:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let (exited, signaled) = (libc::WIFEXITED(status), libc::WIFSIGNALED(status));
    Outcome {
        code: exited.then(|| libc::WEXITSTATUS(status)),
        signal: signaled.then(|| libc::WTERMSIG(status)),
        stdout: out.join().expect("stdout read"),
        stderr: err.join().expect("stderr read"),
        secs: start.elapsed().as_secs_f64(),
        rss_kib: rusage.ru_maxrss,
    }
}

fn expr(e: &str) -> Outcome {
    eval(&["--expr", e])
}

fn file(text: &str, extra: &[&str]) -> Outcome {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("input.nix");
    std::fs::write(&path, text).expect("the input is written");
    let mut args = vec![path.to_str().expect("a UTF-8 path")];
    args.extend_from_slice(extra);
    eval(&args)
}

/// No signal, no panic, memory within bounds; prints the measurements.
fn sane(what: &str, o: &Outcome) {
    eprintln!("{what:<48} exit {:?} {:>7.2} s {:>8} KiB", o.code, o.secs, o.rss_kib);
    assert_eq!(o.signal, None, "{what}: killed by signal {:?}\n{}", o.signal, o.stderr);
    assert!(!o.stderr.contains("panicked"), "{what}: panicked\n{}", o.stderr);
    assert!(o.rss_kib < MAX_RSS_KIB, "{what}: peak resident memory {} KiB", o.rss_kib);
}

/// Exit 1 with `code`, and `needle` in the message.
fn fails(what: &str, o: Outcome, code: &str, needle: &str) {
    sane(what, &o);
    let head: String = o.stderr.chars().take(2000).collect();
    assert_eq!(o.code, Some(1), "{what}: expected exit 1\n{head}");
    assert!(o.stderr.contains(code), "{what}: expected {code}\n{head}");
    assert!(o.stderr.contains(needle), "{what}: expected '{needle}' in\n{head}");
    assert!(o.stdout.is_empty(), "{what}: printed a value on error");
}

/// Exit 0 printing exactly `value`.
fn gives(what: &str, o: Outcome, value: &str) {
    sane(what, &o);
    let head: String = o.stderr.chars().take(2000).collect();
    assert_eq!(o.code, Some(0), "{what}: expected success\n{head}");
    assert_eq!(o.stdout.trim_end(), value, "{what}");
}

/// `open` × n, `middle`, `close` × n.
fn nest(open: &str, middle: &str, close: &str, n: usize) -> String {
    format!("{}{middle}{}", open.repeat(n), close.repeat(n))
}

const DEEP: usize = 100_000;

#[test]
fn nesting_past_the_bound_is_refused_at_its_place() {
    let cases = [
        ("lists", nest("[", "1", "]", DEEP)),
        ("parentheses", nest("(", "1", ")", DEEP)),
        ("unary minus", nest("- ", "1", "", DEEP)),
        ("negation", nest("!", "true", "", DEEP)),
        ("attribute sets", nest("{a=", "1", ";}", DEEP)),
        ("let", nest("let a = 1; in ", "a", "", DEEP)),
        ("functions", nest("x: ", "1", "", DEEP)),
        ("if", nest("if true then ", "1", " else 1", DEEP)),
        ("with", nest("with {}; ", "1", "", DEEP)),
        ("interpolation", nest("\"${", "\"x\"", "}\"", DEEP)),
        ("++ chain", format!("[1]{}", "++[1]".repeat(DEEP))),
        ("// chain", format!("{{}}{}", " // {}".repeat(DEEP))),
        ("or defaults", format!("let a = {{}}; in a.x{} or 1", " or a.x".repeat(DEEP))),
        // Long rather than deep to the eye, but evaluating these recurses
        // as deeply as they are long, so they count as nesting.
        ("1 + 1 + … chain", format!("1{}", " + 1".repeat(DEEP))),
        ("f 1 1 … chain", format!("let f = x: f; in f{}", " 1".repeat(DEEP))),
        ("x?a?a… chain", format!("{{}}{}", "?a".repeat(DEEP))),
        ("lists over lines", nest("[\n", "1", "]\n", DEEP)),
    ];
    for (what, text) in cases {
        let o = file(&text, &["--json"]);
        fails(&format!("100000-deep {what}"), o, "kdeploy::too-deep", "nested more than 500 levels deep");
    }
}

#[test]
fn runs_without_spaces_that_parse_in_quadratic_time_are_refused() {
    for (what, text) in [
        ("a.a.a…", format!("let a = {{ a = a; }}; in a{} == a", ".a".repeat(DEEP))),
        ("1+1+…", format!("1{}", "+1".repeat(DEEP))),
    ] {
        let o = file(&text, &["--json"]);
        fails(
            &format!("100000-long {what}"),
            o,
            "kdeploy::too-large",
            "characters without a space are too many to parse",
        );
    }
}

#[test]
fn long_chains_and_deep_nesting_within_the_bound_evaluate() {
    // Levels per repetition: a set is `{` (2) and `=` (1); a string and
    // its interpolation are 1 and 2.
    let n = 490;
    let cases = [
        ("lists", format!("builtins.deepSeq {} true", nest("[", "1", "]", n)), "true".into()),
        ("parentheses", nest("(", "1", ")", n), "1".into()),
        ("unary minus", nest("-", "1", "", n), "1".into()),
        ("attribute sets", format!("builtins.deepSeq {} true", nest("{a=", "1", ";}", n / 3)), "true".into()),
        ("let", nest("let a = 1; in ", "a", "", n), "1".into()),
        ("interpolation", nest("\"${", "\"x\"", "}\"", n / 3), "\"x\"".into()),
        ("1+1+…", format!("1{}", "+1".repeat(n)), (n + 1).to_string()),
        ("f 1 1 …", format!("let f = x: f; in f{}", " 1".repeat(n)), "<LAMBDA>".into()),
        ("x?a?a…", format!("{{}}{}", "?a".repeat(n)), "false".into()),
        // One select with a long attribute path is not nested at all.
        ("a.a.a… (2000)", format!("let a = {{ a = a; }}; in a{} == a", ".a".repeat(2_000)), "true".into()),
        // Siblings do not nest: 100000 list elements, bindings, operators.
        ("100000 elements", format!("builtins.length [{} ]", " 1".repeat(DEEP)), DEEP.to_string()),
        (
            "100000 bindings",
            format!(
                "builtins.length (builtins.attrNames {{ {} }})",
                (0..DEEP).map(|i| format!("a{i} = 1 + 1;")).collect::<String>()
            ),
            DEEP.to_string(),
        ),
    ];
    for (what, text, want) in cases {
        let o = file(&text, &[]);
        gives(what, o, &want);
    }
}

#[test]
fn many_names_under_deep_scopes_resolve_quickly() {
    let refs = " true".repeat(DEEP);
    let o = file(&format!("{}builtins.length [{refs} ]", "let a = 1; in ".repeat(490)), &[]);
    gives("100000 names under 490 lets", o, "100000");
    let refs = " z".repeat(DEEP);
    let o = file(&format!("{}builtins.length [{refs} ]", "with { z = 1; }; ".repeat(490)), &[]);
    gives("100000 names under 490 withs", o, "100000");
    let o = file(&format!("builtins.length [{} ]", " __curPos".repeat(DEEP)), &[]);
    gives("100000 __curPos on one line", o, "100000");
}

#[test]
fn an_error_on_a_very_long_line_is_located_without_a_snippet() {
    let o = file(&format!("{}let a = {{ }}; in a.b", " ".repeat(DEEP)), &[]);
    fails("error at column 100017", o, "kdeploy::missing-attribute", ":1:100017 (the line is too long to show)");
}

#[test]
fn deep_values_print_in_linear_time_and_space() {
    let list = "builtins.foldl' (acc: x: [ acc ]) [ ] (builtins.genList (x: x) 100000)";
    let set = "builtins.foldl' (acc: x: { a = acc; }) { } (builtins.genList (x: x) 100000)";
    for (what, e) in [("list", list), ("set", set)] {
        for json in [false, true] {
            let o = if json { eval(&["--json", "--expr", e]) } else { expr(e) };
            sane(&format!("print a 100000-deep {what} (json: {json})"), &o);
            assert_eq!(o.code, Some(0), "{}", o.stderr);
            // Indented 2 columns a level without a cap, this is 10 GB.
            assert!(o.stdout.len() < 30 << 20, "{what}: {} bytes printed", o.stdout.len());
        }
    }
}

#[test]
fn cycles_are_infinite_recursion_or_repeated() {
    let recursion = [
        ("toString", "let x = [ x ]; in toString x"),
        ("interpolation via outPath", "let s = { outPath = s; }; in \"${s}\""),
        ("interpolation via __toString", "let s = { __toString = self: self; }; in \"${s}\""),
        ("== on sets", "let x = { a = x; }; y = { a = y; }; in x == y"),
        ("== on lists", "let x = [ x ]; y = [ y ]; in x == y"),
        ("< on lists", "let x = [ x ]; y = [ y ]; in x < y"),
        ("sort", "let x = [ x ]; y = [ y ]; in builtins.sort builtins.lessThan [ x y ]"),
        ("elem", "let x = [ x ]; y = [ y ]; in builtins.elem x [ y ]"),
        ("toJSON of a list", "let x = [ x ]; in builtins.toJSON x"),
        ("toJSON of a set", "let x = { a = x; }; in builtins.toJSON x"),
    ];
    for (what, e) in recursion {
        fails(&format!("cycle: {what}"), expr(e), "kdeploy::infinite-recursion", "«expr»:1:");
    }
    let o = eval(&["--json", "--expr", "let x = { a = { b = x; }; }; in x"]);
    fails("cycle: --json", o, "kdeploy::infinite-recursion", "«expr»:1:");
    // Nix's answers where it gives one: identity, and deepSeq's visited set.
    gives("cycle: x == x", expr("let x = { a = x; }; in x == x"), "true");
    gives("cycle: l < l", expr("let l = [ l ]; in l < l"), "false");
    gives("cycle: deepSeq", expr("let x = { a = x; }; in builtins.deepSeq x 1"), "1");
    gives("cycle: printed", expr("let x = { a = { b = x; }; }; in x"), "{ a = { b = «repeated»; }; }");
    // Nix 2.8 keeps a list of two inside the value holding it, so the
    // printed copy at the top is new and the list inside it is not.
    gives("cycle: printed list", expr("let l = [ 1 l ]; in l"), "[ 1 [ 1 «repeated» ] ]");
    gives("cycle: printed long list", expr("let l = [ 1 2 l ]; in l"), "[ 1 2 «repeated» ]");
}

#[test]
fn values_without_end_are_too_deep() {
    let cases = [
        ("deepSeq of an endless set", "let f = n: { a = f (n + 1); }; in builtins.deepSeq (f 0) 1"),
        ("== of endless lists", "let f = n: [ (f (n + 1)) ]; in f 0 == f 0"),
        ("printing an endless list", "let f = n: [ (f (n + 1)) ]; in f 0"),
        ("toJSON of an endless set", "let f = n: { a = f (n + 1); }; in builtins.toJSON (f 0)"),
    ];
    for (what, e) in cases {
        fails(what, expr(e), "kdeploy::too-deep", "levels deep");
    }
}

#[test]
fn absurd_sizes_are_too_large() {
    let cases = [
        ("genList 10^17", "builtins.genList (x: x) 100000000000000000", "a list of 100000000000000000 elements"),
        ("length of genList 10^10", "builtins.length (builtins.genList (x: x) 10000000000)", "limit of 16777216"),
        (
            "concatLists of 1000 × 10^7",
            "builtins.length (builtins.concatLists (builtins.genList (_: builtins.genList (x: x) 10000000) 1000))",
            // The list limit, or the budget first (1 GiB here).
            "",
        ),
        ("++ past the limit", "let l = builtins.genList (x: null) 9000000; in builtins.length (l ++ l)", "elements"),
        (
            "string doubling",
            "let f = s: n: if n == 0 then s else f (s + s) (n - 1); in builtins.stringLength (f \"x\" 40)",
            "limit of 268435456 bytes",
        ),
        (
            "concatStringsSep of 10^7 × 77 bytes",
            "builtins.stringLength (builtins.concatStringsSep \"\" (builtins.genList (_: \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\") 10000000))",
            "bytes",
        ),
        (
            "replaceStrings growing a string",
            "builtins.stringLength (builtins.replaceStrings [ \"\" ] [ \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\" ] (builtins.concatStringsSep \"\" (builtins.genList (_: \"y\") 10000000)))",
            "bytes",
        ),
        (
            "toString of a shared list 2^40 long",
            "let kib = builtins.concatStringsSep \"\" (builtins.genList (_: \"x\") 1024); d = builtins.foldl' (l: _: [ l l ]) [ kib ] (builtins.genList (x: x) 40); in builtins.stringLength (toString d)",
            "bytes",
        ),
        (
            "100 lists of 10^7, forced",
            "builtins.deepSeq (builtins.genList (i: builtins.genList (j: j) 10000000) 100) 1",
            "memory budget",
        ),
        (
            "an endless genericClosure",
            "builtins.length (builtins.genericClosure { startSet = [ { key = 0; } ]; operator = x: [ { key = x.key - 1; } ]; })",
            "",
        ),
    ];
    for (what, e, needle) in cases {
        fails(what, expr(e), "kdeploy::too-large", needle);
    }
    gives("substring of 10^17 bytes", expr("builtins.substring 0 100000000000000000 \"abc\""), "\"abc\"");
    gives("substring from 10^17", expr("builtins.substring 100000000000000000 1 \"abc\""), "\"\"");
}

#[test]
fn functions_bound_in_a_let_do_not_leak_their_frames() {
    // Each call makes a frame holding a function that closes over that
    // frame; leaking it (a reference cycle) would take these 4 million
    // calls past the 1 GiB budget, about 300 bytes each.
    let e = "builtins.foldl' (a: i: a + (let f = x: x + i; in f 1)) 0 (builtins.genList (i: i) 4000000)";
    gives("let-bound functions", expr(e), "8000002000000");
}
