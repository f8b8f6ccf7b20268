//! Which units a phase switch must stop, start, restart or reload — a pure
//! function of the old and new unit specs and the set of changed files, in
//! the spirit of NixOS's switch-to-configuration:
//!
//! | old → new | action |
//! |---|---|
//! | absent → enabled | Start |
//! | absent → not enabled | Unchanged (installed only) |
//! | present → absent | Stop |
//! | enabled → not enabled | Stop |
//! | not enabled → enabled | Start |
//! | enabled → enabled, text or a restart trigger changed | by the new `onChange`: Restart, Reload, or Unchanged for "none" |
//! | otherwise | Unchanged |
//!
//! A restart trigger "changed" when its path is in `changed_files` (added,
//! removed, or different content/mode/owner — see
//! [`super::manifest::changed_files`], computed over this phase and every
//! earlier one). Units that are not enabled are never started or restarted
//! by kdeploy; their files are installed and systemd reloaded. An enabled
//! unit is `systemctl enable`d when it becomes enabled and whenever its
//! text changes (its `[Install]` section may have).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// What to do with a unit when its phase switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnChange {
    Restart,
    Reload,
    /// The closure schema's `"none"`.
    Nothing,
}

/// The parts of a unit the decision needs (the closure's unit, with its text
/// replaced by the text's blake3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitSpec {
    pub name: String,
    pub text_hash: crate::store::Digest,
    pub on_change: OnChange,
    pub enable: bool,
    pub restart_triggers: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Unchanged,
    Start,
    Restart,
    Reload,
    Stop,
}

/// The action for one unit.
pub fn unit_action(old: Option<&UnitSpec>, new: Option<&UnitSpec>, changed_files: &BTreeSet<PathBuf>) -> Action {
    match (old, new) {
        (None, None) => Action::Unchanged,
        (None, Some(n)) => {
            if n.enable {
                Action::Start
            } else {
                Action::Unchanged
            }
        }
        (Some(_), None) => Action::Stop,
        (Some(o), Some(n)) => match (o.enable, n.enable) {
            (true, false) => Action::Stop,
            (false, true) => Action::Start,
            (false, false) => Action::Unchanged,
            (true, true) => {
                let changed =
                    o.text_hash != n.text_hash || n.restart_triggers.iter().any(|t| changed_files.contains(t));
                if !changed {
                    return Action::Unchanged;
                }
                match n.on_change {
                    OnChange::Restart => Action::Restart,
                    OnChange::Reload => Action::Reload,
                    OnChange::Nothing => Action::Unchanged,
                }
            }
        },
    }
}

/// Everything a phase switch does to systemd, unit names sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnitPlan {
    /// A unit file was added, removed or changed.
    pub daemon_reload: bool,
    pub stop: Vec<String>,
    pub start: Vec<String>,
    pub restart: Vec<String>,
    pub reload: Vec<String>,
    pub enable: Vec<String>,
    pub disable: Vec<String>,
}

/// Plan a phase's units from its old and new unit lists.
pub fn plan_units(old: &[UnitSpec], new: &[UnitSpec], changed_files: &BTreeSet<PathBuf>) -> UnitPlan {
    let o: BTreeMap<&str, &UnitSpec> = old.iter().map(|u| (u.name.as_str(), u)).collect();
    let n: BTreeMap<&str, &UnitSpec> = new.iter().map(|u| (u.name.as_str(), u)).collect();
    let names: BTreeSet<&str> = o.keys().chain(n.keys()).copied().collect();
    let mut plan = UnitPlan::default();
    for name in names {
        let (ou, nu) = (o.get(name).copied(), n.get(name).copied());
        let text_changed = ou.map(|u| &u.text_hash) != nu.map(|u| &u.text_hash);
        plan.daemon_reload |= text_changed;
        let (was, is) = (ou.is_some_and(|u| u.enable), nu.is_some_and(|u| u.enable));
        // enabled again when its text changes: its [Install] section may have
        if is && (!was || text_changed) {
            plan.enable.push(name.to_string());
        }
        if was && !is {
            plan.disable.push(name.to_string());
        }
        let list = match unit_action(ou, nu, changed_files) {
            Action::Unchanged => continue,
            Action::Start => &mut plan.start,
            Action::Restart => &mut plan.restart,
            Action::Reload => &mut plan.reload,
            Action::Stop => &mut plan.stop,
        };
        list.push(name.to_string());
    }
    plan
}

impl UnitPlan {
    pub fn is_empty(&self) -> bool {
        *self == UnitPlan::default()
    }

    /// Arguments of the node's `units` command to run *before* the phase
    /// link flips: stop and disable what is going away while its unit file
    /// is still in place.
    pub fn before_switch(&self) -> Vec<String> {
        let mut ops = Vec::new();
        push(&mut ops, "stop", &self.stop);
        push(&mut ops, "disable", &self.disable);
        ops
    }

    /// Arguments of the node's `units` command to run *after* the flip:
    /// daemon-reload, enable, reload, restart, start.
    pub fn after_switch(&self) -> Vec<String> {
        let mut ops = Vec::new();
        if self.daemon_reload {
            ops.push("daemon-reload".to_string());
        }
        push(&mut ops, "enable", &self.enable);
        push(&mut ops, "reload", &self.reload);
        push(&mut ops, "restart", &self.restart);
        push(&mut ops, "start", &self.start);
        ops
    }
}

