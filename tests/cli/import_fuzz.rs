//! A property test ("fuzzing") of `kdeploy import kubespray` over generated
//! hostile inventories: variable names, file names (under group_vars/all/
//! and host_vars/cp1/) and values made of newlines, carriage returns,
//! quotes, `${`, `''`, backslashes, `#`, `//`, control bytes, line
//! separators, bidi marks and other unicode. For every one, the import
//! succeeds and its file
//!
//! - holds no control or hidden character but its newlines;
//! - parses with the project's parser and is data only (`import::data_only`);
//! - evaluates (`kdeploy eval --json`) to the inventory's values exactly: the
//!   two free-form options given random values (`kubelet_config_extra_args`,
//!   random keys and JSON values, at the cluster and for one host;
//!   `containerd_extra_args`, a random string) read back as the YAML holds
//!   them, and every other setting of the cluster and its nodes is what the
//!   same inventory without any of the random variables gives — a random
//!   name or value changes nothing else;
//! - lists every random variable it did not import (nothing dropped
//!   silently), and nothing is traced while it is made.
//!
//! `KDEPLOY_FUZZ_CASES` sets the number of cases (default 16, a few seconds;
//! CI can raise it), as for the language's fuzz tests. A failure prints the
//! smallest inventory proptest found.

use crate::support;
use std::path::Path;

use kdeploy::import::vars::yaml_to_json;
use kdeploy::nix_text::{is_hidden, shown};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Map, Value};
use support::import::*;

fn cases() -> u32 {
    std::env::var("KDEPLOY_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(16)
}

/// What hostile text is made of.
const PIECES: &[&str] = &[
    "a",
    "Z",
    "_",
    "-",
    ".",
    " ",
    "1",
    "\n",
    "\r",
    "\r\n",
    "\t",
    "\"",
    "'",
    "''",
    "${",
    "$",
    "{",
    "}",
    "{{",
    "\\",
    "#",
    "//",
    "/*",
    ";",
    "=",
    ":",
    "[",
    "]",
    "\0",
    "\u{1b}[31m",
    "\u{7f}",
    "\u{85}",
    "\u{2028}",
    "\u{202e}",
    "\u{200b}",
    "\u{feff}",
    "é",
    "日本",
    "🦀",
    "kd",
    "or",
    "in",
    "let",
    "rec",
    "builtins.trace \"INJECTED\" ",
    " custom.hooks.x = { run = \"x\"; }; ",
    "\n// (kd.cluster { }) #",
];

fn hostile() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..8).prop_map(|p| p.concat())
}

/// A file name made of hostile text: no `/` or NUL (no file system has
/// them), and a prefix so it is neither hidden nor `.`/`..`.
fn file_name(prefix: &'static str) -> impl Strategy<Value = String> {
    hostile().prop_map(move |t| format!("{prefix}{}", t.replace(['/', '\0'], "_")))
}

/// JSON values with hostile strings and keys, numbers of every size.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        hostile().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1000i32..1000).prop_map(|q| Value::from(f64::from(q) / 4.0)),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(hostile(), inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Variables with hostile names; none names a kdeploy option.
fn junk() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map(hostile().prop_map(|t| format!("j{t}")), value(), 0..4)
        .prop_map(|m| m.into_iter().collect())
}

fn extra_config() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map(hostile(), value(), 0..4).prop_map(|m| m.into_iter().collect())
}

#[derive(Debug, Clone)]
struct Case {
    /// group_vars/all/<all_file>: the two options and junk
    all_file: String,
    cluster_extra: Map<String, Value>,
    containerd: String,
    all_junk: Map<String, Value>,
    /// group_vars/all/<more_file>: junk only
    more_file: String,
    more_junk: Map<String, Value>,
    /// host_vars/cp1/<host_file>: cp1's own kubelet_config_extra_args, and junk
    host_file: String,
    host_extra: Map<String, Value>,
    host_junk: Map<String, Value>,
    /// cp1's inline variables in hosts.yaml
    inline_junk: Map<String, Value>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        (file_name("a"), extra_config(), hostile(), junk()),
        (file_name("m"), junk()),
        (file_name("h"), extra_config(), junk()),
        junk(),
    )
        .prop_map(|((all_file, cluster_extra, containerd, all_junk), (more_file, more_junk), h, inline_junk)| {
            Case {
                all_file,
                cluster_extra,
                containerd,
                all_junk,
                more_file,
                more_junk,
                host_file: h.0,
                host_extra: h.1,
                host_junk: h.2,
                inline_junk,
            }
        })
}

