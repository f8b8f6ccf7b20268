//! The lab's tests in several places at once. The etcd lab: lane A on
//! kdnode1-3 (10.77.0.11-13, as tests/clusters/lab-etcd.nix writes it),
//! lane B on kdnode11-13 and lane C on kdnode14-16, each with its own
//! secret store. The Kubernetes lab: kdnode4-8 (10.77.0.14-18, where
//! tests/lab/kubernetes.rs writes it), and again on kdnode17-21. A lane is
//! an offset: node `i` of the etcd lab (1-3) or of the Kubernetes lab
//! (4-8) is node `i + offset`, its address `10.77.0.(10 + i + offset)`. A
//! test that takes a lane ([`super::lab_lock_any`], [`super::lab_lock_k8s`])
//! gets whichever is free and runs there unchanged: it names nodes and the
//! lab file's addresses as ever, and the helpers (`ssh`, `inside`, `addr`,
//! `connect`, the project's cluster files, the etcd writer) move them to
//! its lane. The lane is the test thread's own (set when it takes its
//! nodes); a helper that spawns threads passes what it needs to them.

use std::cell::Cell;

thread_local! {
    static OFFSET: Cell<u32> = const { Cell::new(0) };
}

/// How far lane B is from lane A, in node numbers and address octets.
pub const B: u32 = 10;
/// How far lane C (of the etcd lab: kdnode14-16; of the Kubernetes lab:
/// kdnode17-21) is from lane A.
pub const C: u32 = 13;
/// The nodes a lab of each lane's nodes needs: the last node of lane C's
/// Kubernetes lab.
pub const ALL: u32 = 8 + C;

/// The nodes of the lab that lanes move: the etcd lab's and the
/// Kubernetes lab's (the spares kdnode9-10 stay where they are).
fn moved(i: u32) -> bool {
    (1..=8).contains(&i)
}

/// Run the rest of this test thread on the lane `offset` away (0: A).
pub fn set(offset: u32) {
    OFFSET.with(|o| o.set(offset));
}

/// This thread's lane offset (0: lane A).
pub fn offset() -> u32 {
    OFFSET.with(Cell::get)
}

/// Lab node `i` of lane A (1-8) in this thread's lane; other nodes stay.
pub fn node(i: u32) -> u32 {
    if moved(i) {
        i + offset()
    } else {
        i
    }
}

/// The address of lab node `i` (of lane A) in this thread's lane.
pub fn address(i: u32) -> String {
    format!("10.77.0.{}", 10 + node(i))
}

/// `text` (a cluster file, a command) with lane A's node addresses moved
/// to this thread's lane.
pub fn text(text: &str) -> String {
    let mut out = text.to_string();
    if offset() != 0 {
        // (a moved address, 10.77.0.2x or 3x, is never one still to move)
        for i in 1..=8 {
            out = out.replace(&format!("10.77.0.{}", 10 + i), &address(i));
        }
    }
    out
}
