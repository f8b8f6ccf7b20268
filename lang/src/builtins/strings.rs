//! String builtins: toString, stringLength, substring, concatStringsSep,
//! replaceStrings, baseNameOf, dirOf, match, split, hashString and the
//! version helpers. Strings are measured and cut in bytes, as in Nix. Which
//! arguments are coerced (paths, sets with `__toString`) and which must
//! already be strings follows Nix 2.8 builtin by builtin.

use std::rc::Rc;

use super::pure::{hash, regex::NixRegex, regex::SplitPart, versions};
use super::{Args, BuiltinDef};
use crate::error::{err, ErrorKind, EvalError, EvalResult};
use crate::eval::{CoerceMode, Evaluator};
use crate::limits::{check_string_len, push_bounded};
use crate::path;
use crate::thunk::Thunk;
use crate::value::{Attrs, NixString, Value};

pub const DEFS: &[BuiltinDef] = &[
    BuiltinDef { name: "toString", arity: 1, func: to_string },
    BuiltinDef { name: "stringLength", arity: 1, func: string_length },
    BuiltinDef { name: "substring", arity: 3, func: substring },
    BuiltinDef { name: "concatStringsSep", arity: 2, func: concat_strings_sep },
    BuiltinDef { name: "replaceStrings", arity: 3, func: replace_strings },
    BuiltinDef { name: "baseNameOf", arity: 1, func: base_name_of },
    BuiltinDef { name: "dirOf", arity: 1, func: dir_of },
    BuiltinDef { name: "match", arity: 2, func: regex_match },
    BuiltinDef { name: "split", arity: 2, func: regex_split },
    BuiltinDef { name: "hashString", arity: 2, func: hash_string },
    BuiltinDef { name: "compareVersions", arity: 2, func: compare_versions },
    BuiltinDef { name: "splitVersion", arity: 1, func: split_version },
    BuiltinDef { name: "parseDrvName", arity: 1, func: parse_drv_name },
];

/// Coerces like string interpolation (strings, paths, sets with
/// `__toString`/`outPath`).
pub(crate) fn coerce(ev: &mut Evaluator, t: &Thunk, mode: CoerceMode) -> EvalResult<String> {
    let v = ev.force(t)?;
    let mut s = String::new();
    ev.coerce_to_string(&v, mode, &mut s)?;
    Ok(s)
}

fn str_value(s: String) -> Value {
    Value::String(NixString::from(s))
}

/// A byte slice of a string; a cut inside a UTF-8 sequence keeps what it can.
fn byte_slice(s: &str, start: usize, end: usize) -> String {
    String::from_utf8_lossy(&s.as_bytes()[start..end]).into_owned()
}

fn to_string(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    match ev.force(&args[0])? {
        s @ Value::String(_) => Ok(s),
        // Written straight into the shared string: one allocation, where
        // the general coercion grows a `String` and then copies it.
        Value::Int(i) => Ok(Value::String(NixString::from(crate::eval::format_int(i, &mut [0; 20])))),
        _ => Ok(str_value(coerce(ev, &args[0], CoerceMode::ToString)?)),
    }
}

fn string_length(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    match ev.force(&args[0])? {
        Value::String(s) => Ok(Value::Int(s.len() as i64)),
        _ => Ok(Value::Int(coerce(ev, &args[0], CoerceMode::Interpolation)?.len() as i64)),
    }
}

fn substring(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let start = ev.int(&args[0], "the first argument (the start offset) of builtins.substring")?;
    let len = ev.int(&args[1], "the second argument (the length) of builtins.substring")?;
    let s = coerce(ev, &args[2], CoerceMode::Interpolation)?;
    if start < 0 {
        return err(ErrorKind::InvalidValue, "negative start position in builtins.substring");
    }
    let start = (start as usize).min(s.len());
    let end = if len < 0 { s.len() } else { start.saturating_add(len as usize).min(s.len()) };
    Ok(str_value(byte_slice(&s, start, end)))
}

fn concat_strings_sep(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let sep = ev.str(&args[0], "the first argument of builtins.concatStringsSep")?;
    let list = ev.list(&args[1], "the second argument of builtins.concatStringsSep")?;
    // The leading run of strings (usually all) is forced and measured
    // first, so the result is written without growing; anything else is
    // coerced in order as before, so errors come in the same order.
    let mut strings = Vec::with_capacity(list.len());
    for t in list.iter() {
        match ev.force(t)? {
            Value::String(s) => strings.push(s),
            _ => break,
        }
    }
    let known = strings.iter().fold(0usize, |n, s| n.saturating_add(s.len()));
    let room = known.saturating_add(sep.len().saturating_mul(list.len().saturating_sub(1)));
    // A lower bound of the result's length: the leading strings and every
    // separator.
    ev.reserve_string(room)?;
    let mut out = String::with_capacity(room);
    for (i, t) in list.iter().enumerate() {
        if i > 0 {
            push_bounded(&mut out, &sep)?;
        }
        match strings.get(i) {
            Some(s) => push_bounded(&mut out, s)?,
            None => {
                let v = ev.force(t)?;
                ev.coerce_to_string(&v, CoerceMode::Interpolation, &mut out)?;
            }
        }
    }
    Ok(str_value(out))
}

