//! [`connect_all`]: open SSH connections to many nodes at once, at most
//! `parallel` handshakes in flight, one result per node in input order — an
//! unreachable node is reported, it does not fail the others. Nodes behind
//! a bastion share one connection to it, opened first.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::Semaphore;

use super::{Error, JumpHost, SshHost, SshOptions};

/// One node to connect to.
#[derive(Debug, Clone)]
pub struct NodeTarget {
    pub name: String,
    pub address: String,
    pub options: SshOptions,
}

/// Connect to every target, `parallel` at a time (at least 1).
pub async fn connect_all(targets: &[NodeTarget], parallel: usize) -> Vec<Result<SshHost, Error>> {
    let bastions = Arc::new(connect_bastions(targets).await);
    let sem = Arc::new(Semaphore::new(parallel.max(1)));
    let tasks: Vec<_> = targets
        .iter()
        .cloned()
        .map(|t| {
            let sem = sem.clone();
            let bastions = bastions.clone();
            tokio::spawn(async move {
                let _permit = sem.acquire_owned().await.expect("semaphore never closed");
                match &t.options.jump {
                    None => SshHost::connect(&t.name, &t.address, &t.options).await,
                    Some(j) => match &bastions[j] {
                        Ok(b) => SshHost::connect_via(&t.name, &t.address, &t.options, b).await,
                        Err(e) => Err(Error::Through { host: t.name.clone(), via: Box::new(e.clone()) }),
                    },
                }
            })
        })
        .collect();
    let mut out = Vec::with_capacity(tasks.len());
    for (task, t) in tasks.into_iter().zip(targets) {
        out.push(task.await.unwrap_or_else(|e| Err(Error::channel(&t.name, format!("connect task failed: {e}")))));
    }
    out
}

/// One target, as [`connect_all`] connects it (its bastion too).
pub async fn connect_one(t: &NodeTarget) -> Result<SshHost, Error> {
    let made = connect_all(std::slice::from_ref(t), 1).await.pop();
    made.unwrap_or_else(|| Err(Error::channel(&t.name, "no connection made")))
}

/// One connection per distinct bastion, authenticated and host-key checked
/// like the first node that names it.
async fn connect_bastions(targets: &[NodeTarget]) -> HashMap<JumpHost, Result<SshHost, Error>> {
    let mut wanted: HashMap<JumpHost, SshOptions> = HashMap::new();
    for t in targets {
        if let Some(j) = &t.options.jump {
            wanted.entry(j.clone()).or_insert_with(|| SshOptions {
                user: j.user.clone(),
                port: j.port,
                jump: None,
                escalate: None,
                ..t.options.clone()
            });
        }
    }
    let conns = futures::future::join_all(wanted.iter().map(|(j, o)| async move {
        let label = format!("jump host {j}");
        (j.clone(), SshHost::connect(&label, &j.host, o).await)
    }))
    .await;
    conns.into_iter().collect()
}
