//! Snapshot tests of rendered error messages: every file in `tests/errors/`
//! is one kind of mistake a user makes, evaluated (and output as JSON, which
//! forces it deeply) with the library; the error, rendered without colour,
//! is compared with `tests/errors/snapshots/<name>.snap` and its stable code
//! is checked. `tests/errors/lib/` holds files imported by the multi-file
//! cases. A few tests run the `kdeploy` binary for its exit codes.
//!
//! Accept changed snapshots with `cargo insta review`, or
//! `INSTA_UPDATE=always cargo test --test cli error_snapshots::`, after reading them.

use std::path::PathBuf;
use std::process::Command;

use kdeploy_lang::io::Stdlib;
use kdeploy_lang::Session;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn errors_dir() -> PathBuf {
    manifest_dir().join("tests/errors")
}

/// Makes the text independent of where the checkout is.
fn normalise(text: &str) -> String {
    let mut out = text.to_string();
    let root = manifest_dir();
    let mut roots = vec![root.display().to_string()];
    if let Ok(c) = root.canonicalize() {
        roots.push(c.display().to_string());
    }
    // Longest first, so a canonical path that extends the other is replaced whole.
    roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
    for r in roots {
        out = out.replace(&r, "[ROOT]");
    }
    // Trailing spaces are noise in a snapshot and editors strip them.
    out.lines().map(str::trim_end).collect::<Vec<_>>().join("\n")
}

/// Evaluates `tests/errors/<name>.nix` deeply; returns the error's code and
/// its rendering. Panics (failing the test) if the file evaluates.
fn eval_error(name: &str) -> (&'static str, String) {
    let file = errors_dir().join(format!("{name}.nix"));
    assert!(file.is_file(), "{} is missing", file.display());
    let mut s = Session::new(vec![errors_dir()], Stdlib::Absent);
    let outcome = s.eval_file(&file, &[]).and_then(|v| s.to_json(&v));
    match outcome {
        Ok(json) => panic!("{name}.nix evaluated to {json}, but an error was expected"),
        Err(e) => (e.kind.code(), normalise(&s.render_error(&e, false))),
    }
}

/// Errors that are known to be rendered without any `file:line:col` yet.
/// Each is a bug: remove it from here when it is fixed.
const NO_LOCATION_YET: &[&str] = &["not-coercible-function-json"];

fn check(name: &str, code: &str, must_contain: &[&str]) {
    let (got_code, text) = eval_error(name);
    // The snapshot first, so that `INSTA_UPDATE=always` records it even when
    // a check below fails.
    insta::with_settings!({
        snapshot_path => "../errors/snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
        description => format!("tests/errors/{name}.nix"),
    }, {
        insta::assert_snapshot!(name, text);
    });
    if !NO_LOCATION_YET.contains(&name) {
        assert!(
            text.contains(".nix:") && text.contains("tests/errors/"),
            "{name}: the error has no file:line:col:\n{text}"
        );
    }
    for m in must_contain {
        assert!(text.contains(m), "{name}: the rendering lacks {m:?}:\n{text}");
    }
    assert!(!text.trim().is_empty(), "{name}: the error rendered as nothing");
    assert!(text.contains(got_code), "{name}: the rendering does not show the code {got_code}:\n{text}");
    assert_eq!(got_code, code, "{name}: wrong error kind; the rendering is:\n{text}");
}

/// One test per error file: `name => "expected code"`.
macro_rules! error_tests {
    ($($test:ident: $file:literal => $code:literal $([$($must:literal),* $(,)?])?;)*) => {
        $(
            #[test]
            fn $test() {
                check($file, $code, &[$($($must),*)?]);
            }
        )*

        /// Every file in tests/errors/ has a test above, and no test names a
        /// file that does not exist.
        #[test]
        fn every_error_file_is_tested() {
            let listed: std::collections::BTreeSet<&str> = [$($file,)* ERROR_FILES_EXTRA].into_iter().filter(|f| !f.is_empty()).collect();
            let mut on_disk = std::collections::BTreeSet::new();
            for entry in std::fs::read_dir(errors_dir()).expect("tests/errors exists") {
                let path = entry.expect("readable directory").path();
                if path.extension().is_some_and(|x| x == "nix") {
                    on_disk.insert(path.file_stem().unwrap().to_string_lossy().into_owned());
                }
            }
            let on_disk: std::collections::BTreeSet<&str> = on_disk.iter().map(String::as_str).collect();
            assert_eq!(listed, on_disk, "tests/errors/*.nix and the tests in tests/cli/error_snapshots.rs differ");
        }
    };
}

