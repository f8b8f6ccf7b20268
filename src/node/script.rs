//! The node program (`kdeploy-node.sh`, embedded at build time) and how it
//! gets onto a node: installed once as `/var/lib/kdeploy/bin/node-<hash>.sh`,
//! keyed by the blake3 of its own text, so a node keeps every version a
//! deployer ever used and a re-run finds it already there (one round trip
//! either way: "install unless present"). Installing runs the program's
//! `requires` first: a node that lacks a tool or feature it needs gets no
//! program, and the deployer a typed refusal naming what is missing.
//! A command that must change nothing (`kdeploy status`) runs the program
//! read from its stdin when this version is not installed
//! ([`read_only_command`]).

use super::protocol::VERSION;
use crate::transport::shell_quote;

/// The program's text.
pub const SCRIPT: &str = include_str!("kdeploy-node.sh");

/// First 16 hex digits of the script's blake3: its version on the node.
pub fn script_id() -> String {
    blake3::hash(SCRIPT.as_bytes()).to_hex()[..16].to_string()
}

/// Where the script lives on the node, below `prefix` ("" on real nodes).
pub fn script_path(prefix: &str) -> String {
    format!("{prefix}/var/lib/kdeploy/bin/node-{}.sh", script_id())
}

/// A command that installs the script from its stdin unless it is already
/// there, after checking the node has what it needs (a failed check
/// leaves nothing behind and ends with the check's refusal). Safe to race
/// with itself (temp file + rename).
pub fn install_command(prefix: &str) -> String {
    let path = shell_quote(&script_path(prefix));
    let env = match prefix {
        "" => String::new(),
        p => format!("KDEPLOY_PREFIX={} ", shell_quote(p)),
    };
    format!(
        "test -f {path} || {{ mkdir -p \"$(dirname {path})\" && cat > {path}.$$ && \
         {{ {env}sh {path}.$$ --protocol {VERSION} requires || {{ st=$?; rm -f {path}.$$; exit $st; }}; }} && \
         mv -f {path}.$$ {path}; }}"
    )
}

/// A command line that runs the program with `args` without installing
/// it: the installed copy when this version is there, else the text on
/// the command's stdin (`sh -s`). For reading commands only.
pub fn read_only_command(prefix: &str, args: &[String]) -> String {
    let path = shell_quote(&script_path(prefix));
    let env = match prefix {
        "" => String::new(),
        p => format!("KDEPLOY_PREFIX={} ", shell_quote(p)),
    };
    let args: Vec<String> = args.iter().map(|a| shell_quote(a)).collect();
    let args = args.join(" ");
    format!(
        "if test -f {path}; then {env}exec sh {path} --protocol {VERSION} {args}; \
         else {env}exec sh -s -- --protocol {VERSION} {args}; fi"
    )
}