fn yaml(v: &Value) -> String {
    serde_yaml_ng::to_string(v).unwrap()
}

/// Writes the inventory of `c` (no random variable at all: `None`) into `dir`.
fn write_inventory(dir: &Path, c: Option<&Case>) {
    let inline = c.map_or_else(Map::new, |c| c.inline_junk.clone());
    let mut cp1 = Map::from_iter([("ip".to_string(), json!("10.0.0.1"))]);
    cp1.extend(inline);
    let hosts = json!({"all": {
        "hosts": {"cp1": cp1, "w1": {"ip": "10.0.0.2"}},
        "children": {
            "kube_control_plane": {"hosts": {"cp1": null}},
            "etcd": {"hosts": {"cp1": null}},
            "kube_node": {"hosts": {"w1": null}}
        }
    }});
    std::fs::create_dir_all(dir.join("group_vars/all")).unwrap();
    std::fs::create_dir_all(dir.join("host_vars/cp1")).unwrap();
    std::fs::write(dir.join("hosts.yaml"), yaml(&hosts)).unwrap();
    let Some(c) = c else { return };
    let mut all = c.all_junk.clone();
    all.insert("kubelet_config_extra_args".into(), Value::Object(c.cluster_extra.clone()));
    all.insert("containerd_extra_args".into(), Value::from(c.containerd.as_str()));
    std::fs::write(dir.join("group_vars/all").join(&c.all_file), yaml(&Value::Object(all))).unwrap();
    std::fs::write(dir.join("group_vars/all").join(&c.more_file), yaml(&Value::Object(c.more_junk.clone()))).unwrap();
    let mut host = c.host_junk.clone();
    host.insert("kubelet_config_extra_args".into(), Value::Object(c.host_extra.clone()));
    std::fs::write(dir.join("host_vars/cp1").join(&c.host_file), yaml(&Value::Object(host))).unwrap();
}

/// A value the import lists instead of setting it: a Jinja template, or
/// a NUL character (in a value or a name), which Nix strings cannot hold.
fn not_importable(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains("{{") || s.contains("{%") || s.contains('\0'),
        Value::Array(a) => a.iter().any(not_importable),
        Value::Object(m) => m.iter().any(|(k, v)| k.contains('\0') || not_importable(v)),
        _ => false,
    }
}

/// What the inventory's YAML holds for `var` in `file`, as the import reads it.
fn read_back(file: &Path, var: &str) -> Value {
    yaml_to_json(&std::fs::read_to_string(file).unwrap()).unwrap()[var].clone()
}

/// `v` with its floats that are whole numbers as integers: `eval --json`
/// prints the float 2.0 as 2, as Nix does.
fn whole_floats_as_ints(v: &Value) -> Value {
    match v {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or_default();
            if f.fract() == 0.0 && f.abs() < 9e15 {
                Value::from(f as i64)
            } else {
                v.clone()
            }
        }
        Value::Array(a) => Value::Array(a.iter().map(whole_floats_as_ints).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), whole_floats_as_ints(v))).collect()),
        _ => v.clone(),
    }
}

/// The options the random values go to, at the cluster and for each node.
const FREE: &[(&str, &str)] = &[("kubelet", "extraConfig"), ("containerd", "extraConfig")];

