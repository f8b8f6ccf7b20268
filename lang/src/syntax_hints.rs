//! Explanations of syntax errors. rnix says which token it met and which it
//! wanted, which is often far from the mistake: an unclosed '(' is noticed at
//! the next 'in', an unclosed '{' at the end of the file. When parsing fails,
//! this module re-reads the token stream: a bracket-balancing pass finds an
//! opener that is never closed (`{ ( [ ${ " '' let /*`), and a few patterns
//! (a ';' missing at the end of a line, ':' written for '=') get their own
//! message. Everything works on byte offsets into the source text.

use rnix::ParseError;
use rnix::SyntaxKind::{self, *};

/// A syntax error ready to be reported: offsets are bytes into the text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Explained {
    pub message: String,
    pub range: (usize, usize),
    pub label: String,
    pub help: Option<String>,
    /// Secondary places, each with its label.
    pub notes: Vec<(String, (usize, usize))>,
}

impl Explained {
    fn new(message: impl Into<String>, range: (usize, usize), label: impl Into<String>) -> Explained {
        Explained { message: message.into(), range, label: label.into(), help: None, notes: Vec::new() }
    }
    fn help(mut self, help: impl Into<String>) -> Explained {
        self.help = Some(help.into());
        self
    }
    fn note(mut self, what: impl Into<String>, range: (usize, usize)) -> Explained {
        self.notes.push((what.into(), range));
        self
    }
}

/// Explains the first error rnix reported for `text`.
pub(crate) fn explain(text: &str, error: &ParseError) -> Explained {
    let toks = significant_tokens(text);
    if toks.is_empty() {
        return Explained::new(
            "syntax error: the file contains no expression",
            (0, 0),
            "nothing but comments and blank space",
        )
        .help("a Nix file holds exactly one expression, such as '{ }'");
    }
    let generic = from_rnix(&toks, error);
    // A ';' missing before the next line is pinned down exactly; a 'let' or
    // '{' left open after it is a consequence. (At the end of the file, an
    // unclosed '{' explains more.)
    let at_eof = matches!(error, ParseError::UnexpectedEOF | ParseError::UnexpectedEOFWanted(_));
    if (generic.message == MISSING_SEMICOLON && !at_eof)
        || matches!(error, ParseError::DuplicatedArgs(..) | ParseError::UnexpectedDoubleBind(..))
    {
        return generic;
    }
    if let Some((opener_start, hint)) = unbalanced(text, &toks) {
        // An unclosed opener explains every error that follows it; an error
        // before it is a mistake of its own.
        if error_offset(text, error) >= opener_start {
            return hint;
        }
    }
    generic
}

/// Where rnix saw the error: the end of the text for "unexpected end of file".
fn error_offset(text: &str, error: &ParseError) -> usize {
    use ParseError as P;
    match error {
        P::Unexpected(r)
        | P::UnexpectedExtra(r)
        | P::UnexpectedWanted(_, r, _)
        | P::UnexpectedDoubleBind(r)
        | P::DuplicatedArgs(r, _) => usize::from(r.start()),
        _ => text.len(),
    }
}

#[derive(Debug, Clone, Copy)]
struct Tok<'a> {
    kind: SyntaxKind,
    text: &'a str,
    start: usize,
    end: usize,
    /// The first significant token of its line.
    line_first: bool,
}

impl Tok<'_> {
    fn range(&self) -> (usize, usize) {
        (self.start, self.end)
    }
}

/// All tokens but whitespace and comments, with their offsets.
fn significant_tokens(text: &str) -> Vec<Tok<'_>> {
    let mut out = Vec::new();
    let mut offset = 0;
    let mut newline = true;
    for (kind, s) in rnix::tokenize(text) {
        let start = offset;
        offset += s.len();
        if matches!(kind, TOKEN_WHITESPACE | TOKEN_COMMENT) {
            newline |= s.contains('\n');
            continue;
        }
        out.push(Tok { kind, text: s, start, end: offset, line_first: newline });
        newline = false;
    }
    out
}

/// The significant token at or after `offset` (rnix's error ranges may start
/// with whitespace), or the last one.
fn token_at(toks: &[Tok], offset: usize) -> usize {
    toks.iter().position(|t| t.end > offset).unwrap_or(toks.len() - 1)
}

