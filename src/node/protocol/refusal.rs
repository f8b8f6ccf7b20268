//! How the node program says no: one line on stderr,
//! `kdeploy-node-error CODE DETAIL` (printed by its one helper `fail`), and
//! the exit status of that [`Code`]. The deployer reads the code, never the
//! wording; the detail is data where a code has some (the lock's holder,
//! a unit and its operation, the program's protocol version) and a
//! message otherwise. The same lines, rendered back into sentences, are
//! what the user reads ([`Failure`]'s message).

use super::constants::*;
use super::reply::Malformed;
use super::VERSION;

/// What starts a refusal line on the program's stderr.
pub const PREFIX: &str = "kdeploy-node-error ";

/// Why the node program refused or failed a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// Refused or failed; the detail says why for a human.
    Failed,
    /// `units`: a unit failed; detail `UNIT VERB active|inactive`, one
    /// line per unit, its status and journal after it.
    UnitFailed,
    /// What was asked for is not there; detail: what.
    NotFound,
    /// The node lacks a tool or feature the program needs; detail: which.
    Unsupported,
    /// `lock`: a live run holds the node; detail: its `lock.owner` line.
    Locked,
    /// `lock`: commands of the run it took over from still run.
    Busy,
    /// The command line names another protocol; detail: the program's.
    Version,
    /// The caller's lock token is not the live holder's; detail: the
    /// holder's `lock.owner` line (or `nobody`).
    LockLost,
}

impl Code {
    pub const ALL: [Code; 8] = [
        Code::Failed,
        Code::UnitFailed,
        Code::NotFound,
        Code::Unsupported,
        Code::Locked,
        Code::Busy,
        Code::Version,
        Code::LockLost,
    ];

    /// The code as the program prints it.
    pub fn name(self) -> &'static str {
        match self {
            Code::Failed => "failed",
            Code::UnitFailed => "unit-failed",
            Code::NotFound => "not-found",
            Code::Unsupported => "unsupported",
            Code::Locked => "locked",
            Code::Busy => "busy",
            Code::Version => "version",
            Code::LockLost => "lock-lost",
        }
    }

    /// The exit status the program ends with after printing it.
    pub fn status(self) -> u32 {
        match self {
            Code::Failed => EX_FAILED,
            Code::UnitFailed => EX_UNIT_FAILED,
            Code::NotFound => EX_NOT_FOUND,
            Code::Unsupported => EX_UNSUPPORTED,
            Code::Locked | Code::Busy => EX_LOCKED,
            Code::Version => EX_VERSION,
            Code::LockLost => EX_LOCK_LOST,
        }
    }

    pub fn parse(name: &str) -> Option<Code> {
        Code::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// One refusal line, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: Code,
    pub detail: String,
}

impl Refusal {
    /// The line as the user reads it (the wording the program used to
    /// print itself, which tests and users look for).
    pub fn sentence(&self) -> String {
        let d = &self.detail;
        let s = match self.code {
            Code::Failed | Code::NotFound => d.clone(),
            Code::UnitFailed => {
                let mut w = d.splitn(3, ' ');
                let (unit, verb, state) = (w.next().unwrap_or(""), w.next().unwrap_or(""), w.next().unwrap_or(""));
                let again = if state == "active" { " (active again now)" } else { "" };
                format!("unit {unit} failed to {verb}{again}; its status and last log lines:")
            }
            Code::Unsupported => format!("this node lacks what the node program needs: {d}"),
            Code::Locked => format!("locked by another run ({d})"),
            Code::Busy => {
                // (the node lists them when it can: pid and command line)
                let holders = d.trim_end_matches([';', ' ']);
                let named = if holders.is_empty() { String::new() } else { format!(" (still running: {holders})") };
                format!(
                    "locked: a command of the run that held the lock before (a hook or unit operation it started \
                     before it stopped answering) is still running; it ends by its deadline: run again then{named}"
                )
            }
            Code::Version => format!("the node program speaks protocol {d}, this deployer {VERSION}"),
            Code::LockLost => format!("lock lost: this run does not hold the node lock any more (held by: {d})"),
        };
        format!("kdeploy-node: {s}")
    }

