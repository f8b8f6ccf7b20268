//! Work that gets an SSH connection of its own, closed after: a bulk
//! upload (so the packet buffer it grows is given back) and a command that
//! shows the node still takes new connections. [`Ahead`] is the bulk
//! connection started early ([`Host::expect_bulk`]); [`upload_on`] and
//! [`exec_on`] run the work on such a connection. Shared by [`SshHost`]
//! and the keeper's [`KeptHost`](super::keeper::KeptHost).

use std::future::Future;
use std::sync::Mutex;

use tokio::task::JoinHandle;

use super::{Error, Host, Output, SshHost};

/// A connection being made ahead of the upload that will use it.
#[derive(Default)]
pub struct Ahead(Mutex<Option<JoinHandle<Result<SshHost, Error>>>>);

impl Ahead {
    /// Start making it with `connect`, unless started already.
    pub fn start(&self, connect: impl Future<Output = Result<SshHost, Error>> + Send + 'static) {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(tokio::spawn(connect));
        }
    }

    /// The connection started ahead, else one made now with `connect`.
    pub async fn take(
        &self,
        host: &str,
        connect: impl Future<Output = Result<SshHost, Error>>,
    ) -> Result<SshHost, Error> {
        let started = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        match started {
            Some(h) => h.await.unwrap_or_else(|e| Err(Error::channel(host, e))),
            None => connect.await,
        }
    }

    /// A connection made ahead and never used goes (with its host).
    pub fn abort(&self) {
        if let Some(h) = self.0.lock().unwrap_or_else(|p| p.into_inner()).take() {
            h.abort();
        }
    }
}

/// Upload on `own`, then close it; on `host` if `own` could not be made
/// (the upload matters, not where it runs).
pub async fn upload_on(
    own: Result<SshHost, Error>,
    host: &(impl Host + ?Sized),
    command: &str,
    source: &mut (dyn std::io::Read + Send),
) -> Result<Output, Error> {
    let Ok(own) = own else { return host.upload(command, source).await };
    let out = own.upload(command, source).await;
    let _ = own.close().await;
    out
}

/// Run `command` on `fresh`, then close it.
pub async fn exec_on(fresh: Result<SshHost, Error>, command: &str) -> Result<Output, Error> {
    let fresh = fresh?;
    let out = fresh.exec(command, None).await;
    let _ = fresh.close().await;
    out
}
