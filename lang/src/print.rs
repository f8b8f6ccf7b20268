//! Printing forced values: readably (Nix syntax, one line when short,
//! indented otherwise) and as JSON with Nix's conventions (sets sorted by
//! name, a set with `__toString` as its string and one with `outPath` as
//! that value, floats as Nix 2.8 prints them).

use crate::builtins::pure::float_fmt::{format_float_display, format_float_json};
use std::collections::HashSet;
use std::rc::Rc;

use crate::error::{err, ErrorExt, ErrorKind, EvalError, EvalResult};
use crate::eval::{CoerceMode, Evaluator, Walk, MAX_DEPTH, WATCH_DEPTH};
use crate::limits::{check_string_len, MAX_STRING};
use crate::thunk::Thunk;
use crate::value::Value;

/// Whether `s` can be written as a bare attribute name.
pub fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '\'' || c == '-')
        && !matches!(s, "if" | "then" | "else" | "let" | "in" | "with" | "rec" | "inherit" | "assert" | "or")
}

pub fn quote_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// [`quote_string`] as Nix 2.8 prints a string: `${` is escaped too, so
/// the text reads back as the same string.
fn print_string(s: &str, out: &mut String) {
    if !s.contains("${") {
        return quote_string(s, out);
    }
    let mut quoted = String::new();
    quote_string(s, &mut quoted);
    out.push_str(&quoted.replace("${", "\\${"));
}

/// Readable form of a value; with `deep`, everything inside is forced.
/// As in Nix 2.8, a container printed once prints as `«repeated»` wherever
/// it comes again, inside itself or not; the time and the output are
/// linear in the value (indentation stops growing at [`MAX_INDENT`]), and
/// the output is bounded by [`MAX_STRING`].
pub fn print_value(ev: &mut Evaluator, v: &Value, deep: bool) -> EvalResult<String> {
    let mut p = Printer { deep, out: String::new(), seen: HashSet::new(), added: Vec::new(), depth: 0 };
    p.value(ev, v, None, 0)?;
    Ok(p.out)
}

const WIDTH: usize = 80;

/// Deeper containers are indented no further: a deep value then prints in
/// lines of bounded length instead of output quadratic in its depth.
const MAX_INDENT: usize = 64;

const SPACES: &str = "                                                                  ";

/// One readable printing: the text so far, and the containers printed so
/// far (by [`container_key`]), to print each once.
struct Printer {
    deep: bool,
    out: String,
    seen: HashSet<usize>,
    /// The keys added to `seen`, in order, so that a one-line attempt that
    /// does not fit can take its own back.
    added: Vec<usize>,
    depth: usize,
}

/// An element, the value of an attribute or of a list element: forced when
/// printing deeply, else only if already known; with the address of the
/// thunk that holds it, if it has one (see [`container_key`]).
fn element(ev: &mut Evaluator, t: &Thunk, deep: bool, name: Option<&str>) -> EvalResult<Option<(Value, Via)>> {
    let via = t.cell().map(|c| Rc::as_ptr(c) as *const u8 as usize);
    if !deep {
        return Ok(t.peek().map(|v| (v, via)));
    }
    let v = ev.force(t);
    match name {
        Some(k) => {
            v.map_err(|e| e.context(format!("while evaluating the attribute '{k}'"), None)).map(|v| Some((v, via)))
        }
        None => v.map(|v| Some((v, via))),
    }
}

/// The thunk a value was reached through (its cell's address), if any.
type Via = Option<usize>;

/// A non-empty list or set.
fn is_container(v: &Value) -> bool {
    matches!(v, Value::List(items) if !items.is_empty()) || matches!(v, Value::Attrs(a) if !a.is_empty())
}

/// What makes a container the same as one printed before, as in Nix 2.8:
/// a set's bindings, a list's elements; but Nix keeps a list of one or two
/// elements inside the value that holds it, so such a list is the same
/// only when reached through the same thunk, and a copy of it (the value
/// printed at the top) is new.
fn container_key(v: &Value, via: Via) -> Option<usize> {
    match v {
        Value::List(items) if items.len() <= 2 => via,
        Value::List(items) => Some(items.as_ptr() as *const u8 as usize),
        Value::Attrs(a) => Some(Rc::as_ptr(a) as usize),
        _ => None,
    }
}

