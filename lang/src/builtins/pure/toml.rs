//! TOML for `builtins.fromTOML`, parsed with the `toml` crate and shaped
//! like Nix 2.8's result (Nix uses the toml11 C++ library). Produces the
//! same [`Data`] tree as `fromJSON`; `Data` rather than `serde_json::Value`
//! because TOML has `inf` and `nan`, which Nix keeps as floats.
//!
//! Nix 2.8 behaviour reproduced (checked with `nix-instantiate`):
//! - dates and times anywhere are an error: "Dates and times are not
//!   supported";
//! - integers out of the 64-bit range are clamped, not rejected:
//!   `9223372036854775808` → `i64::MAX`, `-9223372036854775809` →
//!   `i64::MIN`, `0xffffffffffffffff` → `i64::MAX`; floats overflowing to
//!   infinity are clamped to ±`f64::MAX` (`1e400` → `1.79769e+308`);
//! - `inf`, `-inf`, `nan` and `-nan` are floats (the sign of `nan` kept);
//! - strings and keys are cut at a NUL (`"x\u0000y"` → `"x"`);
//! - errors read "while parsing a TOML string: …".
//!
//! Known difference: toml11 (Nix) accepts `a.b = 1` followed by a `[a]`
//! header, which TOML 1.0 forbids; the `toml` crate rejects it, and so do we.
//! Error texts past the common prefix are the `toml` crate's.

use super::json::{cut_at_nul, finish_attrs, Data};

const PREFIX: &str = "while parsing a TOML string: ";

/// A document with more out-of-range numbers than this is refused rather
/// than re-parsed again and again (each clamp costs a full re-parse).
const MAX_CLAMPS: usize = 1000;

/// `builtins.fromTOML`.
pub fn from_toml(text: &str) -> Result<Data, String> {
    let mut doc = std::borrow::Cow::Borrowed(text);
    for _ in 0..=MAX_CLAMPS {
        match doc.parse::<::toml::Table>() {
            Ok(table) => return convert_table(table),
            Err(e) => {
                // The `toml` crate rejects out-of-range numbers; toml11
                // saturates them. Put the saturated value in place of the
                // offending literal and parse again.
                let replacement = e.span().and_then(|sp| {
                    let lit = doc.get(sp.clone())?;
                    clamped_literal(lit).map(|r| (sp, r))
                });
                match replacement {
                    Some((sp, r)) => {
                        let mut s = doc.into_owned();
                        s.replace_range(sp, r);
                        doc = std::borrow::Cow::Owned(s);
                    }
                    None => return Err(format!("{PREFIX}{}", e.to_string().trim_end())),
                }
            }
        }
    }
    Err(format!("{PREFIX}too many out-of-range numbers"))
}

/// Whether `s` is `digit (_? digit)*` for the given digit class.
fn is_digit_run(s: &str, is_digit: fn(u8) -> bool) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && is_digit(b[0])
        && is_digit(b[b.len() - 1])
        && b.windows(2).all(|w| is_digit(w[1]) || (w[1] == b'_' && is_digit(w[0])))
        && b.iter().all(|&c| c == b'_' || is_digit(c))
}

/// The saturated replacement for a valid TOML number literal that does
/// not fit, or `None` if `lit` is not such a literal (then the parse error
/// was about something else and is reported).
fn clamped_literal(lit: &str) -> Option<&'static str> {
    const MAX: &str = "9223372036854775807";
    const MIN: &str = "-9223372036854775808";
    for (prefix, radix, is_digit) in [
        ("0x", 16, (|c: u8| c.is_ascii_hexdigit()) as fn(u8) -> bool),
        ("0o", 8, |c: u8| (b'0'..=b'7').contains(&c)),
        ("0b", 2, |c: u8| c == b'0' || c == b'1'),
    ] {
        if let Some(digits) = lit.strip_prefix(prefix) {
            if !is_digit_run(digits, is_digit) {
                return None;
            }
            let clean: String = digits.chars().filter(|&c| c != '_').collect();
            // No sign is allowed on these, so overflow is always upward.
            return match i64::from_str_radix(&clean, radix) {
                Ok(_) => None,
                Err(_) => Some(MAX),
            };
        }
    }
    let (negative, body) = match lit.as_bytes().first() {
        Some(b'-') => (true, &lit[1..]),
        Some(b'+') => (false, &lit[1..]),
        _ => (false, lit),
    };
    let dec = |c: u8| c.is_ascii_digit();
    if is_digit_run(body, dec) {
        if body.len() > 1 && body.starts_with('0') {
            return None;
        }
        let clean: String = lit.chars().filter(|&c| c != '_').collect();
        return match clean.parse::<i64>() {
            Ok(_) => None,
            Err(_) => Some(if negative { MIN } else { MAX }),
        };
    }
    // Float: int part, then fraction and/or exponent.
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (int_part, frac) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let exponent_ok = |e: &str| is_digit_run(e.strip_prefix(['+', '-']).unwrap_or(e), dec);
    let valid = is_digit_run(int_part, dec)
        && !(int_part.len() > 1 && int_part.starts_with('0'))
        && frac.is_none_or(|f| is_digit_run(f, dec))
        && exponent.is_none_or(exponent_ok)
        && (frac.is_some() || exponent.is_some());
    if !valid {
        return None;
    }
    let clean: String = lit.chars().filter(|&c| c != '_').collect();
    match clean.parse::<f64>() {
        Ok(v) if v.is_infinite() => Some(if negative { "-1.7976931348623157e308" } else { "1.7976931348623157e308" }),
        _ => None,
    }
}

