//! Telling key material from plain content, so that no key travels as a
//! plain source (`text`, `file`, `local`): those are stored in the shared
//! blob store, uploaded to the binary cache and printed by `eval --file`
//! and diffs. What counts, whatever the source:
//!
//! - content holding a PEM private key (`-----BEGIN … PRIVATE KEY-----`
//!   followed by its body: RSA, EC, PKCS#8, encrypted, OpenSSH), or being
//!   a kubeadm bootstrap token (`[a-z0-9]{6}.[a-z0-9]{16}`);
//! - a file its owner keeps from others (no read permission for others)
//!   under a key-like name (`*-key.pem`, `*.key`, `*token*`, `*secret*`,
//!   `*passw*`, …): the owner has said it is private, the name says what.
//!
//! Such a source is refused and pointed at `secretFile`, which reads the
//! same file as a secret. A file that is merely private (a 0600 config)
//! or merely named like a key (a public `signing-key.pem`, 0644) is plain.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use memchr::memmem;

const BEGIN: &[u8] = b"-----BEGIN ";
/// How far a PEM header and the start of its body reach past `BEGIN`.
const HEADER_SPAN: usize = 128;

/// Whether `buf` holds a PEM private key: a `-----BEGIN <label>PRIVATE KEY-----`
/// line followed by a body (base64, or an encrypted key's `Proc-Type:`).
pub fn holds_private_key(buf: &[u8]) -> bool {
    memmem::find_iter(buf, BEGIN).any(|at| pem_key_at(&buf[at + BEGIN.len()..]) == Some(true))
}

/// After `-----BEGIN `: `Some(true)` a private key's header and body,
/// `Some(false)` something else, `None` too few bytes to tell.
fn pem_key_at(rest: &[u8]) -> Option<bool> {
    let Some(end) = memmem::find(&rest[..rest.len().min(64)], b"-----") else {
        return if rest.len() < 64 { None } else { Some(false) };
    };
    if !rest[..end].ends_with(b"PRIVATE KEY") {
        return Some(false);
    }
    let body = &rest[end + 5..];
    let body = body.strip_prefix(b"\r").unwrap_or(body);
    let Some(body) = body.strip_prefix(b"\n") else { return if body.is_empty() { None } else { Some(false) } };
    let want = 16;
    if body.starts_with(b"Proc-Type:") {
        return Some(true);
    }
    let base64 = body.iter().take(want).take_while(|b| b.is_ascii_alphanumeric() || b"+/=".contains(b)).count();
    match (base64 == want, body.len() < want && base64 == body.len()) {
        (true, _) => Some(true),
        (false, true) => None,
        (false, false) => Some(false),
    }
}

/// Looks for a PEM private key in content read in chunks (a binary of
/// tens of MB is not held whole): the end of each chunk is kept to see a
/// header cut across two.
#[derive(Default)]
pub struct Scan {
    tail: Vec<u8>,
    found: bool,
}

impl Scan {
    pub fn update(&mut self, chunk: &[u8]) {
        const KEEP: usize = BEGIN.len() + HEADER_SPAN;
        if self.found {
            return;
        }
        // the end of what came before with the start of this chunk: a header across the two
        let mut seam = std::mem::take(&mut self.tail);
        seam.extend_from_slice(&chunk[..chunk.len().min(KEEP)]);
        self.found = holds_private_key(&seam) || holds_private_key(chunk);
        self.tail = match chunk.len() >= KEEP {
            true => chunk[chunk.len() - KEEP..].to_vec(),
            // a short chunk is all in the seam
            false => seam[seam.len().saturating_sub(KEEP)..].to_vec(),
        };
    }

    pub fn found(&self) -> bool {
        self.found
    }
}

