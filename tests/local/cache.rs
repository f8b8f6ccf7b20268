//! The binary cache (`transfer.cache`) against Debian's nginx on loopback:
//! the deployer's upload (HEAD, then PUT only what is absent or of another
//! size) and the node program's `fetch`, which admits a blob only if its
//! sha256 matches, takes no more of it than its size and reports what it
//! could not get; a cache URL with credentials is refused; a blob the cache
//! holds damaged is put into it again by a switch. The whole path on the
//! lab, with nginx on the lab bridge, is `tests/lab/cache.rs`.

use crate::support;
use std::sync::Arc;
use std::time::Duration;

use kdeploy::node::Node;
use kdeploy::store::cache::{BinaryCache, Upload};
use kdeploy::store::Readable;
use kdeploy::transport::LocalHost;
use support::http::nginx::Nginx;
use support::http::Server;
use support::node::{blob, wanted};

#[test]
fn the_deployer_uploads_each_blob_once() {
    let dir = tempfile::tempdir().unwrap();
    let nginx = Nginx::on_loopback(dir.path());
    let cache = BinaryCache::new(&nginx.cache_url(), Duration::from_secs(5)).unwrap();
    let b = blob("the bytes of a blob\n");
    let size = b.bytes.len() as u64;
    let readable = Readable::Bytes(b.bytes.clone());

    assert_eq!(cache.ensure(&b.b3, &readable, size).unwrap(), Upload::Sent(size));
    let stored = nginx.cache_dir().join(b.b3.hex());
    assert_eq!(std::fs::read(&stored).unwrap(), b.bytes);
    assert_eq!(cache.ensure(&b.b3, &readable, size).unwrap(), Upload::Present, "a second run sends nothing");
    let puts = nginx.requests().iter().filter(|r| r.method == "PUT").count();
    assert_eq!(puts, 1, "{:?}", nginx.requests());

    // a truncated copy in the cache is replaced
    std::fs::write(&stored, &b.bytes[..5]).unwrap();
    assert_eq!(cache.ensure(&b.b3, &readable, size).unwrap(), Upload::Sent(size));
    assert_eq!(std::fs::read(&stored).unwrap(), b.bytes);

    // from a file, as binaries are sent
    let big = blob(vec![7u8; 3 << 20]);
    let path = dir.path().join("big");
    std::fs::write(&path, &big.bytes).unwrap();
    assert_eq!(cache.ensure(&big.b3, &Readable::Path(path), 3 << 20).unwrap(), Upload::Sent(3 << 20));
    assert_eq!(std::fs::read(nginx.cache_dir().join(big.b3.hex())).unwrap(), big.bytes);
}

