//! Certificates, made with rcgen (no hand-written ASN.1): a self-signed CA
//! and certificates it signs, as PEM text, plus reading a certificate back
//! (subject, expiry, names) with x509-parser for `kdeploy certs` and for
//! deciding what is due. Keys are ECDSA P-256: rcgen cannot generate RSA
//! keys with the ring backend, and etcd, Go's TLS and kubeadm accept ECDSA.

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use time::{Duration, OffsetDateTime};

use super::Error;
use crate::schema::{CaSpec, CertSpec};

/// How long a CA made by kdeploy is valid.
pub const CA_DAYS: i64 = 3650;
/// How long a certificate kdeploy issues is valid.
pub const CERT_DAYS: i64 = 365;
/// A certificate is due for renewal this long before it expires.
pub const RENEW_DAYS: i64 = 30;

/// A PEM certificate and its PEM private key.
pub struct Pair {
    pub cert: String,
    pub key: String,
}

fn err(what: impl Into<String>, e: impl std::fmt::Display) -> Error {
    Error::Pki { what: what.into(), reason: e.to_string() }
}

fn name(cn: &str, org: Option<&str>) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, cn);
    if let Some(o) = org {
        dn.push(DnType::OrganizationName, o);
    }
    dn
}

/// A new self-signed CA valid from now for [`CA_DAYS`].
pub fn make_ca(spec: &CaSpec, now: OffsetDateTime) -> Result<Pair, Error> {
    let key = KeyPair::generate().map_err(|e| err("cannot generate a CA key", e))?;
    let mut p = CertificateParams::default();
    p.distinguished_name = name(&spec.common_name, None);
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    p.not_before = now - Duration::minutes(5);
    p.not_after = now + Duration::days(CA_DAYS);
    let cert = p.self_signed(&key).map_err(|e| err("cannot make the CA certificate", e))?;
    Ok(Pair { cert: cert.pem(), key: key.serialize_pem() })
}

/// Issue a certificate for `spec` signed by the CA (`ca_cert`, `ca_key`
/// PEM), for `key_pem` when given (renewal keeps the key), else a new key.
pub fn issue(
    spec: &CertSpec,
    ca_cert: &str,
    ca_key: &str,
    key_pem: Option<&str>,
    now: OffsetDateTime,
) -> Result<Pair, Error> {
    let ca_key = KeyPair::from_pem(ca_key).map_err(|e| Error::CaKey {
        name: spec.ca.key.clone(),
        reason: e.to_string(),
        pkcs8: ca_key.contains("-----BEGIN PRIVATE KEY-----"),
    })?;
    let issuer =
        Issuer::from_ca_cert_pem(ca_cert, ca_key).map_err(|e| err(format!("CA certificate {}", spec.ca.cert), e))?;
    let key = match key_pem {
        Some(k) => KeyPair::from_pem(k).map_err(|e| err(format!("key {}", spec.key), e))?,
        None => KeyPair::generate().map_err(|e| err("cannot generate a key", e))?,
    };
    let mut p = CertificateParams::default();
    p.distinguished_name = name(&spec.common_name, spec.organization.as_deref());
    p.is_ca = IsCa::ExplicitNoCa;
    // ECDSA keys sign; keyEncipherment is for RSA key transport only.
    p.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    if spec.server {
        p.extended_key_usages.push(ExtendedKeyUsagePurpose::ServerAuth);
    }
    if spec.client {
        p.extended_key_usages.push(ExtendedKeyUsagePurpose::ClientAuth);
    }
    for d in &spec.dns_names {
        let s = d.clone().try_into().map_err(|e| err(format!("DNS name {d:?}"), e))?;
        p.subject_alt_names.push(SanType::DnsName(s));
    }
    for ip in &spec.ip_addresses {
        let a = ip.parse().map_err(|e| err(format!("IP address {ip:?}"), e))?;
        p.subject_alt_names.push(SanType::IpAddress(a));
    }
    p.use_authority_key_identifier_extension = true;
    p.not_before = now - Duration::minutes(5);
    p.not_after = now + Duration::days(CERT_DAYS);
    let cert = p.signed_by(&key, &issuer).map_err(|e| err(format!("cannot issue {}", spec.cert), e))?;
    Ok(Pair { cert: cert.pem(), key: key.serialize_pem() })
}

