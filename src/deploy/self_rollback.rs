//! A node cut off from the run by one of its own steps (an armed step
//! whose confirmation found no new connection, `step::confirm`): the run
//! has let go of it, and here waits for the node to move its steps back by
//! itself and take connections again, then reports what it did — or, past
//! the time that should take, that it did not come back.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures::future::join_all;

use super::events::{Event, Sink};
use super::execute::Session;
use crate::node::protocol::constants::SILENCE;
use crate::node::Node;

/// How often a cut-off node is tried over a new connection.
const POLL: Duration = Duration::from_secs(2);

/// Wait for every node of `cut_off` (its armed phase, its deadline).
pub async fn await_all(session: &Session<'_>, cut_off: &BTreeMap<String, (String, Duration)>, sink: &dyn Sink) {
    join_all(cut_off.iter().filter_map(|(name, (phase, within))| {
        let o = session.get(name)?;
        Some(await_one(&o.node, phase, *within, sink))
    }))
    .await;
}

/// The node's watchdog acts past its deadline once the lock is free: the
/// run's end of input reaches the node's lock shell at once, or its silence
/// does within [`SILENCE`]; the rest is margin for the way back.
fn patience(within: Duration) -> Duration {
    within + SILENCE + Duration::from_secs(30)
}

async fn await_one(node: &Node<'_>, phase: &str, within: Duration, sink: &dyn Sink) {
    let name = node.host().name().to_string();
    let t0 = Instant::now();
    let mut last = String::from("no answer yet");
    while t0.elapsed() < patience(within) {
        tokio::time::sleep(POLL).await;
        match node.status_fresh().await {
            Ok(st) if !st.rolled_back.is_empty() => {
                for rollback in st.rolled_back {
                    sink.emit(Event::SelfRolledBack { node: name.clone(), rollback });
                }
                return;
            }
            Ok(_) => last = "it takes connections again, but has not moved its phases back yet".into(),
            Err(e) => last = e.to_string(),
        }
    }
    sink.emit(Event::RollbackFailed {
        node: name,
        phase: phase.to_string(),
        message: format!(
            "the node did not report moving its phases back within {} s ({last}); it does so by itself once \
             its deadline has passed and no run holds its lock: check with `kdeploy status`",
            patience(within).as_secs()
        ),
    });
}
