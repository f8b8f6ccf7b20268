//! What an evaluation saw of the machine, for an evaluation cache (as Nix's
//! own keeps one): every file read, kind tested and directory listed
//! through [`Io`], each with its answer — a file by the sha256 of its
//! bytes, a failure by its message. Evaluation being pure, a later run
//! whose [`Io`] gives the same answers to the same questions computes the
//! same value; [`Io::still_holds`] asks them again. The embedded stdlib is
//! not recorded: it is part of the binary, which a cache's key names.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::EvalResult;
use crate::io::{FileKind, Io};

/// One question put to [`Io`] and its answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    pub op: Op,
    /// The path as the evaluator asked for it.
    pub path: String,
    pub answer: Answer,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    Read,
    Kind,
    ReadDir,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Answer {
    /// The sha256 (hex) of the bytes read.
    Bytes(String),
    Kind(Option<FileKind>),
    /// A directory's entries and their kinds, sorted.
    Entries(Vec<(String, FileKind)>),
    /// The question failed with this message.
    Failed(String),
}

impl Answer {
    fn of<T>(r: &EvalResult<T>, ok: impl FnOnce(&T) -> Answer) -> Answer {
        match r {
            Ok(v) => ok(v),
            Err(e) => Answer::Failed(e.message.clone()),
        }
    }

    pub(crate) fn of_bytes(r: &EvalResult<Vec<u8>>) -> Answer {
        Answer::of(r, |b| Answer::Bytes(Sha256::digest(b).iter().map(|b| format!("{b:02x}")).collect()))
    }

    pub(crate) fn of_kind(r: &EvalResult<Option<FileKind>>) -> Answer {
        Answer::of(r, |k| Answer::Kind(*k))
    }

    pub(crate) fn of_entries(r: &EvalResult<Vec<(String, FileKind)>>) -> Answer {
        Answer::of(r, |d| Answer::Entries(d.clone()))
    }
}

impl Io {
    /// Whether every question of `observed` still has the answer it had
    /// (asked again in order, up to the first that differs).
    pub fn still_holds(&self, observed: &[Observation]) -> bool {
        observed.iter().all(|o| {
            let now = match o.op {
                Op::Read => Answer::of_bytes(&self.read_unobserved(&o.path)),
                Op::Kind => Answer::of_kind(&self.kind_unobserved(&o.path)),
                Op::ReadDir => Answer::of_entries(&self.read_dir_unobserved(&o.path)),
            };
            now == o.answer
        })
    }
}
