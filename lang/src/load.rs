//! Loading code: parse a source text with rnix, report its first syntax
//! error, lower it, and evaluate it in the global scope. `import` of a file
//! goes through here and is memoised per normalised path.

use crate::env::Env;
use crate::error::{ErrorExt, ErrorKind, EvalError, EvalResult};
use crate::eval::Evaluator;
use crate::io::FileKind;
use crate::ir::ExprRef;
use crate::lower::Lowerer;
use crate::parse::{Refusal, MAX_NESTING};
use crate::path;
use crate::source::{FileId, Span};
use crate::syntax_hints;
use crate::thunk::Thunk;
use crate::value::{Attrs, NixString, Value};

impl Evaluator {
    /// Parses and lowers `text`; `file_path` (absolute, or under `<kdeploy>`)
    /// anchors relative paths, `name` is what users see in messages.
    pub fn compile(&mut self, text: &str, file_path: &str, name: String) -> EvalResult<ExprRef> {
        self.compile_in(text, file_path, name, &[])
    }

    /// [`Self::compile`] with `scope` bound around the text (slot `i` of
    /// the outermost frame holds `scope[i]`), as `scopedImport` needs.
    fn compile_in(&mut self, text: &str, file_path: &str, name: String, scope: &[NixString]) -> EvalResult<ExprRef> {
        let file = self.sources.add(name.clone(), text.into());
        let root = match self.parses.get(text) {
            Some(root) => root,
            None => {
                let parse = crate::parse::parse(text).map_err(|r| refused(file, r))?;
                if let Some(e) = parse.errors.first() {
                    return Err(parse_error(e, file, text));
                }
                self.parses.insert(text, &parse.root);
                parse.root
            }
        };
        let globals = self.globals.clone();
        let mut lowerer = Lowerer::new(file, file_path, name, &globals);
        lowerer.lower_root_in(&root, scope)
    }

    pub fn eval_compiled(&mut self, expr: &ExprRef) -> EvalResult<Value> {
        let env = Env::root();
        self.eval(expr, &env)
    }

    /// `import`: a file, or a directory's `default.nix`, evaluated once.
    pub fn import(&mut self, target: &str) -> EvalResult<Value> {
        let p = self.file_of(target)?;
        if let Some(t) = self.imports.get(&p) {
            let t = t.clone();
            return self.force(&t);
        }
        let text = self.text_of(&p)?;
        let shown = display_name(&p);
        let expr = self.compile(&text, &p, shown)?;
        let thunk = Thunk::pending(expr, Env::root());
        self.imports.insert(p, thunk.clone());
        self.force(&thunk)
    }

    /// `scopedImport`: like [`Self::import`] but with the names of `scope`
    /// in scope (before the builtins, which they shadow), and evaluated
    /// anew each time, as in Nix.
    pub fn scoped_import(&mut self, target: &str, scope: &Attrs) -> EvalResult<Value> {
        let p = self.file_of(target)?;
        let text = self.text_of(&p)?;
        let names: Vec<NixString> = scope.keys().cloned().collect();
        let expr = self.compile_in(&text, &p, display_name(&p), &names)?;
        let env = Env::child(&Env::root(), names.len());
        for (_, t) in scope.iter() {
            env.push(t.clone());
        }
        self.eval(&expr, &env)
    }

    /// The file `import` reads for `target`: itself, or a directory's
    /// `default.nix`.
    fn file_of(&mut self, target: &str) -> EvalResult<String> {
        let p = path::normalize(target);
        if self.io.kind(&p)? == Some(FileKind::Directory) {
            return Ok(path::join(&p, "default.nix"));
        }
        Ok(p)
    }

    fn text_of(&mut self, p: &str) -> EvalResult<String> {
        let bytes = self.io.read(p)?;
        String::from_utf8(bytes)
            .map_err(|_| EvalError::new(ErrorKind::InvalidValue, format!("'{p}' is not valid UTF-8 text")))
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

/// Text the parser's guard refuses, before anything else.
fn refused(file: FileId, r: Refusal) -> Box<EvalError> {
    match r {
        Refusal::TooDeep { at } => {
            let max = MAX_NESTING;
            EvalError::new(ErrorKind::TooDeep, format!("the expression is nested more than {max} levels deep"))
                .at(Span::new(file, at))
                .label(format!("level {} starts here", max + 1))
                .help(
                    "brackets, operators in a chain and function arguments each count a level; \
                     build deep values with a function (such as builtins.foldl') instead of writing them out",
                )
        }
        Refusal::LongRun { at } => {
            let len = usize::from(at.len());
            EvalError::new(ErrorKind::TooLarge, format!("{len} characters without a space are too many to parse"))
                .at(Span::new(file, at))
                .label("this run")
                .help("put spaces around operators (`1 + 1`), or keep long text in a string")
        }
    }
}

fn parse_error(e: &rnix::ParseError, file: FileId, text: &str) -> Box<EvalError> {
    let x = syntax_hints::explain(text, e);
    let range = |(start, end): (usize, usize)| {
        Span::new(file, rnix::TextRange::new(rnix::TextSize::from(start as u32), rnix::TextSize::from(end as u32)))
    };
    let mut err = EvalError::new(ErrorKind::Parse, x.message).at(range(x.range)).label(x.label);
    if let Some(h) = x.help {
        err = err.help(h);
    }
    for (what, r) in x.notes {
        err = err.note(what, range(r));
    }
    err
}
