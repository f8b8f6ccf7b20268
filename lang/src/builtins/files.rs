//! File builtins, all through the evaluator's [`crate::io::Io`] boundary:
//! import, scopedImport, readFile, readDir, pathExists, hashFile, findFile
//! (the search path, which holds only `<kdeploy>`), and toPath, which only
//! checks and normalises a path's text.

use super::pure::hash;
use super::{Args, BuiltinDef};
use crate::error::{ErrorExt, ErrorKind, EvalError, EvalResult};
use crate::eval::{CoerceMode, Evaluator};
use crate::path;
use crate::thunk::Thunk;
use crate::value::{Attrs, Value};

pub const DEFS: &[BuiltinDef] = &[
    BuiltinDef { name: "import", arity: 1, func: import },
    BuiltinDef { name: "scopedImport", arity: 2, func: scoped_import },
    BuiltinDef { name: "readFile", arity: 1, func: read_file },
    BuiltinDef { name: "readDir", arity: 1, func: read_dir },
    BuiltinDef { name: "pathExists", arity: 1, func: path_exists },
    BuiltinDef { name: "hashFile", arity: 2, func: hash_file },
    BuiltinDef { name: "findFile", arity: 2, func: find_file },
    BuiltinDef { name: "toPath", arity: 1, func: to_path },
];

/// `builtins.nixPath`: the search path `<…>` looks in, as `findFile`
/// takes it. Only the stdlib is on it: the machine's `NIX_PATH` would make
/// an evaluation depend on where it runs.
pub fn search_path() -> Value {
    let entry = Attrs::from_unsorted(vec![
        ("path".into(), Thunk::value(Value::string(path::STDLIB_ROOT))),
        ("prefix".into(), Thunk::value(Value::string("kdeploy"))),
    ]);
    Value::list(vec![Thunk::value(Value::attrs(entry))])
}

/// A path argument: a path value, or a string holding an absolute path.
fn path_arg(ev: &mut Evaluator, t: &Thunk, what: &str) -> EvalResult<String> {
    let v = ev.force(t)?;
    let mut s = String::new();
    ev.coerce_to_string(&v, CoerceMode::Interpolation, &mut s)?;
    if !path::is_absolute(&s) {
        return Err(EvalError::new(ErrorKind::InvalidValue, format!("{what}: '{s}' is not an absolute path")));
    }
    Ok(path::normalize(&s))
}

fn import(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let p = path_arg(ev, &args[0], "import")?;
    ev.import(&p).map_err(|e| e.context(format!("while importing '{}'", crate::load::display_name(&p)), None))
}

/// `scopedImport scope path`: the file evaluated (afresh, not memoised)
/// with the names of `scope` bound around it, before the builtins.
fn scoped_import(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let scope = ev.attrs(&args[0], "the first argument of builtins.scopedImport")?;
    let p = path_arg(ev, &args[1], "scopedImport")?;
    ev.scoped_import(&p, &scope)
        .map_err(|e| e.context(format!("while importing '{}'", crate::load::display_name(&p)), None))
}

fn read_file(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let p = path_arg(ev, &args[0], "builtins.readFile")?;
    let bytes = ev.io.read(&p)?;
    match String::from_utf8(bytes) {
        Ok(s) => Ok(Value::string(s)),
        Err(_) => Err(EvalError::new(
            ErrorKind::InvalidValue,
            format!("'{p}' is not UTF-8 text; builtins.readFile reads text only"),
        )),
    }
}

fn read_dir(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let p = path_arg(ev, &args[0], "builtins.readDir")?;
    let entries = ev.io.read_dir(&p)?;
    Ok(Value::attrs(Attrs::from_unsorted(
        entries.into_iter().map(|(name, kind)| (name.into(), Thunk::value(Value::string(kind.nix_name())))).collect(),
    )))
}

fn path_exists(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let p = path_arg(ev, &args[0], "builtins.pathExists")?;
    Ok(Value::Bool(ev.io.kind(&p)?.is_some()))
}

fn hash_file(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let algo = ev.str(&args[0], "the first argument of builtins.hashFile")?;
    let p = path_arg(ev, &args[1], "builtins.hashFile")?;
    let bytes = ev.io.read(&p)?;
    hash::hash_string(&algo, &bytes).map(Value::string).map_err(|m| EvalError::new(ErrorKind::InvalidValue, m))
}

/// `findFile searchPath "a/b"`, which `<a/b>` calls: the first entry whose
/// prefix is `a` (or empty) and under whose path `b` exists.
fn find_file(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    let entries = ev.list(&args[0], "the first argument of builtins.findFile")?;
    let wanted = ev.str(&args[1], "the second argument of builtins.findFile")?;
    for t in entries.iter() {
        let entry = ev.attrs(t, "an element of the list passed to builtins.findFile")?;
        let prefix = match entry.get("prefix") {
            Some(p) => ev.str(&p.clone(), "the prefix of a search path entry")?.to_string(),
            None => String::new(),
        };
        let Some(p) = entry.get("path") else {
            return Err(EvalError::new(ErrorKind::MissingAttribute, "attribute 'path' missing"));
        };
        let v = ev.force(&p.clone())?;
        let mut base = String::new();
        ev.coerce_to_string(&v, CoerceMode::Interpolation, &mut base)?;
        let suffix = match wanted.strip_prefix(prefix.as_str()) {
            _ if prefix.is_empty() => format!("/{wanted}"),
            Some("") => String::new(),
            Some(rest) if rest.starts_with('/') => rest.to_string(),
            _ => continue,
        };
        let candidate = path::normalize(&format!("{base}{suffix}"));
        if ev.io.kind(&candidate)?.is_some() {
            return Ok(Value::Path(candidate.into()));
        }
    }
    Err(EvalError::new(ErrorKind::SearchPath, format!("file '{wanted}' was not found in the search path"))
        .help("only <kdeploy> (the stdlib) is on the search path: NIX_PATH and -I would make evaluation depend on the machine"))
}

/// `toPath s`: `s` made a normalised absolute path, still a string (as in
/// Nix); nothing is read.
fn to_path(ev: &mut Evaluator, args: &[Thunk]) -> EvalResult<Value> {
    Ok(Value::string(path_arg(ev, &args[0], "builtins.toPath")?))
}