fn convert_table(table: ::toml::Table) -> Result<Data, String> {
    let mut entries = Vec::with_capacity(table.len());
    for (k, v) in table {
        entries.push((cut_at_nul(k), convert(v)?));
    }
    Ok(Data::Attrs(finish_attrs(entries)))
}

fn convert(v: ::toml::Value) -> Result<Data, String> {
    Ok(match v {
        ::toml::Value::String(s) => Data::String(cut_at_nul(s)),
        ::toml::Value::Integer(i) => Data::Int(i),
        ::toml::Value::Float(f) => Data::Float(f),
        ::toml::Value::Boolean(b) => Data::Bool(b),
        ::toml::Value::Datetime(_) => return Err(format!("{PREFIX}Dates and times are not supported")),
        ::toml::Value::Array(items) => Data::List(items.into_iter().map(convert).collect::<Result<_, _>>()?),
        ::toml::Value::Table(t) => convert_table(t)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> Data {
        from_toml(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    fn attrs(v: Vec<(&str, Data)>) -> Data {
        Data::Attrs(v.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    fn one(s: &str) -> Data {
        match ok(s) {
            Data::Attrs(mut v) if v.len() == 1 => v.remove(0).1,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn scalars() {
        assert_eq!(one("a = 1"), Data::Int(1));
        assert_eq!(one("a = 0xff"), Data::Int(255));
        assert_eq!(one("a = 0o17"), Data::Int(15));
        assert_eq!(one("a = 0b101"), Data::Int(5));
        assert_eq!(one("a = 1_000"), Data::Int(1000));
        assert_eq!(one("a = +5"), Data::Int(5));
        assert_eq!(one("a = -0"), Data::Int(0));
        assert_eq!(one("a = 1.5"), Data::Float(1.5));
        assert_eq!(one("a = 1e3"), Data::Float(1000.0));
        assert_eq!(one("a = 1.0e+2"), Data::Float(100.0));
        assert_eq!(one("a = 6.626e-34"), Data::Float(6.626e-34));
        assert_eq!(one("a = 3.0"), Data::Float(3.0));
        assert_eq!(one("a = 1e-400"), Data::Float(0.0));
        assert_eq!(one("a = true"), Data::Bool(true));
        assert_eq!(one("a = 1 # comment"), Data::Int(1));
        match one("a = -0.0") {
            Data::Float(f) => assert!(f == 0.0 && f.is_sign_negative()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn special_floats() {
        assert_eq!(one("a = inf"), Data::Float(f64::INFINITY));
        assert_eq!(one("a = +inf"), Data::Float(f64::INFINITY));
        assert_eq!(one("a = -inf"), Data::Float(f64::NEG_INFINITY));
        for (src, negative) in [("a = nan", false), ("a = +nan", false), ("a = -nan", true)] {
            match one(src) {
                Data::Float(f) => assert!(f.is_nan() && f.is_sign_negative() == negative, "{src}"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn out_of_range_numbers_saturate() {
        assert_eq!(one("a = 9223372036854775807"), Data::Int(i64::MAX));
        assert_eq!(one("a = 9223372036854775808"), Data::Int(i64::MAX));
        assert_eq!(one("a = 99999999999999999999999"), Data::Int(i64::MAX));
        assert_eq!(one("a = -9223372036854775809"), Data::Int(i64::MIN));
        assert_eq!(one("a = -9_223_372_036_854_775_809"), Data::Int(i64::MIN));
        assert_eq!(one("a = 0xffffffffffffffff"), Data::Int(i64::MAX));
        assert_eq!(one("a = 0x8000000000000000"), Data::Int(i64::MAX));
        assert_eq!(one("a = 0x7fffffffffffffff"), Data::Int(i64::MAX));
        assert_eq!(one("a = 0o777777777777777777777777"), Data::Int(i64::MAX));
        assert_eq!(one("a = 1e400"), Data::Float(f64::MAX));
        assert_eq!(one("a = -1e400"), Data::Float(-f64::MAX));
        assert_eq!(
            one("a = [1, 99999999999999999999, -99999999999999999999, 2e999]"),
            Data::List(vec![Data::Int(1), Data::Int(i64::MAX), Data::Int(i64::MIN), Data::Float(f64::MAX)])
        );
        // Strings that look like numbers are left alone.
        assert_eq!(one("a = \"99999999999999999999\""), Data::String("99999999999999999999".into()));
    }

    #[test]
    fn structure() {
        assert_eq!(
            one("a = [1, \"x\", 2.5]"),
            Data::List(vec![Data::Int(1), Data::String("x".into()), Data::Float(2.5)])
        );
        assert_eq!(
            one("a = [[1,2],[\"a\"]]"),
            Data::List(vec![Data::List(vec![Data::Int(1), Data::Int(2)]), Data::List(vec![Data::String("a".into())])])
        );
        assert_eq!(
            ok("[[p]]\nx=1\n[[p]]\nx=2"),
            attrs(vec![("p", Data::List(vec![attrs(vec![("x", Data::Int(1))]), attrs(vec![("x", Data::Int(2))])]))])
        );
        assert_eq!(
            ok("a.b.c = 1\n[d.e]\nf = true"),
            attrs(vec![
                ("a", attrs(vec![("b", attrs(vec![("c", Data::Int(1))]))])),
                ("d", attrs(vec![("e", attrs(vec![("f", Data::Bool(true))]))])),
            ])
        );
        assert_eq!(
            ok("a = { x = 1, y = { z = \"s\" } }"),
            attrs(vec![("a", attrs(vec![("x", Data::Int(1)), ("y", attrs(vec![("z", Data::String("s".into()))]))]))])
        );
        assert_eq!(ok(""), Data::Attrs(vec![]));
        assert_eq!(one("x = [ ]"), Data::List(vec![]));
        assert_eq!(ok("a=1\r\nb=2"), attrs(vec![("a", Data::Int(1)), ("b", Data::Int(2))]));
        // Sorted by key whatever the document order.
        assert_eq!(ok("b = 1\na = 2"), attrs(vec![("a", Data::Int(2)), ("b", Data::Int(1))]));
    }

    #[test]
    fn strings_and_keys() {
        assert_eq!(
            ok("a = \"\"\"\nmulti\nline\"\"\"\nb = 'lit\\n'\nc = '''\nraw'''"),
            attrs(vec![
                ("a", Data::String("multi\nline".into())),
                ("b", Data::String("lit\\n".into())),
                ("c", Data::String("raw".into())),
            ])
        );
        assert_eq!(one("a = \"\\u00e9\\U0001F600\""), Data::String("é😀".into()));
        assert_eq!(
            ok("\"quoted key\" = 1\n'lit key' = 2"),
            attrs(vec![("lit key", Data::Int(2)), ("quoted key", Data::Int(1))])
        );
        assert_eq!(one("a = \"x\\u0000y\""), Data::String("x".into()));
        assert_eq!(ok("\"k\\u0000x\" = 1"), attrs(vec![("k", Data::Int(1))]));
    }

    #[test]
    fn errors() {
        for src in [
            "a = 1979-05-27T07:32:00Z",
            "a = 1979-05-27",
            "a = 07:32:00",
            "a = 1979-05-27T07:32:00",
            "a = 1979-05-27T07:32:00.999999-07:00",
            "a = [1979-05-27]",
            "[t]\nx = { d = 1979-05-27 }",
        ] {
            assert_eq!(
                from_toml(src),
                Err("while parsing a TOML string: Dates and times are not supported".into()),
                "{src}"
            );
        }
        for src in [
            "a = 1\na = 2",
            "[a]\nb=1\n[a]\nc=2",
            "a = 1\n[[a]]",
            "a = ",
            "a = 01",
            "a = 1__0",
            "a = .5",
            "a = 5.",
            "= 1",
            "a = 0x",
            "a = 1e",
        ] {
            let e = from_toml(src).expect_err(src);
            assert!(e.starts_with(PREFIX), "{e}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = "a = ".to_string() + &"[".repeat(100_000) + &"]".repeat(100_000);
        assert!(from_toml(&deep).is_err());
        let deep = "a = ".to_string() + &"{b=".repeat(100_000) + "1" + &"}".repeat(100_000);
        assert!(from_toml(&deep).is_err());
        let ok_depth = "a = ".to_string() + &"[".repeat(20) + &"]".repeat(20);
        assert!(from_toml(&ok_depth).is_ok());
    }

    #[test]
    fn clamp_only_touches_number_literals() {
        assert_eq!(clamped_literal("99999999999999999999"), Some("9223372036854775807"));
        assert_eq!(clamped_literal("+99999999999999999999"), Some("9223372036854775807"));
        assert_eq!(clamped_literal("-99999999999999999999"), Some("-9223372036854775808"));
        assert_eq!(clamped_literal("123"), None);
        assert_eq!(clamped_literal("0123"), None);
        assert_eq!(clamped_literal("1__0"), None);
        assert_eq!(clamped_literal("_1"), None);
        assert_eq!(clamped_literal("0x_ff"), None);
        assert_eq!(clamped_literal("1e400"), Some("1.7976931348623157e308"));
        assert_eq!(clamped_literal("-1.5e+400"), Some("-1.7976931348623157e308"));
        assert_eq!(clamped_literal("1e+-400"), None);
        assert_eq!(clamped_literal("1.5"), None);
        assert_eq!(clamped_literal("\"x\""), None);
        assert_eq!(clamped_literal(""), None);
        assert_eq!(clamped_literal("-"), None);
    }
}