    /// `UNIT VERB` of a `unit-failed` refusal.
    pub fn unit(&self) -> Option<(&str, &str)> {
        let mut w = self.detail.split(' ');
        match (self.code, w.next(), w.next()) {
            (Code::UnitFailed, Some(u), Some(v)) => Some((u, v)),
            _ => None,
        }
    }
}

/// How a command that did not exit 0 ended, as the deployer reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The program refused, with the code its exit status agrees with
    /// (`refusals` holds every refusal line, the deciding one last).
    Refused { refusals: Vec<Refusal>, message: String },
    /// No refusal line: the shell itself failed (a command under `set -e`,
    /// a signal, the program missing), or `timeout` killed it.
    Untyped { status: u32, message: String },
}

impl Failure {
    /// The deciding code, if the program refused.
    pub fn code(&self) -> Option<Code> {
        match self {
            Failure::Refused { refusals, .. } => refusals.last().map(|r| r.code),
            Failure::Untyped { .. } => None,
        }
    }

    pub fn message(&self) -> &str {
        match self {
            Failure::Refused { message, .. } | Failure::Untyped { message, .. } => message,
        }
    }
}

/// Decode the end of a command that exited `status` (not 0) with `stderr`.
/// `Err` with the offending line when a refusal line names no known code,
/// or no refusal line's code has `status` (the program's and the
/// deployer's tables disagree: never guessed at).
pub fn decode(status: u32, stderr: &[u8]) -> Result<Failure, Malformed> {
    let text = String::from_utf8_lossy(stderr);
    let mut refusals: Vec<Refusal> = Vec::new();
    let mut message = String::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(PREFIX) else {
            message += line;
            message.push('\n');
            continue;
        };
        let (name, detail) = rest.split_once(' ').unwrap_or((rest, ""));
        let code = Code::parse(name).ok_or_else(|| Malformed(line.to_string()))?;
        let r = Refusal { code, detail: detail.to_string() };
        message += &r.sentence();
        message.push('\n');
        refusals.push(r);
    }
    let message = message.trim().to_string();
    if refusals.is_empty() {
        return Ok(Failure::Untyped { status, message });
    }
    // the deciding refusal last; another one (a `fail` in a subshell whose
    // failure the program then handled) stays in the message only
    let Some(i) = refusals.iter().rposition(|r| r.code.status() == status) else {
        let last = refusals.last().map_or(String::new(), |r| format!("{}{} {}", PREFIX, r.code.name(), r.detail));
        return Err(Malformed(format!("exit status {status} with {last}")));
    };
    // the deciding code's lines last, in their order (unit-failed: each unit)
    let decided = refusals[i].code;
    refusals.sort_by_key(|r| r.code == decided);
    Ok(Failure::Refused { refusals, message })
}

