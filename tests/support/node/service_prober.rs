//! A client calling a Kubernetes Service of the lab every 100 ms the whole
//! time a day-two operation runs, as the issue names it: one HTTP GET per
//! call from the deployer's machine (a NodePort on a node that stays), one
//! second to answer. Afterwards: how many calls were made and which failed,
//! with when and why, and what kdeploy was doing then (its progress lines,
//! timed by `run_timed`), so a test can report the failures and hold them
//! to its goal.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A failed call: which call it was (0 the first), when (seconds after the
/// prober started) and why.
#[derive(Debug, Clone)]
pub struct Failed {
    pub call: usize,
    pub at: f64,
    pub why: String,
}

/// What the prober saw.
#[derive(Debug, Default, Clone)]
pub struct Calls {
    pub ok: usize,
    pub failed: Vec<Failed>,
}

/// Lines a command printed, each with the second (after the prober
/// started) it came.
pub type Timeline = Vec<(f64, String)>;

impl Calls {
    pub fn summary(&self, during: &str) -> String {
        let first: Vec<String> = self.failed.iter().take(10).map(|f| format!("{:.1} s: {}", f.at, f.why)).collect();
        format!("{} calls answered, {} failed during {during} {first:?}", self.ok, self.failed.len())
    }

    /// The summary, and for each failed call the last line of `timeline`
    /// before it: what the operation was doing when the call failed.
    pub fn explained(&self, during: &str, timeline: &Timeline) -> String {
        let mut s = self.summary(during);
        for f in self.failed.iter().take(10) {
            let doing = timeline.iter().rev().find(|(t, _)| *t <= f.at);
            let doing = doing.map(|(t, l)| format!("{t:.1} s: {l}")).unwrap_or_else(|| "(before any)".into());
            s += &format!("\n  call {} failed at {:.1} s; kdeploy had last printed {doing}", f.call, f.at);
        }
        s
    }

    /// No outage longer than about a second: never more than three failed
    /// calls in a row, at most `few` in all, and calls enough to tell. (The
    /// goal is none; runs of two were seen in the last worker's drain of an
    /// upgrade, cause not found.)
    pub fn assert_no_outage(&self, few: usize, during: &str, timeline: &Timeline) {
        let why = || self.explained(during, timeline);
        assert!(self.ok > 100, "too few calls to tell: {}", why());
        assert!(self.failed.len() <= few, "more than {few} failed calls: {}", why());
        let in_a_row = self.failed.windows(4).find(|w| w[3].call == w[0].call + 3);
        assert!(in_a_row.is_none(), "four calls in a row failed (an outage): {}", why());
    }
}

pub struct Prober {
    started: Instant,
    stop: Arc<AtomicBool>,
    calls: Arc<Mutex<Calls>>,
    thread: Option<JoinHandle<()>>,
}

/// Runs `c` to its end with stdout collected and every stderr line timed
/// against `since` as it comes: its output, stdout as JSON, and the timeline.
pub fn run_timed(mut c: Command, since: Instant) -> (Output, serde_json::Value, Timeline) {
    let mut child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("the command starts");
    let stderr = child.stderr.take().expect("piped");
    let lines = std::thread::spawn(move || {
        let mut timeline = Timeline::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            timeline.push((since.elapsed().as_secs_f64(), line));
        }
        timeline
    });
    let mut stdout = Vec::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_end(&mut stdout);
    }
    let status = child.wait().expect("the command ends");
    let timeline = lines.join().unwrap_or_default();
    let stderr = timeline.iter().map(|(_, l)| format!("{l}\n")).collect::<String>().into_bytes();
    let json = serde_json::from_slice(&stdout).unwrap_or(serde_json::Value::Null);
    (Output { status, stdout, stderr }, json, timeline)
}

impl Prober {
    /// Start calling `url` (it must answer 200 with `expect` in the body)
    /// and wait until it has answered 10 times in a row.
    pub fn start(url: &str, expect: &str) -> Prober {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(1)))
            .http_status_as_error(false)
            .build()
            .into();
        let call = {
            let (url, expect) = (url.to_string(), expect.to_string());
            move || -> Result<(), String> {
                let mut r = agent.get(&url).call().map_err(|e| e.to_string())?;
                let status = r.status();
                let body = r.body_mut().read_to_string().map_err(|e| e.to_string())?;
                if status != 200 || !body.contains(&expect) {
                    return Err(format!("status {status}: {}", body.trim()));
                }
                Ok(())
            }
        };
        let t0 = Instant::now();
        let mut in_a_row = 0;
        while in_a_row < 10 {
            assert!(t0.elapsed() < Duration::from_secs(120), "{url} does not answer: {:?}", call());
            in_a_row = if call().is_ok() { in_a_row + 1 } else { 0 };
            std::thread::sleep(Duration::from_millis(100));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let calls = Arc::new(Mutex::new(Calls::default()));
        let started = Instant::now();
        let thread = {
            let (stop, calls) = (stop.clone(), calls.clone());
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    let next = Instant::now() + Duration::from_millis(100);
                    let r = call();
                    let at = started.elapsed().as_secs_f64();
                    if let Ok(mut c) = calls.lock() {
                        match r {
                            Ok(()) => c.ok += 1,
                            Err(why) => c.failed.push(Failed { call: n, at, why }),
                        }
                    }
                    n += 1;
                    std::thread::sleep(next.saturating_duration_since(Instant::now()));
                }
            })
        };
        Prober { started, stop, calls, thread: Some(thread) }
    }

    /// When calling started: the time base of `run_timed` for this prober.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// The calls so far.
    pub fn calls(&self) -> Calls {
        self.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }

    /// Stop calling; what was seen.
    pub fn stop(mut self) -> Calls {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.calls()
    }
}

impl Drop for Prober {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}
