//! What a shell, `man` and an editor get from kdeploy, through the binary:
//! bash completes every subcommand `kdeploy --help` lists and their flags
//! (checked by running the completion function in a real bash), the man
//! page names every subcommand, and `options --json` has NixOS's
//! options.json shape with defaults and examples as Nix expressions that
//! evaluate back to the declared values.

use crate::support;
use support::closures::kdeploy;

fn repo() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The subcommands `kdeploy --help` lists (without `help`).
fn subcommands() -> Vec<String> {
    let (code, out, _) = kdeploy(&["--help"], &repo());
    assert_eq!(code, 0);
    let listing = out.split("Commands:").nth(1).unwrap().split("Options:").next().unwrap();
    let names: Vec<String> = listing
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(String::from)
        .collect();
    assert!(names.len() > 10, "{names:?}");
    names
}

/// What bash's completion function offers for `words` (the last one being completed).
fn bash_complete(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let words: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let cword = words.len() - 1;
    let prog = format!(
        "source {}; COMP_WORDS=({}); COMP_CWORD={cword}; _kdeploy kdeploy \"${{COMP_WORDS[$COMP_CWORD]}}\" \"${{COMP_WORDS[$((COMP_CWORD-1))]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        words.join(" ")
    );
    let out = std::process::Command::new("bash").args(["-c", &prog]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect()
}

#[test]
fn bash_completes_every_subcommand_and_its_flags() {
    let (code, script, err) = kdeploy(&["completions", "bash"], &repo());
    assert_eq!(code, 0, "{err}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kdeploy.bash");
    std::fs::write(&file, script).unwrap();
    let offered = bash_complete(&file, &["kdeploy", ""]);
    for name in subcommands() {
        assert!(offered.contains(&name), "`kdeploy <TAB>` does not offer {name}: {offered:?}");
    }
    assert_eq!(bash_complete(&file, &["kdeploy", "swi"]), ["switch"]);
    assert!(bash_complete(&file, &["kdeploy", "fetch", "--down"]).contains(&"--download-timeout".to_string()));
    for shell in ["zsh", "fish"] {
        let (code, script, err) = kdeploy(&["completions", shell], &repo());
        assert_eq!(code, 0, "{err}");
        assert!(script.contains("switch") && script.contains("download-timeout"), "{shell}");
    }
    let (code, _, err) = kdeploy(&["completions", "tcsh"], &repo());
    assert_eq!(code, 2, "an unknown shell is a usage error: {err}");
}

#[test]
fn the_man_page_names_every_subcommand() {
    let (code, page, err) = kdeploy(&["man"], &repo());
    assert_eq!(code, 0, "{err}");
    assert!(page.starts_with(".ie") && page.contains(".TH kdeploy 1"), "{page}");
    for name in subcommands() {
        assert!(page.contains(&format!("kdeploy\\-{name}(1)")), "the man page lacks {name}");
    }
}

#[test]
fn options_json_has_the_nixos_shape_and_its_expressions_evaluate_to_the_defaults() {
    let (code, out, err) = kdeploy(&["options", "--json"], &repo());
    assert_eq!(code, 0, "{err}");
    let options: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&out).unwrap();
    let mut texts = Vec::new();
    for (path, o) in &options {
        let loc: Vec<&str> = o["loc"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
        assert_eq!(loc.join("."), *path);
        assert!(o["type"].is_string() && o["description"].is_string() && o["readOnly"] == false, "{path}: {o}");
        assert!(o["declarations"].is_array(), "{path}");
        assert_eq!(o["default"]["_type"], "literalExpression", "{path}");
        texts.push(o["default"]["text"].as_str().unwrap().to_string());
        if let Some(e) = o.get("example") {
            assert_eq!(e["_type"], "literalExpression", "{path}");
            texts.push(e["text"].as_str().unwrap().to_string());
        }
    }
    // the texts are Nix: evaluated, they give back the declared values
    let expr = format!("[ {} ]", texts.iter().map(|t| format!("({t})")).collect::<Vec<_>>().join(" "));
    let (code, out, err) = kdeploy(&["eval", "--json", "--expr", &expr], &repo());
    assert_eq!(code, 0, "{err}");
    let evaluated: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let (code, records, _) = kdeploy(&["eval", "--json", "--expr", "(import <kdeploy>).options"], &repo());
    assert_eq!(code, 0);
    let records: Vec<serde_json::Value> = serde_json::from_str(&records).unwrap();
    let mut declared = Vec::new();
    let mut by_path: Vec<&serde_json::Value> = records.iter().collect();
    by_path.sort_by_key(|r| r["path"].as_str().unwrap().to_string());
    for r in by_path {
        declared.push(r["default"].clone());
        if !r["example"].is_null() {
            declared.push(r["example"].clone());
        }
    }
    assert_eq!(evaluated, declared);
}
