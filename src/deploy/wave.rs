//! One phase on every node that has it, all at once: the barrier step that
//! `switch` (activating) and `rollback` (switching back) share. It emits the
//! phase and per-node events, records every node step it ran as touched (a
//! failed step may be half done, so it is undone too) and says whether any
//! step failed; what a step does is the caller's.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Instant;

use futures::future::join_all;

use super::apply::Fail;
use super::events::{Event, Sink};

/// Per node index, the indices of its steps run so far, in order.
pub type Touched = BTreeMap<usize, Vec<usize>>;

/// Runs `step(node, step)` for every `(node, step)` of `on` concurrently;
/// `name(node)` names a node in events. True when any step failed.
pub async fn run_phase<F, Fut>(
    phase: &str,
    on: &[(usize, usize)],
    name: impl Fn(usize) -> String,
    touched: &mut Touched,
    sink: &dyn Sink,
    step: F,
) -> bool
where
    F: Fn(usize, usize) -> Fut,
    Fut: Future<Output = Result<(), Fail>>,
{
    sink.emit(Event::PhaseStarted { phase: phase.to_string(), nodes: on.iter().map(|&(i, _)| name(i)).collect() });
    let t0 = Instant::now();
    let results = join_all(on.iter().map(|&(i, k)| {
        let run = step(i, k);
        let node = name(i);
        async move {
            let t = Instant::now();
            let r = run.await;
            if r.is_ok() {
                sink.emit(Event::NodePhaseFinished { node, phase: phase.to_string(), took: t.elapsed() });
            }
            r
        }
    }))
    .await;
    let mut failed = false;
    for (&(i, k), r) in on.iter().zip(results) {
        touched.entry(i).or_default().push(k);
        if let Err(f) = r {
            failed = true;
            sink.emit(f.event(&name(i)));
        }
    }
    sink.emit(Event::PhaseFinished { phase: phase.to_string(), took: t0.elapsed() });
    failed
}
