//! Loading code: parse a source text with rnix, report its first syntax
//! error, lower it, and evaluate it in the global scope. `import` of a file
//! goes through here and is memoised per normalised path.


use rnix::SyntaxKind;

use crate::env::Env;
use crate::error::{ErrorExt, ErrorKind, EvalError, EvalResult};
use crate::eval::Evaluator;
use crate::io::FileKind;
use crate::ir::ExprRef;
use crate::lower::Lowerer;
use crate::path;
use crate::source::{FileId, Span};
use crate::thunk::Thunk;
use crate::value::Value;

impl Evaluator {
    /// Parses and lowers `text`; `file_path` (absolute, or under `<kdeploy>`)
    /// anchors relative paths, `name` is what users see in messages.
    pub fn compile(&mut self, text: &str, file_path: &str, name: String) -> EvalResult<ExprRef> {
        let file = self.sources.add(name.clone(), text.into());
        let parse = rnix::Root::parse(text);
        if let Some(e) = parse.errors().first() {
            return Err(parse_error(e, file, text));
        }
        let root = parse.tree();
        let globals = self.globals.clone();
        let mut lowerer = Lowerer::new(file, file_path, name, &globals);
        lowerer.lower_root(&root)
    }

    pub fn eval_compiled(&mut self, expr: &ExprRef) -> EvalResult<Value> {
        let env = Env::root();
        self.eval(expr, &env)
    }

    /// `import`: a file, or a directory's `default.nix`, evaluated once.
    pub fn import(&mut self, target: &str) -> EvalResult<Value> {
        let mut p = path::normalize(target);
        if self.io.kind(&p)? == Some(FileKind::Directory) {
            p = path::join(&p, "default.nix");
        }
        if let Some(t) = self.imports.get(&p) {
            let t = t.clone();
            return self.force(&t);
        }
        let bytes = self.io.read(&p)?;
        let text = String::from_utf8(bytes)
            .map_err(|_| EvalError::new(ErrorKind::InvalidValue, format!("'{p}' is not valid UTF-8 text")))?;
        let shown = display_name(&p);
        let expr = self.compile(&text, &p, shown)?;
        let thunk = Thunk::pending(expr, Env::root());
        self.imports.insert(p, thunk.clone());
        self.force(&thunk)
    }
}

/// Paths inside the working directory are shown relative to it.
pub fn display_name(p: &str) -> String {
    if let Ok(cwd) = std::env::current_dir() {
        if let Ok(rel) = std::path::Path::new(p).strip_prefix(&cwd) {
            return rel.display().to_string();
        }
    }
    p.to_string()
}

fn token_name(kind: SyntaxKind) -> String {
    use SyntaxKind::*;
    let s = match kind {
        TOKEN_SEMICOLON => "';'",
        TOKEN_ASSIGN => "'='",
        TOKEN_COLON => "':'",
        TOKEN_COMMA => "','",
        TOKEN_DOT => "'.'",
        TOKEN_L_BRACE => "'{'",
        TOKEN_R_BRACE => "'}'",
        TOKEN_L_BRACK => "'['",
        TOKEN_R_BRACK => "']'",
        TOKEN_L_PAREN => "'('",
        TOKEN_R_PAREN => "')'",
        TOKEN_IN => "'in'",
        TOKEN_THEN => "'then'",
        TOKEN_ELSE => "'else'",
        TOKEN_IDENT => "an identifier",
        TOKEN_STRING_END => "the end of the string",
        TOKEN_INTERPOL_END => "'}' closing the interpolation",
        _ => return format!("{kind:?}").trim_start_matches("TOKEN_").trim_start_matches("NODE_").to_lowercase().replace('_', " "),
    };
    s.to_string()
}

fn parse_error(e: &rnix::ParseError, file: FileId, text: &str) -> Box<EvalError> {
    use rnix::ParseError as P;
    let end = rnix::TextRange::empty(rnix::TextSize::from(text.len() as u32));
    let (msg, range) = match e {
        P::Unexpected(r) => (format!("unexpected '{}'", snippet(text, *r)), *r),
        P::UnexpectedExtra(r) => (format!("unexpected '{}' after the end of the expression", snippet(text, *r)), *r),
        P::UnexpectedWanted(got, r, wanted) => {
            let wanted: Vec<String> = wanted.iter().map(|k| token_name(*k)).collect();
            (format!("unexpected {}, expected {}", token_name(*got), wanted.join(" or ")), *r)
        }
        P::UnexpectedDoubleBind(r) => ("a pattern can be bound with '@' only once".to_string(), *r),
        P::UnexpectedEOF => ("unexpected end of file".to_string(), end),
        P::UnexpectedEOFWanted(wanted) => {
            let wanted: Vec<String> = wanted.iter().map(|k| token_name(*k)).collect();
            (format!("unexpected end of file, expected {}", wanted.join(" or ")), end)
        }
        P::DuplicatedArgs(r, name) => (format!("duplicate formal function argument '{name}'"), *r),
        P::RecursionLimitExceeded => ("the expression is nested too deeply to parse".to_string(), end),
        _ => (e.to_string(), end),
    };
    EvalError::new(ErrorKind::Parse, format!("syntax error: {msg}")).at(Span::new(file, range)).label("here")
}

fn snippet(text: &str, r: rnix::TextRange) -> String {
    let s = text.get(usize::from(r.start())..usize::from(r.end())).unwrap_or("");
    let s: String = s.chars().take(30).collect();
    s
}

