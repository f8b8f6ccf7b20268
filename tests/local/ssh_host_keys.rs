//! Host key checking end to end without the lab: `SshHost::connect` against
//! an SSH server run in this process (russh's server on a loopback port,
//! host keys made by `ssh-keygen`). The file-level rules are unit-tested
//! in `src/transport/known_hosts.rs`; here they must hold through a real
//! key exchange — the key pinned is the key the server has to present, the
//! algorithm offered is the one it negotiates, a refusal names file and
//! line. Real nodes and OpenSSH's sshd are `tests/lab/transport.rs`'s.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use kdeploy::transport::{Error, Host, HostKeyPolicy, SshAuth, SshHost, SshOptions};
use russh::keys::PrivateKey;
use russh::server::{Auth, Handler};
use tokio::net::TcpListener;

/// Lets every public key in: only the *server's* key is under test.
struct AcceptAll;

impl Handler for AcceptAll {
    type Error = russh::Error;

    async fn auth_publickey(&mut self, _: &str, _: &russh::keys::PublicKey) -> Result<Auth, Self::Error> {
        Ok(Auth::Accept)
    }
}

/// Serve SSH on a free loopback port with these host keys, until the test
/// ends. Returns the port.
async fn serve(keys: Vec<PrivateKey>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let config = Arc::new(russh::server::Config { keys, ..Default::default() });
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let config = config.clone();
            tokio::spawn(async move {
                if let Ok(session) = russh::server::run_stream(config, stream, AcceptAll).await {
                    let _ = session.await;
                }
            });
        }
    });
    port
}

/// A key pair made by `ssh-keygen` in `dir`: (private key, `type base64`).
fn keygen(dir: &Path, name: &str, kind: &str) -> (PrivateKey, String) {
    let path = dir.join(name);
    let bits = if kind == "rsa" { "2048" } else { "256" };
    let st = Command::new("ssh-keygen")
        .args(["-q", "-N", "", "-C", "", "-t", kind, "-b", bits, "-f"])
        .arg(&path)
        .status()
        .expect("ssh-keygen must be installed");
    assert!(st.success());
    let public = std::fs::read_to_string(path.with_extension("pub")).unwrap().trim().to_string();
    (russh::keys::load_secret_key(&path, None).unwrap(), public)
}

struct Fixture {
    dir: tempfile::TempDir,
    client_key: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        keygen(dir.path(), "client", "ed25519");
        let client_key = dir.path().join("client");
        Fixture { dir, client_key }
    }

    fn key(&self, name: &str, kind: &str) -> (PrivateKey, String) {
        keygen(self.dir.path(), name, kind)
    }

    /// Writes the known_hosts file (one string per line).
    fn known_hosts(&self, lines: &[String]) -> PathBuf {
        let file = self.dir.path().join("known_hosts");
        std::fs::write(&file, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
        file
    }

    async fn connect(&self, port: u16, host_keys: HostKeyPolicy) -> Result<SshHost, Error> {
        let opts = SshOptions {
            user: "root".into(),
            port,
            auth: SshAuth::KeyFile { path: self.client_key.clone(), passphrase: None },
            host_keys,
            connect_timeout: Duration::from_secs(10),
            jump: None,
            escalate: None,
            persist: None,
        };
        SshHost::connect("node1", "127.0.0.1", &opts).await
    }

    /// A server with one fresh ed25519 host key: (port, `type base64`).
    async fn serving_ed25519(&self) -> (u16, String) {
        let (server, public) = self.key("server", "ed25519");
        (serve(vec![server]).await, public)
    }

    async fn strict(&self, port: u16, file: &Path) -> Result<(), Error> {
        let host = self.connect(port, HostKeyPolicy::Strict(file.to_path_buf())).await?;
        host.close().await
    }
}

