//! The language conformance corpus in `lang/tests/corpus/`: every
//! `eval-okay-*.nix` must evaluate to exactly the JSON in its `.exp` (which
//! real Nix 2.8 produced; for `eval-okay-print-*`, the value as printed
//! without `--json`), and every `eval-fail-*.nix` / `parse-fail-*.nix`
//! must fail with exactly the error in its `.err.exp` (code, then message),
//! at the right stage, and with an error that corresponds to the case's
//! `# expect:` line (Nix's own message) through [`NIX_TO_KDEPLOY`]. One test
//! per file. `KDEPLOY_BLESS=1` writes the `.err.exp` files that are missing
//! or differ, and still fails, so that a blessed run is always reviewed.

use std::path::{Path, PathBuf};

use kdeploy_lang::io::Stdlib;
use kdeploy_lang::{ErrorKind, EvalError, Session};
use libtest_mimic::{Arguments, Failed, Trial};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

fn session() -> Session {
    Session::new(vec![corpus_dir()], Stdlib::Absent)
}

fn okay(file: &Path) -> Result<(), Failed> {
    let expected = std::fs::read_to_string(file.with_extension("exp"))?;
    let mut s = session();
    let value = s.eval_file(file, &[]).map_err(|e| s.render_error(&e, false))?;
    let printed = file.file_name().is_some_and(|n| n.to_string_lossy().starts_with("eval-okay-print-"));
    let got = if printed { s.print(&value).map(|p| one_line(&p)) } else { s.to_json(&value) };
    let got = got.map_err(|e| s.render_error(&e, false))?;
    if got.trim_end() != expected.trim_end() {
        return Err(format!("expected {}\n     got {}", expected.trim_end(), got).into());
    }
    Ok(())
}

/// kdeploy's printed value on one line, as Nix 2.8 prints every value:
/// kdeploy breaks a long one into a line per item, indented, which is the
/// same text with a line break and indentation where Nix has one space.
fn one_line(printed: &str) -> String {
    printed.lines().map(str::trim_start).collect::<Vec<_>>().join(" ")
}

/// How Nix 2.8's `# expect:` phrases correspond to kdeploy's error codes;
/// the first pattern that matches the whole phrase applies, and kdeploy's
/// code must be one of the row's. A `*` matches some text that kdeploy's
/// message must contain too, minus a leading article (Nix's "value is an
/// integer while a set was expected" needs "integer" and "set"); a `…`
/// matches any text. A phrase no row covers fails its case: a new kind of
/// case is classified here first.
const NIX_TO_KDEPLOY: &[(&str, &[&str])] = &[
    ("syntax error while parsing", &["kdeploy::invalid-value"]), // fromJSON
    ("while parsing a TOML string", &["kdeploy::invalid-value"]),
    ("invalid string", &["kdeploy::invalid-value"]), // fromJSON
    ("syntax error…", &["kdeploy::parse"]),
    ("dynamic attributes not allowed in let", &["kdeploy::parse"]),
    ("path has a trailing slash", &["kdeploy::parse"]),
    ("duplicate formal function argument *", &["kdeploy::duplicate-attribute"]),
    ("invalid integer '*'", &["kdeploy::integer-overflow"]),
    ("undefined variable *", &["kdeploy::undefined-variable"]),
    // kdeploy names the attribute that clashes ('a' in `{ a = 1; a.b = 2; }`),
    // Nix the path being defined ('a.b').
    ("attribute … already defined", &["kdeploy::duplicate-attribute"]),
    ("attribute * missing", &["kdeploy::missing-attribute"]),
    ("attribute * required", &["kdeploy::missing-attribute"]),
    ("called without required argument *", &["kdeploy::missing-argument"]),
    ("called with unexpected argument *", &["kdeploy::unexpected-argument"]),
    ("value is * while * was expected", &["kdeploy::type"]),
    ("attempt to call something which is not a function but *", &["kdeploy::type"]),
    ("cannot add * to *", &["kdeploy::type"]),
    ("cannot compare * with *", &["kdeploy::type"]),
    ("cannot compare", &["kdeploy::type"]),
    ("'functionArgs' requires a function", &["kdeploy::type"]),
    // `+` on two sets or lists, or a string and a number, is a type error in
    // kdeploy, where Nix tries string concatenation and fails to coerce.
    ("cannot coerce * to a string", &["kdeploy::not-coercible", "kdeploy::type"]),
    ("cannot convert a function to JSON", &["kdeploy::not-coercible"]),
    ("infinite recursion encountered", &["kdeploy::infinite-recursion"]),
    ("stack overflow", &["kdeploy::too-deep"]),
    // A cyclic value walked by ==, <, toString or toJSON: kdeploy finds
    // the cycle; a value nested without end is too deep.
    ("stack overflow (possible infinite recursion)", &["kdeploy::infinite-recursion", "kdeploy::too-deep"]),
    // Nix's parser stack; kdeploy's nesting bound (lang/src/parse).
    ("memory exhausted", &["kdeploy::too-deep"]),
    // A list or string past kdeploy's size limits (lang/src/limits.rs).
    ("out of memory", &["kdeploy::too-large"]),
    // Nix prints the condition; kdeploy points at it.
    ("assertion … failed", &["kdeploy::assertion-failed"]),
    ("evaluation aborted with the following error message: *", &["kdeploy::abort"]),
    ("division by zero", &["kdeploy::division-by-zero"]),
    // `builtins.head [ ]`: kdeploy says the list is empty.
    ("list index 0 is out of bounds", &["kdeploy::out-of-bounds"]),
    ("list index * is out of bounds", &["kdeploy::out-of-bounds"]),
    ("'tail' called on an empty list", &["kdeploy::out-of-bounds"]),
    ("negative start position in 'substring'", &["kdeploy::invalid-value"]),
    ("cannot create list of size *", &["kdeploy::invalid-value"]),
    ("'from' and 'to' arguments to 'replaceStrings' have different lengths", &["kdeploy::invalid-value"]),
    ("invalid regular expression", &["kdeploy::invalid-value"]),
    ("invalid regular expression *", &["kdeploy::invalid-value"]),
    ("unknown hash algorithm *", &["kdeploy::invalid-value"]),
    // Only <kdeploy> is on kdeploy's search path.
    ("file '*' was not found in the Nix search path", &["kdeploy::search-path"]),
    ("string '*' doesn't represent an absolute path", &["kdeploy::invalid-value"]),
    ("No such file or directory", &["kdeploy::io"]),
    ("Is a directory", &["kdeploy::io"]),
    ("Not a directory", &["kdeploy::io"]),
];