fn push(ops: &mut Vec<String>, verb: &str, units: &[String]) {
    if !units.is_empty() {
        ops.push(format!("{verb}:{}", units.join(",")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(name: &str, text: char, on: OnChange, enable: bool, triggers: &[&str]) -> UnitSpec {
        UnitSpec {
            name: name.into(),
            text_hash: crate::store::Digest([text as u8; 32]),
            on_change: on,
            enable,
            restart_triggers: triggers.iter().map(PathBuf::from).collect(),
        }
    }

    fn files(p: &[&str]) -> BTreeSet<PathBuf> {
        p.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn added_removed() {
        let u = unit("a.service", 'a', OnChange::Restart, true, &[]);
        let off = unit("a.service", 'a', OnChange::Restart, false, &[]);
        let none = files(&[]);
        assert_eq!(unit_action(None, None, &none), Action::Unchanged);
        assert_eq!(unit_action(None, Some(&u), &none), Action::Start);
        assert_eq!(unit_action(None, Some(&off), &none), Action::Unchanged);
        assert_eq!(unit_action(Some(&u), None, &none), Action::Stop);
        assert_eq!(unit_action(Some(&off), None, &none), Action::Stop);
        assert_eq!(unit_action(Some(&u), Some(&off), &none), Action::Stop);
        assert_eq!(unit_action(Some(&off), Some(&u), &none), Action::Start);
        assert_eq!(unit_action(Some(&off), Some(&off), &files(&["/x"])), Action::Unchanged);
    }

    #[test]
    fn first_converge_starts_and_never_restarts() {
        // On a fresh node every file of the phase is "changed", restart
        // triggers included: a unit new to the node is still started once,
        // not restarted (containerd on a first converge: daemon-reload,
        // enable, start).
        let u = unit("containerd.service", 'c', OnChange::Restart, true, &["/etc/containerd/config.toml"]);
        let all = files(&["/etc/containerd/config.toml", "/etc/systemd/system/containerd.service"]);
        assert_eq!(unit_action(None, Some(&u), &all), Action::Start);
        let p = plan_units(&[], std::slice::from_ref(&u), &all);
        assert_eq!(p.after_switch(), ["daemon-reload", "enable:containerd.service", "start:containerd.service"]);
        assert!(p.before_switch().is_empty());
    }

    #[test]
    fn text_change_follows_on_change() {
        let none = files(&[]);
        for (on, want) in [
            (OnChange::Restart, Action::Restart),
            (OnChange::Reload, Action::Reload),
            (OnChange::Nothing, Action::Unchanged),
        ] {
            let a = unit("a.service", 'a', on, true, &[]);
            let b = unit("a.service", 'b', on, true, &[]);
            assert_eq!(unit_action(Some(&a), Some(&b), &none), want);
            assert_eq!(unit_action(Some(&a), Some(&a), &none), Action::Unchanged);
        }
    }

    #[test]
    fn restart_triggers() {
        let a = unit("a.service", 'a', OnChange::Restart, true, &["/etc/a.conf", "/usr/bin/a"]);
        assert_eq!(unit_action(Some(&a), Some(&a), &files(&["/etc/a.conf"])), Action::Restart);
        assert_eq!(unit_action(Some(&a), Some(&a), &files(&["/usr/bin/a"])), Action::Restart);
        assert_eq!(unit_action(Some(&a), Some(&a), &files(&["/etc/other"])), Action::Unchanged);
        let r = unit("a.service", 'a', OnChange::Reload, true, &["/etc/a.conf"]);
        assert_eq!(unit_action(Some(&r), Some(&r), &files(&["/etc/a.conf"])), Action::Reload);
        // the *new* unit's triggers count: a trigger just added and changed restarts
        let old = unit("a.service", 'a', OnChange::Restart, true, &[]);
        let new = unit("a.service", 'a', OnChange::Restart, true, &["/etc/new"]);
        assert_eq!(unit_action(Some(&old), Some(&new), &files(&["/etc/new"])), Action::Restart);
    }

    #[test]
    fn plan_for_a_phase() {
        let old = vec![
            unit("keep.service", 'k', OnChange::Restart, true, &[]),
            unit("gone.service", 'g', OnChange::Restart, true, &[]),
            unit("conf.service", 'c', OnChange::Restart, true, &["/etc/c"]),
            unit("rel.service", 'r', OnChange::Reload, true, &[]),
        ];
        let new = vec![
            unit("keep.service", 'k', OnChange::Restart, true, &[]),
            unit("conf.service", 'c', OnChange::Restart, true, &["/etc/c"]),
            unit("rel.service", 'R', OnChange::Reload, true, &[]),
            unit("new.service", 'n', OnChange::Restart, true, &[]),
        ];
        let p = plan_units(&old, &new, &files(&["/etc/c"]));
        assert!(p.daemon_reload);
        assert_eq!(p.stop, ["gone.service"]);
        assert_eq!(p.start, ["new.service"]);
        assert_eq!(p.restart, ["conf.service"]);
        assert_eq!(p.reload, ["rel.service"]);
        assert_eq!(p.enable, ["new.service", "rel.service"], "a changed unit text may change its [Install]");
        assert_eq!(p.disable, ["gone.service"]);
        assert_eq!(p.before_switch(), ["stop:gone.service", "disable:gone.service"]);
        assert_eq!(
            p.after_switch(),
            [
                "daemon-reload",
                "enable:new.service,rel.service",
                "reload:rel.service",
                "restart:conf.service",
                "start:new.service"
            ]
        );
        // nothing changed: nothing to do, not even a daemon-reload
        assert!(plan_units(&new, &new, &files(&[])).is_empty());
    }
}