/// At each position the first matching `from` wins; an empty `from` matches
/// between every two characters, as in Nix.
fn replace_strings(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let from_list = ev.list(&args[0], "the first argument of builtins.replaceStrings")?;
    let to_list = ev.list(&args[1], "the second argument of builtins.replaceStrings")?;
    if from_list.len() != to_list.len() {
        return err(
            ErrorKind::InvalidValue,
            "'from' and 'to' arguments passed to builtins.replaceStrings have different lengths",
        );
    }
    let s = ev.str(&args[2], "the third argument of builtins.replaceStrings")?;
    let mut from = Vec::new();
    for t in from_list.iter() {
        from.push(ev.str(t, "an element of the first argument of builtins.replaceStrings")?);
    }
    let mut to: Vec<Option<String>> = vec![None; to_list.len()];
    let bytes = s.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(s.len());
    let mut pos = 0;
    while pos <= bytes.len() {
        let mut matched = false;
        for (i, f) in from.iter().enumerate() {
            if bytes[pos..].starts_with(f.as_bytes()) {
                if to[i].is_none() {
                    to[i] = Some(
                        ev.str(&to_list[i], "an element of the second argument of builtins.replaceStrings")?
                            .to_string(),
                    );
                }
                let to = to[i].as_deref().unwrap_or_default();
                check_string_len(out.len().saturating_add(to.len()))?;
                out.extend_from_slice(to.as_bytes());
                if f.is_empty() {
                    if pos < bytes.len() {
                        out.push(bytes[pos]);
                    }
                    pos += 1;
                } else {
                    pos += f.len();
                }
                matched = true;
                break;
            }
        }
        if !matched {
            if pos < bytes.len() {
                out.push(bytes[pos]);
            }
            pos += 1;
        }
    }
    Ok(str_value(String::from_utf8_lossy(&out).into_owned()))
}

fn base_name_of(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let s = coerce(ev, &args[0], CoerceMode::Interpolation)?;
    Ok(str_value(path::base_name(&s).to_string()))
}

fn dir_of(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    match ev.force(&args[0])? {
        Value::Path(p) => Ok(Value::Path(path::dir_of(&p).into())),
        _ => {
            let s = coerce(ev, &args[0], CoerceMode::Interpolation)?;
            Ok(str_value(path::dir_of(&s)))
        }
    }
}

fn compile(ev: &mut Evaluator, t: &Thunk, name: &str) -> EvalResult<Rc<NixRegex>> {
    let pattern = ev.str(t, &format!("the first argument (the regular expression) of builtins.{name}"))?;
    if let Some(r) = ev.regex_cache.get(&pattern) {
        return Ok(r.clone());
    }
    let r = Rc::new(NixRegex::compile(&pattern).map_err(|m| {
        let m = if m.starts_with("invalid regular expression") {
            m
        } else {
            format!("invalid regular expression '{pattern}': {m}")
        };
        EvalError::new(ErrorKind::InvalidValue, m)
    })?);
    ev.regex_cache.insert(pattern, r.clone());
    Ok(r)
}

fn groups(captures: Vec<Option<String>>) -> Value {
    Value::list(captures.into_iter().map(|c| Thunk::value(c.map_or(Value::Null, str_value))).collect())
}

fn regex_match(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let re = compile(ev, &args[0], "match")?;
    let s = ev.str(&args[1], "the second argument of builtins.match")?;
    Ok(match re.full_match(&s) {
        Some(captures) => groups(captures),
        None => Value::Null,
    })
}

fn regex_split(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let re = compile(ev, &args[0], "split")?;
    let s = ev.str(&args[1], "the second argument of builtins.split")?;
    let parts = re.split(&s).into_iter().map(|p| {
        Thunk::value(match p {
            SplitPart::Text(t) => str_value(t),
            SplitPart::Groups(g) => groups(g),
        })
    });
    Ok(Value::list(parts.collect()))
}

fn hash_string(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let algo = ev.str(&args[0], "the first argument of builtins.hashString")?;
    let s = ev.str(&args[1], "the second argument of builtins.hashString")?;
    hash::hash_string(&algo, s.as_bytes()).map(str_value).map_err(|m| EvalError::new(ErrorKind::InvalidValue, m))
}

fn compare_versions(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let a = ev.str(&args[0], "the first argument of builtins.compareVersions")?;
    let b = ev.str(&args[1], "the second argument of builtins.compareVersions")?;
    Ok(Value::Int(match versions::compare_versions(&a, &b) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1,
    }))
}

fn split_version(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let s = ev.str(&args[0], "the argument of builtins.splitVersion")?;
    Ok(Value::list(versions::split_version(&s).into_iter().map(|p| Thunk::value(str_value(p))).collect()))
}

fn parse_drv_name(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let s = ev.str(&args[0], "the argument of builtins.parseDrvName")?;
    let (name, version) = versions::parse_drv_name(&s);
    Ok(Value::attrs(Attrs::from_sorted(vec![
        ("name".into(), Thunk::value(str_value(name))),
        ("version".into(), Thunk::value(str_value(version))),
    ])))
}
