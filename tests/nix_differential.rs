//! Differential test against real Nix: every `lang/tests/corpus/eval-okay-*.nix`
//! is evaluated by `nix-instantiate --eval --strict --json` (Nix 2.8, from
//! Debian's nix-bin) and by kdeploy, and the JSON must be identical (for
//! `eval-okay-print-*`, the value printed without `--json`). The
//! `.exp` files were produced by Nix too; this test catches a corpus that
//! drifted from Nix as well as an evaluator that drifted from the corpus.
//! Without `nix-instantiate` the test fails under CI and is skipped locally.

use std::path::{Path, PathBuf};
use std::process::Command;

use kdeploy_lang::io::Stdlib;
use kdeploy_lang::Session;
use libtest_mimic::{Arguments, Failed, Trial};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("lang/tests/corpus")
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `eval-okay-print-*` cases are about the printed form, without `--json`.
fn is_print_case(file: &Path) -> bool {
    file.file_name().is_some_and(|n| n.to_string_lossy().starts_with("eval-okay-print-"))
}

fn nix_output(file: &Path) -> Result<String, Failed> {
    let json: &[&str] = if is_print_case(file) { &[] } else { &["--json"] };
    let out = Command::new("nix-instantiate")
        // Evaluation needs no store database; opening it read-write makes
        // parallel trials fail with "database is busy".
        .args(["--eval", "--strict", "--readonly-mode"])
        .args(json)
        .arg("-I")
        .arg(format!("kdeploy={}", repo().join("stdlib").display()))
        .arg(file)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", std::env::temp_dir().join("kdeploy-nix-home"))
        .output()?;
    if !out.status.success() {
        return Err(format!("nix-instantiate failed: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
}

fn compare(file: &Path) -> Result<(), Failed> {
    let expected = nix_output(file)?;
    let root = file.parent().unwrap_or(Path::new(".")).to_path_buf();
    let mut s = Session::new(vec![root], Stdlib::Dir(repo().join("stdlib")));
    let value = s.eval_file(file, &[]).map_err(|e| s.render_error(&e, false))?;
    // kdeploy breaks a long printed value into indented lines where Nix
    // 2.8 has one space: joined, the texts must be equal.
    let got = if is_print_case(file) {
        s.print(&value).map(|p| p.lines().map(str::trim_start).collect::<Vec<_>>().join(" "))
    } else {
        s.to_json(&value)
    };
    let got = got.map_err(|e| s.render_error(&e, false))?;
    if got != expected {
        return Err(format!("nix     {expected}\nkdeploy {got}").into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    // One evaluation before the parallel trials, not read-only: on a fresh machine it
    // creates the store database, which read-only trials racing to create it could not.
    let have_nix = Command::new("nix-instantiate")
        .args(["--eval", "--expr", "null"])
        .env("HOME", std::env::temp_dir().join("kdeploy-nix-home"))
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_nix {
        if std::env::var_os("CI").is_some() {
            eprintln!("nix-instantiate is required for the differential test under CI");
            std::process::exit(1);
        }
        eprintln!("nix-instantiate not found: skipping the differential test (install nix-bin)");
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("lang/tests/corpus exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("eval-okay-"))
                && p.extension().is_some_and(|x| x == "nix")
        })
        .collect();
    files.sort();
    // The example clusters: the stdlib must stay valid Nix, with equal JSON.
    for c in ["lab", "seed", "ha", "big"] {
        files.push(repo().join("clusters").join(format!("{c}.nix")));
    }
    let trials = files
        .into_iter()
        .map(|p| {
            let stem = p.file_stem().unwrap_or_default().to_string_lossy().into_owned();
            let name = if p.starts_with(repo().join("clusters")) { format!("cluster-{stem}") } else { stem };
            Trial::test(name, move || compare(&p)).with_ignored_flag(!have_nix)
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
