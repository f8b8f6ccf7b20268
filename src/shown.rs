//! Text from nodes, made safe to print. A node's hook or unit journal, a
//! drift line, the old content of a file in a diff, a relayed stderr: any
//! of it may carry bytes a terminal (or a CI log viewer) acts on — escape
//! sequences that move the cursor, rewrite the title, hide lines, or bidi
//! controls that reorder what is read. A compromised node must not be
//! able to do that to the operator's screen, so every place that prints
//! such text sends it through [`shown`] (text) or [`shown_json`] (a JSON
//! document) first.
//!
//! [`shown`] keeps newlines and tabs (the text is often many lines) and
//! writes every other control visibly: C0 and DEL as `\xNN` (CR as `\r`),
//! C1 and the invisible format characters that reorder or hide text
//! (bidi embeddings, overrides and isolates, the marks, line and
//! paragraph separators) as `\u{NNNN}`. [`shown_json`] writes those as
//! JSON's own `\uNNNN` escapes, so the document means the same to a parser.

use std::borrow::Cow;

/// Whether `c` is shown escaped: a control other than newline and tab, or
/// a character that reorders or hides text.
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || reorders(c)
}

/// Bidi embeddings, overrides, isolates and marks, and the line and
/// paragraph separators (which some viewers break lines on).
fn reorders(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every control shown escaped (newlines and tabs kept).
pub fn shown(text: &str) -> Cow<'_, str> {
    escaped(text, |out, c| match c {
        '\r' => out.push_str("\\r"),
        c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
    })
}

/// A JSON document (as serde_json writes it: C0 controls already escaped
/// inside strings) with DEL, C1 and the characters that reorder text also
/// written as `\uNNNN`. They can only stand inside strings, where the
/// escape means the same character.
pub fn shown_json(json: &str) -> Cow<'_, str> {
    escaped(json, |out, c| out.push_str(&format!("\\u{:04x}", c as u32)))
}

/// `text` with each [`hidden`] character written by `escape`.
fn escaped(text: &str, escape: impl Fn(&mut String, char)) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if hidden(c) {
            escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_untouched() {
        let t = "line one\n\tindented — ünïcödé\n";
        assert!(matches!(shown(t), Cow::Borrowed(_)));
    }

    #[test]
    fn controls_are_shown_not_acted_on() {
        assert_eq!(shown("a\x1b[2Jb"), "a\\x1b[2Jb");
        assert_eq!(shown("title\x1b]0;pwned\x07"), "title\\x1b]0;pwned\\x07");
        assert_eq!(shown("over\rwrite"), "over\\rwrite");
        assert_eq!(shown("nul\0 del\x7f"), "nul\\x00 del\\x7f");
        assert_eq!(shown("csi\u{9b}31m"), "csi\\u{009b}31m");
        assert_eq!(shown("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(shown("iso\u{2066}x\u{2069}"), "iso\\u{2066}x\\u{2069}");
        assert_eq!(shown("keep\nlines\tand tabs"), "keep\nlines\tand tabs");
    }

    #[test]
    fn json_stays_the_same_document() {
        let v = serde_json::json!({"journal": "a\x1b[31mred\u{9b}\u{202e}x\r\n"});
        let text = serde_json::to_string(&v).unwrap();
        let safe = shown_json(&text);
        assert!(!safe.chars().any(hidden), "{safe}");
        assert!(!safe.contains('\x1b'));
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, v);
    }
}
