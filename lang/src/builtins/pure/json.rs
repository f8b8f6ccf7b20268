//! JSON for `builtins.fromJSON` and `builtins.toJSON` with Nix 2.8's exact
//! behaviour: a strict RFC 8259 parser producing [`Data`] (a plain tree the
//! evaluator turns into Nix values; `toml.rs` produces the same type), and
//! the string escaping Nix uses when it prints JSON.
//!
//! Nix 2.8 (nlohmann::json underneath) behaviour reproduced here:
//! - integers without fraction or exponent are ints; `-0` is the int 0;
//!   `1e3`, `1.0` and `-0.0` are floats;
//! - a positive integer above `i64::MAX` but within `u64` wraps around
//!   (`9223372036854775808` → `-9223372036854775808`, `18446744073709551615`
//!   → `-1`); anything larger, or a negative below `i64::MIN`, becomes a
//!   float; a float overflowing to infinity is an error, underflow gives 0;
//! - duplicate object keys: the last one wins;
//! - a string is cut at its first NUL (`"a\u0000b"` → `"a"`), since Nix
//!   strings are C strings;
//! - no comments, trailing commas, leading zeros, `NaN`, or trailing text.
//!
//! One deliberate difference: nesting deeper than [`MAX_DEPTH`] is an error
//! here (Nix has no limit), because the evaluator, and dropping the tree,
//! recurse over it and would overflow the stack.

/// A parsed JSON or TOML document, before it becomes Nix values.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
    List(Vec<Data>),
    /// Sorted by key, keys unique.
    Attrs(Vec<(String, Data)>),
}

/// Deepest nesting of arrays/objects accepted by [`from_json`].
pub const MAX_DEPTH: usize = 1000;

/// Sorts attributes by key, the last of equal keys winning (as a later
/// duplicate key overrides an earlier one in Nix).
pub(crate) fn finish_attrs(mut entries: Vec<(String, Data)>) -> Vec<(String, Data)> {
    // Stable sort keeps equal keys in document order, so the last of each
    // run is the one that was written last.
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out: Vec<(String, Data)> = Vec::with_capacity(entries.len());
    for e in entries {
        match out.last_mut() {
            Some(last) if last.0 == e.0 => *last = e,
            _ => out.push(e),
        }
    }
    out
}

/// Nix strings end at the first NUL byte.
pub(crate) fn cut_at_nul(mut s: String) -> String {
    if let Some(i) = s.find('\0') {
        s.truncate(i);
    }
    s
}

enum Frame {
    List(Vec<Data>),
    /// Entries so far and the key whose value is being parsed.
    Attrs(Vec<(String, Data)>, String),
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn error(&self, what: &str) -> String {
        let upto = &self.s[..self.i.min(self.s.len())];
        let line = upto.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = upto.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
        format!("JSON parse error at line {line}, column {col}: {what}")
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn literal(&mut self, word: &str, v: Data) -> Result<Data, String> {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(self.error("invalid literal"))
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<Data, String> {
        let start = self.i;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.error("invalid number; expected digit")),
        }
        let mut is_float = false;
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(self.error("invalid number; expected digit after '.'"));
            }
            is_float = true;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(self.error("invalid number; expected digit after exponent"));
            }
            is_float = true;
        }
        // The slice is ASCII digits and signs only.
        let text = std::str::from_utf8(&self.s[start..self.i]).map_err(|e| e.to_string())?;
        if !is_float {
            if negative {
                if let Ok(v) = text.parse::<i64>() {
                    return Ok(Data::Int(v));
                }
            } else if let Ok(v) = text.parse::<u64>() {
                // Nix stores the unsigned value in its signed int.
                return Ok(Data::Int(v as i64));
            }
        }
        let v: f64 = text.parse().map_err(|_| self.error("invalid number"))?;
        if v.is_infinite() {
            return Err(format!("number overflow parsing '{text}'"));
        }
        Ok(Data::Float(v))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let h = self
            .s
            .get(self.i..self.i + 4)
            .ok_or_else(|| self.error("invalid string: '\\u' must be followed by 4 hex digits"))?;
        let mut v = 0u32;
        for &c in h {
            let d = (c as char)
                .to_digit(16)
                .ok_or_else(|| self.error("invalid string: '\\u' must be followed by 4 hex digits"))?;
            v = v * 16 + d;
        }
        self.i += 4;
        Ok(v)
    }

    /// After the opening quote.
    fn string(&mut self) -> Result<String, String> {
        let mut out = String::new();
        loop {
            // Copy the run of plain characters in one go; the input is a
            // `&str`, so cutting at ASCII `"`/`\` keeps it valid UTF-8.
            let start = self.i;
            while let Some(c) = self.peek() {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.i += 1;
            }
            out.push_str(std::str::from_utf8(&self.s[start..self.i]).map_err(|e| e.to_string())?);
            match self.peek() {
                None => return Err(self.error("invalid string: missing closing quote")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(cut_at_nul(out));
                }
                Some(c) if c < 0x20 => {
                    return Err(self.error(&format!("invalid string: control character U+{c:04X} must be escaped")))
                }
                _ => {}
            }
            self.i += 1; // the backslash
            let e = self.peek().ok_or_else(|| self.error("invalid string: missing closing quote"))?;
            self.i += 1;
            match e {
                b'"' => out.push('"'),
                b'\\' => out.push('\\'),
                b'/' => out.push('/'),
                b'b' => out.push('\u{8}'),
                b'f' => out.push('\u{c}'),
                b'n' => out.push('\n'),
                b'r' => out.push('\r'),
                b't' => out.push('\t'),
                b'u' => {
                    let hi = self.hex4()?;
                    let cp = if (0xD800..0xDC00).contains(&hi) {
                        if self.s.get(self.i..self.i + 2) != Some(b"\\u") {
                            return Err(self
                                .error("invalid string: surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF"));
                        }
                        self.i += 2;
                        let lo = self.hex4()?;
                        if !(0xDC00..0xE000).contains(&lo) {
                            return Err(self
                                .error("invalid string: surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF"));
                        }
                        0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                    } else if (0xDC00..0xE000).contains(&hi) {
                        return Err(self.error("invalid string: surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF"));
                    } else {
                        hi
                    };
                    out.push(char::from_u32(cp).ok_or_else(|| self.error("invalid string: bad code point"))?);
                }
                _ => return Err(self.error("invalid string: forbidden character after backslash")),
            }
        }
    }
}

