//! [`KeptHost`]: a node reached through the connection keeper. Commands
//! run on the keeper's connection (one socket connection each, frames of
//! [`super::wire`]); what needs a connection of its own — a bulk upload, a
//! check that the node still takes new connections — makes one directly,
//! as [`SshHost`] does, so many bytes never pass through the keeper.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot};

use super::wire::{self, Request, Target};
use crate::transport::own_connection::{exec_on, upload_on, Ahead};
use crate::transport::{connect_one, BoxFut, Error, Host, NodeTarget, Output, Process, SshHost};

pub struct KeptHost {
    name: String,
    socket: PathBuf,
    target: Target,
    direct: NodeTarget,
    /// The connection of a coming bulk upload ([`Host::expect_bulk`]).
    bulk: Ahead,
}

impl KeptHost {
    /// Ask the keeper at `socket` for a connection to `t` (kept or made
    /// now). `None` when `t` cannot go through a keeper (no way to log in:
    /// a direct connection says why).
    pub async fn connect(socket: &Path, t: &NodeTarget) -> Option<Result<KeptHost, Error>> {
        let target = Target::of(t)?;
        let host = KeptHost {
            name: t.name.clone(),
            socket: socket.to_path_buf(),
            target: target.clone(),
            direct: t.clone(),
            bulk: Default::default(),
        };
        Some(host.request(Request::Connect { target }).await.map(|_| host))
    }

    /// A socket connection to the keeper with `req` answered.
    async fn request(&self, req: Request) -> Result<UnixStream, Error> {
        let gone = |e: std::io::Error| Error::channel(&self.name, format!("the connection keeper: {e}"));
        let mut s = UnixStream::connect(&self.socket).await.map_err(gone)?;
        wire::write_request(&mut s, &req).await.map_err(gone)?;
        wire::read_answer(&mut s, &self.name).await?;
        Ok(s)
    }

    /// A connection of this run's own, as a run without a keeper makes it.
    async fn direct(&self) -> Result<SshHost, Error> {
        connect_one(&self.direct).await
    }
}

impl Host for KeptHost {
    fn name(&self) -> &str {
        &self.name
    }

    fn spawn<'a>(&'a self, command: &'a str) -> BoxFut<'a, Result<Process, Error>> {
        Box::pin(async move {
            let req = Request::Spawn { target: self.target.clone(), command: command.to_string() };
            let (mut from_keeper, mut to_keeper) = self.request(req).await?.into_split();
            let (in_tx, mut in_rx) = mpsc::channel::<Bytes>(2);
            let (out_tx, out_rx) = mpsc::unbounded_channel();
            let (err_tx, err_rx) = mpsc::unbounded_channel();
            let (st_tx, st_rx) = oneshot::channel();
            let (done_tx, done_rx) = oneshot::channel::<()>();
            // stdin, then its end; the socket stays open until the command
            // has ended (the keeper takes a closed socket for a run gone)
            tokio::spawn(async move {
                while let Some(buf) = in_rx.recv().await {
                    if wire::write_frame(&mut to_keeper, wire::STDIN, &buf).await.is_err() {
                        break;
                    }
                }
                let _ = wire::write_frame(&mut to_keeper, wire::STDIN_END, &[]).await;
                let _ = done_rx.await;
            });
            tokio::spawn(async move {
                let mut status = None;
                while let Ok(Some((kind, bytes))) = wire::read_frame(&mut from_keeper).await {
                    match kind {
                        wire::STDOUT => drop(out_tx.send(bytes)),
                        wire::STDERR => drop(err_tx.send(bytes)),
                        wire::STATUS if bytes.len() == 4 => {
                            status = Some(u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]));
                            break;
                        }
                        _ => break,
                    }
                }
                if status.is_none() {
                    // (as a connection that drops: 255, and why on stderr)
                    let why = "the connection keeper (`kdeploy keeper`) went away before the command's end\n";
                    let _ = err_tx.send(why.as_bytes().to_vec());
                }
                drop((out_tx, err_tx, done_tx));
                let _ = st_tx.send(status.unwrap_or(255));
            });
            Ok(Process::new(in_tx, out_rx, err_rx, st_rx))
        })
    }

    /// The keeper keeps the connection; a bulk connection being made goes.
    fn close(&self) -> BoxFut<'_, Result<(), Error>> {
        self.bulk.abort();
        Box::pin(async { Ok(()) })
    }

    fn exec_fresh<'a>(&'a self, command: &'a str) -> BoxFut<'a, Result<Output, Error>> {
        Box::pin(async move { exec_on(self.direct().await, command).await })
    }

    fn upload_bulk<'a>(
        &'a self,
        command: &'a str,
        source: &'a mut (dyn std::io::Read + Send),
    ) -> BoxFut<'a, Result<Output, Error>> {
        Box::pin(async move {
            let own = self.bulk.take(&self.name, self.direct()).await;
            upload_on(own, self, command, source).await
        })
    }

    fn expect_bulk(&self) {
        let t = self.direct.clone();
        self.bulk.start(async move { connect_one(&t).await });
    }
}
