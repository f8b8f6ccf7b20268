//! Ctrl-C during `switch` and `rollback`: the first SIGINT cancels the run
//! (no new batch starts; the executor puts every touched node back,
//! releases the locks, and the recap is printed; exit 130); a second one
//! exits at once.

use crate::deploy::Cancel;

use super::EXIT_INTERRUPTED;

/// Runs `work` on a new runtime with Ctrl-C wired to `cancel`.
pub fn run_cancellable<T>(work: impl std::future::Future<Output = T>, cancel: Cancel) -> T {
    super::switch::runtime().block_on(async {
        tokio::spawn(watch(cancel));
        work.await
    })
}

async fn watch(cancel: Cancel) {
    if tokio::signal::ctrl_c().await.is_err() {
        return;
    }
    cancel.cancel();
    eprintln!(
        "\nkdeploy: interrupted: finishing the steps in flight, then putting touched nodes back \
         (Ctrl-C again to exit at once)"
    );
    if tokio::signal::ctrl_c().await.is_ok() {
        eprintln!("kdeploy: interrupted twice: exiting now; nodes may need the next run to converge");
        std::process::exit(EXIT_INTERRUPTED.into());
    }
}