#[test]
fn a_server_that_takes_no_put_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let www = dir.path().join("www");
    std::fs::create_dir_all(&www).unwrap();
    let server = Server::start(dir.path(), &www, &[]);
    let cache = BinaryCache::new(&server.url("cache"), Duration::from_secs(5)).unwrap();
    let b = blob("x");
    let e = cache.ensure(&b.b3, &Readable::Bytes(b.bytes.clone()), 1).unwrap_err();
    // (python's server answers HEAD and PUT alike: 501)
    assert!(matches!(e, kdeploy::store::Error::CacheStatus { status: 501, .. }), "{e:?}");
    let e = e.to_string();
    assert!(e.contains(&server.url("cache")) && e.contains("answered 501"), "{e}");
    assert!(BinaryCache::new("ftp://example/cache", Duration::from_secs(1)).is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_fetches_what_it_lacks_and_admits_only_the_right_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let nginx = Nginx::on_loopback(dir.path());
    let prefix = dir.path().join("node");
    let host = LocalHost::new("local");
    let node = Node::install_with_prefix(&host, prefix.to_str().unwrap()).await.unwrap();
    let _lock = support::node::hold(&node, "test").await;
    let (good, altered, absent) = (blob("good\n"), blob("altered\n"), blob("absent\n"));
    std::fs::write(nginx.cache_dir().join(good.b3.hex()), &good.bytes).unwrap();
    // (as long as the blob: it is its sha256 that tells)
    std::fs::write(nginx.cache_dir().join(altered.b3.hex()), "tampere\n").unwrap();

    let asked = [
        (good.b3, good.sha.as_str(), good.bytes.len() as u64),
        (altered.b3, altered.sha.as_str(), altered.bytes.len() as u64),
        (absent.b3, absent.sha.as_str(), absent.bytes.len() as u64),
    ];
    let not = node.fetch(&nginx.cache_url(), &asked).await.unwrap();
    let (failed, why) = (not.failed, not.why);
    assert_eq!(failed, vec![altered.b3, absent.b3]);
    assert_eq!(not.rejected, vec![altered.b3], "the cache holds it wrong; the absent one is merely absent");
    assert!(why.contains("rejected: sha256"), "{why}");
    assert!(why.contains("404"), "{why}");
    let store = prefix.join("var/lib/kdeploy/store");
    assert_eq!(std::fs::read(store.join(good.b3.hex())).unwrap(), good.bytes);
    assert_eq!(std::fs::read_dir(store.join(".tmp")).unwrap().count(), 0, "nothing half-fetched stays");
    let have = node.missing(&[wanted(&good), wanted(&altered), wanted(&absent)]).await.unwrap();
    assert_eq!(have, vec![altered.b3, absent.b3]);

    // what the store holds is not fetched again
    let gets = |n: &Nginx| n.requests().iter().filter(|r| r.method == "GET").count();
    let before = gets(&nginx);
    let not = node.fetch(&nginx.cache_url(), &asked[..1]).await.unwrap();
    assert!(not.failed.is_empty());
    assert_eq!(gets(&nginx), before);

    // a URL the node program would have to quote is refused
    assert!(node.fetch("http://x/a b", &asked[..1]).await.is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_refuses_a_cached_blob_larger_than_announced() {
    let dir = tempfile::tempdir().unwrap();
    let nginx = Nginx::on_loopback(dir.path());
    let prefix = dir.path().join("node");
    let host = LocalHost::new("local");
    let node = Node::install_with_prefix(&host, prefix.to_str().unwrap()).await.unwrap();
    let _lock = support::node::hold(&node, "test").await;
    let small = blob("a small blob\n");
    // anyone may PUT: 256 MiB under its name
    let junk = std::fs::File::create(nginx.cache_dir().join(small.b3.hex())).unwrap();
    junk.set_len(256 << 20).unwrap();
    let asked = [(small.b3, small.sha.as_str(), small.bytes.len() as u64)];
    let not = node.fetch(&nginx.cache_url(), &asked).await.unwrap();
    let (failed, why) = (not.failed, not.why);
    assert_eq!((failed, not.rejected), (vec![small.b3], vec![small.b3]));
    assert!(why.contains("larger than 13 bytes"), "{why}");
    let sent: u64 = nginx.requests().iter().filter(|r| r.method == "GET").map(|r| r.sent).sum();
    assert!(sent < 32 << 20, "the node took {sent} bytes of a blob announced at 13");
    eprintln!("nginx sent {sent} bytes of the 256 MiB under the blob's name");
    let tmp = prefix.join("var/lib/kdeploy/store/.tmp");
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "nothing half-fetched stays");

    // a server that announces no length is cut off at the size too
    let www = dir.path().join("www");
    std::fs::create_dir_all(www.join("cache")).unwrap();
    std::fs::write(www.join("cache").join(small.b3.hex()), vec![0u8; 8 << 20]).unwrap();
    let name = format!("nolength:{}", small.b3.hex());
    let server = Server::start(dir.path(), &www, &[name.as_str()]);
    let not = node.fetch(&server.url("cache"), &asked).await.unwrap();
    let (failed, why) = (not.failed, not.why);
    assert_eq!((failed, not.rejected), (vec![small.b3], vec![small.b3]));
    assert!(why.contains("larger than 13 bytes"), "{why}");
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "nothing half-fetched stays");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cache_url_with_credentials_is_refused_and_not_shown() {
    let e = BinaryCache::new("http://kd:s3cr3t-pw@127.0.0.1:9/cache", Duration::from_secs(1)).unwrap_err();
    assert!(matches!(e, kdeploy::store::Error::CacheCredentials { .. }), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("credentials") && !e.contains("s3cr3t-pw"), "{e}");
    // nor does the node program take one (it would sit in curl's arguments)
    let dir = tempfile::tempdir().unwrap();
    let host = LocalHost::new("local");
    let node = Node::install_with_prefix(&host, dir.path().join("node").to_str().unwrap()).await.unwrap();
    let _lock = support::node::hold(&node, "test").await;
    let b = blob("x\n");
    let e = node.fetch("http://kd:s3cr3t-pw@127.0.0.1:9/cache", &[(b.b3, b.sha.as_str(), 2)]).await.unwrap_err();
    assert!(e.to_string().contains("credentials"), "{e}");
    // the cluster option says so at evaluation
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("c.nix"),
        "let kd = import <kdeploy>; in kd.cluster { name = \"t\"; \
         nodes.a = { address = \"10.0.0.1\"; roles = [ \"control-plane\" \"etcd\" ]; }; \
         settings.transfer.cache = \"http://kd:s3cr3t-pw@10.0.0.5:8080/cache\"; }\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kdeploy"))
        .args(["eval", "c.nix"])
        .current_dir(&project)
        .env_remove("KDEPLOY_STDLIB")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("transfer.cache") && err.contains("credentials"), "{err}");
}

