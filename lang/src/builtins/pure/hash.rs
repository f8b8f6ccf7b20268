//! Message digests for `builtins.hashString`: md5, sha1, sha256 and sha512
//! rendered as lowercase hex, the only output form Nix 2.8's
//! `hashString` produces. Algorithm names are case-sensitive, as in Nix.

use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha256, Sha512};

/// The algorithm names Nix accepts, in the order Nix lists them.
pub const ALGORITHMS: [&str; 4] = ["md5", "sha1", "sha256", "sha512"];

fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 0x0f) as usize] as char);
    }
    s
}

/// Digest bytes of `data` under `algo`; the error text matches Nix's
/// (`unknown hash algorithm 'sha3'`).
pub fn hash_bytes(algo: &str, data: &[u8]) -> Result<Vec<u8>, String> {
    Ok(match algo {
        "md5" => Md5::digest(data).to_vec(),
        "sha1" => Sha1::digest(data).to_vec(),
        "sha256" => Sha256::digest(data).to_vec(),
        "sha512" => Sha512::digest(data).to_vec(),
        _ => return Err(format!("unknown hash algorithm '{algo}'")),
    })
}

/// `builtins.hashString algo data`: lowercase hex digest.
pub fn hash_string(algo: &str, data: &[u8]) -> Result<String, String> {
    hash_bytes(algo, data).map(|d| to_hex(&d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_matches_nix() {
        // From Nix 2.8: map (a: builtins.hashString a "hello") [...]
        assert_eq!(hash_string("md5", b"hello").unwrap(), "5d41402abc4b2a76b9719d911017c592");
        assert_eq!(hash_string("sha1", b"hello").unwrap(), "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d");
        assert_eq!(
            hash_string("sha256", b"hello").unwrap(),
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(
            hash_string("sha512", b"hello").unwrap(),
            "9b71d224bd62f3785d96d46ad3ea3d73319bfbc2890caadae2dff72519673ca7\
             2323c3d99ba5c11d7c7acc6e14b8c5da0c4663475c2e5c3adef46f73bcdec043"
        );
    }

    #[test]
    fn empty_input() {
        assert_eq!(
            hash_string("sha256", b"").unwrap(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(hash_string("md5", b"").unwrap(), "d41d8cd98f00b204e9800998ecf8427e");
    }

    #[test]
    fn digest_lengths() {
        for (algo, len) in [("md5", 32), ("sha1", 40), ("sha256", 64), ("sha512", 128)] {
            let h = hash_string(algo, "é\0x".as_bytes()).unwrap();
            assert_eq!(h.len(), len, "{algo}");
            assert!(h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
        }
    }

    #[test]
    fn unknown_algorithm_is_an_error() {
        assert_eq!(hash_string("sha3", b"x"), Err("unknown hash algorithm 'sha3'".to_string()));
        // Nix does not normalise case.
        assert_eq!(hash_string("SHA256", b"x"), Err("unknown hash algorithm 'SHA256'".to_string()));
        assert!(hash_string("", b"x").is_err());
    }
}