/// The refusal a `run` command's own refusal would be: `run` passes on the
/// status of the command it runs, so only a refusal printed before it
/// started counts — the first stderr line, with its code's status.
pub fn decode_run(status: u32, stderr: &[u8]) -> Option<Refusal> {
    let first = stderr.split(|&b| b == b'\n').next()?;
    let line = std::str::from_utf8(first).ok()?;
    let rest = line.strip_prefix(PREFIX)?;
    let (name, detail) = rest.split_once(' ').unwrap_or((rest, ""));
    let code = Code::parse(name).filter(|c| c.status() == status)?;
    Some(Refusal { code, detail: detail.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(status: u32, stderr: &str) -> (Vec<Refusal>, String) {
        match decode(status, stderr.as_bytes()) {
            Ok(Failure::Refused { refusals, message }) => (refusals, message),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_busy_refusal_names_the_commands_still_running_when_the_node_lists_them() {
        let (_, message) = refused(75, "kdeploy-node-error busy 812 sh node.sh commit 3 ab; 815 cat; \n");
        assert!(message.ends_with("run again then (still running: 812 sh node.sh commit 3 ab; 815 cat)"), "{message}");
        let (_, message) = refused(75, "kdeploy-node-error busy \n");
        assert!(message.ends_with("run again then"), "{message}");
    }

    #[test]
    fn every_code_reads_back_from_its_name_and_statuses_differ_but_for_lock_s_two() {
        for c in Code::ALL {
            assert_eq!(Code::parse(c.name()), Some(c));
            for d in Code::ALL {
                let same = c.status() == d.status();
                assert_eq!(
                    same,
                    c == d || [c, d] == [Code::Locked, Code::Busy] || [c, d] == [Code::Busy, Code::Locked]
                );
            }
        }
        assert_eq!(Code::parse("Failed"), None);
        assert_eq!(Code::parse(""), None);
    }

    #[test]
    fn a_refusal_is_its_code_with_the_wording_users_know() {
        let (r, msg) = refused(77, "kdeploy-node-error lock-lost second-run pid=9 since=x\n");
        assert_eq!(r, [Refusal { code: Code::LockLost, detail: "second-run pid=9 since=x".into() }]);
        assert_eq!(msg, "kdeploy-node: lock lost: this run does not hold the node lock any more (held by: second-run pid=9 since=x)");
        let (r, msg) =
            refused(1, "cp: cannot stat x\nkdeploy-node-error failed stage files: blob y is not in the store\n");
        assert_eq!(r[0].code, Code::Failed);
        assert_eq!(msg, "cp: cannot stat x\nkdeploy-node: stage files: blob y is not in the store");
    }

    #[test]
    fn unit_failures_name_each_unit_and_keep_its_report() {
        let err = "kdeploy-node-error unit-failed a.service start inactive\n● a.service\njournal a\n\
                   kdeploy-node-error unit-failed b.service start active\njournal b\n";
        let (r, msg) = refused(3, err);
        assert_eq!(
            r.iter().map(|r| r.unit()).collect::<Vec<_>>(),
            [Some(("a.service", "start")), Some(("b.service", "start"))]
        );
        assert!(msg.starts_with("kdeploy-node: unit a.service failed to start; its status"), "{msg}");
        assert!(msg.contains("\njournal a\nkdeploy-node: unit b.service failed to start (active again now);"), "{msg}");
    }

    #[test]
    fn no_refusal_line_is_a_shell_failure_and_a_disagreeing_one_an_error() {
        assert_eq!(
            decode(2, b"sh: 1: syntax error\n"),
            Ok(Failure::Untyped { status: 2, message: "sh: 1: syntax error".into() })
        );
        assert!(decode(2, b"kdeploy-node-error failed x\n").is_err(), "status and code disagree");
        assert!(decode(1, b"kdeploy-node-error no-such-code x\n").is_err(), "unknown code");
        assert!(decode(1, b"kdeploy-node-error \n").is_err(), "no code");
        // a failure inside a subshell the program handled, then its own
        let (r, _) = refused(75, "kdeploy-node-error failed inner\nkdeploy-node-error locked a-run pid=1\n");
        assert_eq!(r.last().map(|r| r.code), Some(Code::Locked));
    }

    #[test]
    fn hostile_stderr_decodes_without_harm() {
        let huge = format!("kdeploy-node-error failed {}\n", "x".repeat(1 << 20));
        let (r, _) = refused(1, &huge);
        assert_eq!(r[0].detail.len(), 1 << 20);
        let (r, _) = refused(77, "kdeploy-node-error lock-lost a\0b\n\u{1b}[31m\n");
        assert_eq!(r[0].detail, "a\0b");
        assert!(matches!(decode(1, &[0xff, 0xfe, b'\n']), Ok(Failure::Untyped { .. })));
        assert_eq!(decode(9, b""), Ok(Failure::Untyped { status: 9, message: String::new() }));
    }

    #[test]
    fn a_run_is_refused_only_by_its_first_line_with_the_matching_status() {
        let line = b"kdeploy-node-error lock-lost other\n";
        assert_eq!(decode_run(77, line).map(|r| r.code), Some(Code::LockLost));
        assert_eq!(decode_run(1, line), None, "a hook that printed it and exited 1");
        assert_eq!(decode_run(77, b"hook output\nkdeploy-node-error lock-lost other\n"), None, "a hook's own 77");
    }
}
