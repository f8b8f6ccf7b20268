//! An [`Imported`] cluster as a Nix cluster file: one setting per line
//! with the Kubespray variable and file it came from as a comment, the
//! variables not imported listed at the end with the reason. Also returns
//! which line holds which setting, so an evaluation error at a line can be
//! traced back to its variable.
//!
//! Everything from the inventory is untrusted text: it reaches the file
//! only through `nix_text` — values as literals, names as quoted attribute
//! names, and in comments through [`shown`], so it cannot end a
//! comment or a string and write code.

use super::{Imported, Setting, SettingAt};
use crate::nix_text::{nix_attr_name, nix_literal, nix_string, shown};

fn path_text(path: &str) -> String {
    path.split('.').map(nix_attr_name).collect::<Vec<_>>().join(".")
}

/// A value for a comment: its JSON text, cut at 120 characters.
fn comment_value(v: &serde_json::Value) -> String {
    let s = v.to_string();
    let s = if s.chars().count() > 120 { s.chars().take(117).collect::<String>() + "..." } else { s };
    shown(&s)
}

struct Out {
    text: String,
    lines: Vec<(usize, SettingAt)>,
}

impl Out {
    fn line(&mut self, l: &str) {
        self.text.push_str(l);
        self.text.push('\n');
    }

    fn settings(&mut self, indent: &str, settings: &[Setting], at: impl Fn(usize) -> SettingAt) {
        for (i, s) in settings.iter().enumerate() {
            let n = self.text.lines().count() + 1;
            self.lines.push((n, at(i)));
            let (var, from) = (shown(&s.var), shown(&s.from));
            let l = format!("{indent}{} = {}; # {var} ({from})", path_text(&s.path), nix_literal(&s.value));
            self.line(&l);
        }
    }
}

/// The file's text, and the line of each setting (1-based).
pub fn render(i: &Imported) -> (String, Vec<(usize, SettingAt)>) {
    let mut o = Out { text: String::new(), lines: Vec::new() };
    o.line(&format!("# Imported from the Kubespray inventory {} by `kdeploy import kubespray`.", shown(&i.source)));
    o.line("# Each setting names the Kubespray variable and file it comes from; the variables");
    o.line("# that were not imported are listed at the end with the reason. Review them.");
    o.line("let kd = import <kdeploy>; in");
    o.line("kd.cluster {");
    o.line(&format!("  name = {};", nix_string(&i.name)));
    o.line("  nodes = {");
    for (n, node) in i.nodes.iter().enumerate() {
        let roles: Vec<String> = node.roles.iter().map(|r| nix_string(r)).collect();
        let head = format!(
            "    {} = {{ address = {}; roles = [ {} ];",
            nix_attr_name(&node.name),
            nix_string(&node.address),
            roles.join(" ")
        );
        if node.settings.is_empty() {
            o.line(&format!("{head} }};"));
            continue;
        }
        o.line(&head);
        o.line("      settings = {");
        o.settings("        ", &node.settings, |k| SettingAt::Node(n, k));
        o.line("      };");
        o.line("    };");
    }
    o.line("  };");
    o.line("  settings = {");
    o.settings("    ", &i.settings, SettingAt::Cluster);
    o.line("  };");
    let roles: Vec<_> = i.roles.iter().filter(|(_, s)| !s.is_empty()).collect();
    if !roles.is_empty() {
        o.line("  roleSettings = {");
        for (role, settings) in roles {
            o.line(&format!("    {} = {{", nix_attr_name(role)));
            o.settings("      ", settings, |k| SettingAt::Role(role, k));
            o.line("    };");
        }
        o.line("  };");
    }
    o.line("}");
    if !i.skipped.is_empty() {
        o.line("");
        o.line(&format!("# Not imported ({} variables):", i.skipped.len()));
        for s in &i.skipped {
            let why = shown(s.why.lines().next().unwrap_or(""));
            let (var, from) = (shown(&s.var), shown(&s.from));
            o.line(&format!("#   {var} = {}  ({from}): {why}", comment_value(&s.value)));
        }
    }
    (o.text, o.lines)
}

#[cfg(test)]
mod tests {
    use super::super::{Node, Skipped};
    use super::*;

    #[test]
    fn lines_map_to_settings() {
        let s = |p: &str, v: serde_json::Value| Setting { path: p.into(), value: v, var: "v".into(), from: "f".into() };
        let i = Imported {
            name: "c".into(),
            source: "inv".into(),
            nodes: vec![Node {
                name: "n1".into(),
                address: "10.0.0.1".into(),
                roles: vec!["etcd"],
                settings: vec![s("etcd.memberName", "e1".into())],
            }],
            settings: vec![s("network.plugin", "calico".into())],
            roles: [("worker", vec![s("kubelet.maxPods", 200.into())])].into_iter().collect(),
            skipped: vec![Skipped {
                var: "x".into(),
                value: "{{ y }}".into(),
                from: "f".into(),
                why: "a Jinja template".into(),
            }],
        };
        let (text, lines) = render(&i);
        let at = |k: SettingAt| {
            text.lines().nth(lines.iter().find(|(_, a)| *a == k).unwrap().0 - 1).unwrap().trim().to_string()
        };
        assert_eq!(at(SettingAt::Node(0, 0)), "etcd.memberName = \"e1\"; # v (f)");
        assert_eq!(at(SettingAt::Cluster(0)), "network.plugin = \"calico\"; # v (f)");
        assert_eq!(at(SettingAt::Role("worker", 0)), "kubelet.maxPods = 200; # v (f)");
        assert!(text.contains("#   x = \"{{ y }}\"  (f): a Jinja template"), "{text}");
    }
}
