//! What a run and the connection keeper say to each other over the
//! keeper's Unix socket, one socket connection per request: a JSON line
//! ([`Request`]), then binary frames both ways — `KIND LEN BYTES`, KIND one
//! byte, LEN four (big-endian), at most [`MAX_FRAME`] bytes. A frame longer
//! than that, or a kind the reader does not expect, ends the exchange: the
//! keeper treats its socket as it treats a node's answer, as input to check.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::transport::{Error, Escalation, HostKeyPolicy, JumpHost, NodeTarget, SshAuth, SshOptions};

/// The longest request line and the longest frame: a frame carries at most
/// one upload chunk ([`crate::transport::host::UPLOAD_CHUNK`]) or one read
/// of a channel's output.
pub const MAX_LINE: usize = 64 * 1024;
pub const MAX_FRAME: usize = 1024 * 1024;

/// Frame kinds. Run → keeper: stdin bytes, then stdin's end. Keeper → run:
/// the answer to the request ([`OK`] or [`REFUSED`] with a JSON
/// [`Error`]), then stdout, stderr and the exit status (4 bytes).
pub const STDIN: u8 = 0;
pub const STDIN_END: u8 = 1;
pub const OK: u8 = 10;
pub const REFUSED: u8 = 11;
pub const STDOUT: u8 = 12;
pub const STDERR: u8 = 13;
pub const STATUS: u8 = 14;

/// One request per socket connection.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Request {
    /// Have a connection to this node (kept, or made now): [`OK`] or
    /// [`REFUSED`] with why, as a direct connection would have failed.
    Connect { target: Target },
    /// Run `command` on the kept connection: [`OK`], then the command's
    /// output frames and its status.
    Spawn { target: Target, command: String },
}

/// How to reach a node, as the run worked it out ([`NodeTarget`]). Its
/// JSON text is the key the keeper keeps a connection under: two runs
/// share a connection only when every setting is the same.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Target {
    pub name: String,
    pub address: String,
    pub user: String,
    pub port: u16,
    /// The key file and its passphrase; `None`: the ssh-agent.
    pub key: Option<(PathBuf, Option<String>)>,
    pub known_hosts: PathBuf,
    pub accept_new: bool,
    pub connect_timeout_ms: u64,
    pub jump: Option<String>,
    pub escalate: Option<String>,
}

impl Target {
    /// The target of `t`; `None` when it has no way to log in (a direct
    /// connection reports that, as it always has).
    pub fn of(t: &NodeTarget) -> Option<Target> {
        let o = &t.options;
        let key = match &o.auth {
            SshAuth::KeyFile { path, passphrase } => Some((absolute(path), passphrase.clone())),
            SshAuth::Agent => None,
            SshAuth::Unavailable(_) => return None,
        };
        Some(Target {
            name: t.name.clone(),
            address: t.address.clone(),
            user: o.user.clone(),
            port: o.port,
            key,
            known_hosts: absolute(o.host_keys.file()),
            accept_new: matches!(o.host_keys, HostKeyPolicy::AcceptNew(_)),
            connect_timeout_ms: o.connect_timeout.as_millis().try_into().unwrap_or(u64::MAX),
            jump: o.jump.as_ref().map(JumpHost::to_string),
            escalate: o.escalate.map(|e| e.program().to_string()),
        })
    }

    /// Back to the settings a connection is made with.
    pub fn node_target(&self) -> Result<NodeTarget, Error> {
        let file = self.known_hosts.clone();
        let escalate = match self.escalate.as_deref() {
            None => None,
            Some(m) => Escalation::for_login(&self.user, m)?,
        };
        let options = SshOptions {
            user: self.user.clone(),
            port: self.port,
            auth: match &self.key {
                Some((path, passphrase)) => SshAuth::KeyFile { path: path.clone(), passphrase: passphrase.clone() },
                None => SshAuth::Agent,
            },
            host_keys: if self.accept_new { HostKeyPolicy::AcceptNew(file) } else { HostKeyPolicy::Strict(file) },
            connect_timeout: Duration::from_millis(self.connect_timeout_ms),
            jump: self.jump.as_deref().map(str::parse).transpose()?,
            escalate,
            persist: None,
        };
        Ok(NodeTarget { name: self.name.clone(), address: self.address.clone(), options })
    }
}

