//! Printing forced values: readably (Nix syntax, one line when short,
//! indented otherwise) and as JSON with Nix's conventions (sets sorted by
//! name, sets with `__toString`/`outPath` as strings, floats as Nix 2.8
//! prints them).

use crate::builtins::pure::float_fmt::{format_float_display, format_float_json};
use crate::error::{err, ErrorExt, ErrorKind, EvalResult};
use crate::eval::{CoerceMode, Evaluator};
use crate::value::Value;

/// Readable form of a value; with `deep`, everything inside is forced.
pub fn print_value(ev: &mut Evaluator, v: &Value, deep: bool) -> EvalResult<String> {
    let mut out = String::new();
    write_value(ev, v, deep, 0, &mut out)?;
    Ok(out)
}

fn is_ident(s: &str) -> bool {
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
            '$' => out.push('$'),
            c => out.push(c),
        }
    }
    out.push('"');
}

const WIDTH: usize = 80;

fn write_value(ev: &mut Evaluator, v: &Value, deep: bool, indent: usize, out: &mut String) -> EvalResult<()> {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) => out.push_str(&format_float_display(*f)),
        Value::String(s) => quote_string(s, out),
        Value::Path(p) => out.push_str(p),
        Value::Lambda(_) => out.push_str("<LAMBDA>"),
        Value::Builtin(_) => out.push_str("<PRIMOP>"),
        Value::List(items) => {
            let mut parts = Vec::with_capacity(items.len());
            for t in items.iter() {
                let x = if deep { Some(ev.force(t)?) } else { t.peek() };
                let mut s = String::new();
                match x {
                    Some(x) => {
                        stacker::maybe_grow(64 * 1024, 1024 * 1024, || write_value(ev, &x, deep, indent + 2, &mut s))?
                    }
                    None => s.push_str("<CODE>"),
                }
                parts.push(s);
            }
            join(out, "[", "]", &parts, indent);
        }
        Value::Attrs(a) => {
            let mut parts = Vec::with_capacity(a.len());
            for (k, t) in a.iter() {
                let x = if deep {
                    Some(ev.force(t).map_err(|e| e.context(format!("while evaluating the attribute '{k}'"), None))?)
                } else {
                    t.peek()
                };
                let mut s = String::new();
                if is_ident(k) {
                    s.push_str(k);
                } else {
                    quote_string(k, &mut s);
                }
                s.push_str(" = ");
                match x {
                    Some(x) => {
                        stacker::maybe_grow(64 * 1024, 1024 * 1024, || write_value(ev, &x, deep, indent + 2, &mut s))?
                    }
                    None => s.push_str("<CODE>"),
                }
                s.push(';');
                parts.push(s);
            }
            join(out, "{", "}", &parts, indent);
        }
    }
    Ok(())
}

/// One line if it fits and has no line breaks, else one item per line.
fn join(out: &mut String, open: &str, close: &str, parts: &[String], indent: usize) {
    if parts.is_empty() {
        out.push_str(open);
        out.push(' ');
        out.push_str(close);
        return;
    }
    let total: usize = parts.iter().map(|p| p.len() + 1).sum::<usize>() + indent + 4;
    if total <= WIDTH && parts.iter().all(|p| !p.contains('\n')) {
        out.push_str(open);
        for p in parts {
            out.push(' ');
            out.push_str(p);
        }
        out.push(' ');
        out.push_str(close);
    } else {
        out.push_str(open);
        out.push('\n');
        for p in parts {
            out.push_str(&" ".repeat(indent + 2));
            out.push_str(p);
            out.push('\n');
        }
        out.push_str(&" ".repeat(indent));
        out.push_str(close);
    }
}

/// The JSON text of a value, forcing everything inside it.
pub fn to_json(ev: &mut Evaluator, v: &Value) -> EvalResult<String> {
    let mut out = String::new();
    write_json(ev, v, &mut out)?;
    Ok(out)
}

fn write_json(ev: &mut Evaluator, v: &Value, out: &mut String) -> EvalResult<()> {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) => out.push_str(&format_float_json(*f)),
        Value::String(s) => json_string(s, out),
        Value::Path(p) => json_string(p, out),
        Value::List(items) => {
            out.push('[');
            for (i, t) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let x = ev.force(t)?;
                stacker::maybe_grow(64 * 1024, 1024 * 1024, || write_json(ev, &x, out))?;
            }
            out.push(']');
        }
        Value::Attrs(a) => {
            if a.contains("__toString") || a.contains("outPath") {
                let mut s = String::new();
                ev.coerce_to_string(v, CoerceMode::Interpolation, &mut s)?;
                json_string(&s, out);
                return Ok(());
            }
            out.push('{');
            for (i, (k, t)) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(k, out);
                out.push(':');
                let x = ev.force(t).map_err(|e| e.context(format!("while evaluating the attribute '{k}'"), None))?;
                stacker::maybe_grow(64 * 1024, 1024 * 1024, || write_json(ev, &x, out))
                    .map_err(|e| e.context(format!("while evaluating the attribute '{k}'"), None))?;
            }
            out.push('}');
        }
        Value::Lambda(_) | Value::Builtin(_) => {
            return err(ErrorKind::NotCoercible, "cannot convert a function to JSON")
        }
    }
    Ok(())
}

fn json_string(s: &str, out: &mut String) {
    crate::builtins::pure::json::escape_json_string(s, out);
}
