//! Why a closure cannot be built: the evaluator's value does not fit the
//! schema (where, and what serde says of it), the validation found
//! problems (each worded for the user, naming the node, phase and path),
//! or some sources cannot be read (where each is first used, and why).

use std::fmt;

use super::parse::SCHEMA_VERSION;

/// How many problems are reported before the rest are only counted.
const MAX_REPORTED: usize = 20;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Read as a whole it does not fit, yet no part says why.
    #[error("cluster value: does not match the closure schema")]
    Schema,
    #[error("cluster value: {path}: {reason}")]
    Shape { path: String, reason: String },
    #[error("cluster value: schemaVersion {found} is not supported (this kdeploy understands {SCHEMA_VERSION})")]
    Version { found: u32 },
    /// `at`: the phase and path inside the node, as `, phase P (phases[i]), …`.
    #[error("node {node}{at}: {reason}")]
    Node { node: String, at: String, reason: String },
    #[error("{}", problems(.0))]
    Invalid(Vec<String>),
    #[error("{}", sources(.0))]
    Sources(Vec<Unreadable>),
}

/// A source that cannot be read, where it is first used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// `node N, phase P, file F`.
    pub at: String,
    /// How many other places use the same source.
    pub more: usize,
    pub error: crate::store::Error,
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.more {
            0 => write!(f, "{}: {}", self.at, self.error),
            n => write!(f, "{} (and {n} more uses): {}", self.at, self.error),
        }
    }
}

fn problems(errs: &[String]) -> String {
    let n = errs.len();
    let mut msg = format!("invalid closure ({n} problem{}):", if n == 1 { "" } else { "s" });
    for e in errs.iter().take(MAX_REPORTED) {
        msg.push_str("\n  - ");
        msg.push_str(e);
    }
    if n > MAX_REPORTED {
        msg.push_str(&format!("\n  … and {} more", n - MAX_REPORTED));
    }
    msg
}

fn sources(errs: &[Unreadable]) -> String {
    let lines: Vec<String> = errs.iter().map(ToString::to_string).collect();
    format!("cannot read the sources of {} file(s):\n  - {}", lines.len(), lines.join("\n  - "))
}