/// `builtins.fromJSON`. Iterative, so deep input cannot overflow the stack
/// while parsing.
pub fn from_json(text: &str) -> Result<Data, String> {
    let mut p = Parser { s: text.as_bytes(), i: 0 };
    // nlohmann::json skips a UTF-8 byte order mark, but only at the start.
    if text.starts_with('\u{feff}') {
        p.i = '\u{feff}'.len_utf8();
    }
    let mut stack: Vec<Frame> = Vec::new();
    loop {
        // Parse one value (or open a container).
        p.skip_ws();
        let mut value = match p.peek() {
            None => return Err(p.error("unexpected end of input; expected '[', '{', or a literal")),
            Some(b'[') | Some(b'{') => {
                if stack.len() >= MAX_DEPTH {
                    return Err(p.error(&format!("nesting deeper than {MAX_DEPTH} levels")));
                }
                let open = p.peek();
                p.i += 1;
                p.skip_ws();
                if open == Some(b'[') {
                    if p.peek() == Some(b']') {
                        p.i += 1;
                        Data::List(Vec::new())
                    } else {
                        stack.push(Frame::List(Vec::new()));
                        continue;
                    }
                } else if p.peek() == Some(b'}') {
                    p.i += 1;
                    Data::Attrs(Vec::new())
                } else {
                    let key = object_key(&mut p)?;
                    stack.push(Frame::Attrs(Vec::new(), key));
                    continue;
                }
            }
            Some(b'"') => {
                p.i += 1;
                Data::String(p.string()?)
            }
            Some(b't') => p.literal("true", Data::Bool(true))?,
            Some(b'f') => p.literal("false", Data::Bool(false))?,
            Some(b'n') => p.literal("null", Data::Null)?,
            Some(b'-' | b'0'..=b'9') => p.number()?,
            Some(_) => return Err(p.error("invalid literal")),
        };
        // Attach the value to its container, closing as many as end here.
        loop {
            p.skip_ws();
            match stack.last_mut() {
                None => {
                    if p.i != p.s.len() {
                        return Err(p.error("unexpected trailing input; expected end of input"));
                    }
                    return Ok(value);
                }
                Some(Frame::List(items)) => {
                    items.push(value);
                    match p.peek() {
                        Some(b',') => {
                            p.i += 1;
                            break;
                        }
                        Some(b']') => {
                            p.i += 1;
                            let Some(Frame::List(items)) = stack.pop() else {
                                return Err(p.error("internal error: list frame expected"));
                            };
                            value = Data::List(items);
                        }
                        _ => return Err(p.error("expected ',' or ']'")),
                    }
                }
                Some(Frame::Attrs(entries, key)) => {
                    entries.push((std::mem::take(key), value));
                    match p.peek() {
                        Some(b',') => {
                            p.i += 1;
                            *key = object_key(&mut p)?;
                            break;
                        }
                        Some(b'}') => {
                            p.i += 1;
                            let Some(Frame::Attrs(entries, _)) = stack.pop() else {
                                return Err(p.error("internal error: object frame expected"));
                            };
                            value = Data::Attrs(finish_attrs(entries));
                        }
                        _ => return Err(p.error("expected ',' or '}'")),
                    }
                }
            }
        }
    }
}