/// Files tested outside the macro (by their own test function).
const ERROR_FILES_EXTRA: &str = "too-deep-recursion";

error_tests! {
    // Syntax errors: the first real error only.
    parse_missing_semicolon: "parse-missing-semicolon" => "kdeploy::parse" ["parse-missing-semicolon.nix:3:15", "expected ';' after this binding"];
    parse_unclosed_brace: "parse-unclosed-brace" => "kdeploy::parse" ["parse-unclosed-brace.nix:2:1", "'{' opened here is never closed"];
    parse_unclosed_string: "parse-unclosed-string" => "kdeploy::parse" ["parse-unclosed-string.nix:4:11", "unclosed string"];
    parse_stray_token: "parse-stray-token" => "kdeploy::parse" ["parse-stray-token.nix:5:3"];
    parse_cascade: "parse-cascade" => "kdeploy::parse" ["parse-cascade.nix:4:8", "unexpected ':'", "use '=' to define an attribute"];
    parse_missing_in: "parse-missing-in" => "kdeploy::parse" ["parse-missing-in.nix:2:1", "'let' without 'in'"];
    parse_unclosed_paren: "parse-unclosed-paren" => "kdeploy::parse" ["parse-unclosed-paren.nix:3:11", "unclosed '('", "expected ')' before this 'in'"];
    parse_empty_file: "parse-empty-file" => "kdeploy::parse" ["the file contains no expression"];
    parse_dynamic_let: "parse-dynamic-let" => "kdeploy::parse";
    parse_duplicate_formal: "parse-duplicate-formal" => "kdeploy::duplicate-attribute";
    parse_unclosed_interpolation: "parse-unclosed-interpolation" => "kdeploy::parse" ["parse-unclosed-interpolation.nix:6:18", "unclosed '${'"];
    parse_unclosed_comment: "parse-unclosed-comment" => "kdeploy::parse" ["parse-unclosed-comment.nix:4:3", "unclosed comment"];
    parse_let_without_in: "parse-let-without-in" => "kdeploy::parse" ["parse-let-without-in.nix:4:11", "'let' without 'in'"];
    parse_unclosed_inner_brace: "parse-unclosed-inner-brace" => "kdeploy::parse" ["unclosed '{'", "maybe this '{' is the one never closed"];
    parse_lost_quote: "parse-lost-quote" => "kdeploy::parse" ["parse-lost-quote.nix:4:11", "unclosed string"];
    parse_unmatched_bracket: "parse-unmatched-bracket" => "kdeploy::parse" ["parse-unmatched-bracket.nix:4:11", "unclosed '['", "expected ']' before this '}'"];
    parse_missing_semicolon_brace: "parse-missing-semicolon-brace" => "kdeploy::parse" ["parse-missing-semicolon-brace.nix:2:29", "missing ';'"];
    parse_invalid_character: "parse-invalid-character" => "kdeploy::parse" ["parse-invalid-character.nix:3:13", "unexpected '%'"];
    parse_if_without_else: "parse-if-without-else" => "kdeploy::parse" ["expected 'else'"];

    // Names.
    undefined_variable_typo: "undefined-variable-typo" => "kdeploy::undefined-variable" ["undefined-variable-typo.nix:7:19", "did you mean 'replicas'?"];
    undefined_variable_with: "undefined-variable-with" => "kdeploy::undefined-variable";
    undefined_variable_builtin: "undefined-variable-builtin" => "kdeploy::undefined-variable";
    duplicate_attribute: "duplicate-attribute" => "kdeploy::duplicate-attribute" ["duplicate-attribute.nix:6:3", "first defined here", "defined again here"];
    duplicate_attribute_nested: "duplicate-attribute-nested" => "kdeploy::duplicate-attribute" ["duplicate-attribute-nested.nix:5:", "first defined here"];
    duplicate_attribute_dynamic: "duplicate-attribute-dynamic" => "kdeploy::duplicate-attribute";

    // Types.
    type_add_int_string: "type-add-int-string" => "kdeploy::type";
    type_if_condition: "type-if-condition" => "kdeploy::type";
    type_assert_condition: "type-assert-condition" => "kdeploy::type";
    type_builtin_argument: "type-builtin-argument" => "kdeploy::type";
    type_call_non_function: "type-call-non-function" => "kdeploy::type";
    type_select_non_set: "type-select-non-set" => "kdeploy::type";
    type_concat: "type-concat" => "kdeploy::type";
    type_function_argument_not_set: "type-function-argument-not-set" => "kdeploy::type";

    // Attributes and function arguments.
    missing_attribute_typo: "missing-attribute-typo" => "kdeploy::missing-attribute" ["did you mean 'replicas'?"];
    missing_attribute_no_suggestion: "missing-attribute-no-suggestion" => "kdeploy::missing-attribute";
    missing_attribute_nested: "missing-attribute-nested" => "kdeploy::missing-attribute" ["did you mean 'https'?"];
    missing_argument: "missing-argument" => "kdeploy::missing-argument" ["'port'", "missing-argument.nix:5:1", "the argument is declared here"];
    missing_argument_toplevel: "missing-argument-toplevel" => "kdeploy::missing-argument" ["--arg clusterName"];
    missing_argument_typo: "missing-argument-typo" => "kdeploy::missing-argument" ["'port'", "has 'prot': did you mean 'port'?"];
    unexpected_argument_typo: "unexpected-argument-typo" => "kdeploy::unexpected-argument" ["'prot'", "did you mean 'port'?"];

    // Evaluation failures.
    infinite_recursion_let: "infinite-recursion-let" => "kdeploy::infinite-recursion";
    infinite_recursion_rec: "infinite-recursion-rec" => "kdeploy::infinite-recursion";
    assertion_failed: "assertion-failed" => "kdeploy::assertion-failed";
    throw: "throw" => "kdeploy::throw" ["replicas must be positive, got -1", "while calling 'checkReplicas'"];
    abort: "abort" => "kdeploy::abort" ["the legacy mode was removed in 2.0"];
    division_by_zero: "division-by-zero" => "kdeploy::division-by-zero";
    integer_overflow: "integer-overflow" => "kdeploy::integer-overflow";
    integer_literal_overflow: "integer-literal-overflow" => "kdeploy::integer-overflow";
    out_of_bounds: "out-of-bounds" => "kdeploy::out-of-bounds" ["5", "3 elements"];
    out_of_bounds_head: "out-of-bounds-head" => "kdeploy::out-of-bounds";
    not_coercible_interpolation: "not-coercible-interpolation" => "kdeploy::not-coercible";
    not_coercible_set: "not-coercible-set" => "kdeploy::not-coercible";
    not_coercible_function_json: "not-coercible-function-json" => "kdeploy::not-coercible";
    invalid_fromjson: "invalid-fromjson" => "kdeploy::invalid-value";
    invalid_regex: "invalid-regex" => "kdeploy::invalid-value";
    not_supported_fetchurl: "not-supported-fetchurl" => "kdeploy::not-supported";

    // Files.
    forbidden_read_etc_passwd: "forbidden-read-etc-passwd" => "kdeploy::forbidden-path" ["/etc/passwd"];
    forbidden_import_parent: "forbidden-import-parent" => "kdeploy::forbidden-path";
    forbidden_home_path: "forbidden-home-path" => "kdeploy::forbidden-path";
    forbidden_search_path: "forbidden-search-path" => "kdeploy::search-path";
    import_missing_file: "import-missing-file" => "kdeploy::io";
    imported_file_error: "imported-file-error" => "kdeploy::type" ["tests/errors/lib/service.nix:5:18"];
    imported_file_parse_error: "imported-file-parse-error" => "kdeploy::parse" ["tests/errors/lib/broken.nix:4:"];
    imported_missing_attribute: "imported-missing-attribute" => "kdeploy::missing-attribute" ["did you mean 'mkService'?"];

    // Context chains.
    deep_context_chain: "deep-context-chain" => "kdeploy::type" ["deep-context-chain.nix:4:11", "while calling 'f0'", "more"];
    deep_attribute_path: "deep-attribute-path" => "kdeploy::type" ["cluster.nodes.master.kubelet.podCidr", "toString"];
}

