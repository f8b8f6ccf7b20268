//! The entry points a front end uses: evaluate a file or an expression with
//! `--arg`/`--argstr` inputs (a file whose value is a function with formals
//! is called with them, defaults applying, as `nix-instantiate` does),
//! select an attribute path, and print or render the outcome.

use std::path::{Path, PathBuf};

use crate::error::{ErrorExt, ErrorKind, EvalError, EvalResult};
use crate::eval::Evaluator;
use crate::io::{Io, Stdlib};
use crate::ir::Param;
use crate::print;
use crate::thunk::Thunk;
use crate::value::{Attrs, Value};

#[derive(Clone, Debug)]
pub enum Arg {
    /// `--arg NAME EXPR`
    Expr(String),
    /// `--argstr NAME VALUE`
    Str(String),
}

pub struct Session {
    pub ev: Evaluator,
}

impl Session {
    pub fn new(roots: Vec<PathBuf>, stdlib: Stdlib) -> Session {
        Session { ev: Evaluator::new(Io::new(roots, stdlib)) }
    }

    /// Never read below `dir` (a secret store outside `.kdeploy`).
    pub fn hide(&mut self, dir: &Path) {
        self.ev.io.hide(dir);
    }

    fn absolute(p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().map(|d| d.join(p)).unwrap_or_else(|_| p.to_path_buf())
        }
    }

    pub fn eval_file(&mut self, file: &Path, args: &[(String, Arg)]) -> EvalResult<Value> {
        let p = crate::path::normalize(&Self::absolute(file).to_string_lossy());
        let v = self.ev.import(&p)?;
        self.auto_call(v, args)
    }

    /// `--expr`: relative paths in the text are relative to `base_dir`.
    pub fn eval_expr(&mut self, text: &str, base_dir: &Path, args: &[(String, Arg)]) -> EvalResult<Value> {
        let anchor = Self::absolute(base_dir).join("«expr»");
        let expr = self.ev.compile(text, &anchor.to_string_lossy(), "«expr»".to_string())?;
        let v = self.ev.eval_compiled(&expr)?;
        self.auto_call(v, args)
    }

    fn arg_thunk(&mut self, arg: &Arg) -> EvalResult<Thunk> {
        Ok(match arg {
            Arg::Str(s) => Thunk::value(Value::string(s.as_str())),
            Arg::Expr(e) => {
                let cwd = Self::absolute(Path::new(".")).join("«arg»");
                let expr = self.ev.compile(e, &cwd.to_string_lossy(), "«arg»".to_string())?;
                Thunk::value(self.ev.eval_compiled(&expr)?)
            }
        })
    }

    /// Calls a function with formals with the named inputs.
    pub fn auto_call(&mut self, v: Value, args: &[(String, Arg)]) -> EvalResult<Value> {
        let Value::Lambda(c) = &v else { return Ok(v) };
        let Param::Pattern(p) = &c.lambda.param else { return Ok(v) };
        let mut entries = Vec::new();
        for f in &p.formals {
            match args.iter().rev().find(|(n, _)| *n == *f.name) {
                Some((_, a)) => entries.push((f.name.clone(), self.arg_thunk(a)?)),
                None if f.default.is_some() => {}
                None => {
                    return Err(EvalError::new(
                        ErrorKind::MissingArgument,
                        format!("cannot evaluate a function that has an argument without a value ('{}')", f.name),
                    )
                    .at(f.span)
                    .help(format!("pass it with --arg {0} EXPR or --argstr {0} VALUE", f.name)))
                }
            }
        }
        if p.ellipsis {
            for (n, a) in args {
                if !p.formals.iter().any(|f| *f.name == **n) {
                    entries.push((n.as_str().into(), self.arg_thunk(a)?));
                }
            }
        }
        self.ev.apply(v.clone(), Thunk::value(Value::attrs(Attrs::from_unsorted(entries))), None)
    }

    /// `-A a.b."c.d".0`: attribute names, or list indices for lists.
    pub fn select(&mut self, mut v: Value, attrpath: &str, args: &[(String, Arg)]) -> EvalResult<Value> {
        for part in split_attrpath(attrpath) {
            v = match &v {
                Value::Attrs(a) => match a.get(&part) {
                    Some(t) => self.ev.force(&t.clone())?,
                    None => {
                        let mut e = EvalError::new(
                            ErrorKind::MissingAttribute,
                            format!("attribute '{part}' in selection path '{attrpath}' not found"),
                        );
                        if let Some(s) = crate::suggest::did_you_mean(&part, a.keys().map(|k| k.as_ref())) {
                            e.help = Some(format!("did you mean '{s}'?"));
                        }
                        return Err(e);
                    }
                },
                Value::List(l) => match part.parse::<usize>().ok().and_then(|i| l.get(i)) {
                    Some(t) => self.ev.force(&t.clone())?,
                    None => {
                        return Err(EvalError::new(
                            ErrorKind::OutOfBounds,
                            format!("'{part}' in selection path '{attrpath}' is not a valid index"),
                        ))
                    }
                },
                other => {
                    return Err(EvalError::new(
                        ErrorKind::Type,
                        format!(
                            "'{part}' in selection path '{attrpath}' selects from {}, not a set",
                            other.type_article()
                        ),
                    ))
                }
            };
            v = self.auto_call(v, args)?;
        }
        Ok(v)
    }

    /// Reads `v` as a `T` (see [`crate::decode`]), forcing what `T` needs.
    pub fn decode<T: serde::de::DeserializeOwned>(&mut self, v: &Value) -> Result<T, crate::decode::DecodeError> {
        crate::decode::decode(&mut self.ev, v)
    }

    /// Reads the attributes `names` of the set `v` as `T`s without keeping
    /// their values (see [`crate::decode::decode_each`]).
    pub fn decode_each<T: serde::de::DeserializeOwned>(
        &mut self,
        v: &Value,
        names: &[String],
        each: impl FnMut(&str, T),
    ) -> Result<(), crate::decode::DecodeError> {
        crate::decode::decode_each(&mut self.ev, v, names, each)
    }

    pub fn to_json(&mut self, v: &Value) -> EvalResult<String> {
        print::to_json(&mut self.ev, v)
    }

    pub fn print(&mut self, v: &Value) -> EvalResult<String> {
        self.ev.deep_force(v)?;
        print::print_value(&mut self.ev, v, true)
    }

    pub fn render_error(&self, e: &EvalError, color: bool) -> String {
        crate::diagnostic::render(e, &self.ev.sources, color)
    }
}

fn split_attrpath(p: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in p.chars() {
        match c {
            '"' => quoted = !quoted,
            '.' if !quoted => parts.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    if !cur.is_empty() || !parts.is_empty() {
        parts.push(cur);
    }
    parts
}
