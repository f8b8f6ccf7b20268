//! The exit codes are defined once (`kdeploy::cli::Exit`): the README's
//! "Exit codes" table lists exactly those codes, in order, each row opening
//! with the code's summary; `kdeploy --help` ends with them; and the binary
//! exits with them (a usage error, an evaluation error).

use std::process::Command;

use kdeploy::cli::Exit;

use crate::support::repo;

/// (code, meaning) of each row of the README's "Exit codes" table.
fn readme_rows() -> Vec<(u8, String)> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let table = readme.split("\n## Exit codes\n").nth(1).expect("README has an Exit codes section");
    table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            Some((cells.first()?.parse().ok()?, cells.get(1)?.to_string()))
        })
        .collect()
}

#[test]
fn the_readme_lists_every_exit_code_with_its_summary() {
    let rows = readme_rows();
    let codes: Vec<u8> = rows.iter().map(|(c, _)| *c).collect();
    let defined: Vec<u8> = Exit::ALL.iter().map(|e| e.code()).collect();
    assert_eq!(codes, defined, "README's exit codes and kdeploy::cli::Exit differ");
    for (e, (_, meaning)) in Exit::ALL.iter().zip(&rows) {
        assert!(
            meaning.starts_with(e.summary()),
            "README's row {} does not open with {:?}: {meaning}",
            e.code(),
            e.summary()
        );
    }
}

#[test]
fn help_ends_with_the_exit_codes_and_the_binary_exits_with_them() {
    let kdeploy = || Command::new(env!("CARGO_BIN_EXE_kdeploy"));
    let help = kdeploy().arg("--help").output().unwrap();
    assert!(help.status.success());
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.trim_end().ends_with(&Exit::help()), "{help}");

    let usage = kdeploy().args(["eval", "--no-such-flag"]).output().unwrap();
    assert_eq!(usage.status.code(), Some(Exit::Usage.code().into()));
    let error = kdeploy().args(["eval", "--expr", "throw \"no\""]).output().unwrap();
    assert_eq!(error.status.code(), Some(Exit::Error.code().into()), "{}", String::from_utf8_lossy(&error.stderr));
}