/// `path` from this run's working directory: the keeper's is another.
fn absolute(path: &std::path::Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A frame read: its kind and bytes.
pub type Frame = (u8, Vec<u8>);

pub async fn write_frame<W: AsyncWrite + Unpin>(w: &mut W, kind: u8, bytes: &[u8]) -> std::io::Result<()> {
    let len = u32::try_from(bytes.len()).ok().filter(|&n| n as usize <= MAX_FRAME).ok_or_else(too_long)?;
    let mut head = [kind, 0, 0, 0, 0];
    head[1..].copy_from_slice(&len.to_be_bytes());
    w.write_all(&head).await?;
    w.write_all(bytes).await
}

/// The next frame; `None` at a clean end of the stream.
pub async fn read_frame<R: AsyncRead + Unpin>(r: &mut R) -> std::io::Result<Option<Frame>> {
    let mut head = [0u8; 5];
    match r.read_exact(&mut head).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    if len > MAX_FRAME {
        return Err(too_long());
    }
    let mut bytes = vec![0; len];
    r.read_exact(&mut bytes).await?;
    Ok(Some((head[0], bytes)))
}

fn too_long() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, format!("a keeper frame longer than {MAX_FRAME} bytes"))
}

/// The request line, up to its `\n`, at most [`MAX_LINE`] bytes. Read from
/// a buffered reader: what follows the line stays in its buffer.
pub async fn read_request<R: AsyncBufRead + Unpin>(r: &mut R) -> std::io::Result<Request> {
    let mut line = Vec::new();
    (&mut *r).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line).await?;
    if line.pop() != Some(b'\n') {
        let why = if line.len() >= MAX_LINE { "a keeper request line too long" } else { "a keeper request cut short" };
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, why));
    }
    serde_json::from_slice(&line).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

pub async fn write_request<W: AsyncWrite + Unpin>(w: &mut W, req: &Request) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(req).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    line.push(b'\n');
    w.write_all(&line).await
}

/// The keeper's answer to a request: `Ok` or the typed refusal.
pub async fn read_answer<R: AsyncRead + Unpin>(r: &mut R, host: &str) -> Result<(), Error> {
    match read_frame(r).await {
        Ok(Some((OK, _))) => Ok(()),
        Ok(Some((REFUSED, json))) => Err(serde_json::from_slice(&json)
            .unwrap_or_else(|e| Error::channel(host, format!("the connection keeper's refusal: {e}")))),
        Ok(_) => Err(Error::channel(host, "the connection keeper ended the request without an answer")),
        Err(e) => Err(Error::channel(host, format!("the connection keeper: {e}"))),
    }
}

pub async fn write_answer<W: AsyncWrite + Unpin>(w: &mut W, answer: &Result<(), Error>) -> std::io::Result<()> {
    match answer {
        Ok(()) => write_frame(w, OK, &[]).await,
        Err(e) => {
            let json = serde_json::to_vec(e).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
            write_frame(w, REFUSED, &json).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_round_trip_and_a_long_one_is_refused() {
        let mut buf = Vec::new();
        write_frame(&mut buf, STDOUT, b"hello").await.unwrap();
        write_frame(&mut buf, STATUS, &7u32.to_be_bytes()).await.unwrap();
        let mut r = buf.as_slice();
        assert_eq!(read_frame(&mut r).await.unwrap(), Some((STDOUT, b"hello".to_vec())));
        assert_eq!(read_frame(&mut r).await.unwrap(), Some((STATUS, 7u32.to_be_bytes().to_vec())));
        assert_eq!(read_frame(&mut r).await.unwrap(), None);
        // a hostile length is refused before anything is allocated for it
        let hostile = [STDIN, 0xff, 0xff, 0xff, 0xff];
        assert!(read_frame(&mut hostile.as_slice()).await.is_err());
        assert!(write_frame(&mut Vec::new(), STDIN, &vec![0; MAX_FRAME + 1]).await.is_err());
    }

    #[tokio::test]
    async fn a_request_line_is_bounded_and_checked() {
        let long = vec![b'x'; MAX_LINE + 10];
        assert!(read_request(&mut long.as_slice()).await.is_err());
        assert!(read_request(&mut &b"not json\n"[..]).await.is_err());
        let t = Target {
            name: "n1".into(),
            address: "10.0.0.1".into(),
            user: "ops".into(),
            port: 22,
            key: None,
            known_hosts: "/k".into(),
            accept_new: false,
            connect_timeout_ms: 10_000,
            jump: Some("j@10.0.0.9:22".into()),
            escalate: Some("sudo".into()),
        };
        let mut buf = Vec::new();
        write_request(&mut buf, &Request::Connect { target: t.clone() }).await.unwrap();
        let Request::Connect { target } = read_request(&mut buf.as_slice()).await.unwrap() else { panic!() };
        assert_eq!(target, t);
        let back = Target::of(&target.node_target().unwrap()).unwrap();
        assert_eq!(back, t, "a target survives the way to the keeper and back");
    }

    #[tokio::test]
    async fn a_refusal_arrives_as_the_typed_error() {
        let e = Error::HostKeyChanged { host: "n1".into(), file: "/k".into(), line: 3 };
        let mut buf = Vec::new();
        write_answer(&mut buf, &Err(e.clone())).await.unwrap();
        assert_eq!(read_answer(&mut buf.as_slice(), "n1").await, Err(e));
    }
}
