//! The lab converged through a binary cache (`transfer.cache`, issue 13):
//! Debian's nginx with a WebDAV PUT location runs in a namespace of its own
//! on the lab bridge (`lab.sh cache up`), as a cache host next to the
//! nodes would. From a reset lab, the deployer uploads each blob once and
//! the nodes fetch them: what leaves the deployer (the bridge's transmit
//! counter on the host, not kdeploy's own count) is about one copy, while
//! the cache serves one per node. Then a blob the cache holds damaged (same
//! size, other bytes): every node refuses it by sha256 and gets it over SSH,
//! with a warning, and runs the right bytes, and the deployer puts the right
//! bytes into the cache again. Ends on the unmodified lab.

use crate::support;
use std::process::Command;

use sha2::{Digest as _, Sha256};
use support::http::nginx::Nginx;
use support::node::lab_check::assert_deployed;
use support::node::lab_project::*;
use support::node::{lab_lock_nodes, lab_up, repo};

const CACHE_ADDR: &str = "10.77.0.250:8080";

fn cache_net(up: bool) {
    let st = Command::new(repo().join("lab/lab.sh")).args(["cache", if up { "up" } else { "down" }]).status().unwrap();
    assert!(st.success(), "lab.sh cache");
}

struct CacheHost(Option<Nginx>);

impl Drop for CacheHost {
    fn drop(&mut self) {
        drop(self.0.take());
        cache_net(false);
    }
}

#[test]
fn the_lab_converges_through_a_binary_cache() {
    // it counts the bytes leaving on the whole lab bridge: no other test may use
    // the lab meanwhile (tests/run-all.sh runs it after the Kubernetes tests)
    let _g = lab_lock_nodes(1..=support::node::lab_nodes());
    if !lab_up() {
        return;
    }
    let p = Project::new();
    cache_net(true);
    let nginx = CacheHost(Some(Nginx::start(p.dir.path(), CACHE_ADDR, Some("kdcache"))));
    let nginx = nginx.0.as_ref().unwrap();
    let url = nginx.cache_url();
    let cluster = p.variant("cached", &format!("transfer.cache = \"{url}\";"));

    // from nothing: every node reset
    let (out, _) = run(kdeploy_cmd("reset", &p.base(), None, &["--yes"]));
    assert!(out.status.success(), "reset: {}", text(&out));

    let tx0 = bridge_tx();
    let (out, j) = switch(&cluster);
    let sent = bridge_tx() - tx0;
    assert!(out.status.success(), "switch through the cache: {}", text(&out));
    assert!(statuses(&j).iter().all(|(_, s)| s == "changed"), "{j}");
    let log = nginx.requests();
    let puts: Vec<_> = log.iter().filter(|r| r.method == "PUT").collect();
    let gets: Vec<_> = log.iter().filter(|r| r.method == "GET").collect();
    let mut put_uris: Vec<&str> = puts.iter().map(|r| r.uri.as_str()).collect();
    put_uris.sort();
    put_uris.dedup();
    assert_eq!(put_uris.len(), puts.len(), "each blob uploaded once: {puts:?}");
    assert!(gets.iter().all(|r| r.status == 200), "{gets:?}");
    let uploaded: u64 = puts.iter().map(|r| r.received).sum();
    let served: u64 = gets.iter().map(|r| r.sent).sum();
    assert!(uploaded > 50_000_000, "the binaries went into the cache: {uploaded} bytes");
    assert!(served > 5 * uploaded / 2, "three nodes fetched their copies: {served} of {uploaded}");
    assert_eq!(transfer(&j, "cacheFetchedBytes"), served, "the recap counts what the nodes fetched");
    assert!(transfer(&j, "cacheUploadedBytes") <= uploaded);
    assert!(transfer(&j, "sshBytes") < 1_000_000, "only secrets and manifests over SSH: {j}");
    eprintln!("deployer sent {sent} bytes; {uploaded} uploaded to the cache; {served} served by it");
    // what left the deployer: about one copy (plus SSH and HTTP overhead), not three
    assert!(sent < uploaded + uploaded / 5, "the deployer sent {sent} bytes for {uploaded} of blobs");
    for i in 1..=3 {
        assert_runs_debian_binaries(i);
    }
    let health = ssh(1, "set -a; . /etc/etcd.env; /usr/local/bin/etcdctl endpoint health --cluster 2>&1");
    assert_eq!(health.matches("is healthy").count(), 3, "{health}");
    assert_deployed(&cluster);

    // the re-run: a no-op that asks the cache nothing
    let before = nginx.requests().len();
    let (out, j) = switch(&cluster);
    assert!(out.status.success(), "{}", text(&out));
    assert!(statuses(&j).iter().all(|(_, s)| s == "unchanged"), "{j}");
    assert_eq!(nginx.requests().len(), before);

    // a new runc (one byte more) whose copy in the cache is damaged
    let runc = p.dir.path().join("runc");
    let mut bytes = std::fs::read("/usr/sbin/runc").unwrap();
    bytes.push(b'\n');
    std::fs::write(&runc, &bytes).unwrap();
    let hash = kdeploy::store::Digest::of(&bytes);
    let mut damaged = bytes.clone();
    damaged[1000] ^= 0xff;
    std::fs::write(nginx.cache_dir().join(hash.hex()), &damaged).unwrap();
    let changed = p.edited("new-runc", "runc = \"/usr/sbin/runc\";", &format!("runc = \"{}\";", runc.display()));
    let changed_text = std::fs::read_to_string(&changed).unwrap();
    std::fs::write(
        &changed,
        changed_text.replace("containerd.version", &format!("transfer.cache = \"{url}\"; containerd.version")),
    )
    .unwrap();
    let (out, j) = switch(&changed);
    assert!(out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // every node that fetched the damaged copy refused it and got the blob
    // over SSH; a node that fetched after the deployer had put the right
    // bytes back into the cache (below) takes those
    let refused = stderr.matches("could not fetch 1 blob(s) from the cache").count();
    assert!((1..=3).contains(&refused), "{stderr}");
    assert_eq!(stderr.matches("rejected: sha256").count(), refused, "{stderr}");
    assert!(
        transfer(&j, "sshBytes") >= refused as u64 * bytes.len() as u64,
        "the damaged blob went over SSH to each node that refused it: {j}"
    );
    // and the deployer put the right bytes into the cache again, once (issue 28)
    assert!(stderr.contains("put it into the cache again"), "{stderr}");
    assert_eq!(std::fs::read(nginx.cache_dir().join(hash.hex())).unwrap(), bytes, "the damaged copy stays trusted");
    let want = hex::encode(Sha256::digest(&bytes));
    for i in 1..=3 {
        assert!(ssh(i, "sha256sum /usr/local/bin/runc").starts_with(&want), "node {i} runs the right runc");
    }
    assert_deployed(&changed);

    p.restore();
}
