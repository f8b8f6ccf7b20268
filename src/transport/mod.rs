//! How the engine reaches a node: the [`Host`] trait (run a command with
//! optional binary stdin, stream a blob into a command, hold a long-lived
//! process, close) and its implementations — [`SshHost`] (one SSH connection
//! per node, reused for the whole run, host keys checked against a
//! known_hosts file) and [`LocalHost`] (`sh -c` on this machine, for unit
//! tests). Orchestration only ever sees `dyn Host`; [`connect_all`] opens many
//! SSH connections in parallel, bounded, with one result per node.

mod chunk_pool;
mod connect;
mod error;
mod escalate;
mod host;
pub mod identity;
pub mod keeper;
mod known_hosts;
mod local;
mod openssh_config;
mod own_connection;
mod ssh;

pub use connect::{connect_all, connect_one, NodeTarget};
pub use error::Error;
pub use escalate::Escalation;
pub use host::{shell_quote, BoxFut, Host, Output, Process};
pub use known_hosts::HostKeyPolicy;
pub use local::LocalHost;
pub use openssh_config::{HostEntry, OpenSshConfig};
pub use ssh::{JumpHost, SshAuth, SshHost, SshOptions};
