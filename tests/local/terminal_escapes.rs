//! What a node says reaches the operator's terminal escaped, never acted
//! on: a hook's output (its journal in a failure), the drift lines a node
//! reports, and a deployed file's old content in a diff, each carrying
//! escape sequences, CR, C1 and bidi controls, through the real executor
//! over a `LocalHost` node and the real printing path — the progress
//! lines (`render::Lines`, what `switch` prints on stderr when not on a
//! terminal; the live view prints the same lines), the recap as text and
//! as JSON, and the `--dry-run` plan.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use kdeploy::closure::{self, Closures};
use kdeploy::deploy::events::{Sink, Tee};
use kdeploy::deploy::recap::Recap;
use kdeploy::deploy::render::Lines;
use kdeploy::deploy::switch::{switch_reached, Reached};
use kdeploy::deploy::Report;
use kdeploy::deploy::RunOptions;
use kdeploy::deploy::{Cancel, Outcome, SwitchOptions};
use kdeploy::store::{FileFetcher, Resolver, Store};
use kdeploy::transport::LocalHost;
use serde_json::{json, Value};

/// What a hostile node sends: a screen clear, a title change, a CR that
/// overwrites the line, a C1 CSI (U+009B) and a right-to-left override.
const HOSTILE: &str = "\\033[2J\\033]0;pwned\\007 back\\rover \\302\\233 c1 \\342\\200\\256 bidi";

/// Characters that must never reach the terminal as they are.
const RAW: [char; 5] = ['\x1b', '\x07', '\r', '\u{9b}', '\u{202e}'];

fn assert_escaped(what: &str, text: &str) {
    for c in RAW {
        assert!(!text.contains(c), "{what}: a raw {:?} reaches the terminal:\n{text:?}", c);
    }
}

/// Bytes written to it, shared with the test.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn prefix(&self) -> PathBuf {
        self.dir.path().join("node")
    }

    fn resolver(&self) -> Resolver {
        Resolver::new(self.dir.path(), Store::new(self.dir.path().join(".kdeploy/store")), Box::new(FileFetcher))
    }

    /// One node, one phase `app`: a config file with `content`, and
    /// `hook` (if any) as a post hook.
    fn closures(&self, content: &str, hook: Option<&str>) -> Closures {
        let hooks: Vec<Value> =
            hook.map(|run| json!({"name": "noisy", "run": run, "unless": null, "when": "post"})).into_iter().collect();
        let cluster = json!({
            "name": "local", "phaseOrder": ["app"], "schemaVersion": closure::SCHEMA_VERSION,
            "settings": {}, "warnings": [],
            "nodes": {"n1": {
                "address": "127.0.0.1", "roles": [], "settings": {},
                "ssh": {"jumpHost": null, "key": null, "port": 22, "user": "root"},
                "phases": [{"activate": true, "checks": [], "directories": [], "hooks": hooks, "name": "app",
                            "units": [],
                            "files": [{"group": "root", "mode": "0644", "owner": "root",
                                       "path": "/etc/demo/app.conf", "source": {"text": content}}]}],
            }},
        });
        closure::load(&cluster.to_string(), &self.resolver()).unwrap()
    }

    /// A switch (or, `dry_run`, its plan) printed as the CLI prints it:
    /// the outcome, the progress lines, the recap as text and JSON, the plan.
    async fn switch(&self, closures: &Closures, dry_run: bool) -> (Outcome, String, String, String, String) {
        let host = LocalHost::new("n1");
        let prefix = self.prefix().display().to_string();
        let reached = [Reached { host: &host, prefix: &prefix }];
        let lines = Captured::default();
        let progress = Lines::new(lines.clone(), true);
        let recap = Recap::new("local", ["n1".to_string()]);
        let sink = Tee(vec![&progress as &dyn Sink, &recap]);
        let opts = SwitchOptions {
            run: RunOptions { dry_run, ..RunOptions::at(self.dir.path().join(".kdeploy")) },
            ..Default::default()
        };
        let Report { outcome, plan_text: plan, .. } =
            switch_reached(closures, &self.resolver(), &opts, &reached, Cancel::default(), &sink).await.unwrap();
        let data = recap.data();
        (outcome, lines.text(), data.text(), data.json(), plan)
    }

    /// The node program installed on the node, as a compromised node may
    /// change it: its `verify` also reports drift made of escapes.
    fn compromise(&self) {
        let bin = self.prefix().join("var/lib/kdeploy/bin");
        for f in std::fs::read_dir(bin).unwrap() {
            let path = f.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let hostile = format!(
                "cmd_verify() {{\n    printf 'drift\\tapp\\tfile\\t/etc/demo/app.conf {HOSTILE}\\t{HOSTILE}\\n'"
            );
            std::fs::write(&path, text.replacen("cmd_verify() {", &hostile, 1)).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn what_nodes_say_is_shown_escaped() {
    let p = Project { dir: tempfile::tempdir().unwrap() };
    // deployed: a file whose content carries escapes
    let old = "setting = 1 \u{1b}[31mred\u{1b}]0;title\u{7}\r \u{9b}1m \u{202e}desrever\n";
    let (outcome, ..) = p.switch(&p.closures(old, None), false).await;
    assert_eq!(outcome, Outcome::Ok);

    // the diff shows the node's old content escaped
    let new = p.closures("setting = 2\n", Some(&format!("printf '{HOSTILE}\\n'; printf '{HOSTILE}' >&2; exit 1")));
    let (outcome, lines, text, json, plan) = p.switch(&new, true).await;
    assert_eq!(outcome, Outcome::Ok, "{lines}");
    assert!(plan.contains("-setting = 1 \\x1b[31mred"), "{plan}");
    for (what, t) in [("plan", &plan), ("lines", &lines), ("recap", &text), ("json", &json)] {
        assert_escaped(&format!("dry run {what}"), t);
    }

    // a hook's output, in the failure's journal lines
    let (outcome, lines, text, json, _) = p.switch(&new, false).await;
    assert_eq!(outcome, Outcome::Failed, "{lines}");
    assert!(lines.contains("\\x1b[2J\\x1b]0;pwned\\x07 back\\rover \\u{009b} c1 \\u{202e} bidi"), "{lines}");
    for (what, t) in [("lines", &lines), ("recap", &text), ("json", &json)] {
        assert_escaped(&format!("failed hook {what}"), t);
    }
    serde_json::from_str::<Value>(&json).expect("the recap is still JSON");

    // drift lines from a compromised node
    p.compromise();
    let (_, lines, text, json, _) = p.switch(&p.closures(old, None), false).await;
    assert!(lines.contains("drift in app: file /etc/demo/app.conf \\x1b[2J"), "{lines}");
    assert!(text.contains("drift: app: file /etc/demo/app.conf \\x1b[2J"), "{text}");
    for (what, t) in [("lines", &lines), ("recap", &text), ("json", &json)] {
        assert_escaped(&format!("drift {what}"), t);
    }
    let recap: Value = serde_json::from_str(&json).unwrap();
    let drift = recap["nodes"]["n1"]["drift"][0].as_str().unwrap();
    assert!(drift.contains('\u{1b}'), "the JSON still means the node's exact words: {drift:?}");
}