/// A readable name for every kind of token or node, as used in "expected …".
pub(crate) fn kind_name(kind: SyntaxKind) -> &'static str {
    match kind {
        TOKEN_ADD => "'+'",
        TOKEN_AND_AND => "'&&'",
        TOKEN_ASSIGN => "'='",
        TOKEN_ASSERT => "'assert'",
        TOKEN_AT => "'@'",
        TOKEN_COLON => "':'",
        TOKEN_COMMA => "','",
        TOKEN_COMMENT => "a comment",
        TOKEN_CONCAT => "'++'",
        TOKEN_CUR_POS => "'__curPos'",
        TOKEN_DIV => "'/'",
        TOKEN_DOT => "'.'",
        TOKEN_ELLIPSIS => "'...'",
        TOKEN_ELSE => "'else'",
        TOKEN_EQUAL => "'=='",
        TOKEN_ERROR => "an invalid token",
        TOKEN_FLOAT => "a number",
        TOKEN_IDENT => "a name",
        TOKEN_IF => "'if'",
        TOKEN_IMPLICATION => "'->'",
        TOKEN_IN => "'in'",
        TOKEN_INHERIT => "'inherit'",
        TOKEN_INTEGER => "a number",
        TOKEN_INTERPOL_END => "'}' closing the interpolation",
        TOKEN_INTERPOL_START => "'${'",
        TOKEN_INVERT => "'!'",
        TOKEN_L_BRACE => "'{'",
        TOKEN_L_BRACK => "'['",
        TOKEN_L_PAREN => "'('",
        TOKEN_LESS => "'<'",
        TOKEN_LESS_OR_EQ => "'<='",
        TOKEN_LET => "'let'",
        TOKEN_MORE => "'>'",
        TOKEN_MORE_OR_EQ => "'>='",
        TOKEN_MUL => "'*'",
        TOKEN_NOT_EQUAL => "'!='",
        TOKEN_OR => "'or'",
        TOKEN_OR_OR => "'||'",
        TOKEN_PATH_ABS | TOKEN_PATH_REL | TOKEN_PATH_HOME => "a path",
        TOKEN_PATH_SEARCH => "a '<…>' path",
        TOKEN_PIPE_LEFT => "'<|'",
        TOKEN_PIPE_RIGHT => "'|>'",
        TOKEN_QUESTION => "'?'",
        TOKEN_R_BRACE => "'}'",
        TOKEN_R_BRACK => "']'",
        TOKEN_R_PAREN => "')'",
        TOKEN_REC => "'rec'",
        TOKEN_SEMICOLON => "';'",
        TOKEN_STRING_CONTENT => "more text of the string",
        TOKEN_STRING_END => "the end of the string",
        TOKEN_STRING_START => "a string",
        TOKEN_SUB => "'-'",
        TOKEN_THEN => "'then'",
        TOKEN_UPDATE => "'//'",
        TOKEN_URI => "a URI",
        TOKEN_WHITESPACE => "blank space",
        TOKEN_WITH => "'with'",
        NODE_ATTRPATH => "an attribute name",
        NODE_IDENT | NODE_IDENT_PARAM => "a name",
        NODE_STRING => "a string",
        NODE_INTERPOL | NODE_DYNAMIC => "an interpolation '${…}'",
        NODE_PATTERN | NODE_PAT_ENTRY | NODE_PAT_BIND => "a function argument pattern",
        NODE_INHERIT | NODE_INHERIT_FROM => "an 'inherit'",
        NODE_ATTRPATH_VALUE => "an attribute definition",
        NODE_ERROR => "an invalid token",
        NODE_ROOT => "the end of the file",
        _ => "an expression",
    }
}