impl Printer {
    /// A value at `indent`: on one line if its one-line form fits in
    /// [`WIDTH`] with the indentation (and closing), else one item a line.
    fn value(&mut self, ev: &mut Evaluator, v: &Value, via: Via, indent: usize) -> EvalResult<()> {
        if !is_container(v) {
            return self.scalar(v);
        }
        let key = container_key(v, via);
        if key.is_some_and(|k| self.seen.contains(&k)) {
            self.out.push_str("«repeated»");
            return Ok(());
        }
        let start = self.out.len();
        let added = self.added.len();
        // One line if `[ a b ]` plus the indentation stays within WIDTH - 1.
        let limit = start + (WIDTH - 1).saturating_sub(indent);
        if self.flat(ev, v, via, limit)? {
            return Ok(());
        }
        self.out.truncate(start);
        for k in self.added.drain(added..) {
            self.seen.remove(&k);
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(EvalError::new(
                ErrorKind::TooDeep,
                format!("the value is nested more than {MAX_DEPTH} levels deep"),
            ));
        }
        self.see(key);
        let r = stacker::maybe_grow(64 * 1024, 4 * 1024 * 1024, || self.broken(ev, v, indent));
        self.depth -= 1;
        r
    }

    fn see(&mut self, key: Option<usize>) {
        if let Some(k) = key {
            self.seen.insert(k);
            self.added.push(k);
        }
    }

    /// Null, Booleans, numbers, strings, paths, functions, empty containers.
    fn scalar(&mut self, v: &Value) -> EvalResult<()> {
        let out = &mut self.out;
        match v {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => out.push_str(&i.to_string()),
            Value::Float(f) => out.push_str(&format_float_display(*f)),
            Value::String(s) => print_string(s, out),
            Value::Path(p) => out.push_str(p),
            Value::Lambda(_) => out.push_str("<LAMBDA>"),
            Value::Builtin(b) if b.args.is_empty() => out.push_str("<PRIMOP>"),
            Value::Builtin(_) => out.push_str("<PRIMOP-APP>"),
            Value::List(_) => out.push_str("[ ]"),
            Value::Attrs(_) => out.push_str("{ }"),
        }
        if out.len() > MAX_STRING {
            return Err(printed_too_large());
        }
        Ok(())
    }

    /// Writes `v` on one line; false as soon as the text passes `limit` or
    /// holds a line break (a path may), leaving what it wrote.
    fn flat(&mut self, ev: &mut Evaluator, v: &Value, via: Via, limit: usize) -> EvalResult<bool> {
        if !is_container(v) {
            let start = self.out.len();
            self.scalar(v)?;
            return Ok(self.out.len() <= limit && !self.out[start..].contains('\n'));
        }
        let key = container_key(v, via);
        if key.is_some_and(|k| self.seen.contains(&k)) {
            self.out.push_str("«repeated»");
            return Ok(self.out.len() <= limit);
        }
        self.see(key);
        self.flat_items(ev, v, limit)
    }

    fn flat_items(&mut self, ev: &mut Evaluator, v: &Value, limit: usize) -> EvalResult<bool> {
        match v {
            Value::List(items) => {
                self.out.push('[');
                for t in items.iter() {
                    self.out.push(' ');
                    if !self.flat_element(ev, t, None, limit)? {
                        return Ok(false);
                    }
                }
                self.out.push_str(" ]");
            }
            Value::Attrs(a) => {
                self.out.push('{');
                for (k, t) in a.iter() {
                    self.out.push(' ');
                    self.name(k);
                    if !self.flat_element(ev, t, Some(k), limit)? {
                        return Ok(false);
                    }
                    self.out.push(';');
                }
                self.out.push_str(" }");
            }
            _ => unreachable!("containers only"),
        }
        Ok(self.out.len() <= limit)
    }

    fn flat_element(&mut self, ev: &mut Evaluator, t: &Thunk, name: Option<&str>, limit: usize) -> EvalResult<bool> {
        if self.out.len() > limit {
            return Ok(false);
        }
        match element(ev, t, self.deep, name)? {
            Some((x, via)) => self.flat(ev, &x, via, limit),
            None => {
                self.out.push_str("<CODE>");
                Ok(self.out.len() <= limit)
            }
        }
    }

    /// `name = ` of an attribute.
    fn name(&mut self, k: &str) {
        if is_ident(k) {
            self.out.push_str(k);
        } else {
            quote_string(k, &mut self.out);
        }
        self.out.push_str(" = ");
    }

