//! Nix source text for data: a JSON value as the Nix expression that
//! evaluates to it, string literals and attribute names that read back
//! exactly (what `kdeploy options` prints as defaults and `kdeploy import`
//! writes as settings), and text for comments that cannot end the comment.
//!
//! These are the only ways text from outside (an inventory is untrusted)
//! reaches a generated file: a string literal escapes `\`, `"` and `${`;
//! a character that does not show as itself (a control character, a line
//! separator, a bidi or zero-width mark) is never written raw — in a string
//! Nix has escapes only for `\n`, `\r` and `\t`, so a string holding any
//! other is written as `(builtins.fromJSON "…")` with `\uXXXX` escapes; in
//! a comment (and a message) the text is quoted with escapes ([`shown`]).

use serde_json::Value as Json;

/// A JSON value written as the Nix expression that evaluates to it.
pub fn nix_literal(v: &Json) -> String {
    match v {
        Json::Null => "null".into(),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) => nix_number(n),
        Json::String(s) => nix_string(s),
        Json::Array(items) if items.is_empty() => "[ ]".into(),
        Json::Array(items) => format!("[ {} ]", items.iter().map(nix_literal).collect::<Vec<_>>().join(" ")),
        Json::Object(m) if m.is_empty() => "{ }".into(),
        Json::Object(m) => {
            let attrs: Vec<String> =
                m.iter().map(|(k, v)| format!("{} = {};", nix_attr_name(k), nix_literal(v))).collect();
            format!("{{ {} }}", attrs.join(" "))
        }
    }
}

/// A number as a Nix literal: a float always with a `.` (rnix reads `1e3`
/// as `1` applied to `e3`), a negative one in parentheses (so it stays one
/// element of a list), the smallest integer (whose negation does not fit)
/// through `builtins.fromJSON`; an integer past Nix's 64 bits as the
/// nearest float.
fn nix_number(n: &serde_json::Number) -> String {
    let text = match (n.as_i64(), n.as_f64()) {
        (Some(i64::MIN), _) => return format!("(builtins.fromJSON {})", string_literal(&i64::MIN.to_string())),
        (Some(i), _) => i.to_string(),
        (None, Some(f)) => float_text(f),
        (None, None) => n.to_string(),
    };
    if text.starts_with('-') {
        format!("({text})")
    } else {
        text
    }
}

fn float_text(f: f64) -> String {
    let s = format!("{f:?}");
    match s.find(['e', 'E']) {
        _ if s.contains('.') => s,
        Some(e) => format!("{}.0{}", &s[..e], &s[e..]),
        None => format!("{s}.0"),
    }
}

/// A character that does not show as itself: a control character, a line
/// or paragraph separator, or a formatting mark that reorders or hides
/// text (bidi controls, zero-width characters, the byte-order mark).
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// Whether a string literal can hold `s` with Nix's own escapes.
fn escapable(s: &str) -> bool {
    s.chars().all(|c| matches!(c, '\n' | '\r' | '\t') || !is_hidden(c))
}

/// An expression that evaluates to the string `s`: a string literal, or
/// for a string with a character Nix cannot escape, `builtins.fromJSON`
/// of its JSON text with every such character as `\uXXXX`.
pub fn nix_string(s: &str) -> String {
    if escapable(s) {
        string_literal(s)
    } else {
        format!("(builtins.fromJSON {})", string_literal(&json_string(s)))
    }
}

/// `"…"` with `\`, `"`, newlines and tabs escaped and `${` not read as an
/// antiquotation (only for text [`escapable`] holds).
fn string_literal(s: &str) -> String {
    let mut out = String::new();
    kdeploy_lang::print::quote_string(s, &mut out);
    out.replace("${", "\\${")
}

/// `s` as a JSON string whose text has no hidden character.
fn json_string(s: &str) -> String {
    quoted(s, |c| format!("\\u{:04x}", c as u32))
}

/// An attribute name: as it is when it is an identifier, else quoted (an
/// antiquoted `builtins.fromJSON` for one with a character Nix cannot escape).
pub fn nix_attr_name(k: &str) -> String {
    if kdeploy_lang::print::is_ident(k) {
        k.to_string()
    } else if escapable(k) {
        string_literal(k)
    } else {
        format!("${{{}}}", nix_string(k))
    }
}

/// Text for a `#` comment or a message: as it is when every character
/// shows as itself, else [`visible`] — nothing in it can end the comment (a
/// comment ends at a line end, and Nix counts `\r` as one) or hide.
pub fn shown(s: &str) -> String {
    if s.chars().any(is_hidden) {
        visible(s)
    } else {
        s.to_string()
    }
}

/// `s` in double quotes with `\"`, `\\`, `\n`, `\r`, `\t` and `\u{…}` for
/// every other hidden character: one line of visible text, for comments
/// and messages.
pub fn visible(s: &str) -> String {
    quoted(s, |c| format!("\\u{{{:x}}}", c as u32))
}

/// `s` in double quotes with `\"`, `\\`, `\n`, `\r`, `\t`, and `code(c)` for
/// every other hidden character `c` (only BMP characters are hidden, so a
/// JSON `\uXXXX` can be one).
fn quoted(s: &str, code: impl Fn(char) -> String) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_hidden(c) => out.push_str(&code(c)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_characters_never_reach_the_text() {
        for s in ["a\u{1b}[31m", "x\u{2028}y", "\u{202e}abc", "nul\0", "del\u{7f}", "c1\u{85}"] {
            assert!(!nix_string(s).chars().any(is_hidden), "{s:?}");
            assert!(!nix_attr_name(s).chars().any(is_hidden), "{s:?}");
            assert!(!shown(s).chars().any(is_hidden), "{s:?}");
        }
        assert_eq!(nix_string("a\u{1b}b"), r#"(builtins.fromJSON "\"a\\u001bb\"")"#);
        assert_eq!(nix_string("a\nb${c}"), r#""a\nb\${c}""#);
        assert_eq!(shown("plain (text)"), "plain (text)");
        assert_eq!(shown("a\n// b"), r#""a\n// b""#);
    }

    #[test]
    fn numbers_read_back_as_numbers() {
        let n = |v: Json| nix_literal(&v);
        assert_eq!(n(serde_json::json!(-3)), "(-3)");
        assert_eq!(n(serde_json::json!(1e300)), "1.0e300");
        assert_eq!(n(serde_json::json!(2.0)), "2.0");
        assert_eq!(n(serde_json::json!(-0.5)), "(-0.5)");
        assert_eq!(n(serde_json::json!(i64::MIN)), r#"(builtins.fromJSON "-9223372036854775808")"#);
    }
}
