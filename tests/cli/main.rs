//! The command-line tests: the built `kdeploy` binary (and the library
//! behind it) on cluster files — evaluation into closures, validation,
//! rendered errors (snapshots), hostile input, imports of Kubespray
//! inventories, plans, certificates and the shell payloads. No nodes.

#[path = "../support/mod.rs"]
mod support;

mod anchor;
mod big_cluster;
mod certs;
mod closures;
mod closures_eval;
mod error_snapshots;
mod examples;
mod exit_codes;
mod hostile_input;
mod import;
mod import_fuzz;
mod import_untrusted;
mod select;
mod shell;
mod shell_payloads;
mod upgrade;
mod validation;