    /// One item a line, each indented by two more spaces than `indent`.
    fn broken(&mut self, ev: &mut Evaluator, v: &Value, indent: usize) -> EvalResult<()> {
        let inner = (indent + 2).min(MAX_INDENT);
        let (open, close) = if matches!(v, Value::List(_)) { ('[', ']') } else { ('{', '}') };
        self.out.push(open);
        self.out.push('\n');
        let mut item = |p: &mut Printer, t: &Thunk, name: Option<&str>| -> EvalResult<()> {
            p.out.push_str(&SPACES[..inner]);
            if let Some(k) = name {
                p.name(k);
            }
            match element(ev, t, p.deep, name)? {
                Some((x, via)) => p.value(ev, &x, via, inner)?,
                None => p.out.push_str("<CODE>"),
            }
            if name.is_some() {
                p.out.push(';');
            }
            p.out.push('\n');
            if p.out.len() > MAX_STRING {
                return Err(printed_too_large());
            }
            Ok(())
        };
        match v {
            Value::List(items) => {
                for t in items.iter() {
                    item(self, t, None)?;
                }
            }
            Value::Attrs(a) => {
                for (k, t) in a.iter() {
                    item(self, t, Some(k))?;
                }
            }
            _ => unreachable!("containers only"),
        }
        self.out.push_str(&SPACES[..indent.min(MAX_INDENT)]);
        self.out.push(close);
        Ok(())
    }
}

#[cold]
fn printed_too_large() -> Box<EvalError> {
    EvalError::new(ErrorKind::TooLarge, format!("the printed value is longer than the limit of {MAX_STRING} bytes"))
}

/// The JSON text of a value, forcing everything inside it. A value inside
/// itself is infinite recursion (Nix overflows its stack), reported at the
/// attribute that holds it when that is known; the text is bounded by
/// [`MAX_STRING`].
pub fn to_json(ev: &mut Evaluator, v: &Value) -> EvalResult<String> {
    let mut out = String::new();
    write_json(ev, v, &mut out, &mut Walk::watching_from(WATCH_DEPTH))?;
    Ok(out)
}

fn write_json(ev: &mut Evaluator, v: &Value, out: &mut String, walk: &mut Walk) -> EvalResult<()> {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) => out.push_str(&format_float_json(*f)),
        Value::String(s) => json_string(s, out),
        Value::Path(p) => json_string(p, out),
        Value::List(items) => {
            let key = (items.as_ptr() as *const u8 as usize, 0);
            ev.walk_into(walk, key, |ev, walk| {
                out.push('[');
                for (i, t) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let x = ev.force(t)?;
                    write_json(ev, &x, out, walk)?;
                }
                out.push(']');
                Ok(())
            })?;
        }
        Value::Attrs(a) => {
            // As Nix: a set with `__toString` is the string it gives; else
            // a set with `outPath` is the JSON of that value, whatever it is.
            if a.contains("__toString") {
                let mut s = String::new();
                ev.coerce_to_string(v, CoerceMode::Interpolation, &mut s)?;
                json_string(&s, out);
                return Ok(());
            }
            let key = (Rc::as_ptr(a) as usize, 0);
            if let Some(p) = a.get("outPath") {
                let p = ev.force(&p.clone())?;
                return ev.walk_into(walk, key, |ev, walk| write_json(ev, &p, out, walk));
            }
            ev.walk_into(walk, key, |ev, walk| {
                out.push('{');
                for (i, (k, t)) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    json_string(k, out);
                    out.push(':');
                    let in_attr = |e: Box<EvalError>| {
                        let cycle = e.kind == ErrorKind::InfiniteRecursion;
                        let e = e.context(format!("while evaluating the attribute '{k}'"), None);
                        if cycle {
                            e.at_if_unset(a.position(k))
                        } else {
                            e
                        }
                    };
                    let x = ev.force(t).map_err(in_attr)?;
                    write_json(ev, &x, out, walk).map_err(in_attr)?;
                }
                out.push('}');
                Ok(())
            })?;
        }
        Value::Lambda(_) | Value::Builtin(_) => {
            return err(ErrorKind::NotCoercible, "cannot convert a function to JSON")
        }
    }
    check_string_len(out.len())
}

fn json_string(s: &str, out: &mut String) {
    crate::builtins::pure::json::escape_json_string(s, out);
}
