//! Work on many nodes at once, bounded: at most `--parallel` nodes connect,
//! push or run a step at the same time, so a thousand-node run holds a
//! bounded number of SSH channels, buffers and remote processes, and the
//! deployer's memory does not grow with the node count. Results come back
//! in the order of the work given.

use std::future::Future;

use futures::stream::{self, StreamExt};

/// What `--parallel 0` means.
pub const DEFAULT_PARALLEL: usize = 32;

/// `parallel`, with 0 meaning [`DEFAULT_PARALLEL`].
pub fn width(parallel: usize) -> usize {
    if parallel == 0 {
        DEFAULT_PARALLEL
    } else {
        parallel
    }
}

/// Runs the futures at most `parallel` at a time; results in input order.
pub async fn all<T, F: Future<Output = T>>(parallel: usize, work: impl IntoIterator<Item = F>) -> Vec<T> {
    stream::iter(work).buffered(width(parallel)).collect().await
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn no_more_than_parallel_run_at_once_and_results_keep_their_order() {
        let running = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let work = (0..20).map(|i| {
            let (running, most) = (&running, &most);
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(5 * (i % 3))).await;
                running.fetch_sub(1, Ordering::SeqCst);
                i
            }
        });
        let out = all(3, work).await;
        assert_eq!(out, (0..20).collect::<Vec<_>>());
        assert_eq!(most.load(Ordering::SeqCst), 3);
    }
}