/// The settings of the cluster and of each node (address, roles,
/// settings), with the [`FREE`] options taken out and returned.
fn split(c: &Value) -> (Value, Vec<Value>) {
    let mut rest = json!({"settings": c["settings"], "nodes": {}});
    for (n, node) in c["nodes"].as_object().unwrap() {
        rest["nodes"][n] = json!({"address": node["address"], "roles": node["roles"], "settings": node["settings"]});
    }
    let mut taken = Vec::new();
    for (a, b) in FREE {
        for holder in
            std::iter::once("settings".to_string()).chain(["cp1", "w1"].map(|n| format!("nodes/{n}/settings")))
        {
            let at = format!("/{holder}/{a}");
            if let Some(group) = rest.pointer_mut(&at).and_then(Value::as_object_mut) {
                taken.push(group.remove(*b).unwrap_or(Value::Null));
            }
        }
    }
    (rest, taken)
}

#[test]
fn hostile_inventories_import_to_exactly_their_data() {
    let base_dir = tempfile::tempdir().unwrap();
    write_inventory(base_dir.path(), None);
    let (baseline, defaults) = split(&import(base_dir.path()).value);
    let default_of = |i: usize| defaults.get(i).cloned().unwrap_or(Value::Null);

    let config = Config { cases: cases(), failure_persistence: None, ..Config::default() };
    TestRunner::new(config)
        .run(&case(), |c| {
            let dir = tempfile::tempdir().unwrap();
            write_inventory(dir.path(), Some(&c));
            let project = tempfile::tempdir().unwrap();
            let run = kdeploy(&["import", "kubespray", dir.path().to_str().unwrap(), "-o", "c.nix"], project.path());
            prop_assert_eq!(run.status.code(), Some(0), "{}", text(&run));
            prop_assert!(!String::from_utf8_lossy(&run.stderr).contains("trace:"), "{}", text(&run));
            let nix = std::fs::read_to_string(project.path().join("c.nix")).unwrap();
            prop_assert!(!nix.chars().any(|ch| ch != '\n' && is_hidden(ch)), "a hidden character:\n{nix:?}");
            let parsed = kdeploy_lang::parse::parse(&nix).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
            prop_assert!(parsed.errors.is_empty(), "{:?}\n{nix}", parsed.errors);
            prop_assert_eq!(kdeploy::import::data_only::check(&nix), Ok(()), "{}", nix);
            let ev = kdeploy(&["eval", "c.nix", "--json"], project.path());
            prop_assert!(ev.status.success(), "{}\n{nix}", text(&ev));
            let (rest, got) = split(&serde_json::from_slice(&ev.stdout).unwrap());
            prop_assert_eq!(&rest, &baseline, "a random variable changed another setting:\n{}", nix);

            // the random values, as the YAML holds them (one not importable is listed, not set)
            let wanted = |file: &Path, var: &str, default: Value| {
                let v = read_back(file, var);
                if not_importable(&v) {
                    default
                } else {
                    v
                }
            };
            let all = dir.path().join("group_vars/all").join(&c.all_file);
            let host = dir.path().join("host_vars/cp1").join(&c.host_file);
            let cluster_extra = wanted(&all, "kubelet_config_extra_args", default_of(0));
            let host_extra = wanted(&host, "kubelet_config_extra_args", cluster_extra.clone());
            let containerd = wanted(&all, "containerd_extra_args", default_of(3));
            // `got`: kubelet's at the cluster, cp1, w1; then containerd's
            let want =
                [cluster_extra.clone(), host_extra, cluster_extra, containerd.clone(), containerd.clone(), containerd];
            prop_assert!(
                got.iter().map(whole_floats_as_ints).eq(want.iter().map(whole_floats_as_ints)),
                "got {got:?}\nwanted {want:?}\n{nix}"
            );

            // every random variable is listed, under its name as the comment shows it
            for key in [&c.all_junk, &c.more_junk, &c.host_junk, &c.inline_junk].into_iter().flat_map(|m| m.keys()) {
                prop_assert!(nix.contains(&format!("#   {} = ", shown(key))), "{key:?} not listed:\n{nix}");
            }
            Ok(())
        })
        .unwrap();
}
