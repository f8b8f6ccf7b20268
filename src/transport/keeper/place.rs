//! Where the connection keeper listens, and starting it. Its socket lives
//! in a directory only this user can enter — `$XDG_RUNTIME_DIR/kdeploy`,
//! else `/tmp/kdeploy-UID` — checked before every use (a directory, not a
//! link, ours, no access for group or others), since whoever can reach
//! the socket can run commands as root on the nodes. One keeper per
//! kdeploy binary and ssh-agent: the socket's name is a hash of the
//! executable's path, size, mtime and inode, so a rebuilt kdeploy never
//! talks to a keeper of another version of the wire, and of the run's
//! `SSH_AUTH_SOCK`, since a keeper logs in with the agent of the run that
//! started it: a run from another login session (another agent, or none)
//! gets a keeper of its own rather than connections made with a stale one.

use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// This process's effective user id.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The keeper's private directory, made 0700 when missing; `Err` says why
/// it cannot be trusted.
pub fn private_dir() -> Result<PathBuf, String> {
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        Some(run) if run.is_absolute() && run.is_dir() => run.join("kdeploy"),
        _ => PathBuf::from(format!("/tmp/kdeploy-{}", euid())),
    };
    if let Err(e) = std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        if e.kind() != std::io::ErrorKind::AlreadyExists {
            return Err(format!("cannot make {}: {e}", dir.display()));
        }
    }
    let m = std::fs::symlink_metadata(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !m.is_dir() || m.uid() != euid() || m.mode() & 0o077 != 0 {
        return Err(format!(
            "{} is not a directory of this user's that only it can enter (mode {:o}, owner {}): not keeping connections there",
            dir.display(),
            m.mode() & 0o7777,
            m.uid()
        ));
    }
    Ok(dir)
}

/// The socket of this binary's keeper, in [`private_dir`].
pub fn socket_path() -> Result<PathBuf, String> {
    let dir = private_dir()?;
    let exe = std::env::current_exe().map_err(|e| format!("which binary is running: {e}"))?;
    let m = std::fs::metadata(&exe).map_err(|e| format!("{}: {e}", exe.display()))?;
    Ok(dir.join(socket_name(&exe, &m, std::env::var_os("SSH_AUTH_SOCK").as_deref())))
}

/// The socket's name for the binary `exe` (its metadata `m`) and the
/// ssh-agent at `agent`.
fn socket_name(exe: &Path, m: &std::fs::Metadata, agent: Option<&std::ffi::OsStr>) -> String {
    let mut h = blake3::Hasher::new();
    h.update(exe.as_os_str().as_encoded_bytes());
    for n in [m.len(), m.mtime() as u64, m.mtime_nsec() as u64, m.ino()] {
        h.update(&n.to_le_bytes());
    }
    // (a length first: no agent path can pass for another's)
    let agent = agent.map(std::ffi::OsStr::as_encoded_bytes);
    h.update(&agent.map_or(u64::MAX, |a| a.len() as u64).to_le_bytes());
    h.update(agent.unwrap_or_default());
    format!("keeper-{}.sock", &h.finalize().to_hex()[..16])
}

/// A keeper at `socket`, started (in its own process group, so a Ctrl-C
/// of this run does not end it) unless one answers there already. Waits
/// up to two seconds for it to listen.
pub async fn ensure_running(socket: &Path, persist: Duration) -> Result<(), String> {
    if tokio::net::UnixStream::connect(socket).await.is_ok() {
        return Ok(());
    }
    let exe = std::env::current_exe().map_err(|e| format!("which binary is running: {e}"))?;
    std::process::Command::new(exe)
        .arg("keeper")
        .arg("--socket")
        .arg(socket)
        .arg("--persist")
        .arg(persist.as_secs().to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("starting the connection keeper: {e}"))?;
    for _ in 0..200 {
        if tokio::net::UnixStream::connect(socket).await.is_ok() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Err(format!("the connection keeper did not listen on {} within 2 s", socket.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn a_run_with_another_agent_gets_another_keeper() {
        let exe = std::env::current_exe().unwrap();
        let m = std::fs::metadata(&exe).unwrap();
        let name = |agent: Option<&str>| socket_name(&exe, &m, agent.map(OsStr::new));
        assert_eq!(name(Some("/tmp/ssh-a/agent.1")), name(Some("/tmp/ssh-a/agent.1")));
        assert_ne!(name(Some("/tmp/ssh-a/agent.1")), name(Some("/tmp/ssh-b/agent.2")));
        assert_ne!(name(Some("/tmp/ssh-a/agent.1")), name(None));
        assert_ne!(name(Some("")), name(None));
    }
}