/// Unbounded recursion must end in a clean error (not a stack overflow or an
/// out-of-memory kill), with a bounded rendering.
#[test]
fn too_deep_recursion() {
    check("too-deep-recursion", "kdeploy::too-deep", &[]);
    let (_, text) = eval_error("too-deep-recursion");
    assert!(text.lines().count() < 80, "the rendering is not bounded:\n{text}");
}

/// The chain of contexts is bounded, however deep the calls are.
#[test]
fn context_chain_is_bounded() {
    let (_, text) = eval_error("deep-context-chain");
    let shown = text.matches("while calling").count();
    assert!(shown >= 1, "no context at all:\n{text}");
    assert!(
        shown <= kdeploy_lang::error::MAX_INNER + kdeploy_lang::error::MAX_OUTER,
        "{shown} contexts shown:\n{text}"
    );
}

/// Errors in what the command line gives (`--expr`, `--arg`, `-A`),
/// through the same library calls as `kdeploy eval`.
fn snapshot_cli(name: &str, code: &str, e: &kdeploy_lang::EvalError, s: &Session) {
    let text = normalise(&s.render_error(e, false));
    insta::with_settings!({
        snapshot_path => "../errors/snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
        description => name.to_string(),
    }, {
        insta::assert_snapshot!(name, text);
    });
    assert_eq!(e.kind.code(), code, "{name}: wrong error kind; the rendering is:\n{text}");
}

