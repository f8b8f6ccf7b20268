//! Version-string helpers behind `builtins.splitVersion`,
//! `builtins.compareVersions` and `builtins.parseDrvName`, following the
//! rules of Nix 2.8 (`nextComponent`, `componentsLT` and `DrvName`), checked
//! against `nix-instantiate` for the edge cases covered by the tests below.

use std::cmp::Ordering;

/// Reads the next version component starting at byte offset `*pos`.
///
/// Works on bytes rather than chars because Nix uses the C `isdigit` on
/// `char`, so only ASCII digits count as digits and every other byte
/// (including all bytes of multi-byte UTF-8 sequences) is a "letter". The
/// boundaries we cut at are always ASCII, so the slices stay valid UTF-8.
fn next_component<'a>(s: &'a str, pos: &mut usize) -> &'a str {
    let b = s.as_bytes();
    while *pos < b.len() && (b[*pos] == b'.' || b[*pos] == b'-') {
        *pos += 1;
    }
    let start = *pos;
    if start >= b.len() {
        return "";
    }
    if b[start].is_ascii_digit() {
        while *pos < b.len() && b[*pos].is_ascii_digit() {
            *pos += 1;
        }
    } else {
        while *pos < b.len() && !b[*pos].is_ascii_digit() && b[*pos] != b'.' && b[*pos] != b'-' {
            *pos += 1;
        }
    }
    &s[start..*pos]
}

/// `builtins.splitVersion`: the components `compareVersions` would see.
pub fn split_version(v: &str) -> Vec<String> {
    let mut pos = 0;
    let mut out = Vec::new();
    while pos < v.len() {
        let c = next_component(v, &mut pos);
        // Nix stops at the first empty component, which only happens when
        // the rest of the string is separators.
        if c.is_empty() {
            break;
        }
        out.push(c.to_string());
    }
    out
}

/// Nix parses a component as a C `int`; a run of digits that overflows
/// 32 bits is then *not* a number and is compared like a word. Matching
/// that quirk matters for e.g. date-like versions `20230101120000`.
fn as_int(c: &str) -> Option<i32> {
    if c.is_empty() || !c.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    c.parse::<i32>().ok()
}

fn components_lt(c1: &str, c2: &str) -> bool {
    let n1 = as_int(c1);
    let n2 = as_int(c2);
    match (n1, n2) {
        (Some(a), Some(b)) => a < b,
        _ if c1.is_empty() && n2.is_some() => true,
        _ if c1 == "pre" && c2 != "pre" => true,
        _ if c2 == "pre" => false,
        // "2.3a" < "2.3.1": a word sorts before a number.
        (_, Some(_)) => true,
        (Some(_), _) => false,
        _ => c1.as_bytes() < c2.as_bytes(),
    }
}

/// `builtins.compareVersions`: `Less` means `a` is the older version.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    let (mut p1, mut p2) = (0usize, 0usize);
    while p1 < a.len() || p2 < b.len() {
        let c1 = next_component(a, &mut p1);
        let c2 = next_component(b, &mut p2);
        if components_lt(c1, c2) {
            return Ordering::Less;
        }
        if components_lt(c2, c1) {
            return Ordering::Greater;
        }
    }
    Ordering::Equal
}

/// `builtins.parseDrvName`: returns `(name, version)`, splitting at the
/// first `-` that is followed by something other than an ASCII letter.
/// Without such a dash the whole string is the name and the version is "".
pub fn parse_drv_name(s: &str) -> (String, String) {
    let b = s.as_bytes();
    for i in 0..b.len() {
        if b[i] == b'-' && i + 1 < b.len() && !b[i + 1].is_ascii_alphabetic() {
            return (s[..i].to_string(), s[i + 1..].to_string());
        }
    }
    (s.to_string(), String::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp(a: &str, b: &str) -> i32 {
        match compare_versions(a, b) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }
    }

    #[test]
    fn compare_matches_nix() {
        // Expected values obtained from Nix 2.8 `builtins.compareVersions`.
        let cases: &[(&str, &str, i32)] = &[
            ("1.0", "1.0pre", 1),
            ("", "", 0),
            ("", "1", -1),
            ("1", "", 1),
            ("a", "", 1),
            ("", "a", -1),
            ("pre", "", -1),
            ("", "pre", 1),
            ("2147483647", "2147483648", 1),
            ("2147483648", "2147483647", -1),
            ("99999999999", "9", -1),
            ("99999999999", "a", -1),
            ("1.2a", "1.2.1", -1),
            ("1.2", "1.2.0", -1),
            ("1.0-rc1", "1.0", 1),
            ("01", "1", 0),
            ("1a", "1", 1),
            ("1", "1a", -1),
            ("1.a", "1.b", -1),
            ("1.pre1", "1.0", -1),
            ("1..", "1", 0),
            ("-1", "1", 0),
            ("1-", "1", 0),
            ("1.2pre", "1.2", -1),
            ("foo", "pre", 1),
            ("", "-", 0),
            ("é", "e", 1),
            ("+1", "1", -1),
            ("1", "+1", 1),
            ("2.3a", "2.3", 1),
            (" 1", "1", -1),
            ("1 ", "1", 1),
            ("00000000000001", "1", 0),
            ("00000000000002", "1", 1),
            ("4294967297", "1", -1),
            ("2147483647", "2147483646", 1),
            ("1.0", "1.0.", 0),
            ("a", "b", -1),
            ("B", "a", -1),
            ("pre", "pre", 0),
            ("1pre", "1a", -1),
            ("1.0a", "1.0pre", 1),
            ("2.8.0", "2.10", -1),
            ("1.2.3", "1.2.3", 0),
        ];
        for &(a, b, want) in cases {
            assert_eq!(cmp(a, b), want, "compareVersions {a:?} {b:?}");
        }
    }

    #[test]
    fn compare_is_antisymmetric() {
        let vs = ["", "1", "1.0", "1.0pre", "pre", "a", "1a", "2147483648", "1.2-rc1", "é"];
        for a in vs {
            for b in vs {
                assert_eq!(compare_versions(a, b), compare_versions(b, a).reverse(), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn split_matches_nix() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("1.2.3", &["1", "2", "3"]),
            ("1.2-rc3", &["1", "2", "rc", "3"]),
            ("..1..2..", &["1", "2"]),
            ("1a2b", &["1", "a", "2", "b"]),
            ("a-b", &["a", "b"]),
            ("1.2.3pre", &["1", "2", "3", "pre"]),
            ("-", &[]),
            (" x y", &[" x y"]),
            ("é1", &["é", "1"]),
        ];
        for &(v, want) in cases {
            assert_eq!(split_version(v), want, "splitVersion {v:?}");
        }
    }

    #[test]
    fn parse_drv_name_matches_nix() {
        let cases: &[(&str, &str, &str)] = &[
            ("", "", ""),
            ("foo", "foo", ""),
            ("foo-", "foo-", ""),
            ("foo-1.2", "foo", "1.2"),
            ("foo-bar-1.2", "foo-bar", "1.2"),
            ("foo-bar", "foo-bar", ""),
            ("foo--1", "foo", "-1"),
            ("-1", "", "1"),
            ("foo-.1", "foo", ".1"),
            ("foo-é", "foo", "é"),
            ("a-1-b-2", "a", "1-b-2"),
            ("foo-_", "foo", "_"),
        ];
        for &(s, n, v) in cases {
            assert_eq!(parse_drv_name(s), (n.to_string(), v.to_string()), "parseDrvName {s:?}");
        }
    }
}
