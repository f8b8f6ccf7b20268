//! The test servers run from a test: `range_server.py` serves a
//! directory on loopback, logs every request, and cuts or hangs chosen
//! responses on demand; `connect_proxy.py` is a proxy in front of it;
//! `nginx` is the binary cache.
// Each test binary that includes this module uses only part of it.
#![allow(dead_code)]

pub mod nginx;

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
        let mut args: Vec<String> = vec![root.display().to_string()];
        args.extend(cut.iter().map(|c| c.to_string()));
        Server::spawn("range_server.py", dir, "files", &args)
    }

    /// A CONNECT proxy tunnelling every request to `upstream`.
    pub fn proxy(dir: &Path, upstream: &Server) -> Server {
        Server::spawn("connect_proxy.py", dir, "proxy", &[upstream.port.to_string()])
    }

    /// Run tests/support/http/`script` with `first` args, then its log and port
    /// files (named for `name` in `dir`), then `rest`; wait for its port.
    fn spawn(script: &str, dir: &Path, name: &str, args: &[String]) -> Server {
        let log = dir.join(format!("{name}-requests.log"));
        let port_file = dir.join(format!("{name}.port"));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/http").join(script);
        let (first, rest) = args.split_at(1);
        let child = Command::new("python3")
            .arg(script)
            .args(first)
            .arg(&log)
            .arg(&port_file)
            .args(rest)
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

    pub fn port(&self) -> u16 {
        self.port
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
