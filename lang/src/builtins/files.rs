//! File builtins, all through the evaluator's [`crate::io::Io`] boundary:
//! import, readFile, readDir, pathExists.

use super::BuiltinDef;
use crate::error::{ErrorExt, ErrorKind, EvalError, EvalResult};
use crate::eval::{CoerceMode, Evaluator};
use crate::path;
use crate::thunk::Thunk;
use crate::value::{Attrs, Value};

pub const DEFS: &[BuiltinDef] = &[
    BuiltinDef { name: "import", arity: 1, func: import },
    BuiltinDef { name: "readFile", arity: 1, func: read_file },
    BuiltinDef { name: "readDir", arity: 1, func: read_dir },
    BuiltinDef { name: "pathExists", arity: 1, func: path_exists },
];

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
