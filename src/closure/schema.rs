//! The closure schema as Rust types: exactly what `kd.cluster` returns
//! (see `stdlib/README.md`, "The closure schema"). Unknown fields are
//! rejected so a stdlib change cannot silently drop data the engine would
//! need. Fields are declared in alphabetical order of their JSON names:
//! the canonical encoding (`hash.rs`) serialises some of these structs
//! directly and relies on sorted keys.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The whole evaluated cluster.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Cluster {
    pub name: String,
    pub nodes: BTreeMap<String, Node>,
    pub phase_order: Vec<String>,
    pub schema_version: u32,
    pub settings: serde_json::Value,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    pub address: String,
    pub phases: Vec<Phase>,
    pub roles: Vec<String>,
    pub settings: serde_json::Value,
    pub ssh: Ssh,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Ssh {
    pub jump_host: Option<String>,
    pub key: Option<String>,
    pub port: u16,
    pub user: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    pub activate: bool,
    pub checks: Vec<Check>,
    pub directories: Vec<Directory>,
    pub files: Vec<File>,
    pub hooks: Vec<Hook>,
    pub name: String,
    pub units: Vec<Unit>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    pub group: String,
    pub mode: String,
    pub owner: String,
    pub path: String,
    pub source: Source,
}

/// Exactly one of the four keys (`{ "text": … }`, …).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Inline content.
    Text(String),
    /// A file of the project, relative to its root.
    File(String),
    /// A file on the deployer, absolute.
    Local(String),
    /// A verified download.
    Artifact(Artifact),
}

impl Source {
    pub fn kind(&self) -> &'static str {
        match self {
            Source::Text(_) => "text",
            Source::File(_) => "file",
            Source::Local(_) => "local",
            Source::Artifact(_) => "artifact",
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq, Hash)]
#[serde(deny_unknown_fields)]
pub struct Artifact {
    pub member: Option<String>,
    pub name: String,
    pub sha256: String,
    pub url: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Directory {
    pub group: String,
    pub mode: String,
    pub owner: String,
    pub path: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Unit {
    pub enable: bool,
    pub name: String,
    pub on_change: OnChange,
    pub restart_triggers: Vec<String>,
    pub text: String,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum OnChange {
    Restart,
    Reload,
    None,
}

impl OnChange {
    pub fn as_str(self) -> &'static str {
        match self {
            OnChange::Restart => "restart",
            OnChange::Reload => "reload",
            OnChange::None => "none",
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Hook {
    pub name: String,
    pub run: String,
    pub unless: Option<String>,
    pub when: When,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum When {
    Pre,
    Post,
}

impl When {
    pub fn as_str(self) -> &'static str {
        match self {
            When::Pre => "pre",
            When::Post => "post",
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub delay: u32,
    pub name: String,
    pub retries: u32,
    pub run: String,
}
