//! What the test binaries share: where the repository is, how to run the
//! built `kdeploy`, and one module per kind of fixture — `closures`
//! (evaluate example clusters into closures), `import` (Kubespray
//! inventories), `http` (loopback servers and the nginx binary cache) and
//! `node` (blobs, manifests and the lab of real nodes).
// Each binary uses part of it.
#![allow(dead_code)]

pub mod closures;
pub mod http;
pub mod import;
pub mod node;

use std::path::PathBuf;
use std::process::Output;

/// The repository's root: the example clusters, the stdlib and the lab are found from here.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A finished command's status, stdout and stderr, for an assertion's message.
pub fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Kills process `.0` when dropped (an unwinding test included); a
/// process already gone makes it a no-op.
pub struct KillOnDrop(pub u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        // (quietly: the process has usually been waited for already)
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &self.0.to_string()])
            .stderr(std::process::Stdio::null())
            .status();
    }
}
