//! Debian's nginx as the binary cache of `transfer.cache`: a WebDAV
//! location `/cache/` taking PUTs, started from a test with its own
//! configuration, files and log in a directory, on loopback or inside a
//! network namespace on the lab bridge. Its access log says what each
//! request moved.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Nginx {
    child: Child,
    dir: PathBuf,
    addr: String,
}

/// One line of the access log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    pub uri: String,
    pub status: u16,
    /// Response body bytes (what a GET served).
    pub sent: u64,
    /// Request bytes, headers and body (what a PUT brought).
    pub received: u64,
}

impl Nginx {
    /// Serve `dir`/www on loopback, on a free port.
    pub fn on_loopback(dir: &Path) -> Nginx {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        Nginx::start(dir, &format!("127.0.0.1:{port}"), None)
    }

    /// Serve `dir`/www on `addr` (host:port), inside network namespace
    /// `netns` if given.
    pub fn start(dir: &Path, addr: &str, netns: Option<&str>) -> Nginx {
        let dir = dir.join("nginx");
        for d in ["www/cache", "tmp"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        let d = dir.display();
        let conf = format!(
            "daemon off;\nmaster_process off;\nuser root;\nworker_processes 1;\npid {d}/nginx.pid;\n\
             error_log {d}/error.log;\nevents {{ worker_connections 1024; }}\nhttp {{\n\
             log_format kd '$request_method $uri $status $body_bytes_sent $request_length';\n\
             access_log {d}/access.log kd;\nclient_body_temp_path {d}/tmp;\nproxy_temp_path {d}/tmp;\n\
             fastcgi_temp_path {d}/tmp;\nuwsgi_temp_path {d}/tmp;\nscgi_temp_path {d}/tmp;\n\
             server {{\nlisten {addr};\nroot {d}/www;\nlocation /cache/ {{\ndav_methods PUT;\n\
             create_full_put_path on;\ndav_access user:rw group:r all:r;\nclient_max_body_size 0;\n}}\n}}\n}}\n"
        );
        std::fs::write(dir.join("nginx.conf"), conf).unwrap();
        let mut cmd = match netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, "nginx"]);
                c
            }
            None => Command::new("nginx"),
        };
        let child = cmd
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .arg("-p")
            .arg(&dir)
            .stdin(Stdio::null())
            .spawn()
            .expect("nginx runs (apt-get install nginx-light)");
        let t = Instant::now();
        while TcpStream::connect(addr).is_err() {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "nginx did not start: {}",
                std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Nginx { child, dir, addr: addr.to_string() }
    }

    /// What `transfer.cache` names.
    pub fn cache_url(&self) -> String {
        format!("http://{}/cache", self.addr)
    }

    /// Where the cached blobs are, as files named by their hash.
    pub fn cache_dir(&self) -> PathBuf {
        self.dir.join("www/cache")
    }

    pub fn requests(&self) -> Vec<Request> {
        let log = std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default();
        log.lines()
            .map(|l| {
                let w: Vec<&str> = l.split(' ').collect();
                Request {
                    method: w[0].into(),
                    uri: w[1].into(),
                    status: w[2].parse().unwrap(),
                    sent: w[3].parse().unwrap(),
                    received: w[4].parse().unwrap(),
                }
            })
            .collect()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
