//! The language conformance corpus in `tests/lang/`: every
//! `eval-okay-*.nix` must evaluate to exactly the JSON in its `.exp` (which
//! real Nix 2.8 produced), and every `eval-fail-*.nix` / `parse-fail-*.nix`
//! must fail with a rendered error, never a panic. One test per file.

use std::path::{Path, PathBuf};

use kdeploy_lang::io::Stdlib;
use kdeploy_lang::Session;
use libtest_mimic::{Arguments, Failed, Trial};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lang")
}

fn session() -> Session {
    Session::new(vec![corpus_dir()], Stdlib::Absent)
}

fn okay(file: &Path) -> Result<(), Failed> {
    let expected = std::fs::read_to_string(file.with_extension("exp"))?;
    let mut s = session();
    let value = s.eval_file(file, &[]).map_err(|e| s.render_error(&e, false))?;
    let got = s.to_json(&value).map_err(|e| s.render_error(&e, false))?;
    if got.trim_end() != expected.trim_end() {
        return Err(format!("expected {}\n     got {}", expected.trim_end(), got).into());
    }
    Ok(())
}

fn fail(file: &Path) -> Result<(), Failed> {
    let mut s = session();
    let outcome = s.eval_file(file, &[]).and_then(|v| s.to_json(&v));
    match outcome {
        Ok(json) => Err(format!("expected an error, got {json}").into()),
        Err(e) => {
            let text = s.render_error(&e, false);
            if text.trim().is_empty() {
                return Err("the error rendered as nothing".into());
            }
            Ok(())
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    // `differs/` holds the deliberate differences from Nix, same convention.
    let mut entries: Vec<PathBuf> = [corpus_dir(), corpus_dir().join("differs")]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).expect("tests/lang exists"))
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
        } else if stem.starts_with("eval-fail-") || stem.starts_with("parse-fail-") {
            trials.push(Trial::test(name, move || fail(&p)));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
