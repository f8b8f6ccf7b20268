//! The deployer store: project files are confined to the project root,
//! artifacts are verified against their declared sha256 before they are
//! stored, found again by that checksum, and archive members extracted.
//! (The artifacts here are `file://` URLs next to the project, in a
//! directory allowed as `--allow-local` allows it.)

use std::io::Write;

use kdeploy::closure::{Artifact, Source};
use kdeploy::store::{read_project_file, Digest, FileFetcher, Resolver, Store};
use sha2::Digest as _;

fn resolver(dir: &std::path::Path) -> Resolver {
    Resolver::new(dir.join("project"), Store::new(dir.join("project/.kdeploy/store")), Box::new(FileFetcher))
        .allow_local([dir.to_path_buf()])
}

#[test]
fn project_files_stay_below_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    std::fs::create_dir_all(root.join("secrets")).unwrap();
    std::fs::write(root.join("secrets/token"), "t0k3n").unwrap();
    std::fs::write(dir.path().join("outside"), "secret of another project").unwrap();
    std::os::unix::fs::symlink(dir.path().join("outside"), root.join("link-out")).unwrap();
    std::os::unix::fs::symlink("secrets/token", root.join("link-in")).unwrap();

    assert_eq!(read_project_file(&root, "secrets/token").unwrap(), b"t0k3n");
    assert_eq!(read_project_file(&root, "link-in").unwrap(), b"t0k3n");
    for (rel, why) in [
        ("../outside", "'..'"),
        ("secrets/../../outside", "'..'"),
        ("link-out", "outside the project root"),
        ("/etc/passwd", "relative"),
    ] {
        let e = read_project_file(&root, rel).unwrap_err().to_string();
        assert!(e.contains(why), "{rel}: {e}");
    }
    assert!(read_project_file(&root, "secrets").unwrap_err().to_string().contains("not a regular file"));
}

#[test]
fn blobs_are_named_by_blake3_and_written_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let d = store.put(b"hello").unwrap();
    assert_eq!(d, Digest::of(b"hello"));
    assert_eq!(d.hex(), blake3::hash(b"hello").to_hex().to_string());
    assert_eq!(store.read(&d).unwrap(), b"hello");
    assert_eq!(store.put(b"hello").unwrap(), d);
}

fn artifact(name: &str, url: String, content: &[u8], member: Option<&str>) -> Source {
    Source::Artifact(Artifact {
        name: name.into(),
        url,
        sha256: hex::encode(sha2::Sha256::digest(content)),
        member: member.map(str::to_string),
    })
}

#[test]
fn artifacts_are_verified_stored_and_found_by_checksum() {
    let dir = tempfile::tempdir().unwrap();
    let r = resolver(dir.path());
    let download = dir.path().join("etcd-v9");
    std::fs::write(&download, b"etcd binary").unwrap();
    let src = artifact("etcd-v9", format!("file://{}", download.display()), b"etcd binary", None);
    assert_eq!(r.bytes(&src).unwrap(), b"etcd binary");
    // Now cached: the URL is not needed any more.
    std::fs::remove_file(&download).unwrap();
    assert_eq!(r.bytes(&src).unwrap(), b"etcd binary");
    assert!(r.store().has(&Digest::of(b"etcd binary")));
}

#[test]
fn artifact_checksum_mismatch_is_an_error_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let r = resolver(dir.path());
    let download = dir.path().join("tampered");
    std::fs::write(&download, b"evil").unwrap();
    let src = artifact("kubelet", format!("file://{}", download.display()), b"the real kubelet", None);
    let e = r.bytes(&src).unwrap_err().to_string();
    assert!(e.contains("artifact kubelet: checksum mismatch") && e.contains("expected sha256"), "{e}");
    assert!(!r.store().has(&Digest::of(b"evil")));
}

#[test]
fn artifact_without_fetcher_says_where_to_put_it() {
    let dir = tempfile::tempdir().unwrap();
    let r = resolver(dir.path());
    let src = artifact("kubectl-1.33.5", "https://dl.k8s.io/kubectl".into(), b"kubectl", None);
    let e = r.bytes(&src).unwrap_err().to_string();
    assert!(e.contains("artifact kubectl-1.33.5 not in the local cache and https://dl.k8s.io/kubectl cannot be fetched here; download it to"), "{e}");
    assert!(e.contains(".kdeploy/downloads/kubectl-1.33.5") && e.contains("cannot be fetched here"), "{e}");
    // Following the advice works (and is verified).
    let dl = dir.path().join("project/.kdeploy/downloads");
    std::fs::create_dir_all(&dl).unwrap();
    std::fs::write(dl.join("kubectl-1.33.5"), b"kubectl").unwrap();
    assert_eq!(r.bytes(&src).unwrap(), b"kubectl");
}

#[test]
fn archive_members_are_extracted_with_or_without_dot_slash() {
    let dir = tempfile::tempdir().unwrap();
    let r = resolver(dir.path());
    let mut tgz = Vec::new();
    {
        let gz = flate2::write::GzEncoder::new(&mut tgz, flate2::Compression::fast());
        let mut tar = tar::Builder::new(gz);
        for (name, data) in [("./bridge", &b"bridge plugin"[..]), ("./loopback", &b"loopback plugin"[..])] {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o755);
            h.set_cksum();
            tar.append_data(&mut h, name, data).unwrap();
        }
        tar.into_inner().unwrap().finish().unwrap().flush().unwrap();
    }
    let path = dir.path().join("cni.tgz");
    std::fs::write(&path, &tgz).unwrap();
    let url = format!("file://{}", path.display());
    assert_eq!(r.bytes(&artifact("cni.tgz", url.clone(), &tgz, Some("./bridge"))).unwrap(), b"bridge plugin");
    assert_eq!(r.bytes(&artifact("cni.tgz", url.clone(), &tgz, Some("loopback"))).unwrap(), b"loopback plugin");
    let e = r.bytes(&artifact("cni.tgz", url, &tgz, Some("./nope"))).unwrap_err().to_string();
    assert!(e.contains("member \"./nope\": no such member"), "{e}");
}