/// A one-node closure whose one file is `text`, deployed to `prefix`.
fn one_file(text: &str) -> serde_json::Value {
    serde_json::json!({
        "name": "t", "phaseOrder": ["p"], "schemaVersion": kdeploy::closure::SCHEMA_VERSION,
        "settings": {}, "warnings": [],
        "nodes": {"n1": {
            "address": "127.0.0.1", "roles": [], "settings": {},
            "ssh": {"jumpHost": null, "key": null, "port": 22, "user": "root"},
            "phases": [{"activate": true, "checks": [], "directories": [], "hooks": [], "name": "p", "units": [],
                        "files": [{"group": "root", "mode": "0644", "owner": "root", "path": "/etc/demo.conf",
                                   "source": {"text": text}}]}],
        }},
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_damaged_cached_blob_is_put_again() {
    use kdeploy::deploy::events::Collect;
    use kdeploy::deploy::switch::{switch_reached, Reached};
    use kdeploy::deploy::Report;
    use kdeploy::deploy::RunOptions;
    use kdeploy::deploy::{Cancel, Outcome, SwitchOptions};
    use kdeploy::store::{FileFetcher, Resolver, Store};

    let dir = tempfile::tempdir().unwrap();
    let nginx = Nginx::on_loopback(dir.path());
    let text = "listen 8080\n".repeat(100);
    let good = blob(text.clone());
    // junk of the right size, PUT by anyone
    let cached = nginx.cache_dir().join(good.b3.hex());
    std::fs::write(&cached, "x".repeat(text.len())).unwrap();

    let root = dir.path().join("project");
    std::fs::create_dir_all(&root).unwrap();
    let resolver = Resolver::new(&root, Store::new(root.join(".kdeploy/store")), Box::new(FileFetcher));
    let closures = kdeploy::closure::load(&one_file(&text).to_string(), &resolver).unwrap();
    let cache = Arc::new(BinaryCache::new(&nginx.cache_url(), Duration::from_secs(5)).unwrap());
    let opts = SwitchOptions { run: RunOptions::at(root.join(".kdeploy")), cache: Some(cache), ..Default::default() };
    let host = LocalHost::new("n1");
    let prefix = dir.path().join("n1").display().to_string();
    let reached = [Reached { host: &host, prefix: &prefix }];
    let sink = Collect::default();
    let Report { outcome, .. } =
        switch_reached(&closures, &resolver, &opts, &reached, Cancel::default(), &sink).await.unwrap();
    assert_eq!(outcome, Outcome::Ok);
    assert_eq!(std::fs::read_to_string(dir.path().join("n1/etc/demo.conf")).unwrap(), text);
    // the node refused the junk and got the blob over SSH; the cache holds the right bytes again
    assert_eq!(std::fs::read(&cached).unwrap(), good.bytes, "the junk is still trusted");
    let puts: Vec<_> = nginx.requests().into_iter().filter(|r| r.method == "PUT").collect();
    assert_eq!(puts.len(), 1, "{puts:?}");
    let events = format!("{:?}", sink.0.into_inner().unwrap());
    assert!(events.contains("put it into the cache again"), "{events}");
}
