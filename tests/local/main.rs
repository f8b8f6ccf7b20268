//! The local tests: the deployer and the node program on this machine,
//! without the lab — node program commands in temporary roots, crash and
//! lock handling, caches and downloads from loopback servers, SSH host-key
//! checks against a local server, secrets, confinement, plans of switches,
//! resets, upgrades and membership changes, switches without an unreachable
//! node.

#[path = "../support/mod.rs"]
mod support;

mod cache;
mod closures_store;
mod confinement;
mod deploy;
mod fetch_http;
mod membership;
mod node;
mod node_durability;
mod node_lock;
mod node_pack;
mod node_protocol;
mod node_stage_names;
mod node_switch_many;
mod partial;
mod reflink_stage;
mod reset;
mod self_rollback;
mod snapshot;
mod ssh_host_keys;
mod terminal_escapes;
mod upgrade;
mod user_secrets;
