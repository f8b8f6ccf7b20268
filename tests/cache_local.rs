//! The binary cache (`transfer.cache`) against Debian's nginx on loopback:
//! the deployer's upload (HEAD, then PUT only what is absent or of another
//! size) and the node program's `fetch`, which admits a blob only if its
//! sha256 matches and reports what it could not get. The whole path on the
//! lab, with nginx on the lab bridge, is `cache_lab.rs`.

mod http;
mod node_support;

use std::time::Duration;

use http::nginx::Nginx;
use http::Server;
use kdeploy::node::Node;
use kdeploy::store::cache::{BinaryCache, Upload};
use kdeploy::store::Readable;
use kdeploy::transport::LocalHost;
use node_support::{blob, wanted};

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
    let (good, altered, absent) = (blob("good\n"), blob("altered\n"), blob("absent\n"));
    std::fs::write(nginx.cache_dir().join(good.b3.hex()), &good.bytes).unwrap();
    std::fs::write(nginx.cache_dir().join(altered.b3.hex()), "tampered\n").unwrap();

    let asked = [(good.b3, good.sha.as_str()), (altered.b3, altered.sha.as_str()), (absent.b3, absent.sha.as_str())];
    let (failed, why) = node.fetch(&nginx.cache_url(), &asked).await.unwrap();
    assert_eq!(failed, vec![altered.b3, absent.b3]);
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
    let (failed, _) = node.fetch(&nginx.cache_url(), &asked[..1]).await.unwrap();
    assert!(failed.is_empty());
    assert_eq!(gets(&nginx), before);

    // a URL the node program would have to quote is refused
    assert!(node.fetch("http://x/a b", &asked[..1]).await.is_err());
}