/// `# expect:` phrases that are the text a case throws or aborts with
/// itself: kdeploy reports that text verbatim, with this code.
const THROWN: &[(&str, &str)] = &[
    ("abort is not caught", "kdeploy::abort"),
    ("builtins.abort message", "kdeploy::abort"),
    ("accumulator forced", "kdeploy::throw"),
    ("b is forced by --strict", "kdeploy::throw"),
    ("compared", "kdeploy::throw"),
    ("custom error message", "kdeploy::throw"),
    ("deep in a list", "kdeploy::throw"),
    ("deep inside", "kdeploy::throw"),
    ("forced by deepSeq", "kdeploy::throw"),
    ("forced by seq", "kdeploy::throw"),
    ("from builtins.throw", "kdeploy::throw"),
    ("in interpolation", "kdeploy::throw"),
    ("initial accumulator of an empty fold", "kdeploy::throw"),
    ("inner", "kdeploy::throw"),
    ("lib/throws.nix was forced", "kdeploy::throw"),
    ("predicate forced", "kdeploy::throw"),
    ("returned initial accumulator", "kdeploy::throw"),
];

/// The pieces of `phrase` that `pattern`'s `*`s stand for, if the whole
/// phrase matches. A wildcard takes the shortest text that lets the next
/// literal follow it.
fn captures<'a>(pattern: &str, phrase: &'a str) -> Option<Vec<&'a str>> {
    let literals: Vec<&str> = pattern.split(['*', '…']).collect();
    let wildcards: Vec<char> = pattern.chars().filter(|c| matches!(c, '*' | '…')).collect();
    let mut rest = phrase.strip_prefix(literals[0])?;
    let mut caught = Vec::new();
    for (i, (&wild, &lit)) in wildcards.iter().zip(&literals[1..]).enumerate() {
        let at = if i + 1 == wildcards.len() {
            rest.strip_suffix(lit)?.len()
        } else {
            let skip = usize::from(wild == '*');
            skip + rest.get(skip..)?.find(lit)?
        };
        if wild == '*' {
            if at == 0 {
                return None;
            }
            caught.push(&rest[..at]);
        }
        rest = &rest[at + lit.len()..];
    }
    rest.is_empty().then_some(caught)
}

