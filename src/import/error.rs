//! The import's errors: one enum, a variant per kind of failure (a file of
//! the inventory that cannot be read or is refused, what a file holds that
//! cannot be read, a name that could not name its file, and a generated
//! cluster file that is not data only, [`NotData`]). The inventory is
//! untrusted: every name and path a variant holds is already escaped for
//! printing (`nix_text::shown`, `visible`).

use super::vars::MAX_FILE;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    // Reading the inventory.
    #[error("{path}: {reason}")]
    Read { path: String, reason: String },
    #[error("{path}: outside the inventory (it resolves to {real}): refused, the inventory is untrusted")]
    Outside { path: String, real: String },
    #[error("{path}: larger than {} MiB", MAX_FILE >> 20)]
    TooLarge { path: String },
    #[error(
        "{dir}: no inventory.ini, hosts.ini, hosts.yaml or inventory.yaml (the directory Kubespray's -i points at)"
    )]
    NoInventory { dir: String },
    /// What is wrong inside one file.
    #[error("{file}: {error}")]
    In { file: String, error: Box<Error> },

    // What a file holds.
    #[error("{reason}")]
    Yaml { reason: String },
    /// `key`: the key as YAML's value prints it.
    #[error("a mapping key that is not a string: {key}")]
    YamlKey { key: String },
    #[error("the YAML tag {tag} is not supported (decrypt vault values first)")]
    YamlTag { tag: String },
    #[error("expected a mapping of variables")]
    NotVariables,
    #[error("line {line}: {error}")]
    Line { line: usize, error: Box<Error> },
    /// A host or group name that could not name its own file under
    /// host_vars/ or group_vars/ (`../x` would name a file outside).
    #[error(
        "{kind} name {name}: not a name that can name its own file under {kind}_vars/ \
         (no /, \\, control characters, and not . or ..)"
    )]
    Name { kind: &'static str, name: String },
    #[error("unclosed quote in: {line}")]
    UnclosedQuote { line: String },
    #[error("unknown section kind [{head}] ({kind:?})")]
    Section { head: String, kind: String },
    #[error("host range {host}: list the hosts one per line")]
    HostRange { host: String },
    #[error("expected key=value, got {got:?}")]
    KeyValue { got: String },
    #[error("no top-level `all` group")]
    NoAll,
    #[error("group {group}: unknown key {key} (expected hosts, children, vars)")]
    GroupKey { group: String, key: String },
    #[error("host {host} ({file}) has no `ip` or `ansible_host`: kdeploy needs its IPv4 address")]
    NoAddress { host: String, file: String },
    #[error("{file}: no host is in kube_control_plane, etcd or kube_node")]
    NoNodes { file: String },

    #[error(transparent)]
    NotData(#[from] NotData),
}

impl Error {
    /// This error, found in `file`.
    pub fn in_file(self, file: impl Into<String>) -> Error {
        Error::In { file: file.into(), error: Box::new(self) }
    }
}

/// Where a generated cluster file is not data only (`data_only.rs`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotData {
    #[error("it does not parse (too deep)")]
    TooDeep,
    #[error("it does not parse: {reason}")]
    Parse { reason: String },
    #[error("not `let kd = …; in …`")]
    NotLet,
    #[error("the `let` binds something other than `kd = import <kdeploy>`")]
    Binds,
    #[error("the body is not `kd.cluster {{ … }}`")]
    Body,
    #[error("not data: {text}")]
    Expr { text: String },
    #[error("an expression is missing")]
    Missing,
    #[error("an attribute without a name")]
    Unnamed,
    #[error("not a plain attribute name: {text}")]
    AttrName { text: String },
}
