//! [`LocalHost`]: runs commands on this machine with `sh -c`. Used by unit
//! tests of the node program (with a prefix directory instead of `/`); the
//! real tests talk to lab nodes over SSH.

use std::process::Stdio;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::sync::{mpsc, oneshot};

use super::{BoxFut, Error, Host, Process};

/// Commands run by `sh -c` with the given extra environment.
pub struct LocalHost {
    name: String,
    env: Vec<(String, String)>,
    gate: Option<std::path::PathBuf>,
}

impl LocalHost {
    pub fn new(name: &str) -> Self {
        LocalHost { name: name.to_string(), env: Vec::new(), gate: None }
    }

    /// Refuse a new connection ([`Host::exec_fresh`]) while `path` exists,
    /// as a node whose sshd a change broke refuses one: what tests of the
    /// self-rollback switch in and out.
    pub fn refusing_new_connections_while(mut self, path: &std::path::Path) -> Self {
        self.gate = Some(path.to_path_buf());
        self
    }

    /// Set an environment variable for every command (e.g. `KDEPLOY_PREFIX`).
    pub fn with_env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_string(), value.to_string()));
        self
    }
}

impl Host for LocalHost {
    fn name(&self) -> &str {
        &self.name
    }

    fn exec_fresh<'a>(&'a self, command: &'a str) -> BoxFut<'a, Result<super::Output, Error>> {
        Box::pin(async move {
            match &self.gate {
                Some(gate) if gate.exists() => Err(Error::channel(&self.name, "connection refused (a test's gate)")),
                _ => self.exec(command, None).await,
            }
        })
    }

    fn spawn<'a>(&'a self, command: &'a str) -> BoxFut<'a, Result<Process, Error>> {
        Box::pin(async move {
            let mut child = Command::new("sh")
                .arg("-c")
                .arg(command)
                .envs(self.env.iter().map(|(k, v)| (k, v)))
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .kill_on_drop(false)
                .spawn()
                .map_err(|e| Error::channel(&self.name, format!("cannot start sh: {e}")))?;
            let (in_tx, mut in_rx) = mpsc::channel::<bytes::Bytes>(8);
            let (out_tx, out_rx) = mpsc::unbounded_channel();
            let (err_tx, err_rx) = mpsc::unbounded_channel();
            let (st_tx, st_rx) = oneshot::channel();
            let mut stdin = child.stdin.take().expect("piped");
            let mut stdout = child.stdout.take().expect("piped");
            let mut stderr = child.stderr.take().expect("piped");
            tokio::spawn(async move {
                while let Some(buf) = in_rx.recv().await {
                    if stdin.write_all(&buf).await.is_err() {
                        break;
                    }
                }
                drop(stdin);
            });
            let pump_out = tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                while let Ok(n) = stdout.read(&mut buf).await {
                    if n == 0 || out_tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            });
            let pump_err = tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                while let Ok(n) = stderr.read(&mut buf).await {
                    if n == 0 || err_tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            });
            tokio::spawn(async move {
                let status = child.wait().await.ok().and_then(|s| s.code()).map(|c| c as u32);
                let _ = pump_out.await;
                let _ = pump_err.await;
                let _ = st_tx.send(status.unwrap_or(255));
            });
            Ok(Process::new(in_tx, out_rx, err_rx, st_rx))
        })
    }

    fn close(&self) -> BoxFut<'_, Result<(), Error>> {
        Box::pin(async { Ok(()) })
    }
}
