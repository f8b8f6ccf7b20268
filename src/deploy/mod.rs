//! Converging nodes onto their closures (`kdeploy switch`): the pure plan
//! (`plan`, with `manifest` turning closure phases into node manifests),
//! the run itself (`run`: connect, lock, push, activate phase by phase with
//! barriers, roll back on failure, commit; `apply` does one phase on one
//! node; `state` reads and records what a node runs), the deployer's
//! generation history (`record`), and output driven by events (`events`,
//! `render` for progress lines, `live` for terminal progress bars, `recap` for the final summary).

pub mod apply;
pub mod connect;
pub mod events;
pub mod live;
pub mod manifest;
pub mod plan;
pub mod recap;
pub mod record;
pub mod render;
pub mod rollback;
pub mod run;
pub mod state;
pub mod wave;

pub use connect::SshSettings;
pub use run::{switch, Outcome, SwitchOptions};