/// What `kdeploy certs` shows of a certificate.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CertInfo {
    pub subject: String,
    pub issuer: String,
    pub not_before: i64,
    pub not_after: i64,
    pub is_ca: bool,
    pub names: Vec<String>,
}

/// Read a PEM certificate (the first one in the text).
pub fn inspect(pem: &[u8]) -> Result<CertInfo, Error> {
    let (_, p) = x509_parser::pem::parse_x509_pem(pem).map_err(|e| err("not a PEM certificate", e))?;
    let c = p.parse_x509().map_err(|e| err("not an X.509 certificate", e))?;
    let names = match c.subject_alternative_name() {
        Ok(Some(san)) => san.value.general_names.iter().map(general_name).collect(),
        _ => Vec::new(),
    };
    Ok(CertInfo {
        subject: c.subject().to_string(),
        issuer: c.issuer().to_string(),
        not_before: c.validity().not_before.timestamp(),
        not_after: c.validity().not_after.timestamp(),
        is_ca: c.is_ca(),
        names,
    })
}

/// The pin of a PEM certificate's public key as kubeadm takes it in
/// `caCertHashes`: `sha256:` and the hex SHA-256 of its DER
/// SubjectPublicKeyInfo.
pub fn public_key_pin(pem: &[u8]) -> Result<String, Error> {
    use sha2::Digest as _;
    let (_, p) = x509_parser::pem::parse_x509_pem(pem).map_err(|e| err("not a PEM certificate", e))?;
    let c = p.parse_x509().map_err(|e| err("not an X.509 certificate", e))?;
    Ok(format!("sha256:{}", hex::encode(sha2::Sha256::digest(c.public_key().raw))))
}

/// A subject alternative name as people write it: `DNS:etcd`, `IP:10.0.0.1`.
fn general_name(n: &x509_parser::extensions::GeneralName) -> String {
    use x509_parser::extensions::GeneralName;
    match n {
        GeneralName::DNSName(d) => format!("DNS:{d}"),
        GeneralName::IPAddress(b) => match b.len() {
            4 => format!("IP:{}", std::net::Ipv4Addr::from(<[u8; 4]>::try_from(*b).expect("4 bytes"))),
            16 => format!("IP:{}", std::net::Ipv6Addr::from(<[u8; 16]>::try_from(*b).expect("16 bytes"))),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// Whether a certificate expiring at `not_after` (unix seconds) is due at
/// `now`: it expires within `days` (by default [`RENEW_DAYS`]).
pub fn is_due_within(not_after: i64, now: OffsetDateTime, days: i64) -> bool {
    not_after - now.unix_timestamp() < days * 86400
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pin equals what kubeadm's documentation computes with openssl
    /// (`openssl x509 -pubkey | openssl pkey -pubin -outform der | sha256sum`).
    #[test]
    fn public_key_pin_matches_openssl() {
        let spec = CaSpec { cert: "c".into(), common_name: "kubernetes".into(), key: "k".into(), key_on_nodes: true };
        let ca = make_ca(&spec, OffsetDateTime::now_utc()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let cert = dir.path().join("ca.crt");
        std::fs::write(&cert, &ca.cert).unwrap();
        let sh = format!(
            "openssl x509 -in {} -pubkey -noout | openssl pkey -pubin -outform der | sha256sum",
            cert.display()
        );
        let out = std::process::Command::new("sh").args(["-c", &sh]).output().expect("openssl runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let want = String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap().to_string();
        assert_eq!(public_key_pin(ca.cert.as_bytes()).unwrap(), format!("sha256:{want}"));
    }
}
