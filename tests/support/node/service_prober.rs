//! A client calling a Kubernetes Service of the lab every 100 ms the whole
//! time a day-two operation runs, as the issue names it: one HTTP GET per
//! call from the deployer's machine (a NodePort on a node that stays), one
//! second to answer. Afterwards: how many calls were made and which failed,
//! with when and why, so a test can report the failures and hold them to
//! its goal.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the prober saw.
#[derive(Debug, Default, Clone)]
pub struct Calls {
    pub ok: usize,
    /// (seconds after the start, why) of every failed call.
    pub failed: Vec<(f64, String)>,
}

impl Calls {
    pub fn summary(&self, during: &str) -> String {
        let first: Vec<String> = self.failed.iter().take(10).map(|(t, why)| format!("{t:.1} s: {why}")).collect();
        format!("{} calls answered, {} failed during {during} {first:?}", self.ok, self.failed.len())
    }
}

pub struct Prober {
    stop: Arc<AtomicBool>,
    calls: Arc<Mutex<Calls>>,
    thread: Option<JoinHandle<()>>,
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
        let thread = {
            let (stop, calls) = (stop.clone(), calls.clone());
            std::thread::spawn(move || {
                let t0 = Instant::now();
                while !stop.load(Ordering::SeqCst) {
                    let next = Instant::now() + Duration::from_millis(100);
                    let r = call();
                    if let Ok(mut c) = calls.lock() {
                        match r {
                            Ok(()) => c.ok += 1,
                            Err(why) => c.failed.push((t0.elapsed().as_secs_f64(), why)),
                        }
                    }
                    std::thread::sleep(next.saturating_duration_since(Instant::now()));
                }
            })
        };
        Prober { stop, calls, thread: Some(thread) }
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
