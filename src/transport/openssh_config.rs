//! The user's OpenSSH client configuration (`~/.ssh/config`, or the file
//! given with `--ssh-config`), read with the `ssh2-config` crate: for one
//! host, the settings kdeploy honours — HostName, User, Port, IdentityFile,
//! UserKnownHostsFile, ProxyJump — as `ssh HOST` would see them (the first
//! value found wins, `Host` patterns and `Include` as OpenSSH reads them).
//! Everything else in the file is accepted and ignored.

use std::path::{Path, PathBuf};

use ssh2_config::{ParseRule, SshConfig, SshParserError};

use super::Error;

/// A parsed configuration, or none (no file, or `--ssh-config none`).
#[derive(Debug, Default)]
pub struct OpenSshConfig {
    parsed: Option<SshConfig>,
    home: Option<PathBuf>,
}

/// What the configuration says about one host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostEntry {
    pub host_name: Option<String>,
    pub user: Option<String>,
    pub port: Option<u16>,
    pub identity_files: Vec<PathBuf>,
    pub known_hosts: Option<PathBuf>,
    /// The first hop of ProxyJump, as written (`[user@]host[:port]`).
    pub proxy_jump: Option<String>,
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

impl OpenSshConfig {
    /// `path`: `None` reads `~/.ssh/config` if it exists; `"none"` reads
    /// nothing (as `ssh -F none`).
    pub fn load(path: Option<&Path>) -> Result<OpenSshConfig, Error> {
        let home = home();
        let file = match path {
            Some(p) if p == Path::new("none") => return Ok(OpenSshConfig::default()),
            Some(p) => p.to_path_buf(),
            None => match &home {
                Some(h) if h.join(".ssh/config").is_file() => h.join(".ssh/config"),
                _ => return Ok(OpenSshConfig::default()),
            },
        };
        let text = std::fs::read_to_string(&file)
            .map_err(|e| Error::SshConfigRead { file: file.clone(), reason: e.to_string() })?;
        Self::parse(&text, home).map_err(|e| Error::SshConfigSyntax { file, reason: e.to_string() })
    }

    /// Parse a configuration's text; `~` expands to `home`.
    pub fn parse(text: &str, home: Option<PathBuf>) -> Result<OpenSshConfig, SshParserError> {
        let mut config = SshConfig::default();
        if let Some(h) = &home {
            config = config.home_dir(h);
        }
        let rules = ParseRule::ALLOW_UNKNOWN_FIELDS | ParseRule::ALLOW_UNSUPPORTED_FIELDS;
        let parsed = config.parse(&mut text.as_bytes(), rules)?;
        Ok(OpenSshConfig { parsed: Some(parsed), home })
    }

    /// The settings for `host` (what `ssh host` would use).
    pub fn lookup(&self, host: &str) -> HostEntry {
        let Some(parsed) = &self.parsed else { return HostEntry::default() };
        let p = parsed.query(host);
        let first_word = |key: &str| p.unsupported_fields.get(key).and_then(|v| v.first()).cloned();
        HostEntry {
            host_name: p.host_name.clone(),
            user: p.user.clone(),
            port: p.port,
            identity_files: p.identity_file.clone().unwrap_or_default(),
            known_hosts: first_word("userknownhostsfile").map(|f| self.expand(&f)),
            proxy_jump: p.proxy_jump.as_ref().and_then(|hops| hops.first().cloned()).filter(|h| h != "none"),
        }
    }

    fn expand(&self, path: &str) -> PathBuf {
        match (path.strip_prefix("~/"), &self.home) {
            (Some(rest), Some(h)) => h.join(rest),
            _ => PathBuf::from(path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = "
Host bastion
  HostName 192.0.2.1
  User jump
  Port 2222

Host 10.77.0.* !10.77.0.15
  User deploy
  IdentityFile ~/.ssh/lab_key
  UserKnownHostsFile ~/lab/known_hosts ~/.ssh/known_hosts2
  ProxyJump bastion
  ForwardAgent no

Host *
  User fallback
  Port 22
";

    fn config() -> OpenSshConfig {
        OpenSshConfig::parse(CONFIG, Some(PathBuf::from("/home/u"))).unwrap()
    }

    #[test]
    fn first_matching_value_wins() {
        let e = config().lookup("10.77.0.11");
        assert_eq!(e.user.as_deref(), Some("deploy"));
        assert_eq!(e.port, Some(22));
        assert_eq!(e.identity_files, vec![PathBuf::from("/home/u/.ssh/lab_key")]);
        assert_eq!(e.known_hosts, Some(PathBuf::from("/home/u/lab/known_hosts")));
        assert_eq!(e.proxy_jump.as_deref(), Some("bastion"));
        assert_eq!(e.host_name, None);
    }

    #[test]
    fn negated_pattern_and_fallback() {
        let e = config().lookup("10.77.0.15");
        assert_eq!(e.user.as_deref(), Some("fallback"));
        assert_eq!(e.proxy_jump, None);
        let b = config().lookup("bastion");
        assert_eq!((b.host_name.as_deref(), b.user.as_deref(), b.port), (Some("192.0.2.1"), Some("jump"), Some(2222)));
    }

    #[test]
    fn no_file_says_nothing() {
        assert_eq!(OpenSshConfig::default().lookup("anything"), HostEntry::default());
    }
}