/// "a, b or c", without repeating a name.
fn name_list(kinds: &[SyntaxKind]) -> String {
    // The set rnix wants where any expression may start.
    let expression_start = [TOKEN_L_PAREN, TOKEN_L_BRACE, TOKEN_L_BRACK, TOKEN_STRING_START, TOKEN_IDENT];
    if expression_start.iter().all(|k| kinds.contains(k)) {
        return "an expression".to_string();
    }
    let mut names: Vec<&str> = Vec::new();
    for k in kinds {
        // Where a name is wanted, rnix also lists the names it treats as
        // keywords elsewhere; they are no help to the reader.
        if matches!(k, TOKEN_OR | TOKEN_CUR_POS) && kinds.contains(&TOKEN_IDENT) {
            continue;
        }
        let n = kind_name(*k);
        if !names.contains(&n) {
            names.push(n);
        }
    }
    match names.split_last() {
        None => "something else".to_string(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// The token as the user wrote it, quoted, first line only and bounded.
fn quoted(tok: &Tok) -> String {
    let line = tok.text.lines().next().unwrap_or("");
    let mut s: String = line.chars().take(30).collect();
    if s.len() < tok.text.len() {
        s.push('…');
    }
    if s.contains('\'') {
        format!("\"{s}\"")
    } else {
        format!("'{s}'")
    }
}

/// Tokens after which an expression may end (so a ';' may follow).
fn ends_expression(kind: SyntaxKind) -> bool {
    matches!(
        kind,
        TOKEN_IDENT
            | TOKEN_INTEGER
            | TOKEN_FLOAT
            | TOKEN_STRING_END
            | TOKEN_PATH_ABS
            | TOKEN_PATH_REL
            | TOKEN_PATH_HOME
            | TOKEN_PATH_SEARCH
            | TOKEN_URI
            | TOKEN_R_BRACE
            | TOKEN_R_BRACK
            | TOKEN_R_PAREN
            | TOKEN_INTERPOL_END
            | TOKEN_CUR_POS
    )
}

/// Tokens after which an expression must follow.
fn wants_operand(kind: SyntaxKind) -> bool {
    matches!(
        kind,
        TOKEN_ADD
            | TOKEN_AND_AND
            | TOKEN_ASSIGN
            | TOKEN_ASSERT
            | TOKEN_COLON
            | TOKEN_CONCAT
            | TOKEN_DIV
            | TOKEN_ELSE
            | TOKEN_EQUAL
            | TOKEN_IF
            | TOKEN_IMPLICATION
            | TOKEN_IN
            | TOKEN_INVERT
            | TOKEN_LESS
            | TOKEN_LESS_OR_EQ
            | TOKEN_MORE
            | TOKEN_MORE_OR_EQ
            | TOKEN_MUL
            | TOKEN_NOT_EQUAL
            | TOKEN_OR
            | TOKEN_OR_OR
            | TOKEN_PIPE_LEFT
            | TOKEN_PIPE_RIGHT
            | TOKEN_SUB
            | TOKEN_THEN
            | TOKEN_UPDATE
            | TOKEN_WITH
            | TOKEN_SEMICOLON
    )
}

/// What the statement ending at token `last` is: scans back, over brackets,
/// to the '=' of a binding or the keyword that starts it.
fn statement_kind(toks: &[Tok], last: usize) -> &'static str {
    let mut depth = 0i32;
    for t in toks[..=last].iter().rev() {
        match t.kind {
            TOKEN_R_BRACE | TOKEN_R_PAREN | TOKEN_R_BRACK | TOKEN_INTERPOL_END => depth += 1,
            TOKEN_L_BRACE | TOKEN_L_PAREN | TOKEN_L_BRACK | TOKEN_INTERPOL_START => {
                depth -= 1;
                if depth < 0 {
                    break;
                }
            }
            TOKEN_SEMICOLON | TOKEN_LET | TOKEN_IN if depth == 0 => break,
            TOKEN_ASSIGN if depth == 0 => return "after this binding",
            TOKEN_INHERIT if depth == 0 => return "after this 'inherit'",
            TOKEN_WITH if depth == 0 => return "after this 'with'",
            TOKEN_ASSERT if depth == 0 => return "after this 'assert'",
            _ => {}
        }
    }
    "here"
}

const MISSING_SEMICOLON: &str = "syntax error: missing ';'";

/// A ';' forgotten at the end of a line: rnix reads on into the next line
/// and fails there. `at` is the token it failed at (or None at the end of
/// the file). Returns the place just after the line's last token.
fn missing_semicolon(toks: &[Tok], at: Option<usize>) -> Option<Explained> {
    let prev = match at {
        None => toks.len() - 1,
        // Only the end of a binding can come before '}' or 'in'.
        Some(i) if matches!(toks[i].kind, TOKEN_R_BRACE | TOKEN_IN) => i.checked_sub(1)?,
        Some(i) => {
            let first = (0..=i).rev().find(|&j| toks[j].line_first)?;
            first.checked_sub(1)?
        }
    };
    if !ends_expression(toks[prev].kind) {
        return None;
    }
    let end = toks[prev].end;
    let label = format!("expected ';' {}", statement_kind(toks, prev));
    Some(Explained::new(MISSING_SEMICOLON, (end, end), label))
}

fn from_rnix(toks: &[Tok], error: &ParseError) -> Explained {
    use ParseError as P;
    let last = toks[toks.len() - 1];
    let after_last = (last.end, last.end);
    match error {
        P::UnexpectedWanted(_, r, wanted) => {
            let i = token_at(toks, usize::from(r.start()));
            let got = toks[i];
            let names = name_list(wanted);
            if wanted.contains(&TOKEN_SEMICOLON) {
                if let Some(e) = missing_semicolon(toks, Some(i)) {
                    return e;
                }
            }
            if got.kind == TOKEN_ERROR {
                let e = Explained::new(
                    format!("syntax error: unexpected {}", quoted(&got)),
                    got.range(),
                    "this is not valid Nix syntax",
                );
                return if got.text.len() > 1 && got.text.ends_with('/') {
                    e.help("a path cannot end with '/'")
                } else {
                    e
                };
            }
            let e = Explained::new(
                format!("syntax error: unexpected {}, expected {names}", quoted(&got)),
                got.range(),
                format!("expected {names}"),
            );
            if got.kind == TOKEN_COLON && wanted.contains(&TOKEN_ASSIGN) {
                e.help("use '=' to define an attribute")
            } else if wanted[..] == [TOKEN_ASSIGN] {
                e.help("an attribute is defined as 'name = value;'")
            } else {
                e
            }
        }
        P::Unexpected(r) => {
            let got = toks[token_at(toks, usize::from(r.start()))];
            Explained::new(format!("syntax error: unexpected {}", quoted(&got)), got.range(), "not valid here")
        }
        P::UnexpectedExtra(r) => {
            let got = toks[token_at(toks, usize::from(r.start()))];
            Explained::new(
                format!("syntax error: unexpected {} after the end of the expression", quoted(&got)),
                got.range(),
                "the expression is already complete before this",
            )
            .help("a file holds a single expression")
        }
        P::UnexpectedEOF => {
            let label = if wants_operand(last.kind) {
                format!("expected an expression after {}", quoted(&last))
            } else if matches!(last.kind, TOKEN_DOT | TOKEN_QUESTION) {
                format!("expected an attribute name after {}", quoted(&last))
            } else {
                "the file ends here, in the middle of an expression".to_string()
            };
            Explained::new("syntax error: unexpected end of file", after_last, label)
        }
        P::UnexpectedEOFWanted(wanted) => {
            if wanted.contains(&TOKEN_SEMICOLON) {
                if let Some(e) = missing_semicolon(toks, None) {
                    return e;
                }
            }
            let names = name_list(wanted);
            Explained::new(
                format!("syntax error: unexpected end of file, expected {names}"),
                after_last,
                format!("expected {names} after this"),
            )
        }
        P::UnexpectedDoubleBind(r) => {
            let i = token_at(toks, usize::from(r.start()));
            Explained::new(
                "syntax error: a pattern can be bound with '@' only once",
                toks[i].range(),
                "bound a second time here",
            )
        }
        P::DuplicatedArgs(r, name) => {
            let i = token_at(toks, usize::from(r.start()));
            Explained::new(
                format!("syntax error: duplicate formal function argument '{name}'"),
                toks[i].range(),
                "declared again here",
            )
        }
        P::RecursionLimitExceeded => Explained::new(
            "syntax error: the expression is nested too deeply to parse",
            toks[0].range(),
            "the expression starting here",
        ),
        _ => Explained::new(format!("syntax error: {error}"), after_last, "the error is reported here"),
    }
}

/// What a balancing frame was opened by.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Open {
    Brace,
    Paren,
    Brack,
    Interpol,
    Str { multiline: bool },
    Let,
}

impl Open {
    fn opener(self) -> &'static str {
        match self {
            Open::Brace => "'{'",
            Open::Paren => "'('",
            Open::Brack => "'['",
            Open::Interpol => "'${'",
            Open::Str { multiline: false } => "'\"'",
            Open::Str { multiline: true } => "''''",
            Open::Let => "'let'",
        }
    }
    fn closer(self) -> &'static str {
        match self {
            Open::Brace | Open::Interpol => "'}'",
            Open::Paren => "')'",
            Open::Brack => "']'",
            Open::Str { multiline: false } => "'\"'",
            Open::Str { multiline: true } => "''''",
            Open::Let => "'in'",
        }
    }
    fn closes(self, other: Open) -> bool {
        match (self, other) {
            (Open::Str { .. }, Open::Str { .. }) => true,
            _ => self == other,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    open: Open,
    tok: usize,
}

/// Line start and indentation (in columns) of the line holding `offset`.
fn indentation(text: &str, offset: usize) -> usize {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..].chars().take_while(|c| *c == ' ' || *c == '\t').count()
}