/// The error kdeploy must give for a case whose Nix message is `phrase`:
/// the codes allowed and the texts its message must contain.
fn corresponding(phrase: &str) -> Option<(&'static [&'static str], Vec<String>)> {
    if let Some((text, code)) = THROWN.iter().find(|(t, _)| *t == phrase) {
        return Some((std::slice::from_ref(code), vec![text.to_string()]));
    }
    NIX_TO_KDEPLOY.iter().find_map(|(pattern, codes)| {
        let caught = captures(pattern, phrase)?;
        let needles = caught
            .iter()
            .map(|c| c.strip_prefix("an ").or_else(|| c.strip_prefix("a ")).unwrap_or(c).to_string())
            .collect();
        Some((*codes, needles))
    })
}

/// Where a case stopped: compiling its own file (parsing, then lowering,
/// which resolves variables and merges attributes), or evaluating it
/// (including what it imports, and the strict conversion to JSON).
#[derive(PartialEq)]
enum Stage {
    Compile,
    Eval,
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stage::Compile => "while compiling the file",
            Stage::Eval => "in evaluation",
        })
    }
}

/// What a `parse-fail` case may stop with: kdeploy splits the work of
/// Nix's parser between rnix and lowering, which reports a formal named
/// twice as a duplicate attribute and an integer literal too large for 64
/// bits as an overflow; nesting past the parser's bound is too deep.
/// Anything else (an undefined variable, say) means kdeploy accepted
/// syntax Nix rejects.
const PARSE_KINDS: &[ErrorKind] =
    &[ErrorKind::Parse, ErrorKind::DuplicateAttribute, ErrorKind::Overflow, ErrorKind::TooDeep];

/// What an `eval-fail` case may stop with before evaluation: lowering
/// resolves variables, merges attribute sets and resolves `<…>` paths
/// (only `<kdeploy>` exists), where Nix finds these mistakes later or
/// only when evaluated.
const LOWERING_KINDS: &[ErrorKind] =
    &[ErrorKind::UndefinedVariable, ErrorKind::DuplicateAttribute, ErrorKind::Forbidden];

/// The stage a failure case stops at, its error, and the error rendered.
fn failure(file: &Path) -> Result<(Stage, Box<EvalError>, String), Failed> {
    let text = std::fs::read_to_string(file)?;
    let mut s = session();
    let shown_name = file.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(file).display().to_string();
    if let Err(e) = s.ev.compile(&text, &file.to_string_lossy(), shown_name) {
        let shown = s.render_error(&e, false);
        return Ok((Stage::Compile, e, shown));
    }
    // A fresh session, so the evaluation is exactly what `kdeploy eval` does.
    let mut s = session();
    match s.eval_file(file, &[]).and_then(|v| s.to_json(&v)) {
        Ok(json) => Err(format!("expected an error, got {json}").into()),
        Err(e) => {
            let shown = s.render_error(&e, false);
            Ok((Stage::Eval, e, shown))
        }
    }
}

/// The `.err.exp` form of an error: its code on the first line, its message
/// (as printed atop the rendered error) on the next, with the machine's
/// checkout path removed.
fn err_exp(e: &EvalError) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/");
    format!("{}\n{}\n", e.kind.code(), e.message.replace(root, ""))
}

fn bless() -> bool {
    std::env::var_os("KDEPLOY_BLESS").is_some_and(|v| v == "1")
}

fn fail(file: &Path, differs: bool) -> Result<(), Failed> {
    let (stage, e, shown) = failure(file)?;
    let got = err_exp(&e);
    let message = got.split_once('\n').map_or("", |(_, m)| m.trim_end());
    let first = std::fs::read_to_string(file)?.lines().next().unwrap_or("").to_string();
    let mut problems = Vec::new();
    problems.extend(wrong_stage(file, &stage, e.kind));
    if differs {
        problems.extend(unnamed_code(&first, e.kind.code()));
    } else {
        problems.extend(not_corresponding(&first, e.kind.code(), message));
    }
    problems.extend(expectation(file, &got)?);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\n{shown}", problems.join("\n")).into())
    }
}