#[test]
fn cli_expr_parse_error() {
    let mut s = Session::new(vec![errors_dir()], Stdlib::Absent);
    let Err(e) = s.eval_expr("let a = 1; in a +", &errors_dir(), &[]) else { panic!("a syntax error was expected") };
    snapshot_cli("cli-expr-parse-error", "kdeploy::parse", &e, &s);
    assert!(s.render_error(&e, false).contains("«expr»:1:"), "{}", s.render_error(&e, false));
}

#[test]
fn cli_arg_parse_error() {
    let mut s = Session::new(vec![errors_dir()], Stdlib::Absent);
    let file = errors_dir().join("missing-argument-toplevel.nix");
    let args = [("clusterName".to_string(), kdeploy_lang::Arg::Expr("\"prod".to_string()))];
    let Err(e) = s.eval_file(&file, &args).and_then(|v| s.to_json(&v)) else {
        panic!("a syntax error in --arg was expected")
    };
    snapshot_cli("cli-arg-parse-error", "kdeploy::parse", &e, &s);
}

#[test]
fn cli_select_typo() {
    let mut s = Session::new(vec![errors_dir()], Stdlib::Absent);
    let file = errors_dir().join("lib/service.nix");
    let Ok(v) = s.eval_file(&file, &[]) else { panic!("lib/service.nix evaluates") };
    let Err(e) = s.select(v, "mkServce", &[]) else { panic!("no such attribute: an error was expected") };
    snapshot_cli("cli-select-typo", "kdeploy::missing-attribute", &e, &s);
    assert!(s.render_error(&e, false).contains("did you mean 'mkService'?"), "{}", s.render_error(&e, false));
}

/// Every rendered error names the place as `file:line:col`, relative to the
/// working directory (cargo runs tests in the package root).
#[test]
fn locations_are_relative_to_the_working_directory() {
    let (_, text) = eval_error("type-add-int-string");
    assert!(text.contains("tests/errors/type-add-int-string.nix:6:"), "{text}");
    assert!(!text.contains(&manifest_dir().display().to_string()), "{text}");
    let (_, text) = eval_error("imported-file-error");
    assert!(
        text.contains("tests/errors/lib/service.nix:"),
        "the error inside the imported file is not located there:\n{text}"
    );
}

fn kdeploy(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kdeploy"))
        .args(args)
        .current_dir(manifest_dir())
        .env_remove("KDEPLOY_STDLIB")
        .output()
        .expect("the kdeploy binary runs")
}

fn no_panic(out: &std::process::Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "kdeploy panicked:\n{stderr}");
    assert!(out.status.code().is_some(), "kdeploy was killed by a signal: {:?}", out.status);
}

