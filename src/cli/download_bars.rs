//! How `fetch` and `switch` show their downloads: on a terminal a bar per
//! download (bytes, total, rate) that gives way to a line once the file is
//! verified; elsewhere (CI logs, pipes) only those lines. The fetching code
//! only emits [`FetchEvents`]; this is the one place that draws.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::Mutex;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::schema::Artifact;
use crate::store::FetchEvents;

pub enum DownloadBars {
    Terminal { mp: MultiProgress, bars: Mutex<BTreeMap<String, ProgressBar>> },
    Lines,
}

impl DownloadBars {
    /// Bars when stderr is a terminal, lines otherwise.
    pub fn for_stderr() -> DownloadBars {
        if std::io::stderr().is_terminal() {
            let mp = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
            DownloadBars::Terminal { mp, bars: Mutex::new(BTreeMap::new()) }
        } else {
            DownloadBars::Lines
        }
    }

    fn take(&self, a: &Artifact) -> Option<ProgressBar> {
        match self {
            DownloadBars::Terminal { bars, .. } => bars.lock().unwrap_or_else(|p| p.into_inner()).remove(&a.name),
            DownloadBars::Lines => None,
        }
    }

    fn println(&self, line: String) {
        match self {
            DownloadBars::Terminal { mp, .. } => {
                let _ = mp.println(line);
            }
            DownloadBars::Lines => eprintln!("{line}"),
        }
    }
}

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("  {prefix:40!} {spinner} {bytes} {bytes_per_sec}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template("  {prefix:40!} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {eta} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

impl FetchEvents for DownloadBars {
    fn progress(&self, a: &Artifact, have: u64, total: Option<u64>) {
        let DownloadBars::Terminal { mp, bars } = self else { return };
        let mut bars = bars.lock().unwrap_or_else(|p| p.into_inner());
        let bar = bars.entry(a.name.clone()).or_insert_with(|| {
            // a server that does not say the size gets a spinner with the bytes so far
            let b = match total {
                Some(t) => ProgressBar::new(t).with_style(bar_style()),
                None => ProgressBar::new_spinner().with_style(spinner_style()),
            };
            let b = mp.add(b);
            b.set_prefix(a.name.clone());
            b
        });
        bar.set_position(have);
    }

    fn fetched(&self, a: &Artifact, bytes: u64) {
        if let Some(b) = self.take(a) {
            b.finish_and_clear();
        }
        self.println(format!(
            "fetched {} ({:.1} MB) from {}",
            a.name,
            bytes as f64 / 1e6,
            crate::store::http::redact(&a.url)
        ));
    }

    fn failed(&self, a: &Artifact) {
        if let Some(b) = self.take(a) {
            b.abandon_with_message("failed");
        }
    }
}
