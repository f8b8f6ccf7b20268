//! Clusters large enough to be read by several evaluators at once
//! (`cli/decode.rs`): the closures equal the one-evaluator ones, trace
//! messages are printed once, and an error in any node is reported as with
//! one evaluator.

use crate::support;
use support::closures::kdeploy;

const NODES: usize = 240;

/// A cluster of `NODES` workers (three control planes), node by node;
/// `node` gives the text of node `i`'s extra attributes.
fn cluster(dir: &std::path::Path, node: impl Fn(usize) -> String) -> std::path::PathBuf {
    let mut text = String::from(
        "let kd = import <kdeploy>; in\nkd.cluster {\n  name = \"big\";\n  settings.network.nodeCIDR = \"10.64.0.0/16\";\n  nodes = {\n",
    );
    for i in 1..=NODES {
        let roles = if i <= 3 { "[ \"control-plane\" \"etcd\" ]" } else { "[ \"worker\" ]" };
        text += &format!(
            "    n{i} = {{ address = \"10.64.{}.{}\"; roles = {roles}; {} }};\n",
            i / 250,
            i % 250 + 1,
            node(i)
        );
    }
    text += "  };\n}\n";
    let f = dir.join("big.nix");
    std::fs::write(&f, text).unwrap();
    f
}

fn eval(file: &std::path::Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["eval", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    kdeploy(&args, file.parent().unwrap())
}

/// `eval` with `KDEPLOY_EVALUATORS` set.
fn eval_with(evaluators: &str, file: &std::path::Path, extra: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kdeploy"))
        .arg("eval")
        .arg(file)
        .args(extra)
        .env("KDEPLOY_EVALUATORS", evaluators)
        .env_remove("KDEPLOY_STDLIB")
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[test]
fn many_evaluators_give_the_closures_one_gives() {
    let dir = tempfile::tempdir().unwrap();
    let f = cluster(dir.path(), |i| {
        if i % 7 == 0 {
            format!("settings.kubelet.maxPods = {};", 100 + i)
        } else {
            String::new()
        }
    });
    let (code, many, err) = eval_with("3", &f, &["--closures"]);
    assert_eq!(code, 0, "{err}");
    let (code, one, err) = eval_with("1", &f, &["--closures"]);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&many).unwrap();
    assert_eq!(json["nodes"].as_object().unwrap().len(), NODES);
    assert!(many == one, "3 evaluators and 1 give different closures");
    let (code, plain, _) = eval(&f, &["--json"]);
    assert_eq!(code, 0);
    let plain: serde_json::Value = serde_json::from_str(&plain).unwrap();
    assert_eq!(plain["nodes"]["n7"]["settings"]["kubelet"]["maxPods"], 107);
}

#[test]
fn each_trace_is_printed_as_often_as_one_evaluator_prints_it() {
    let dir = tempfile::tempdir().unwrap();
    // one trace in the shared part (every evaluator makes it), one per node
    // in a file only that node's closure reads
    let f = cluster(dir.path(), |i| {
        let shared = if i == 1 { "builtins.trace \"shared\" " } else { "" };
        format!(
            "settings.custom.files.\"/etc/n\" = {{ phase = \"preinstall\"; text = {shared}(builtins.trace \"node {i}\" \"{i}\"); }};"
        )
    });
    let (code, _, err) = eval_with("3", &f, &[]);
    assert_eq!(code, 0, "{err}");
    for i in [1, 5, 120, 121, 239, 240] {
        let line = format!("trace: node {i}\n");
        assert_eq!(err.matches(&line).count(), 1, "{line:?} in\n{err}");
    }
    assert_eq!(err.matches("trace: shared\n").count(), 1, "{err}");
}

#[test]
fn an_error_in_a_helpers_share_is_reported_as_with_one_evaluator() {
    let dir = tempfile::tempdir().unwrap();
    let f = cluster(dir.path(), |i| {
        if i == 230 {
            // well typed, so only building the node's phase finds it: in a helper's share
            "settings.custom.files.\"/etc/x\" = { phase = \"preinstall\"; };".into()
        } else {
            String::new()
        }
    });
    let (code, _, err) = eval_with("3", &f, &[]);
    assert_eq!(code, 1, "{err}");
    let (_, _, one) = eval_with("1", &f, &[]);
    assert_eq!(err, one);
    assert!(err.contains("custom.files.\"/etc/x\" needs exactly one of `text`"), "{err}");
    assert!(err.contains("node 'n230'"), "{err}");
}
