//! The test file server (`range_server.py`) run from a test: serves a
//! directory on loopback, logs every request, and cuts or hangs chosen
//! responses on demand.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

pub struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Server {
    /// Serve `root`, cutting the first response for each name of `cut`
    /// (hanging every response for `stall:NAME`).
    pub fn start(dir: &Path, root: &Path, cut: &[&str]) -> Server {
        let log = dir.join("requests.log");
        let port_file = dir.join("port");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/http/range_server.py");
        let child = Command::new("python3")
            .arg(script)
            .args([root, &log, &port_file])
            .args(cut)
            .spawn()
            .expect("python3 runs the test server");
        let t = Instant::now();
        while !port_file.exists() {
            assert!(t.elapsed() < Duration::from_secs(10), "the test server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        let port = std::fs::read_to_string(&port_file).unwrap().trim().parse().unwrap();
        Server { child, port, log }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.port)
    }

    pub fn requests(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log).unwrap_or_default().lines().map(str::to_string).collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
