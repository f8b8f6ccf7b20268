//! [`connect_all`]: open SSH connections to many nodes at once, at most
//! `parallel` handshakes in flight, one result per node in input order — an
//! unreachable node is reported, it does not fail the others.

use std::sync::Arc;

use tokio::sync::Semaphore;

use super::{Error, SshHost, SshOptions};

/// One node to connect to.
#[derive(Debug, Clone)]
pub struct NodeTarget {
    pub name: String,
    pub address: String,
    pub options: SshOptions,
}

/// Connect to every target, `parallel` at a time (at least 1).
pub async fn connect_all(targets: &[NodeTarget], parallel: usize) -> Vec<Result<SshHost, Error>> {
    let sem = Arc::new(Semaphore::new(parallel.max(1)));
    let tasks: Vec<_> = targets
        .iter()
        .cloned()
        .map(|t| {
            let sem = sem.clone();
            tokio::spawn(async move {
                let _permit = sem.acquire_owned().await.expect("semaphore never closed");
                SshHost::connect(&t.name, &t.address, &t.options).await
            })
        })
        .collect();
    let mut out = Vec::with_capacity(tasks.len());
    for (task, t) in tasks.into_iter().zip(targets) {
        out.push(task.await.unwrap_or_else(|e| Err(Error::channel(&t.name, format!("connect task failed: {e}")))));
    }
    out
}
