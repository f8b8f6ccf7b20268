//! `''` indented strings, normalised the way Nix 2.8's parser does it: the
//! raw text is cut into the pieces Nix's lexer makes (plain runs, `''$`,
//! `'''`, `''\x` escapes, interpolations), then the common indentation of
//! the lines is measured and stripped. rnix's own normaliser differs in
//! corners (escaped newlines count as line breaks in Nix 2.8), hence this.

/// One piece as Nix's lexer sees it.
pub enum Piece<T> {
    /// Text; `indented` is false for escapes (`''$`, `'''`, `''\x`): they
    /// never count when measuring the indentation, yet (as in Nix 2.8) an
    /// escaped newline does start a line whose indentation is then stripped.
    Text {
        text: String,
        indented: bool,
    },
    Interp(T),
}

/// Splits the raw source text of a literal run into lexer pieces.
pub fn lex_literal<T>(raw: &str, out: &mut Vec<Piece<T>>) {
    let bytes = raw.as_bytes();
    let mut plain = String::new();
    let mut i = 0;
    let flush = |plain: &mut String, out: &mut Vec<Piece<T>>| {
        if !plain.is_empty() {
            out.push(Piece::Text { text: std::mem::take(plain), indented: true });
        }
    };
    while i < bytes.len() {
        if raw[i..].starts_with("'''") {
            flush(&mut plain, out);
            out.push(Piece::Text { text: "''".into(), indented: false });
            i += 3;
        } else if raw[i..].starts_with("''$") {
            flush(&mut plain, out);
            out.push(Piece::Text { text: "$".into(), indented: false });
            i += 3;
        } else if raw[i..].starts_with("''\\") && i + 3 < bytes.len() + 1 {
            flush(&mut plain, out);
            let rest = &raw[i + 3..];
            let c = rest.chars().next();
            let text = match c {
                Some('n') => "\n".to_string(),
                Some('r') => "\r".to_string(),
                Some('t') => "\t".to_string(),
                Some(c) => c.to_string(),
                None => String::new(),
            };
            out.push(Piece::Text { text, indented: false });
            i += 3 + c.map_or(0, char::len_utf8);
        } else {
            let c = raw[i..].chars().next().unwrap_or(' ');
            plain.push(c);
            i += c.len_utf8();
        }
    }
    flush(&mut plain, out);
}

/// Strips the common indentation; returns literal text and interpolations in order.
pub fn strip<T>(mut pieces: Vec<Piece<T>>) -> Vec<Piece<T>> {
    // The opening `''` swallows the rest of its line when that is blank.
    if let Some(Piece::Text { text, indented: true }) = pieces.first_mut() {
        if let Some(p) = text.find('\n') {
            if text[..p].chars().all(|c| c == ' ') {
                *text = text[p + 1..].to_string();
            }
        }
    }
    let mut at_start = true;
    let mut min_indent = usize::MAX;
    let mut cur = 0;
    for piece in &pieces {
        match piece {
            Piece::Text { text, indented: true } => {
                for c in text.chars() {
                    if at_start {
                        match c {
                            ' ' => cur += 1,
                            '\n' => cur = 0,
                            _ => {
                                at_start = false;
                                min_indent = min_indent.min(cur);
                            }
                        }
                    } else if c == '\n' {
                        at_start = true;
                        cur = 0;
                    }
                }
            }
            _ => {
                if at_start {
                    at_start = false;
                    min_indent = min_indent.min(cur);
                }
            }
        }
    }
    if min_indent == usize::MAX {
        min_indent = cur;
    }
    let n = pieces.len();
    let mut out = Vec::with_capacity(n);
    at_start = true;
    let mut dropped = 0;
    for (i, piece) in pieces.into_iter().enumerate() {
        match piece {
            Piece::Text { text, .. } => {
                let mut s = String::with_capacity(text.len());
                for c in text.chars() {
                    if at_start {
                        match c {
                            ' ' => {
                                if dropped >= min_indent {
                                    s.push(c);
                                }
                                dropped += 1;
                            }
                            '\n' => {
                                dropped = 0;
                                s.push(c);
                            }
                            _ => {
                                at_start = false;
                                dropped = 0;
                                s.push(c);
                            }
                        }
                    } else {
                        s.push(c);
                        if c == '\n' {
                            at_start = true;
                        }
                    }
                }
                // The last line goes when it holds only spaces.
                if i + 1 == n {
                    if let Some(p) = s.rfind('\n') {
                        if s[p + 1..].chars().all(|c| c == ' ') {
                            s.truncate(p + 1);
                        }
                    }
                }
                out.push(Piece::Text { text: s, indented: true });
            }
            other => {
                at_start = false;
                dropped = 0;
                out.push(other);
            }
        }
    }
    out
}