fn entry(port: u16, public: &str) -> String {
    format!("[127.0.0.1]:{port} {public}")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_recorded_key_connects_a_changed_one_is_refused_naming_its_line() {
    let f = Fixture::new();
    let (port, public) = f.serving_ed25519().await;
    let (_, other) = f.key("other", "ed25519");
    let file = f.known_hosts(&["# lab".into(), entry(port, &public)]);
    f.strict(port, &file).await.unwrap();

    let file = f.known_hosts(&["# lab".into(), String::new(), entry(port, &other)]);
    let err = f.strict(port, &file).await.unwrap_err();
    assert!(matches!(&err, Error::HostKeyChanged { line: 3, file: f2, .. } if *f2 == file), "{err:?}");
    assert!(err.to_string().contains(&format!("{}:3", file.display())), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_recorded_for_port_22_does_not_admit_another_port() {
    let f = Fixture::new();
    let (port, public) = f.serving_ed25519().await;
    let file = f.known_hosts(&[format!("127.0.0.1 {public}")]);
    let err = f.strict(port, &file).await.unwrap_err();
    assert!(matches!(err, Error::HostKeyUnknown { .. }), "{err:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hashed_entry_connects() {
    let f = Fixture::new();
    let (port, public) = f.serving_ed25519().await;
    let file = f.known_hosts(&[entry(port, &public)]);
    let st = Command::new("ssh-keygen").args(["-q", "-H", "-f"]).arg(&file).status().unwrap();
    assert!(st.success());
    assert!(std::fs::read_to_string(&file).unwrap().starts_with("|1|"));
    f.strict(port, &file).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn with_several_keys_the_pinned_algorithm_is_negotiated() {
    let f = Fixture::new();
    let (ed, ed_public) = f.key("ed", "ed25519");
    let (rsa, rsa_public) = f.key("rsa", "rsa");
    let (_, wrong_ed) = f.key("wrong", "ed25519");
    let port = serve(vec![ed, rsa]).await;
    // both recorded, RSA first: ed25519 is pinned and negotiated
    f.strict(port, &f.known_hosts(&[entry(port, &rsa_public), entry(port, &ed_public)])).await.unwrap();
    // only RSA recorded: RSA is offered, and the server presents it
    f.strict(port, &f.known_hosts(&[entry(port, &rsa_public)])).await.unwrap();
    // the ed25519 line is the one checked, not "any line of the host"
    let file = f.known_hosts(&[entry(port, &rsa_public), entry(port, &wrong_ed)]);
    let err = f.strict(port, &file).await.unwrap_err();
    assert!(matches!(err, Error::HostKeyChanged { line: 2, .. }), "{err:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_without_the_recorded_algorithm_is_a_changed_key() {
    let f = Fixture::new();
    let (ed, _) = f.key("ed", "ed25519");
    let (_, rsa_public) = f.key("rsa", "rsa");
    let port = serve(vec![ed]).await;
    let err = f.strict(port, &f.known_hosts(&[entry(port, &rsa_public)])).await.unwrap_err();
    assert!(matches!(err, Error::HostKeyChanged { line: 1, .. }), "{err:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revoked_key_is_refused_even_when_listed_or_new() {
    let f = Fixture::new();
    let (port, public) = f.serving_ed25519().await;
    let revoked = format!("@revoked * {public}");
    let file = f.known_hosts(&[entry(port, &public), revoked.clone()]);
    let err = f.strict(port, &file).await.unwrap_err();
    assert!(matches!(err, Error::HostKeyRevoked { line: 2, .. }), "{err:?}");

    // trust on first use does not learn a revoked key
    let file = f.known_hosts(&[revoked]);
    let err = f.connect(port, HostKeyPolicy::AcceptNew(file.clone())).await.err().unwrap();
    assert!(matches!(err, Error::HostKeyRevoked { line: 1, .. }), "{err:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn accept_new_records_an_unknown_host_then_holds_it_to_that_key() {
    let f = Fixture::new();
    let (port, public) = f.serving_ed25519().await;
    let file = f.dir.path().join("learnt");
    let strict_err = f.strict(port, &file).await.unwrap_err();
    assert!(matches!(strict_err, Error::HostKeyUnknown { .. }), "{strict_err:?}");
    f.connect(port, HostKeyPolicy::AcceptNew(file.clone())).await.unwrap().close().await.unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), entry(port, &public));
    f.strict(port, &file).await.unwrap();
}
