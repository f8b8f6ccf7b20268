//! The connection keeper: SSH connections kept between runs for a while
//! (`--persist SECS`), as OpenSSH's ControlPersist keeps them for Ansible.
//! `server` is the keeper process, `client` the [`Host`](crate::transport::Host)
//! a run uses through it, `wire` what they say, `place` where its socket
//! is and how it starts.

mod client;
mod place;
mod server;
pub mod wire;

pub use client::KeptHost;
pub use place::{ensure_running, socket_path};
pub use server::serve;