fn wrong_stage(file: &Path, stage: &Stage, kind: ErrorKind) -> Option<String> {
    let code = kind.code();
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    if name.starts_with("parse-fail-") {
        (*stage != Stage::Compile || !PARSE_KINDS.contains(&kind))
            .then(|| format!("a parse-fail case must fail to parse, not with {code} {stage}"))
    } else {
        (*stage == Stage::Compile && !LOWERING_KINDS.contains(&kind))
            .then(|| format!("an eval-fail case must fail in evaluation, not with {code} before it"))
    }
}

/// A deliberate difference names the code it is about on its first line.
fn unnamed_code(first: &str, code: &str) -> Option<String> {
    let named = first
        .match_indices(code)
        .any(|(i, _)| !first[i + code.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-'));
    (!named).then(|| format!("its first line must name the code it fails with ({code}): {first}"))
}

/// Whether kdeploy's error is the one Nix's `# expect:` phrase calls for.
fn not_corresponding(first: &str, code: &str, message: &str) -> Vec<String> {
    let Some(phrase) = first.strip_prefix("# expect: ") else {
        return vec!["its first line must be '# expect: <Nix's message>'".into()];
    };
    let Some((want, needles)) = corresponding(phrase) else {
        return vec![format!("no row of NIX_TO_KDEPLOY or THROWN covers '{phrase}': classify it")];
    };
    let mut problems = Vec::new();
    if !want.contains(&code) {
        problems.push(format!("Nix says '{phrase}', which is {}, but kdeploy gives {code}", want.join(" or ")));
    }
    for n in needles.iter().filter(|n| !message.contains(n.as_str())) {
        problems.push(format!("Nix says '{phrase}', but kdeploy's message lacks '{n}': {message}"));
    }
    problems
}

/// Compares with the `.err.exp` file; under `KDEPLOY_BLESS=1`, rewrites it
/// and still reports it.
fn expectation(file: &Path, got: &str) -> Result<Option<String>, Failed> {
    let exp = PathBuf::from(format!("{}.err.exp", file.with_extension("").display()));
    let found = std::fs::read_to_string(&exp);
    if found.as_deref().is_ok_and(|want| want == got) {
        return Ok(None);
    }
    if bless() {
        std::fs::write(&exp, got)?;
        return Ok(Some(format!("wrote {}: review the diff and re-run without KDEPLOY_BLESS", exp.display())));
    }
    let want = found.as_deref().unwrap_or("(missing)\n");
    let indent = |t: &str| t.trim_end().replace('\n', "\n          ");
    Ok(Some(format!(
        "error differs from {} (KDEPLOY_BLESS=1 rewrites it)\nexpected: {}\n     got: {}",
        exp.display(),
        indent(want),
        indent(got),
    )))
}

fn is_failure_case(stem: &str) -> bool {
    stem.starts_with("eval-fail-") || stem.starts_with("parse-fail-")
}

/// Every `.err.exp` belongs to a failure case (a renamed or deleted case
/// must take its expectation along).
fn no_orphans(dirs: &[PathBuf]) -> Result<(), Failed> {
    let mut orphans = Vec::new();
    for d in dirs {
        for entry in std::fs::read_dir(d)? {
            let p = entry?.path();
            let name = p.file_name().unwrap_or_default().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix(".err.exp") else { continue };
            if !is_failure_case(stem) || !d.join(format!("{stem}.nix")).exists() {
                orphans.push(p.display().to_string());
            }
        }
    }
    if orphans.is_empty() {
        Ok(())
    } else {
        Err(format!("no failure case for: {}", orphans.join(", ")).into())
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    // `differs/` holds the deliberate differences from Nix, same convention.
    let dirs = [corpus_dir(), corpus_dir().join("differs")];
    let mut entries: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| std::fs::read_dir(d).expect("lang/tests/corpus exists"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "nix"))
        .collect();
    entries.sort();
    for path in entries {
        let stem = path.file_stem().unwrap_or_default().to_string_lossy().into_owned();
        let differs = path.parent().is_some_and(|d| d.ends_with("differs"));
        let name = if differs { format!("differs/{stem}") } else { stem.clone() };
        let p = path.clone();
        if stem.starts_with("eval-okay-") {
            trials.push(Trial::test(name, move || okay(&p)));
        } else if is_failure_case(&stem) {
            trials.push(Trial::test(name, move || fail(&p, differs)));
        }
    }
    trials.push(Trial::test("err-exp-files-have-cases", move || no_orphans(&dirs)));
    libtest_mimic::run(&args, trials).exit();
}