fn line_number(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// The bracket-balancing pass. Returns where the unclosed opener starts and
/// the explanation, or None if everything opened is closed.
fn unbalanced(text: &str, toks: &[Tok]) -> Option<(usize, Explained)> {
    let mut stack: Vec<Frame> = Vec::new();
    // Closed pairs (opener, closer), in the order they close.
    let mut pairs: Vec<(Frame, usize)> = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let open = match t.kind {
            TOKEN_L_BRACE => Some(Open::Brace),
            TOKEN_L_PAREN => Some(Open::Paren),
            TOKEN_L_BRACK => Some(Open::Brack),
            TOKEN_INTERPOL_START => Some(Open::Interpol),
            TOKEN_STRING_START => Some(Open::Str { multiline: t.text == "''" }),
            // `let { … }` is the legacy form, without 'in'.
            TOKEN_LET if toks.get(i + 1).is_none_or(|n| n.kind != TOKEN_L_BRACE) => Some(Open::Let),
            _ => None,
        };
        if let Some(open) = open {
            stack.push(Frame { open, tok: i });
            continue;
        }
        let close = match t.kind {
            TOKEN_R_BRACE => Open::Brace,
            TOKEN_R_PAREN => Open::Paren,
            TOKEN_R_BRACK => Open::Brack,
            TOKEN_INTERPOL_END => Open::Interpol,
            TOKEN_STRING_END => Open::Str { multiline: false },
            TOKEN_IN => Open::Let,
            TOKEN_ERROR if t.text.starts_with("/*") => {
                let e = Explained::new(
                    "syntax error: unclosed comment",
                    (t.start, t.start + 2),
                    "'/*' opened here is never closed",
                )
                .help("a comment started with '/*' ends with '*/'");
                return Some((t.start, e));
            }
            _ => continue,
        };
        match stack.last() {
            Some(top) if top.open.closes(close) => {
                pairs.push((*top, i));
                stack.pop();
            }
            _ if stack.iter().any(|f| f.open.closes(close)) => {
                // Something opened inside what this token closes is still open.
                let top = *stack.last().expect("the stack is not empty");
                let o = toks[top.tok];
                let e = unclosed(top.open, &o)
                    .note(format!("expected {} before this {}", top.open.closer(), quoted(t)), t.range());
                return Some((o.start, e));
            }
            // A closer that closes nothing, inside something still open.
            Some(top) if close != Open::Let => {
                let o = toks[top.tok];
                let opener = match close {
                    Open::Brace => "'{'",
                    Open::Paren => "'('",
                    _ => "'['",
                };
                let e = Explained::new(
                    format!("syntax error: unmatched {}", quoted(t)),
                    t.range(),
                    format!("this {} has no matching {opener}", quoted(t)),
                )
                .note(format!("the innermost bracket still open is this {}", top.open.opener()), o.range());
                return Some((t.start, e));
            }
            // A stray closer at the top level, or an 'in' without 'let':
            // rnix reports it well enough.
            _ => {}
        }
    }
    let mut top = *stack.last()?;
    let mut string_in_interpolation = false;
    // A string that starts inside an unclosed interpolation and runs to the
    // end is the closing quote of the string around it.
    if let [.., below, last] = stack[..] {
        if matches!(last.open, Open::Str { .. }) && below.open == Open::Interpol {
            top = below;
            string_in_interpolation = true;
        }
    }
    let o = toks[top.tok];
    let mut e = unclosed(top.open, &o);
    match top.open {
        Open::Interpol if string_in_interpolation => {
            e = e.help("an interpolation '${…}' ends with '}'; a '\"' inside it starts a new string")
        }
        Open::Str { multiline: false } => {
            // An earlier "…" string that runs over several lines has probably
            // lost its closing quote, which then opened this one.
            let earlier = pairs.iter().find(|(f, c)| {
                matches!(f.open, Open::Str { multiline: false }) && text[toks[f.tok].end..toks[*c].start].contains('\n')
            });
            if let Some((f, c)) = earlier {
                let first = toks[f.tok];
                let e = Explained::new(
                    "syntax error: unclosed string",
                    first.range(),
                    format!(
                        "this string runs on to line {}: is its closing '\"' missing?",
                        line_number(text, toks[*c].start)
                    ),
                )
                .note("from here on, the rest of the file is read as a string", o.range())
                .help("a string ends with '\"'");
                return Some((first.start, e));
            }
            e = e.help("the rest of the file was read as part of this string");
        }
        Open::Str { multiline: true } => e = e.help("the rest of the file was read as part of this string"),
        Open::Let => e = e.help("a 'let' is followed by its bindings, then 'in' and an expression"),
        open => {
            e = e.help(format!("the file ends before the matching {}", open.closer()));
            // A block inside it whose closer is indented differently from the
            // line that opened it may be the one missing its closer.
            let suspect = pairs.iter().find(|(f, c)| {
                f.tok > top.tok
                    && f.open == open
                    && toks[*c].line_first
                    && toks.get(f.tok + 1).is_some_and(|n| n.line_first)
                    && indentation(text, toks[f.tok].start) != indentation(text, toks[*c].start)
            });
            if let Some((f, c)) = suspect {
                e = e.note(format!("maybe this {} is the one never closed", open.opener()), toks[f.tok].range()).note(
                    format!("it is closed by this {}, which is indented differently", open.closer()),
                    toks[*c].range(),
                );
            }
        }
    }
    Some((o.start, e))
}

