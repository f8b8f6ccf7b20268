//! A lab node's link to the lab bridge taken down (`ip link set kdvN down`)
//! for as long as a guard lives: a node cut off, or dead, as the deployer
//! sees it, while the tests still look inside it (`lab.sh exec`).

use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

use super::{addr, lane};

/// Lab node `i`'s link, down while this lives (up again when dropped, a
/// failing test included).
pub struct LinkDown(String);

impl LinkDown {
    pub fn take(i: u32) -> LinkDown {
        let veth = format!("kdv{}", lane::node(i));
        assert!(link(&veth, "down"), "ip link set {veth} down");
        LinkDown(veth)
    }
}

impl Drop for LinkDown {
    fn drop(&mut self) {
        if !link(&self.0, "up") {
            eprintln!("ip link set {} up failed: the lab node stays cut off", self.0);
        }
    }
}

fn link(veth: &str, state: &str) -> bool {
    Command::new("ip").args(["link", "set", veth, state]).status().is_ok_and(|s| s.success())
}

/// Waits (up to a minute) until node `i` answers on port 22 again.
pub fn wait_for_sshd(i: u32) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let sshd: SocketAddr = format!("{}:22", addr(i)).parse().unwrap();
    while TcpStream::connect_timeout(&sshd, Duration::from_secs(1)).is_err() {
        assert!(Instant::now() < deadline, "node {i} not back a minute after its link came up");
        std::thread::sleep(Duration::from_millis(500));
    }
}
