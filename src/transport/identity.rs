//! Which key a login uses, chosen as an OpenSSH user expects, and the
//! passphrase of an encrypted key asked once per run on the terminal.
//!
//! Order: `--ssh-key`, the cluster's `ssh.key`, the first IdentityFile of
//! ~/.ssh/config that exists, the ssh-agent (when `SSH_AUTH_SOCK` is set),
//! then the first default identity that exists (~/.ssh/id_ed25519,
//! id_ecdsa, id_rsa). Passphrases are kept in memory for the run only, so
//! twenty nodes behind one key ask once.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{Error, SshAuth};

pub(super) const DEFAULT_IDENTITIES: &[&str] = &[".ssh/id_ed25519", ".ssh/id_ecdsa", ".ssh/id_rsa"];
const PASSPHRASE_TRIES: usize = 3;

/// Where the key files come from, most specific first.
pub struct Candidates<'a> {
    pub flag: Option<&'a Path>,
    pub cluster: Option<PathBuf>,
    pub config: &'a [PathBuf],
}

/// The login method for one node; none found, or a key that cannot be
/// unlocked, is [`SshAuth::Unavailable`] with the advice.
pub fn choose(c: &Candidates<'_>) -> SshAuth {
    find(c).unwrap_or_else(|e| SshAuth::Unavailable(Box::new(e)))
}

fn find(c: &Candidates<'_>) -> Result<SshAuth, Error> {
    if let Some(path) = c.flag.map(Path::to_path_buf).or_else(|| c.cluster.clone()) {
        return key_file(path);
    }
    if let Some(path) = c.config.iter().find(|p| p.is_file()) {
        return key_file(path.clone());
    }
    if std::env::var_os("SSH_AUTH_SOCK").is_some_and(|s| !s.is_empty()) {
        return Ok(SshAuth::Agent);
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let defaults: Vec<PathBuf> = home.iter().flat_map(|h| DEFAULT_IDENTITIES.iter().map(move |d| h.join(d))).collect();
    match defaults.iter().find(|p| p.is_file()) {
        Some(p) => key_file(p.clone()),
        None => Err(Error::NoIdentity),
    }
}

/// A key file login, with its passphrase if the key is encrypted. A file
/// that cannot be read is left for the connection to report per node.
fn key_file(path: PathBuf) -> Result<SshAuth, Error> {
    let passphrase = match std::fs::read_to_string(&path) {
        Ok(text) if is_encrypted(&text) => Some(passphrase_for(&path, &text)?),
        _ => None,
    };
    Ok(SshAuth::KeyFile { path, passphrase })
}

fn is_encrypted(text: &str) -> bool {
    matches!(russh::keys::decode_secret_key(text, None), Err(russh::keys::Error::KeyIsEncrypted))
}

fn unlocks(text: &str, passphrase: &str) -> bool {
    russh::keys::decode_secret_key(text, Some(passphrase)).is_ok()
}

/// Asked on the terminal at most once per key file and run.
fn passphrase_for(path: &Path, text: &str) -> Result<String, Error> {
    static KNOWN: Mutex<Option<HashMap<PathBuf, String>>> = Mutex::new(None);
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = known.get_or_insert_with(HashMap::new).get(path) {
        return Ok(p.clone());
    }
    if !std::io::stdin().is_terminal() {
        return Err(Error::PassphraseNoTerminal { key: path.to_path_buf() });
    }
    for _ in 0..PASSPHRASE_TRIES {
        let p = rpassword::prompt_password(format!("Enter passphrase for key '{}': ", path.display()))
            .map_err(|e| Error::PassphraseRead { key: path.to_path_buf(), reason: e.to_string() })?;
        if unlocks(text, &p) {
            known.get_or_insert_with(HashMap::new).insert(path.to_path_buf(), p.clone());
            return Ok(p);
        }
        eprintln!("Bad passphrase, try again.");
    }
    Err(Error::PassphraseWrong { key: path.to_path_buf(), tries: PASSPHRASE_TRIES })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_then_cluster_then_config() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("cfg_key");
        std::fs::write(&cfg, "not a key").unwrap();
        let flag = dir.path().join("flag_key");
        let pick = |c: &Candidates<'_>| match choose(c) {
            SshAuth::KeyFile { path, .. } => path,
            SshAuth::Agent => PathBuf::from("agent"),
            SshAuth::Unavailable(why) => panic!("{why}"),
        };
        let config = [dir.path().join("missing"), cfg.clone()];
        let c = Candidates { flag: Some(&flag), cluster: Some("/c".into()), config: &config };
        assert_eq!(pick(&c), flag);
        let c = Candidates { flag: None, cluster: Some("/c".into()), config: &config };
        assert_eq!(pick(&c), PathBuf::from("/c"));
        // a listed file that does not exist is skipped, as OpenSSH does
        let c = Candidates { flag: None, cluster: None, config: &config };
        assert_eq!(pick(&c), cfg);
    }
}