fn unclosed(open: Open, o: &Tok) -> Explained {
    let range = (o.start, o.start + o.text.len().min(3));
    match open {
        Open::Let => Explained::new("syntax error: 'let' without 'in'", o.range(), "this 'let' has no 'in'"),
        Open::Str { multiline } => {
            let closer = if multiline { "''" } else { "\"" };
            Explained::new("syntax error: unclosed string", range, "the string starting here is never closed")
                .help(format!("a string ends with '{closer}'"))
        }
        Open::Interpol => {
            Explained::new("syntax error: unclosed '${'", range, "'${' opened here is never closed by '}'")
        }
        _ => Explained::new(
            format!("syntax error: unclosed {}", open.opener()),
            range,
            format!("{} opened here is never closed", open.opener()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn explain_text(text: &str) -> Explained {
        let parse = rnix::Root::parse(text);
        let e = parse.errors().first().expect("a syntax error").clone();
        explain(text, &e)
    }

    #[test]
    fn every_kind_has_a_readable_name() {
        for raw in 0..=(rnix::SyntaxKind::NODE_WITH as u16) {
            let kind: SyntaxKind = unsafe_free_kind(raw);
            let name = kind_name(kind);
            let readable =
                name.starts_with('\'') || ["a ", "an ", "the ", "more ", "blank "].iter().any(|p| name.starts_with(p));
            assert!(readable, "{kind:?} is named {name}");
        }
    }

    fn unsafe_free_kind(raw: u16) -> SyntaxKind {
        use rowan::Language;
        rnix::NixLanguage::kind_from_raw(rowan::SyntaxKind(raw))
    }

    #[test]
    fn unclosed_paren_before_in() {
        let e = explain_text("let\n  x = (1 + 2;\nin\nx\n");
        assert_eq!(e.message, "syntax error: unclosed '('");
        assert_eq!(e.range, (10, 11));
        assert_eq!(e.notes.len(), 1);
    }

    #[test]
    fn legacy_let_is_not_unclosed() {
        let e = explain_text("let { body = 1; } }");
        assert!(!e.message.contains("'let' without 'in'"), "{e:?}");
    }

    #[test]
    fn unclosed_interpolation() {
        let e = explain_text("\"a ${b\"\n");
        assert_eq!(e.message, "syntax error: unclosed '${'");
    }

    #[test]
    fn unclosed_comment() {
        let e = explain_text("1 + /* x\n");
        assert_eq!(e.message, "syntax error: unclosed comment");
    }

    #[test]
    fn earlier_multiline_string() {
        let e = explain_text("{\n  a = \"x;\n  b = \"y\";\n}\n");
        assert_eq!(e.range, (8, 9), "{e:?}");
    }

    #[test]
    fn missing_semicolon_at_eof() {
        let e = explain_text("{ a = 1");
        assert_eq!(e.message, "syntax error: unclosed '{'");
        let e = explain_text("f { a = 1; } { b = 2");
        assert_eq!(e.message, "syntax error: unclosed '{'");
        assert_eq!(e.range, (13, 14));
    }

    #[test]
    fn missing_semicolon_before_in() {
        let e = explain_text("let a = 1 in a");
        assert_eq!(e.message, "syntax error: missing ';'");
        assert_eq!(e.range, (9, 9));
    }

    #[test]
    fn an_earlier_error_wins_over_a_later_unclosed_opener() {
        let e = explain_text("{ a = 1 b = 2; c = (\n");
        assert!(e.message.contains("unexpected"), "{e:?}");
    }
}
