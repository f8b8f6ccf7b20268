//! The etcd lab in two places at once: lane A on kdnode1-3
//! (10.77.0.11-13, as tests/clusters/lab-etcd.nix writes it) and lane B
//! on kdnode11-13 (10.77.0.21-23), each with its own secret store. A test
//! that takes the etcd lab with [`super::lab_lock_any`] gets whichever
//! lane is free and runs there unchanged: it names nodes 1-3 and the lab
//! file's addresses as ever, and the helpers (`ssh`, `inside`, `addr`,
//! `connect`, the project's cluster files, the etcd writer) move them to
//! its lane. The lane is the test thread's own (set when it takes its
//! nodes); a helper that spawns threads passes what it needs to them.

use std::cell::Cell;

thread_local! {
    static OFFSET: Cell<u32> = const { Cell::new(0) };
}

/// How far lane B is from lane A, in node numbers and address octets.
pub const B: u32 = 10;

/// Run the rest of this test thread on the lane `offset` away (0: A).
pub fn set(offset: u32) {
    OFFSET.with(|o| o.set(offset));
}

/// This thread's lane offset (0: lane A).
pub fn offset() -> u32 {
    OFFSET.with(Cell::get)
}

/// Lab node `i` of lane A (1-3) in this thread's lane; other nodes stay.
pub fn node(i: u32) -> u32 {
    if (1..=3).contains(&i) {
        i + offset()
    } else {
        i
    }
}

/// `text` (a cluster file, a command) with lane A's node addresses moved
/// to this thread's lane.
pub fn text(text: &str) -> String {
    let mut out = text.to_string();
    if offset() != 0 {
        for i in 1..=3 {
            out = out.replace(&format!("10.77.0.{}", 10 + i), &format!("10.77.0.{}", 10 + node(i)));
        }
    }
    out
}
