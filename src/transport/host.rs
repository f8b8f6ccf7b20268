//! The [`Host`] trait and the types it hands out: [`Output`] (exit status and
//! raw stdout/stderr bytes — never lossy strings) and [`Process`] (a running
//! command with a stdin sender and stdout/stderr receivers). `spawn` is the
//! one primitive an implementation provides; `exec` and `upload` are built on
//! it, so every transport behaves the same way.

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use tokio::sync::{mpsc, oneshot};

use super::chunk_pool::ChunkPool;
use super::Error;

/// A boxed, `Send` future: keeps [`Host`] object-safe (`dyn Host`).
pub type BoxFut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Chunk size for streaming uploads (a few SSH packets; large enough that
/// per-chunk overhead vanishes, small enough to bound memory).
pub const UPLOAD_CHUNK: usize = 256 * 1024;

/// What a finished command produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Exit status; 255 when the command died without one (e.g. by a signal).
    pub status: u32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Output {
    pub fn success(&self) -> bool {
        self.status == 0
    }

    /// `Ok(self)` on status 0, else [`Error::Failed`] naming host and command
    /// with the (trimmed, lossily decoded) stderr.
    pub fn check(self, host: &str, command: &str) -> Result<Output, Error> {
        if self.success() {
            Ok(self)
        } else {
            Err(Error::Failed {
                host: host.to_string(),
                command: command.to_string(),
                status: self.status,
                stderr: String::from_utf8_lossy(&self.stderr).trim().to_string(),
            })
        }
    }

    pub fn stdout_str(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// A running command. Dropping `stdin` (or calling [`Process::close_stdin`])
/// sends EOF; dropping the whole `Process` therefore ends a command that
/// reads its stdin to the end (this is how the node lock is released).
pub struct Process {
    pub stdin: Option<mpsc::Sender<Bytes>>,
    pub stdout: mpsc::UnboundedReceiver<Vec<u8>>,
    pub stderr: mpsc::UnboundedReceiver<Vec<u8>>,
    pub status: oneshot::Receiver<u32>,
    /// Bytes of stdout already received but not yet returned by `read_line`.
    pending: Vec<u8>,
}

impl Process {
    /// Used by transports: wrap the channel ends of a started command.
    pub fn new(
        stdin: mpsc::Sender<Bytes>,
        stdout: mpsc::UnboundedReceiver<Vec<u8>>,
        stderr: mpsc::UnboundedReceiver<Vec<u8>>,
        status: oneshot::Receiver<u32>,
    ) -> Self {
        Process { stdin: Some(stdin), stdout, stderr, status, pending: Vec::new() }
    }

    /// Send bytes to the command's stdin (waits while the transport's buffer
    /// is full: this is the upload's backpressure). Empty writes are ignored.
    pub async fn write(&mut self, data: Bytes) -> Result<(), Error> {
        if data.is_empty() {
            return Ok(());
        }
        match &self.stdin {
            Some(tx) => tx.send(data).await.map_err(|_| Error::channel("?", "stdin closed")),
            None => Err(Error::channel("?", "stdin already closed")),
        }
    }

    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next line of stdout without its `\n` (`None` at end of output).
    pub async fn read_line(&mut self) -> Option<Vec<u8>> {
        loop {
            if let Some(i) = self.pending.iter().position(|&b| b == b'\n') {
                let rest = self.pending.split_off(i + 1);
                let mut line = std::mem::replace(&mut self.pending, rest);
                line.pop();
                return Some(line);
            }
            match self.stdout.recv().await {
                Some(chunk) => self.pending.extend_from_slice(&chunk),
                None if self.pending.is_empty() => return None,
                None => return Some(std::mem::take(&mut self.pending)),
            }
        }
    }

    /// Close stdin, collect the remaining output and the exit status.
    /// As [`Process::wait`], keeping at most `limit` bytes of stdout and
    /// of stderr (the rest is read and dropped, so the command never
    /// blocks on a full pipe): for output a user's command may make as
    /// large as it likes. `true` when something was dropped.
    pub async fn wait_bounded(mut self, limit: usize) -> (Output, bool) {
        self.stdin = None;
        let mut stdout = std::mem::take(&mut self.pending);
        let mut stderr = Vec::new();
        let mut dropped = stdout.len() > limit;
        stdout.truncate(limit);
        let mut keep = |buf: &mut Vec<u8>, c: &[u8]| {
            let room = limit.saturating_sub(buf.len());
            buf.extend_from_slice(&c[..c.len().min(room)]);
            dropped |= c.len() > room;
        };
        let (mut out_open, mut err_open) = (true, true);
        while out_open || err_open {
            tokio::select! {
                chunk = self.stdout.recv(), if out_open => match chunk {
                    Some(c) => keep(&mut stdout, &c),
                    None => out_open = false,
                },
                chunk = self.stderr.recv(), if err_open => match chunk {
                    Some(c) => keep(&mut stderr, &c),
                    None => err_open = false,
                },
            }
        }
        let status = self.status.await.unwrap_or(255);
        (Output { status, stdout, stderr }, dropped)
    }

    /// Wait for the command to end, with all it printed.
    pub async fn wait(self) -> Output {
        self.wait_bounded(usize::MAX).await.0
    }
}

/// A node the engine can run commands on. Implementations must be cheap to
/// share (`&dyn Host` across tasks) and run independent commands concurrently.
pub trait Host: Send + Sync {
    /// The node's name, as used in every message about it.
    fn name(&self) -> &str;

    /// Start `command` (a POSIX sh command line) and return its handles.
    fn spawn<'a>(&'a self, command: &'a str) -> BoxFut<'a, Result<Process, Error>>;

    /// Close the connection; later calls fail.
    fn close(&self) -> BoxFut<'_, Result<(), Error>>;

    /// Run `command` to completion, feeding it `stdin` (binary-safe) if given
    /// (otherwise its stdin is empty).
    fn exec<'a>(&'a self, command: &'a str, stdin: Option<&'a [u8]>) -> BoxFut<'a, Result<Output, Error>> {
        Box::pin(async move {
            let mut p = self.spawn(command).await?;
            if let Some(data) = stdin {
                for chunk in data.chunks(UPLOAD_CHUNK) {
                    // A command may legitimately exit without reading all of
                    // its stdin: stop feeding, its status tells the story.
                    if p.write(Bytes::copy_from_slice(chunk)).await.is_err() {
                        break;
                    }
                }
            }
            Ok(p.wait().await)
        })
    }

    /// Stream everything `source` yields into `command`'s stdin, then EOF,
    /// and wait for the command. Memory stays bounded whatever the size.
    /// The source is read synchronously, one chunk at a time: blobs come
    /// from files in the page cache, and a blocking-pool reader would add
    /// threads and a 2 MiB buffer per read for nothing. A source that is
    /// not ready yet says `WouldBlock`, and is read again a moment later.
    fn upload<'a>(
        &'a self,
        command: &'a str,
        source: &'a mut (dyn std::io::Read + Send),
    ) -> BoxFut<'a, Result<Output, Error>> {
        Box::pin(async move {
            let mut p = self.spawn(command).await?;
            let mut pool = ChunkPool::default();
            loop {
                let mut buf = pool.take();
                let n = loop {
                    match read_full(source, &mut buf) {
                        // a source still making its next bytes (a blob being
                        // compressed): the run's other work goes on meanwhile
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => tokio::time::sleep(NOT_READY).await,
                        r => {
                            break r.map_err(|e| Error::channel(self.name(), format!("reading upload source: {e}")))?
                        }
                    }
                };
                if n == 0 {
                    break;
                }
                buf.truncate(n);
                if p.write(pool.give(buf)).await.is_err() {
                    break;
                }
            }
            Ok(p.wait().await)
        })
    }

    /// Run `command` on a new connection, made as this one was, then close
    /// that: shows that the node still takes connections (a change may cut
    /// off new ones while this one lives on). A transport without
    /// connections runs it as [`Host::exec`] does.
    fn exec_fresh<'a>(&'a self, command: &'a str) -> BoxFut<'a, Result<Output, Error>> {
        self.exec(command, None)
    }

    /// [`Host::upload`] of many bytes (a node's binaries). A transport may
    /// give it a connection of its own, closed when it is done, so that
    /// what the stream grew on the way (an SSH session keeps its packet
    /// buffer at its largest) is given back rather than held for the rest
    /// of the run by every node pushed to.
    fn upload_bulk<'a>(
        &'a self,
        command: &'a str,
        source: &'a mut (dyn std::io::Read + Send),
    ) -> BoxFut<'a, Result<Output, Error>> {
        self.upload(command, source)
    }

    /// An [`Host::upload_bulk`] is coming: a transport that makes a
    /// connection of its own for it may start making it now, beside the
    /// commands before it. Nothing by default.
    fn expect_bulk(&self) {}
}

/// How long an upload waits before reading again from a source that is
/// not ready (`WouldBlock`).
const NOT_READY: std::time::Duration = std::time::Duration::from_millis(3);

/// Fill `buf` as far as the source allows; 0 only at end of input; what
/// there is when the source is not ready for more (`WouldBlock` if nothing).
fn read_full(src: &mut (dyn std::io::Read + Send), buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match src.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(m) => n += m,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && n > 0 => break,
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Quote one word for a POSIX sh command line.
pub fn shell_quote(word: &str) -> String {
    if !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b)) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("abc/d.e"), "abc/d.e");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
