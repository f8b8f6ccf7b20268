//! kdeploy's engine and CLI as a library, so integration tests can drive
//! each part: `cli` (the commands), `stdlib` (the embedded stdlib). The
//! engine knows nothing about Kubernetes: all of that lives in `stdlib/`.

pub mod cli;
pub mod closure;
pub mod deploy;
pub mod import;
pub mod nix_text;
pub mod node;
pub mod schema;
pub mod shown;
pub mod stdlib;
pub mod store;
pub mod transport;