/// `"key" :` inside an object, leaving the position at the value.
fn object_key(p: &mut Parser<'_>) -> Result<String, String> {
    p.skip_ws();
    if p.peek() != Some(b'"') {
        return Err(p.error("expected string literal as object key"));
    }
    p.i += 1;
    let key = p.string()?;
    p.skip_ws();
    if p.peek() != Some(b':') {
        return Err(p.error("expected ':' after object key"));
    }
    p.i += 1;
    Ok(key)
}

/// Appends `s` as a JSON string literal, quotes included, escaped the way
/// Nix 2.8 does it: `"` `\` `\n` `\r` `\t` get short escapes, other control
/// characters below U+0020 become `\u00xx` (lowercase hex, so `\b` and `\f`
/// too), and everything else, including `/`, DEL and non-ASCII, is copied.
pub fn escape_json_string(s: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(s.len() + 2);
    out.push('"');
    // Runs of bytes that need no escape are copied whole: every byte that
    // does is ASCII, so a run never splits a character.
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            b if b < 0x20 => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        start = i + 1;
        if esc.is_empty() {
            out.push_str("\\u00");
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 0xf) as usize] as char);
        } else {
            out.push_str(esc);
        }
    }
    out.push_str(&s[start..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> Data {
        from_json(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    fn attrs(v: Vec<(&str, Data)>) -> Data {
        Data::Attrs(v.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    #[test]
    fn integers_like_nix() {
        assert_eq!(ok("9223372036854775807"), Data::Int(i64::MAX));
        assert_eq!(ok("9223372036854775808"), Data::Int(i64::MIN));
        assert_eq!(ok("18446744073709551615"), Data::Int(-1));
        assert_eq!(ok("18446744073709551616"), Data::Float(18446744073709551616.0));
        assert_eq!(ok("-9223372036854775808"), Data::Int(i64::MIN));
        assert_eq!(ok("-9223372036854775809"), Data::Float(-9223372036854775809.0));
        assert_eq!(ok("100000000000000000000000"), Data::Float(1e23));
        assert_eq!(ok("-0"), Data::Int(0));
        assert_eq!(ok("0"), Data::Int(0));
        assert_eq!(ok("42"), Data::Int(42));
    }

    #[test]
    fn floats_like_nix() {
        assert_eq!(ok("1e3"), Data::Float(1000.0));
        assert_eq!(ok("1E3"), Data::Float(1000.0));
        assert_eq!(ok("1.0E+2"), Data::Float(100.0));
        assert_eq!(ok("1.0"), Data::Float(1.0));
        assert_eq!(ok("1.5e1"), Data::Float(15.0));
        assert_eq!(ok("0.1"), Data::Float(0.1));
        match ok("-0.0") {
            Data::Float(f) => assert!(f == 0.0 && f.is_sign_negative()),
            other => panic!("{other:?}"),
        }
        assert_eq!(ok("1e-400"), Data::Float(0.0));
        assert_eq!(ok("4e-320"), Data::Float(4e-320));
        assert_eq!(ok("1.7976931348623157e308"), Data::Float(f64::MAX));
        assert_eq!(from_json("1e400"), Err("number overflow parsing '1e400'".to_string()));
        assert_eq!(from_json("-1e400"), Err("number overflow parsing '-1e400'".to_string()));
    }

    #[test]
    fn structures() {
        assert_eq!(
            ok("[true, false, null, 1.5, \"s\", {}, []]"),
            Data::List(vec![
                Data::Bool(true),
                Data::Bool(false),
                Data::Null,
                Data::Float(1.5),
                Data::String("s".into()),
                Data::Attrs(vec![]),
                Data::List(vec![]),
            ])
        );
        assert_eq!(ok("  [1, 2]  "), Data::List(vec![Data::Int(1), Data::Int(2)]));
        assert_eq!(
            ok(" { \"b\" : [ ] , \"a\" : { } } "),
            attrs(vec![("a", Data::Attrs(vec![])), ("b", Data::List(vec![]))])
        );
        assert_eq!(ok("{\"\":1}"), attrs(vec![("", Data::Int(1))]));
        assert_eq!(
            ok("[[[1]],[2]]"),
            Data::List(vec![Data::List(vec![Data::List(vec![Data::Int(1)])]), Data::List(vec![Data::Int(2)]),])
        );
    }

    #[test]
    fn duplicate_keys_last_wins() {
        assert_eq!(ok("{\"a\":1,\"a\":2}"), attrs(vec![("a", Data::Int(2))]));
        assert_eq!(ok("{\"b\":1,\"a\":2,\"b\":3}"), attrs(vec![("a", Data::Int(2)), ("b", Data::Int(3))]));
    }

    #[test]
    fn strings() {
        assert_eq!(ok(r#""\u0041\u00e9\u00E9\ud83d\ude00""#), Data::String("Aéé😀".into()));
        assert_eq!(ok(r#""\/\"\\\b\f\n\r\t""#), Data::String("/\"\\\u{8}\u{c}\n\r\t".into()));
        assert_eq!(ok("\"é😀\""), Data::String("é😀".into()));
        // Cut at NUL, values and keys alike.
        assert_eq!(ok(r#""\u0000x""#), Data::String(String::new()));
        assert_eq!(ok(r#""a\u0000b""#), Data::String("a".into()));
        assert_eq!(ok(r#"{"a\u0000b":1}"#), attrs(vec![("a", Data::Int(1))]));
    }

    #[test]
    fn rejects_what_nix_rejects() {
        for s in [
            "",
            "   ",
            "[1, 2] x",
            "01",
            "1.",
            ".5",
            "+1",
            "NaN",
            "Infinity",
            "-",
            "1e",
            "1e+",
            "\"\\ud83d\"",
            "\"\\ude00\"",
            "\"\\ud83dx\"",
            "\"\\x\"",
            "\"\\u12\"",
            "[1,]",
            "{\"a\":1,}",
            "// c\n1",
            "\"tab\there\"",
            "1 2",
            "[",
            "{",
            "{\"a\"}",
            "{\"a\" 1}",
            "{1:2}",
            "tru",
            "nul",
            "[1 2]",
            "\"unterminated",
            "'s'",
            " \u{feff}1",
            "1\u{feff}",
            "\u{feff}",
        ] {
            assert!(from_json(s).is_err(), "{s:?} should be rejected");
        }
        assert_eq!(from_json("\u{feff}1"), Ok(Data::Int(1)));
        let e = from_json("[1,\n  x]").unwrap_err();
        assert!(e.contains("line 2, column 3"), "{e}");
    }

    #[test]
    fn deep_nesting() {
        let ok_depth = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(from_json(&ok_depth).is_ok());
        let too_deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(from_json(&too_deep).is_err());
        let deep_objects = "{\"a\":".repeat(MAX_DEPTH + 5);
        assert!(from_json(&deep_objects).is_err());
    }

    fn esc(s: &str) -> String {
        let mut out = String::new();
        escape_json_string(s, &mut out);
        out
    }

    #[test]
    fn escaping_like_nix() {
        // From Nix 2.8: builtins.toJSON of the same string.
        assert_eq!(
            esc("\u{1}\u{8}\t\n\u{b}\u{c}\r\u{1f} \"\\/\u{7f}\u{80}é😀"),
            "\"\\u0001\\u0008\\t\\n\\u000b\\u000c\\r\\u001f \\\"\\\\/\u{7f}\u{80}é😀\""
        );
        assert_eq!(esc("</script>"), "\"</script>\"");
        assert_eq!(esc("${x}"), "\"${x}\"");
        assert_eq!(esc(""), "\"\"");
        assert_eq!(esc("\0"), "\"\\u0000\"");
        // Runs between escapes, next to multi-byte characters.
        assert_eq!(esc("é\u{1}a\"😀\tb\u{1f}"), "\"é\\u0001a\\\"😀\\tb\\u001f\"");
    }

    #[test]
    fn escape_round_trips() {
        for s in ["", "plain", "\u{1}\u{1f}\"\\\n\r\t/", "é😀\u{7f}"] {
            assert_eq!(from_json(&esc(s)), Ok(Data::String(s.to_string())));
        }
    }
}