/// Whether the whole content is a kubeadm bootstrap token.
pub fn is_bootstrap_token(bytes: &[u8]) -> bool {
    let t = bytes.trim_ascii();
    t.len() == 23
        && t[6] == b'.'
        && t.iter().enumerate().all(|(i, b)| i == 6 || b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// Why content is key material (`None`: it is not).
pub fn in_content(bytes: &[u8]) -> Option<&'static str> {
    if holds_private_key(bytes) {
        Some("holds a private key")
    } else if is_bootstrap_token(bytes) {
        Some("is a bootstrap token")
    } else {
        None
    }
}

/// A file name that says "key", "token", "secret" or "password".
pub fn named_like_key(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["key.pem", ".key", "-key", "_key", ".p12", ".pfx", ".jks", ".keystore"].iter().any(|s| n.ends_with(s))
        || ["token", "secret", "passw", "credential", "certificate-key"].iter().any(|s| n.contains(s))
}

/// Why the file at `real` may not be a plain source for its name and
/// permissions alone (`None`: it may).
pub fn in_file_name(real: &Path) -> Option<&'static str> {
    let name = real.file_name()?.to_string_lossy();
    let mode = std::fs::metadata(real).ok()?.permissions().mode();
    (mode & 0o004 == 0 && named_like_key(&name)).then_some("is readable only by its owner and named like a key")
}

/// What a refusal says to do instead.
pub const USE_SECRET_FILE: &str =
    "name it as a secret instead (source `secretFile`, or custom.files.<path>.secretFile), which travels only over SSH";

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIOL9sIjssmNDrbk8zOjrjWILB+o4XcbysLCTYnxicC4G\n-----END PRIVATE KEY-----\n";

    #[test]
    fn private_keys_in_any_pem_flavour() {
        for label in ["", "RSA ", "EC ", "ENCRYPTED ", "OPENSSH ", "DSA "] {
            let text = KEY.replace("BEGIN PRIVATE", &format!("BEGIN {label}PRIVATE"));
            assert!(holds_private_key(text.as_bytes()), "{label}");
            assert!(holds_private_key(format!("a cert first\n{text}").as_bytes()), "{label}");
        }
        let encrypted = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nabc\n";
        assert!(holds_private_key(encrypted.as_bytes()));
        assert!(holds_private_key(KEY.replace('\n', "\r\n").as_bytes()));
    }

    #[test]
    fn public_material_and_mentions_are_plain() {
        for text in [
            "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n",
            "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n",
            // a program that writes keys names the header, not a key
            "printf '-----BEGIN PRIVATE KEY-----\\n%s\\n' \"$body\"",
            "pem.Encode(w, \"-----BEGIN RSA PRIVATE KEY-----\")",
            "-----BEGIN PRIVATE KEY-----",
        ] {
            assert!(!holds_private_key(text.as_bytes()), "{text}");
        }
    }

    #[test]
    fn a_header_cut_across_chunks_is_seen() {
        let content = format!("{}{KEY}", "x".repeat(1000));
        for cut in [990, 1000, 1005, 1011, 1020, 1027, 1028, 1030, 1040, 1060] {
            let mut scan = Scan::default();
            scan.update(&content.as_bytes()[..cut]);
            scan.update(&content.as_bytes()[cut..]);
            assert!(scan.found(), "cut at {cut}");
        }
        let mut scan = Scan::default();
        for b in KEY.as_bytes().chunks(1) {
            scan.update(b);
        }
        assert!(scan.found(), "a byte at a time");
    }

    #[test]
    fn tokens_and_names() {
        assert!(is_bootstrap_token(b"abcdef.0123456789abcdef\n"));
        assert!(!is_bootstrap_token(b"abcdef.0123456789abcdeF"));
        assert!(!is_bootstrap_token(b"version: abcdef.0123456789abcdef"));
        for n in ["member-n1-key.pem", "tls.key", "api-token", "db_password", "Secret.txt", "kubeadm-certificate-key"] {
            assert!(named_like_key(n), "{n}");
        }
        for n in ["member-n1.pem", "keyboard.conf", "ca.pem", "etcd", "monkey.conf.d"] {
            assert!(!named_like_key(n), "{n}");
        }
    }
}
