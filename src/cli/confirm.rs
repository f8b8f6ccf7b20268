//! The operator's consent to a destructive plan (`deploy::consent`), as
//! the commands that change nodes get it: `--yes` gives it beforehand;
//! with a terminal on stdin and stderr the plan's destructive actions are
//! shown and a `y` or `yes` answer goes on (anything else, or end of
//! input, does not); without a terminal there is no one to ask, and a
//! destructive plan is refused (exit 6) rather than assumed wanted.

use std::io::{BufRead, IsTerminal, Read, Write};
use std::sync::Arc;

use crate::deploy::consent::Consent;
use crate::deploy::live::Progress;

/// How this process gets consent: `yes` given, a terminal to ask on, or neither.
pub fn consent(yes: bool, progress: &Progress) -> Consent {
    if yes {
        return Consent::Given;
    }
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Consent::Absent;
    }
    let bars = progress.bars();
    Consent::Ask(Arc::new(move |actions: &[String]| match &bars {
        // the live bars stay still while the question is on screen
        Some(mp) => mp.suspend(|| ask(actions)),
        None => ask(actions),
    }))
}

fn ask(actions: &[String]) -> bool {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "This run will:");
    for a in actions {
        let _ = writeln!(err, "  {}", crate::shown::shown(a));
    }
    let _ = write!(err, "Go on? [y/N] ");
    let _ = err.flush();
    let mut answer = String::new();
    // an answer is a word: a line past 256 bytes reads as no
    if std::io::stdin().lock().take(256).read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}