#[test]
fn binary_evaluation_error_exits_1_with_location() {
    let out = kdeploy(&["eval", "--json", "tests/errors/missing-attribute-typo.nix"]);
    no_panic(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(out.stdout.is_empty(), "nothing is printed on stdout on error");
    assert!(stderr.contains("tests/errors/missing-attribute-typo.nix:6:11"), "no file:line:col in:\n{stderr}");
    assert!(stderr.contains("kdeploy::missing-attribute"), "no error code in:\n{stderr}");
    assert!(stderr.contains("did you mean 'replicas'?"), "no suggestion in:\n{stderr}");
}

#[test]
fn binary_parse_error_exits_1() {
    let out = kdeploy(&["eval", "tests/errors/parse-missing-semicolon.nix"]);
    no_panic(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(stderr.contains("tests/errors/parse-missing-semicolon.nix:"), "no location in:\n{stderr}");
    assert!(stderr.contains("kdeploy::parse"), "no error code in:\n{stderr}");
}

#[test]
fn binary_bad_flag_exits_2() {
    let out = kdeploy(&["eval", "--no-such-flag", "tests/errors/abort.nix"]);
    no_panic(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr:\n{stderr}");
    assert!(stderr.contains("--no-such-flag"), "the bad flag is not named in:\n{stderr}");
}

#[test]
fn binary_missing_file_exits_2() {
    let out = kdeploy(&["eval", "tests/errors/no-such-file.nix"]);
    no_panic(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr:\n{stderr}");
    assert!(stderr.contains("no-such-file.nix"), "the file is not named in:\n{stderr}");
}

#[test]
fn binary_success_exits_0() {
    let out = kdeploy(&["eval", "--json", "--expr", "{ a = 1 + 2; b = [ \"x\" ]; }"]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), r#"{"a":3,"b":["x"]}"#);
    assert!(out.stderr.is_empty(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn binary_file_that_is_a_function_gets_arguments() {
    let out =
        kdeploy(&["eval", "--json", "--argstr", "clusterName", "prod", "tests/errors/missing-argument-toplevel.nix"]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), r#"{"name":"prod","replicas":3}"#);
}

#[test]
fn binary_missing_toplevel_argument_exits_1_with_help() {
    let out = kdeploy(&["eval", "tests/errors/missing-argument-toplevel.nix"]);
    no_panic(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(stderr.contains("--arg clusterName"), "no hint to pass --arg in:\n{stderr}");
}

/// An error the stdlib raises about a definition shows the user's file,
/// line and snippet (not the stdlib's `throw`), and says what to change
/// there: an unknown role, an unknown option, a version without checksums,
/// an own file in a phase that does not exist.
#[test]
fn stdlib_errors_point_at_the_users_file() {
    for (name, place) in [
        ("fail-unknown-role", "fail-unknown-role.nix:8:33"),
        ("fail-unknown-option", "fail-unknown-option.nix:"),
        ("fail-kubernetes-unpinned", "fail-kubernetes-unpinned.nix:"),
        ("fail-custom-unknown-phase", "fail-custom-unknown-phase.nix:8:"),
    ] {
        let out = kdeploy(&["eval", &format!("tests/stdlib/{name}.nix")]);
        no_panic(&out);
        assert_eq!(out.status.code(), Some(1));
        let text = normalise(&String::from_utf8_lossy(&out.stderr));
        insta::with_settings!({
            snapshot_path => "../errors/snapshots",
            prepend_module_to_snapshot => false,
            omit_expression => true,
            description => format!("kdeploy eval tests/stdlib/{name}.nix"),
        }, {
            insta::assert_snapshot!(format!("stdlib-{name}"), text);
        });
        let header = text.lines().find(|l| l.contains("╭─[")).unwrap_or_else(|| panic!("no snippet:\n{text}"));
        assert!(
            header.contains(&format!("tests/stdlib/{place}")),
            "{name}: the snippet is not the user's file:\n{text}"
        );
        assert!(text.contains("this definition"), "{text}");
        assert!(
            text.contains(&"help: ".to_string()) && text.contains(&format!("in tests/stdlib/{name}.nix (line ")),
            "{text}"
        );
        assert!(text.contains("raised by <kdeploy>/"), "{text}");
    }
}
